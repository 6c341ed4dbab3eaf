//! `weft publish`: check a descriptor file locally, then register a provider with it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use clap::Args;
use serde_json::{Value, json};
use weft_contract::file::read_descriptor_file;

use super::client::{ApiFailure, Client, Failure, Method, encode, idempotency_key};
use super::{ConnectArgs, finish, items, print_json, text};
use crate::check::LimitArgs;
use crate::inputs::{format_of, read_text};
use crate::report::{Problem, Report};

/// The node a new provider is put on when `--node` is not given.
pub const DEFAULT_NODE: &str = "local";

/// Arguments of `weft publish`.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// A descriptor file (JSON or TOML): one descriptor, or a `descriptors` list.
    pub file: PathBuf,
    /// The provider to register (not needed with --dry-run).
    #[arg(long, value_name = "PROVIDER", required_unless_present = "dry_run")]
    pub provider: Option<String>,
    /// The node the provider runs on [default: the provider's current node, else "local"].
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// Idempotency-Key to send [default: a fresh one]. Passing the same key again replays
    /// the first answer instead of publishing twice.
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// Print the API's JSON answer instead of one line per descriptor.
    #[arg(long)]
    pub json: bool,
    /// Only check each descriptor against the node's compatibility policy
    /// (POST /v1/compatibility/check) and print the verdicts; nothing is published. Exits 1
    /// when any descriptor would be refused.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Runs `weft publish`.
pub fn run(args: &PublishArgs) -> std::io::Result<bool> {
    finish(publish(args))
}

fn publish(args: &PublishArgs) -> Result<(), Failure> {
    let descriptors = read_descriptors(&args.file, args)?;
    let client = args.connect.client()?;
    if args.dry_run {
        return super::compat::dry_run(&client, &descriptors, args.json);
    }
    let provider = args
        .provider
        .as_deref()
        .ok_or_else(|| Failure::Usage("--provider is required to publish".into()))?;
    let provider_path = format!("/v1/providers/{}", encode(provider));
    let previous = current_provider(&client, &provider_path, args.node.is_none())?;
    let node = match (&args.node, &previous) {
        (Some(node), _) => node.clone(),
        (None, Some(record)) => record
            .get("node_id")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_NODE)
            .to_owned(),
        (None, None) => DEFAULT_NODE.to_owned(),
    };
    let body = json!({ "node_id": node, "descriptors": descriptors });
    let key = args.idempotency_key.clone().unwrap_or_else(idempotency_key);
    let reply = match send_with_retries(&client, &provider_path, &body, &key) {
        Ok(reply) => reply,
        // 422 `invalid_descriptor` (the node's rules differ from the local check's) or
        // `taxonomy_mismatch` (docs/taxonomy.md): both list their problems.
        Err(Failure::Api(failure)) if failure.status == 422 => {
            print_remote_problems(&args.file, &failure)?;
            return Err(Failure::Api(failure));
        }
        // 409 `breaking_change`: the tenant's compatibility policy refused a descriptor.
        Err(Failure::Api(failure)) if failure.code == "breaking_change" => {
            let url = format!("{}{provider_path}", client.base());
            super::compat::print_refusals(&args.file, &failure, &url)?;
            return Err(Failure::Api(failure));
        }
        Err(failure) => return Err(failure),
    };
    if args.json {
        print_json(&reply.body)?;
        return Ok(());
    }
    print_outcomes(&reply.body)?;
    super::compat::print_accepted_findings(&reply.body)?;
    let mut err = anstream::stderr();
    // Advisory-mode taxonomy warnings: accepted, but the id should use `custom.`.
    let warn = Style::new().fg_color(Some(AnsiColor::Yellow.into())).bold();
    for warning in items(&reply.body, "warnings") {
        writeln!(
            err,
            "weft: {warn}warning{warn:#}: {}: descriptor {}: {}: {}",
            args.file.display(),
            warning
                .get("index")
                .map_or_else(|| "?".to_owned(), Value::to_string),
            text(warning, "code"),
            text(warning, "message"),
        )?;
    }
    let kept: Vec<String> = items(&reply.body, "descriptors")
        .iter()
        .map(qualified)
        .collect();
    if let Some(previous) = &previous {
        for served in items(previous, "descriptors") {
            let id = qualified(served);
            if !kept.contains(&id) {
                writeln!(err, "weft: provider {provider} no longer serves {id}")?;
            }
        }
    }
    let verb = if reply.status == 201 {
        "registered"
    } else if reply.body.get("changed").and_then(Value::as_bool) == Some(false) {
        "refreshed"
    } else {
        "updated"
    };
    let count = |status: &str| {
        items(&reply.body, "descriptors")
            .iter()
            .filter(|d| d.get("status").and_then(Value::as_str) == Some(status))
            .count()
    };
    writeln!(
        err,
        "weft: {verb} provider {provider} on node {node}: {} new, {} revised, {} unchanged",
        count("new"),
        count("revised"),
        count("unchanged")
    )?;
    Ok(())
}

fn qualified(value: &Value) -> String {
    format!("{}@{}", text(value, "id"), text(value, "version"))
}

/// Reads and checks the file; any problem is printed as `path:line:col: code: message` and
/// nothing is sent.
fn read_descriptors(path: &Path, args: &PublishArgs) -> Result<Vec<Value>, Failure> {
    let limits = args.limits.limits();
    let mut problems = Vec::new();
    let mut descriptors = Vec::new();
    match format_of(path) {
        None => problems.push(Problem::io(
            path,
            "unsupported_file",
            "descriptor files end in .json or .toml".into(),
        )),
        Some(format) => match read_text(path, limits.max_document_bytes) {
            Err(problem) => problems.push(problem),
            Ok(text) => match read_descriptor_file(&text, format, &limits) {
                Err(found) => problems.extend(
                    found
                        .into_iter()
                        .map(|p| Problem::at(path, p.position, p.code, p.message)),
                ),
                Ok(entries) => {
                    for entry in entries {
                        match entry.result {
                            Ok(descriptor) => descriptors.push(descriptor.canonical_value()),
                            Err(found) => problems.extend(
                                found
                                    .into_iter()
                                    .map(|p| Problem::at(path, p.position, p.code, p.message)),
                            ),
                        }
                    }
                }
            },
        },
    }
    if problems.is_empty() {
        return Ok(descriptors);
    }
    problems.sort_by_key(|p| (p.line, p.column));
    let report = Report {
        ok: false,
        errors: problems,
        ..Report::default()
    };
    report.print_human()?;
    writeln!(anstream::stderr(), "weft: nothing was published")?;
    Err(Failure::Reported)
}

/// The provider as registered now, if it is. Without `--node` its node is kept, so a token
/// that cannot read the provider cannot publish without `--node`.
fn current_provider(client: &Client, path: &str, need: bool) -> Result<Option<Value>, Failure> {
    match client.get(path, &[]) {
        Ok(record) => Ok(Some(record)),
        Err(Failure::Api(failure)) if failure.code == "not_found" => Ok(None),
        // With `--node` the record only feeds the "no longer serves" notes.
        Err(Failure::Api(failure)) if failure.code == "forbidden" && !need => Ok(None),
        Err(Failure::Api(mut failure)) if failure.code == "forbidden" => {
            failure.message = format!(
                "{} (publish keeps the provider's current node, which this token cannot \
                 read: pass --node)",
                failure.message
            );
            Err(Failure::Api(failure))
        }
        Err(failure) => Err(failure),
    }
}

/// PUTs with one Idempotency-Key, retrying while the node is still busy with an earlier
/// attempt and once after an exchange that broke off (the key makes a retry safe).
fn send_with_retries(
    client: &Client,
    path: &str,
    body: &Value,
    key: &str,
) -> Result<super::client::Reply, Failure> {
    let mut busy = 0;
    let mut broken = 0;
    loop {
        match client.send(Method::Put, path, Some(body), Some(key)) {
            Err(Failure::Api(f)) if f.code == "idempotency_key_in_flight" && busy < 5 => {
                busy += 1;
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(Failure::Unreachable {
                maybe_sent: true, ..
            }) if broken < 1 => {
                broken += 1;
                std::thread::sleep(Duration::from_millis(500));
            }
            other => return other,
        }
    }
}

/// One line per descriptor: `id@version  revision  new|revised|unchanged`.
fn print_outcomes(body: &Value) -> std::io::Result<()> {
    let mut out = anstream::stdout().lock();
    let bold = Style::new().bold();
    for outcome in items(body, "descriptors") {
        let status = text(outcome, "status");
        let style = match status.as_str() {
            "new" => Style::new().fg_color(Some(AnsiColor::Green.into())),
            "revised" => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            _ => Style::new().dimmed(),
        };
        writeln!(
            out,
            "{bold}{}{bold:#}  {}  {style}{status}{style:#}",
            qualified(outcome),
            text(outcome, "revision")
        )?;
    }
    Ok(())
}

/// `FILE: descriptor N: pointer: code: message` for each problem the node found.
fn print_remote_problems(path: &Path, failure: &ApiFailure) -> std::io::Result<()> {
    let mut err = anstream::stderr();
    let place = Style::new().bold();
    let code = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
    let problems = failure
        .details
        .as_ref()
        .map_or(&[][..], |d| items(d, "problems"));
    for problem in problems {
        let index = problem
            .get("index")
            .map_or_else(|| "?".to_owned(), Value::to_string);
        writeln!(
            err,
            "{place}{}{place:#}: descriptor {index}: {}: {code}{}{code:#}: {}",
            path.display(),
            text(problem, "pointer"),
            text(problem, "code"),
            text(problem, "message"),
        )?;
    }
    Ok(())
}
