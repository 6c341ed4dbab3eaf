//! `weft call`: call a capability pinned by `id@version` and descriptor revision.
//!
//! Without `--revision` the command pins first: it reads the version's current revision
//! (`GET /v1/capabilities/{id}/versions/{version}`), says so on stderr, and sends that.
//! A version requirement (`echo@^1`) is resolved first against the versions the node serves.
//!
//! A capability whose `io_mode` is not `unary` is called over the `/v1/streams` WebSocket
//! instead (see [`super::call_stream`]): its frames are printed as NDJSON, and stdin carries
//! the caller's chunks for `client_streaming` and `bidirectional` capabilities.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::Args;
use serde_json::{Map, Value};
use weft_contract::{CapabilityRequirement, CapabilityVersion, QualifiedId};

use super::client::{ApiFailure, Client, Failure, Method, encode};
use super::{ConnectArgs, call_stream, finish, items, print_json, text};

/// Largest payload read from a file or stdin, in bytes (the node enforces its own limit).
const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;

/// What to call: an exact `ID@VERSION`, or `ID@REQUIREMENT` resolved against the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallTarget {
    /// An exact version: `echo@1.0.0`.
    Exact(QualifiedId),
    /// A requirement such as `echo@^1`: the highest served version matching it is called.
    Requirement(CapabilityRequirement),
}

/// Parses `ID@VERSION`, else `ID@REQUIREMENT`; a bare `ID` is refused.
fn parse_call_target(text: &str) -> Result<CallTarget, String> {
    if !text.contains('@') {
        return Err(format!(
            "{text:?} names no version: expected ID@VERSION (like echo@1.0.0) or \
             ID@REQUIREMENT (like echo@^1)"
        ));
    }
    if let Ok(exact) = QualifiedId::parse(text) {
        return Ok(CallTarget::Exact(exact));
    }
    CapabilityRequirement::parse(text)
        .map(CallTarget::Requirement)
        .map_err(|error| {
            format!(
                "expected ID@VERSION (like echo@1.0.0) or ID@REQUIREMENT (like echo@^1): {error}"
            )
        })
}

/// Where the payload comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSource {
    /// JSON text given on the command line.
    Inline(String),
    /// A file to read (`@PATH`).
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
}

/// Parses `--input`: `-` is stdin, `@PATH` a file, anything else inline JSON.
fn parse_input(text: &str) -> Result<InputSource, String> {
    match text {
        "-" => Ok(InputSource::Stdin),
        "@" => Err("@ needs a file path: --input @PATH".into()),
        _ => Ok(match text.strip_prefix('@') {
            Some(path) => InputSource::File(PathBuf::from(path)),
            None => InputSource::Inline(text.to_owned()),
        }),
    }
}

/// Parses `--timeout`: any finite number of seconds (the node checks the range).
fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() => Ok(seconds),
        _ => Err(format!("{text:?} is not a number of seconds")),
    }
}

/// Arguments of `weft call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// What to call: ID@VERSION, or ID@REQUIREMENT (like echo@^1) for the highest served
    /// version that matches. A malformed value is a usage error (exit 2).
    #[arg(value_name = "ID@VERSION", value_parser = parse_call_target)]
    pub target: CallTarget,
    /// The descriptor revision to pin, sent as is [default: the current one, read first].
    #[arg(long, value_name = "REVISION")]
    pub revision: Option<String>,
    /// The payload: inline JSON, @PATH to read a file, or - for stdin [default: {}].
    #[arg(long, value_name = "JSON|@FILE|-", value_parser = parse_input)]
    pub input: Option<InputSource>,
    /// Deadline in seconds (fractions allowed) for validation plus the provider's work
    /// [default: the node's]. The node refuses values outside (0, its maximum]; this
    /// client waits for the node's answer until 10 s past the deadline.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout,
          allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Only this provider may answer.
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// Only providers on this node may answer.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// The call id (1-128 visible ASCII characters) [default: minted by the node].
    #[arg(long, value_name = "ID")]
    pub call_id: Option<String>,
    /// Print the API's whole JSON answer instead of the result alone.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Runs `weft call`.
pub fn run(args: &CallArgs) -> std::io::Result<bool> {
    let mut notes = Vec::new();
    let succeeded = finish(call(args, &mut notes))?;
    // Explanations that belong under the error line `finish` printed.
    let mut err = anstream::stderr();
    for note in notes {
        writeln!(err, "{note}")?;
    }
    Ok(succeeded)
}

/// Does the work; lines to print after the error line go to `notes`.
fn call(args: &CallArgs, notes: &mut Vec<String>) -> Result<(), Failure> {
    // Everything local is checked before anything is sent.
    let payload = read_payload(args.input.as_ref())?;
    // Wait for the node's own answer, which comes by the call's deadline at the latest.
    let deadline = args
        .timeout
        .filter(|t| *t > 0.0 && *t <= 3600.0)
        .unwrap_or(30.0);
    let client = args
        .connect
        .client()?
        .with_timeout(std::time::Duration::from_secs_f64(deadline + 10.0));
    let (id, version) = match &args.target {
        CallTarget::Exact(qualified) => (qualified.id.to_string(), qualified.version.to_string()),
        CallTarget::Requirement(requirement) => resolve(&client, requirement, args)?,
    };
    let (revision, io_mode) = match &args.revision {
        Some(revision) => (revision.clone(), quiet_io_mode(&client, &id, &version)?),
        None => pin(&client, &id, &version, notes)?,
    };
    if io_mode.as_deref().is_some_and(|mode| mode != "unary") {
        let mode = io_mode.as_deref().unwrap_or_default();
        if call_stream::takes_input(mode) && args.input == Some(InputSource::Stdin) {
            return Err(Failure::Usage(format!(
                "--input - cannot be used with {id}@{version}: it is {mode}, and stdin \
                 carries its chunks (pass the initial payload inline or as @FILE)"
            )));
        }
        let body = envelope(args, &id, &version, &revision, payload);
        return match call_stream::run(client.base(), client.token(), &body, mode) {
            Err(Failure::Api(api)) => {
                explain(&api, &id, &version, notes);
                Err(Failure::Api(api))
            }
            other => other,
        };
    }
    let body = envelope(args, &id, &version, &revision, payload);
    match client.send(Method::Post, "/v1/calls", Some(&body), None) {
        Ok(reply) if args.json => print_json(&reply.body)?,
        Ok(reply) => print_json(reply.body.get("result").unwrap_or(&Value::Null))?,
        Err(Failure::Api(api)) => {
            explain(&api, &id, &version, notes);
            return Err(Failure::Api(api));
        }
        Err(other) => return Err(other),
    }
    Ok(())
}

/// The `POST /v1/calls` body.
fn envelope(args: &CallArgs, id: &str, version: &str, revision: &str, payload: Value) -> Value {
    let mut body = Map::new();
    if let Some(call_id) = &args.call_id {
        body.insert("call_id".into(), call_id.clone().into());
    }
    body.insert("capability_id".into(), id.into());
    body.insert("version".into(), version.into());
    body.insert("descriptor_revision".into(), revision.into());
    body.insert("payload".into(), payload);
    if let Some(seconds) = args.timeout {
        body.insert("timeout_seconds".into(), seconds.into());
    }
    if let Some(provider) = &args.provider {
        body.insert("provider_id".into(), provider.clone().into());
    }
    if let Some(node) = &args.node {
        body.insert("node_id".into(), node.clone().into());
    }
    Value::Object(body)
}

/// Reads and parses the payload; `{}` without `--input`.
fn read_payload(input: Option<&InputSource>) -> Result<Value, Failure> {
    let invalid = |what: &str, error: serde_json::Error| {
        Failure::Usage(format!("invalid_json: {what} is not valid JSON: {error}"))
    };
    match input {
        None => Ok(Value::Object(Map::new())),
        Some(InputSource::Inline(text)) => {
            serde_json::from_str(text).map_err(|e| invalid("--input", e))
        }
        Some(InputSource::File(path)) => {
            let shown = path.display().to_string();
            let file = std::fs::File::open(path)
                .map_err(|e| Failure::Usage(format!("cannot read {shown}: {e}")))?;
            let bytes = read_bounded(file, &shown)?;
            serde_json::from_slice(&bytes).map_err(|e| invalid(&shown, e))
        }
        Some(InputSource::Stdin) => {
            let bytes = read_bounded(std::io::stdin().lock(), "stdin")?;
            serde_json::from_slice(&bytes).map_err(|e| invalid("stdin", e))
        }
    }
}

/// Reads at most [`MAX_INPUT_BYTES`] from `reader`.
fn read_bounded(reader: impl Read, what: &str) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    // One byte past the limit tells "at the limit" from "over it".
    reader
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(format!("cannot read {what}: {e}")))?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(Failure::Usage(format!(
            "{what} is larger than {MAX_INPUT_BYTES} bytes"
        )));
    }
    Ok(bytes)
}

/// Picks the highest version matching `requirement` that a provider (matching `--provider`
/// and `--node`) serves, and says which on stderr.
fn resolve(
    client: &Client,
    requirement: &CapabilityRequirement,
    args: &CallArgs,
) -> Result<(String, String), Failure> {
    let id = requirement.id.to_string();
    let view = client.get(&format!("/v1/capabilities/{}", encode(&id)), &[])?;
    let Some(listed) = view.get("versions").and_then(Value::as_array) else {
        return Err(Failure::Usage(format!(
            "not_found: {id} is a feature-catalog entry, not a callable capability"
        )));
    };
    let wanted = |provider: &Value| {
        args.provider
            .as_deref()
            .is_none_or(|p| text(provider, "provider_id") == p)
            && args
                .node
                .as_deref()
                .is_none_or(|n| text(provider, "node_id") == n)
    };
    let served: Vec<CapabilityVersion> = listed
        .iter()
        .filter(|v| items(v, "providers").iter().any(wanted))
        .filter_map(|v| CapabilityVersion::parse(&text(v, "version")).ok())
        .collect();
    let Some(chosen) = requirement.requirement.select_highest(&served) else {
        let mut shown: Vec<String> = served.iter().map(ToString::to_string).collect();
        if shown.is_empty() {
            shown.push("none".into());
        }
        return Err(Failure::Usage(format!(
            "version_mismatch: no served version of {id} matches {}; served: {}",
            requirement.requirement,
            shown.join(", ")
        )));
    };
    let version = chosen.to_string();
    writeln!(
        anstream::stderr(),
        "weft: resolved {requirement} to {id}@{version}"
    )?;
    Ok((id, version))
}

/// The `io_mode` of `id@version` when `--revision` was given, read without announcing a
/// pin; `None` (call as unary, and let the node answer) when the node will not say.
fn quiet_io_mode(client: &Client, id: &str, version: &str) -> Result<Option<String>, Failure> {
    let path = format!(
        "/v1/capabilities/{}/versions/{}",
        encode(id),
        encode(version)
    );
    match client.get(&path, &[]) {
        Ok(view) => Ok(io_mode_of(&view)),
        // No capabilities:read, no such version, …: the call endpoint gives its own answer.
        Err(Failure::Api(_)) => Ok(None),
        Err(other) => Err(other),
    }
}

/// The `io_mode` in a version view's descriptor.
fn io_mode_of(view: &Value) -> Option<String> {
    view.get("descriptor")
        .and_then(|d| d.get("io_mode"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Reads the current revision (and the `io_mode`) of `id@version` and says so on stderr.
fn pin(
    client: &Client,
    id: &str,
    version: &str,
    notes: &mut Vec<String>,
) -> Result<(String, Option<String>), Failure> {
    let path = format!(
        "/v1/capabilities/{}/versions/{}",
        encode(id),
        encode(version)
    );
    let view = match client.get(&path, &[]) {
        Ok(view) => view,
        Err(Failure::Api(api)) if api.code == "not_found" => {
            return Err(Failure::Api(why_missing(client, id, version, api)));
        }
        Err(Failure::Api(api)) if api.code == "forbidden" => {
            notes.push(
                "weft: pinning reads the capability (capabilities:read); a token without it \
                 must pass --revision"
                    .into(),
            );
            return Err(Failure::Api(api));
        }
        Err(other) => return Err(other),
    };
    let Some(revision) = view.get("revision").and_then(Value::as_str) else {
        return Err(Failure::BadResponse {
            url: format!("{}{path}", client.base()),
            message: "the answer has no revision".into(),
        });
    };
    writeln!(
        anstream::stderr(),
        "weft: pinned {id}@{version} at {revision}"
    )?;
    Ok((revision.to_owned(), io_mode_of(&view)))
}

/// Asks the call endpoint itself why `id@version` cannot be pinned, so that the answer is
/// the node's own (`version_mismatch` with the available versions, or `not_found`).
///
/// Safe to send: the node looks the capability up before it compares revisions, and an
/// empty revision never matches one, so no provider can run. Any other answer (the version
/// appeared meanwhile, no call scope, …) keeps the original `not_found`.
fn why_missing(client: &Client, id: &str, version: &str, original: ApiFailure) -> ApiFailure {
    let probe = serde_json::json!({
        "capability_id": id,
        "version": version,
        "descriptor_revision": "",
        "payload": {},
    });
    match client.send(Method::Post, "/v1/calls", Some(&probe), None) {
        Err(Failure::Api(api)) if matches!(api.code.as_str(), "not_found" | "version_mismatch") => {
            api
        }
        _ => original,
    }
}

/// The lines that explain a failed call beyond its error line.
fn explain(api: &ApiFailure, id: &str, version: &str, notes: &mut Vec<String>) {
    let details = api.details.as_ref().unwrap_or(&Value::Null);
    match api.code.as_str() {
        "invalid_payload" | "invalid_result" => {
            for error in items(details, "errors") {
                let pointer = error
                    .get("instance_pointer")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                    .unwrap_or("(root)");
                notes.push(format!("  at {pointer}: {}", text(error, "message")));
            }
        }
        "revision_mismatch" => {
            if let Some(current) = details.get("current_revision").and_then(Value::as_str) {
                notes.push(format!(
                    "weft: the current revision is {current}; rediscover with \
                     weft show {id}@{version}"
                ));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_exact_versions_or_requirements() {
        assert!(matches!(
            parse_call_target("echo@1.0.0"),
            Ok(CallTarget::Exact(q)) if q.to_string() == "echo@1.0.0"
        ));
        assert!(matches!(
            parse_call_target("echo@^1"),
            Ok(CallTarget::Requirement(r)) if r.to_string() == "echo@^1"
        ));
        assert!(parse_call_target("echo").is_err());
        assert!(parse_call_target("Echo@1.0.0").is_err());
        assert!(parse_call_target("echo@1.0.0+build").is_err());
        assert!(parse_call_target("echo@one").is_err());
    }

    #[test]
    fn inputs_are_inline_files_or_stdin() {
        assert_eq!(parse_input("-"), Ok(InputSource::Stdin));
        assert_eq!(
            parse_input("@in.json"),
            Ok(InputSource::File(PathBuf::from("in.json")))
        );
        assert_eq!(
            parse_input("{\"a\":1}"),
            Ok(InputSource::Inline("{\"a\":1}".into()))
        );
        assert!(parse_input("@").is_err());
    }

    #[test]
    fn timeouts_must_be_finite() {
        assert_eq!(parse_timeout("2.5"), Ok(2.5));
        assert_eq!(parse_timeout("-1"), Ok(-1.0));
        assert!(parse_timeout("nan").is_err());
        assert!(parse_timeout("inf").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    #[test]
    fn failures_are_explained_line_by_line() {
        let api = |code: &str, details: Value| ApiFailure {
            status: 422,
            code: code.into(),
            message: String::new(),
            request_id: None,
            details: Some(details),
        };
        let mut notes = Vec::new();
        let errors = serde_json::json!({"errors": [
            {"instance_pointer": "/text", "schema_path": "/properties/text/type", "message": "not a string"},
            {"instance_pointer": "", "schema_path": "/required", "message": "text is required"},
        ]});
        explain(&api("invalid_payload", errors), "echo", "1.0.0", &mut notes);
        assert_eq!(
            notes,
            ["  at /text: not a string", "  at (root): text is required"]
        );
        notes.clear();
        let stale = serde_json::json!({"current_revision": "sha256:abc"});
        explain(
            &api("revision_mismatch", stale),
            "echo",
            "1.0.0",
            &mut notes,
        );
        assert_eq!(
            notes,
            ["weft: the current revision is sha256:abc; rediscover with weft show echo@1.0.0"]
        );
    }
}
