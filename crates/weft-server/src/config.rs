//! Server configuration: defaults, a strict TOML file, environment variables, flags.
//!
//! Precedence, lowest to highest: built-in defaults, the config file (`--config` /
//! `WEFT_CONFIG`), environment variables (`WEFT_*`), command-line flags. The CLI applies the
//! last two; this module owns the file format and the defaults. Every setting is documented
//! in `docs/serve.md`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

/// Default listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7411";

/// Default of [`ServerConfig::header_read_timeout_seconds`].
pub const DEFAULT_HEADER_READ_TIMEOUT_SECONDS: f64 = 30.0;
/// Smallest accepted [`ServerConfig::header_read_timeout_seconds`].
pub const MIN_HEADER_READ_TIMEOUT_SECONDS: f64 = 0.1;
/// Largest accepted [`ServerConfig::header_read_timeout_seconds`].
pub const MAX_HEADER_READ_TIMEOUT_SECONDS: f64 = 3600.0;

/// Default of [`ServerConfig::remote_connections`]: one per core of this machine class.
pub const DEFAULT_REMOTE_CONNECTIONS: usize = 2;
/// Smallest accepted [`ServerConfig::remote_connections`].
pub const MIN_REMOTE_CONNECTIONS: usize = 1;
/// Largest accepted [`ServerConfig::remote_connections`].
pub const MAX_REMOTE_CONNECTIONS: usize = 64;

/// Largest accepted [`ServerConfig::max_compatibility_overrides`].
pub const MAX_COMPATIBILITY_OVERRIDES: usize = 100_000;

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Human,
    /// One JSON object per line.
    Json,
}

/// A deployment-declared feature-catalog entry, as written in the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureConfig {
    /// The feature name (becomes `feature:<name>` unless `id` is given).
    pub feature: String,
    /// Optional explicit id.
    pub id: Option<String>,
    /// What the feature means.
    pub description: String,
    /// Capability kind; absent means `llm-inference`.
    pub kind: Option<String>,
    /// A JSON Schema 2020-12 fragment for the feature's parameters.
    pub params_schema: Option<toml::Value>,
}

/// A managed child provider, as written in the config file (`[[managed]]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManagedEntry {
    /// The provider id the child serves as.
    pub id: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Working directory (default: the node's).
    pub cwd: Option<PathBuf>,
    /// The tenant whose registry lists it (default: `default`).
    pub tenant: Option<String>,
    /// Flow-control window of its streaming calls, in chunks (default 16).
    pub stream_window: Option<u32>,
}

/// Everything `weft serve` needs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Where the store, the admin token and the address file live.
    pub data_dir: PathBuf,
    /// A folder of agent directories to serve, if any.
    pub agents_dir: Option<PathBuf>,
    /// How often agent catalogs are checked for changes.
    pub agents_poll_ms: u64,
    /// Log format.
    pub log_format: LogFormat,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Events kept per tenant for `Last-Event-ID` resumption.
    pub event_retention: u64,
    /// Hours an `Idempotency-Key` response is replayable.
    pub idempotency_hours: u64,
    /// Deployment-declared features.
    pub features: Vec<FeatureConfig>,
    /// This node's id.
    pub node_id: String,
    /// Whether the built-in demo providers are served (in the default tenant).
    pub builtins: bool,
    /// Concurrent calls admitted before `overloaded`.
    pub max_concurrent_calls: usize,
    /// Concurrent streams admitted before `overloaded`.
    pub max_concurrent_streams: usize,
    /// Deadline of a call that names none, in seconds.
    pub default_timeout_seconds: f64,
    /// Largest deadline a caller may ask for, in seconds.
    pub max_timeout_seconds: f64,
    /// Largest call payload or result, in bytes.
    pub max_payload_bytes: usize,
    /// How long a client may take to send a request's head (request line and headers), in
    /// seconds; an idle keep-alive connection gets the same time to start its next
    /// request. Past it the connection is closed, so slow or silent clients cannot pin
    /// connections open.
    pub header_read_timeout_seconds: f64,
    /// Multiplexed WebSockets the node keeps open to each remote provider address for
    /// unary calls ([`MIN_REMOTE_CONNECTIONS`]–[`MAX_REMOTE_CONNECTIONS`]).
    pub remote_connections: usize,
    /// Managed child providers to start.
    pub managed: Vec<ManagedEntry>,
    /// Whether ids in a standard taxonomy domain that are not standard ids are refused
    /// (`enforced`) or accepted with a warning (`advisory`, the default); docs/taxonomy.md.
    pub taxonomy: weft_taxonomy::BindingMode,
    /// What a failed verification of a call that asked for one (`"verify": true`) does:
    /// `report` (attach the report, deliver the result; the default) or `strict` (the call
    /// fails with `invalid_result`); docs/verification.md.
    pub verification: crate::verification::VerificationMode,
    /// The compatibility policy of tenants that set no default of their own.
    pub compatibility_policy: weft_registry::Policy,
    /// The most per-capability policy overrides one tenant may set.
    pub max_compatibility_overrides: usize,
}

/// The config file's shape: every field optional, unknown keys refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// See [`ServerConfig::listen`].
    pub listen: Option<String>,
    /// See [`ServerConfig::data_dir`].
    pub data_dir: Option<PathBuf>,
    /// See [`ServerConfig::agents_dir`].
    pub agents: Option<PathBuf>,
    /// See [`ServerConfig::agents_poll_ms`].
    pub agents_poll_ms: Option<u64>,
    /// See [`ServerConfig::log_format`].
    pub log_format: Option<LogFormat>,
    /// See [`ServerConfig::max_body_bytes`].
    pub max_body_bytes: Option<usize>,
    /// See [`ServerConfig::event_retention`].
    pub event_retention: Option<u64>,
    /// See [`ServerConfig::idempotency_hours`].
    pub idempotency_hours: Option<u64>,
    /// See [`ServerConfig::features`].
    #[serde(default)]
    pub features: Vec<FeatureConfig>,
    /// See [`ServerConfig::node_id`].
    pub node_id: Option<String>,
    /// See [`ServerConfig::builtins`].
    pub builtins: Option<bool>,
    /// See [`ServerConfig::max_concurrent_calls`].
    pub max_concurrent_calls: Option<usize>,
    /// See [`ServerConfig::max_concurrent_streams`].
    pub max_concurrent_streams: Option<usize>,
    /// See [`ServerConfig::default_timeout_seconds`].
    pub default_timeout_seconds: Option<f64>,
    /// See [`ServerConfig::max_timeout_seconds`].
    pub max_timeout_seconds: Option<f64>,
    /// See [`ServerConfig::max_payload_bytes`].
    pub max_payload_bytes: Option<usize>,
    /// See [`ServerConfig::header_read_timeout_seconds`].
    pub header_read_timeout_seconds: Option<f64>,
    /// See [`ServerConfig::remote_connections`].
    pub remote_connections: Option<usize>,
    /// See [`ServerConfig::managed`].
    #[serde(default)]
    pub managed: Vec<ManagedEntry>,
    /// See [`ServerConfig::taxonomy`].
    pub taxonomy: Option<weft_taxonomy::BindingMode>,
    /// See [`ServerConfig::verification`].
    pub verification: Option<crate::verification::VerificationMode>,
    /// See [`ServerConfig::compatibility_policy`].
    pub compatibility_policy: Option<weft_registry::Policy>,
    /// See [`ServerConfig::max_compatibility_overrides`].
    pub max_compatibility_overrides: Option<usize>,
}

/// Why the configuration is unusable.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid (syntax, unknown key, wrong type); the message has line:col.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// A value is out of range or malformed.
    #[error("invalid setting {setting}: {message}")]
    Invalid {
        /// Which setting.
        setting: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl ConfigFile {
    /// Reads and strictly parses a config file.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| {
            let position = e
                .span()
                .map(|span| weft_contract::source::Position::of_offset(&text, span.start));
            ConfigError::Parse {
                path: path.to_owned(),
                message: match position {
                    Some(p) => format!("{}:{}: {}", p.line, p.column, e.message().trim()),
                    None => e.message().trim().to_owned(),
                },
            }
        })
    }
}

/// The default data directory: `$XDG_DATA_HOME/weft` (or the platform's equivalent).
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("weft")
}

impl ServerConfig {
    /// Defaults overlaid with a config file.
    pub fn from_file(file: ConfigFile) -> Result<Self, ConfigError> {
        let listen_text = file.listen.unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
        let listen = parse_listen(&listen_text)?;
        let config = ServerConfig {
            listen,
            data_dir: file.data_dir.unwrap_or_else(default_data_dir),
            agents_dir: file.agents,
            agents_poll_ms: file.agents_poll_ms.unwrap_or(1000),
            log_format: file.log_format.unwrap_or_default(),
            max_body_bytes: file.max_body_bytes.unwrap_or(8 * 1024 * 1024),
            event_retention: file.event_retention.unwrap_or(10_000),
            idempotency_hours: file.idempotency_hours.unwrap_or(24),
            features: file.features,
            node_id: file.node_id.unwrap_or_else(|| "local".to_owned()),
            builtins: file.builtins.unwrap_or(true),
            max_concurrent_calls: file.max_concurrent_calls.unwrap_or(64),
            max_concurrent_streams: file.max_concurrent_streams.unwrap_or(256),
            default_timeout_seconds: file.default_timeout_seconds.unwrap_or(30.0),
            max_timeout_seconds: file.max_timeout_seconds.unwrap_or(300.0),
            max_payload_bytes: file.max_payload_bytes.unwrap_or(1024 * 1024),
            header_read_timeout_seconds: file
                .header_read_timeout_seconds
                .unwrap_or(DEFAULT_HEADER_READ_TIMEOUT_SECONDS),
            remote_connections: file
                .remote_connections
                .unwrap_or(DEFAULT_REMOTE_CONNECTIONS),
            managed: file.managed,
            taxonomy: file.taxonomy.unwrap_or_default(),
            verification: file.verification.unwrap_or_default(),
            compatibility_policy: file.compatibility_policy.unwrap_or_default(),
            max_compatibility_overrides: file
                .max_compatibility_overrides
                .unwrap_or(weft_registry::DEFAULT_MAX_POLICY_OVERRIDES),
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks ranges.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |setting, message: &str| {
            Err(ConfigError::Invalid {
                setting,
                message: message.to_owned(),
            })
        };
        if self.max_body_bytes < 1024 {
            return invalid("max_body_bytes", "must be at least 1024");
        }
        if self.event_retention == 0 {
            return invalid("event_retention", "must be at least 1");
        }
        if self.agents_poll_ms < 50 {
            return invalid("agents_poll_ms", "must be at least 50");
        }
        if weft_registry::NodeId::parse(&self.node_id).is_err() {
            return invalid(
                "node_id",
                "must match ^[a-z0-9][a-z0-9._-]*$ (at most 128 bytes)",
            );
        }
        if self.max_concurrent_calls == 0 {
            return invalid("max_concurrent_calls", "must be at least 1");
        }
        if self.max_concurrent_streams == 0 {
            return invalid("max_concurrent_streams", "must be at least 1");
        }
        let timeouts_ok = self.default_timeout_seconds.is_finite()
            && self.max_timeout_seconds.is_finite()
            && self.default_timeout_seconds > 0.0
            && self.default_timeout_seconds <= self.max_timeout_seconds;
        if !timeouts_ok {
            return invalid(
                "default_timeout_seconds",
                "must be greater than 0 and at most max_timeout_seconds",
            );
        }
        if self.max_payload_bytes < 2 {
            return invalid("max_payload_bytes", "must be at least 2");
        }
        let header_timeout = self.header_read_timeout_seconds;
        let header_range = MIN_HEADER_READ_TIMEOUT_SECONDS..=MAX_HEADER_READ_TIMEOUT_SECONDS;
        if !header_range.contains(&header_timeout) {
            return invalid(
                "header_read_timeout_seconds",
                "must be from 0.1 to 3600 seconds",
            );
        }
        if !(MIN_REMOTE_CONNECTIONS..=MAX_REMOTE_CONNECTIONS).contains(&self.remote_connections) {
            return invalid(
                "remote_connections",
                &format!("must be from {MIN_REMOTE_CONNECTIONS} to {MAX_REMOTE_CONNECTIONS}"),
            );
        }
        if self.max_compatibility_overrides > MAX_COMPATIBILITY_OVERRIDES {
            return invalid(
                "max_compatibility_overrides",
                &format!("must be at most {MAX_COMPATIBILITY_OVERRIDES}"),
            );
        }
        for entry in &self.managed {
            if weft_registry::ProviderId::parse(&entry.id).is_err() || entry.command.is_empty() {
                return invalid(
                    "managed",
                    &format!(
                        "entry {:?} needs a valid provider id and a non-empty command",
                        entry.id
                    ),
                );
            }
            if entry.stream_window == Some(0) {
                return invalid(
                    "managed",
                    &format!("entry {:?}: stream_window must be at least 1", entry.id),
                );
            }
            if let Some(tenant) = &entry.tenant
                && weft_registry::TenantId::parse(tenant).is_err()
            {
                return invalid(
                    "managed",
                    &format!("entry {:?}: invalid tenant {tenant:?}", entry.id),
                );
            }
        }
        Ok(())
    }
}

/// Parses a listen address.
pub fn parse_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    text.parse().map_err(|e| ConfigError::Invalid {
        setting: "listen",
        message: format!("{text:?} is not an address like 127.0.0.1:7411: {e}"),
    })
}
