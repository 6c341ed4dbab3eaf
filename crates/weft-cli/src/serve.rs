//! `weft serve`: run a node.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use tracing_subscriber::EnvFilter;
use weft_server::config::parse_listen;
use weft_server::{ConfigFile, LogFormat, ServerConfig};

/// Arguments of `weft serve`. Each flag can also be set by its environment variable, and
/// every setting by the config file; flags win over variables, variables over the file.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:7411].
    #[arg(long, env = "WEFT_LISTEN", value_name = "ADDR")]
    pub listen: Option<String>,
    /// Data directory (store, admin token) [default: the user's data dir + /weft].
    #[arg(long, env = "WEFT_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Config file (TOML; unknown keys are errors).
    #[arg(long, env = "WEFT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve the agent directories found in this folder.
    #[arg(long, env = "WEFT_AGENTS", value_name = "DIR")]
    pub agents: Option<PathBuf>,
    /// Log format: human or json [default: human]. Filter with WEFT_LOG (default "info").
    #[arg(long, env = "WEFT_LOG_FORMAT", value_name = "FORMAT")]
    pub log_format: Option<String>,
    /// Largest request body, in bytes [default: 8388608].
    #[arg(long, env = "WEFT_MAX_BODY_BYTES", value_name = "BYTES")]
    pub max_body_bytes: Option<usize>,
    /// Events kept per tenant for resumption [default: 10000].
    #[arg(long, env = "WEFT_EVENT_RETENTION", value_name = "N")]
    pub event_retention: Option<u64>,
    /// Hours an Idempotency-Key response is replayable [default: 24].
    #[arg(long, env = "WEFT_IDEMPOTENCY_HOURS", value_name = "HOURS")]
    pub idempotency_hours: Option<u64>,
    /// How often agent catalogs are checked for changes, in ms [default: 1000].
    #[arg(long, env = "WEFT_AGENTS_POLL_MS", value_name = "MS")]
    pub agents_poll_ms: Option<u64>,
    /// This node's id [default: local].
    #[arg(long, env = "WEFT_NODE_ID", value_name = "ID")]
    pub node_id: Option<String>,
    /// Do not serve the built-in demo providers (echo, …).
    #[arg(long, env = "WEFT_NO_BUILTINS")]
    pub no_builtins: bool,
    /// Serve the built-in demo providers even when WEFT_NO_BUILTINS or the config says not to.
    #[arg(long)]
    pub builtins: bool,
    /// Concurrent calls admitted before `overloaded` [default: 64].
    #[arg(long, env = "WEFT_MAX_CONCURRENT_CALLS", value_name = "N")]
    pub max_concurrent_calls: Option<usize>,
    /// Concurrent streams admitted before `overloaded` [default: 256].
    #[arg(long, env = "WEFT_MAX_CONCURRENT_STREAMS", value_name = "N")]
    pub max_concurrent_streams: Option<usize>,
    /// Deadline of a call that names none, in seconds [default: 30].
    #[arg(long, env = "WEFT_DEFAULT_TIMEOUT", value_name = "SECONDS")]
    pub default_timeout: Option<f64>,
    /// Largest deadline a caller may ask for, in seconds [default: 300].
    #[arg(long, env = "WEFT_MAX_TIMEOUT", value_name = "SECONDS")]
    pub max_timeout: Option<f64>,
    /// Largest call payload or result, in bytes [default: 1048576].
    #[arg(long, env = "WEFT_MAX_PAYLOAD_BYTES", value_name = "BYTES")]
    pub max_payload_bytes: Option<usize>,
    /// Seconds a client may take to send a request's head before the connection is closed
    /// [default: 30].
    #[arg(long, env = "WEFT_HEADER_READ_TIMEOUT", value_name = "SECONDS")]
    pub header_read_timeout: Option<f64>,
    /// Multiplexed WebSockets kept open to each remote provider address for unary calls,
    /// 1–64 [default: 2].
    #[arg(long, env = "WEFT_REMOTE_CONNECTIONS", value_name = "N")]
    pub remote_connections: Option<usize>,
    /// Ids in a standard taxonomy domain that are not standard ids: refused (enforced) or
    /// accepted with a warning (advisory) [default: advisory].
    #[arg(long, env = "WEFT_TAXONOMY", value_name = "MODE")]
    pub taxonomy: Option<String>,
    /// What a failed verification of a call that asked for one does: report (attach the
    /// report) or strict (invalid_result) [default: report].
    #[arg(long, env = "WEFT_VERIFICATION", value_name = "MODE")]
    pub verification: Option<String>,
    /// Compatibility policy of tenants that set none: semver, immutable or none
    /// [default: semver].
    #[arg(long, env = "WEFT_COMPATIBILITY_POLICY", value_name = "POLICY")]
    pub compatibility_policy: Option<String>,
    /// Most per-capability policy overrides one tenant may set [default: 1000].
    #[arg(long, env = "WEFT_MAX_COMPATIBILITY_OVERRIDES", value_name = "N")]
    pub max_compatibility_overrides: Option<usize>,
}

fn config(args: &ServeArgs) -> Result<ServerConfig, String> {
    let file = match &args.config {
        Some(path) => ConfigFile::read(path).map_err(|e| e.to_string())?,
        None => ConfigFile::default(),
    };
    let mut config = ServerConfig::from_file(file).map_err(|e| e.to_string())?;
    if let Some(listen) = &args.listen {
        config.listen = parse_listen(listen).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = &args.data_dir {
        config.data_dir = dir.clone();
    }
    if let Some(dir) = &args.agents {
        config.agents_dir = Some(dir.clone());
    }
    if let Some(format) = &args.log_format {
        config.log_format = match format.as_str() {
            "human" => LogFormat::Human,
            "json" => LogFormat::Json,
            other => return Err(format!("invalid log format {other:?}: use human or json")),
        };
    }
    if let Some(n) = args.max_body_bytes {
        config.max_body_bytes = n;
    }
    if let Some(n) = args.event_retention {
        config.event_retention = n;
    }
    if let Some(n) = args.idempotency_hours {
        config.idempotency_hours = n;
    }
    if let Some(n) = args.agents_poll_ms {
        config.agents_poll_ms = n;
    }
    if let Some(id) = &args.node_id {
        config.node_id = id.clone();
    }
    if args.builtins {
        config.builtins = true;
    } else if args.no_builtins {
        config.builtins = false;
    }
    if let Some(n) = args.max_concurrent_calls {
        config.max_concurrent_calls = n;
    }
    if let Some(n) = args.max_concurrent_streams {
        config.max_concurrent_streams = n;
    }
    if let Some(t) = args.default_timeout {
        config.default_timeout_seconds = t;
    }
    if let Some(t) = args.max_timeout {
        config.max_timeout_seconds = t;
    }
    if let Some(n) = args.max_payload_bytes {
        config.max_payload_bytes = n;
    }
    if let Some(t) = args.header_read_timeout {
        config.header_read_timeout_seconds = t;
    }
    if let Some(n) = args.remote_connections {
        config.remote_connections = n;
    }
    if let Some(mode) = &args.taxonomy {
        config.taxonomy = weft_taxonomy::BindingMode::parse(mode)
            .ok_or_else(|| format!("invalid taxonomy mode {mode:?}: use enforced or advisory"))?;
    }
    if let Some(mode) = &args.verification {
        config.verification = weft_server::verification::VerificationMode::parse(mode)
            .ok_or_else(|| format!("invalid verification mode {mode:?}: use report or strict"))?;
    }
    if let Some(name) = &args.compatibility_policy {
        config.compatibility_policy = weft_server::Policy::parse(name).ok_or_else(|| {
            format!("invalid compatibility policy {name:?}: use semver, immutable or none")
        })?;
    }
    if let Some(n) = args.max_compatibility_overrides {
        config.max_compatibility_overrides = n;
    }
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_env("WEFT_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // A second initialisation (only possible in tests) is harmless to ignore.
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Runs the node until it is told to stop.
/// Every connection and open stream holds a file descriptor, and a soft limit of 1,024 (the
/// usual default) would cap the node far below `--max-concurrent-streams` on a machine that
/// allows more: raise the soft limit to the hard one, as servers do. Only logged on failure.
pub(crate) fn raise_open_file_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!(limit, "open file limit"),
        Err(error) => tracing::warn!(%error, "could not raise the open file limit"),
    }
}

pub fn run(args: &ServeArgs) -> std::io::Result<bool> {
    let config = match config(args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("weft serve: {message}");
            return Ok(false);
        }
    };
    init_logging(config.log_format);
    raise_open_file_limit();
    let data_dir = config.data_dir.clone();
    let (state, secret) = match weft_server::open(config) {
        Ok(opened) => opened,
        Err(error) => {
            eprintln!("weft serve: {error}");
            return Ok(false);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(weft_server::serve(state, |addr| {
        let mut out = std::io::stdout().lock();
        // These lines are the node's contract with scripts and tests: keep their shape.
        let _ = writeln!(out, "weft: listening on http://{addr}");
        if let Some(secret) = &secret {
            let _ = writeln!(
                out,
                "weft: admin token (shown once; saved to {}): {secret}",
                data_dir.join("admin.token").display()
            );
        }
        let _ = out.flush();
    }));
    match result {
        Ok(()) => Ok(true),
        Err(error) => {
            eprintln!("weft serve: {error}");
            Ok(false)
        }
    }
}
