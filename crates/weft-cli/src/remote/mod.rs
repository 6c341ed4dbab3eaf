//! The client side of the CLI: commands that talk to a running node over its HTTP API.
//!
//! Every command takes the same connection flags ([`ConnectArgs`]). Errors are printed as
//! `weft: CODE: MESSAGE (request ID)` and make the command exit 1.

pub mod admin;
pub mod call;
pub mod call_stream;
pub mod client;
pub mod compat;
pub mod discover;
pub mod publish;
pub mod table;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};
use clap::Args;
use serde_json::{Map, Value};

use self::client::{Client, Failure};

/// How to reach a node. With neither `--url` nor `WEFT_URL`, the URL the local node wrote to
/// `DATA_DIR/weft.url` is used; with neither `--token` nor `WEFT_TOKEN`, the admin token in
/// `DATA_DIR/admin.token` is used, but only for that same node.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// The node's URL, like http://127.0.0.1:7411 [default: from DATA_DIR/weft.url].
    #[arg(long, env = "WEFT_URL", value_name = "URL")]
    pub url: Option<String>,
    /// Bearer token [default: DATA_DIR/admin.token, for the node that wrote DATA_DIR/weft.url].
    #[arg(long, env = "WEFT_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Data directory of a local node [default: the user's data dir + /weft].
    #[arg(long, env = "WEFT_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

impl ConnectArgs {
    /// Resolves the URL and token and builds a client, or explains what to set.
    pub fn client(&self) -> Result<Client, Failure> {
        let dir = self
            .data_dir
            .clone()
            .unwrap_or_else(weft_server::config::default_data_dir);
        let url_file = dir.join("weft.url");
        let given_url = self.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
        let local_url =
            match read_setting(&url_file).and_then(|u| u.map(|u| normalize_url(&u)).transpose()) {
                Ok(url) => url,
                // A broken weft.url matters only when it is the URL to use.
                Err(failure) if given_url.is_none() => return Err(failure),
                Err(_) => None,
            };
        let base = match (given_url, &local_url) {
            (Some(url), _) => normalize_url(url)?,
            (None, Some(url)) => url.clone(),
            (None, None) => {
                return Err(Failure::Usage(format!(
                    "no node URL: pass --url or set WEFT_URL (or point --data-dir / WEFT_DATA_DIR \
                     at the data directory of a running node; {} does not exist)",
                    url_file.display()
                )));
            }
        };
        let given_token = self
            .token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let token = match given_token {
            Some(token) => token.to_owned(),
            // The local admin token is never sent to another node than the one it belongs to.
            None if local_url.as_deref() != Some(base.as_str()) => {
                return Err(Failure::Usage(format!(
                    "no token for {base}: pass --token or set WEFT_TOKEN"
                )));
            }
            None => {
                let token_file = dir.join("admin.token");
                read_setting(&token_file)?.ok_or_else(|| {
                    Failure::Usage(format!(
                        "no token: pass --token or set WEFT_TOKEN ({} does not exist)",
                        token_file.display()
                    ))
                })?
            }
        };
        Ok(Client::new(base, token))
    }
}

/// Reads a small settings file, trimmed; `None` when it does not exist or is blank.
fn read_setting(path: &Path) -> Result<Option<String>, Failure> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(Failure::Usage(format!(
                "cannot read {}: {error}",
                path.display()
            )));
        }
    };
    let mut text = String::new();
    file.take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|error| Failure::Usage(format!("cannot read {}: {error}", path.display())))?;
    let text = text.trim();
    Ok((!text.is_empty()).then(|| text.to_owned()))
}

/// `http://host:port` without a trailing slash; anything but http(s) is refused.
fn normalize_url(url: &str) -> Result<String, Failure> {
    let url = url.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() => Ok(url.to_owned()),
        _ => Err(Failure::Usage(format!(
            "invalid node URL {url:?}: use http://HOST:PORT"
        ))),
    }
}

/// Prints a failure on stderr, unless it is an output error (returned for `main` to handle).
/// `Ok(false)` means "exit 1".
pub fn finish(result: Result<(), Failure>) -> std::io::Result<bool> {
    let failure = match result {
        Ok(()) => return Ok(true),
        Err(Failure::Io(error)) => return Err(error),
        Err(Failure::Reported) => return Ok(false),
        Err(failure) => failure,
    };
    let mut err = anstream::stderr();
    let code_style = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
    match failure {
        Failure::Api(api) => {
            let request = api
                .request_id
                .map(|id| format!(" (request {id})"))
                .unwrap_or_default();
            writeln!(
                err,
                "weft: {code_style}{}{code_style:#}: {}{request}",
                api.code, api.message
            )?;
        }
        Failure::Unreachable { url, message, .. } => {
            writeln!(err, "weft: cannot reach {url}: {message}")?;
        }
        Failure::BadResponse { url, message } => {
            writeln!(err, "weft: unexpected answer from {url}: {message}")?;
        }
        Failure::Usage(message) => writeln!(err, "weft: {message}")?,
        Failure::Reported | Failure::Io(_) => {}
    }
    Ok(false)
}

/// Prints a JSON document on stdout.
pub fn print_json(value: &Value) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)
}

/// The most pages one listing follows (a guard against a server that never stops).
const MAX_PAGES: usize = 100_000;

/// `GET path` page after page, merged into one document shaped like a single page: every
/// item of `list_key`, the `revisions` maps merged, `nextCursor: null`, `hasMore: false`.
pub fn fetch_all(
    client: &Client,
    path: &str,
    query: &[(&str, String)],
    list_key: &str,
) -> Result<Value, Failure> {
    let bad = |message: String| Failure::BadResponse {
        url: format!("{}{path}", client.base()),
        message,
    };
    let mut merged: Option<Map<String, Value>> = None;
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let mut params = query.to_vec();
        if let Some(cursor) = &cursor {
            params.push(("cursor", cursor.clone()));
        }
        let Value::Object(mut page) = client.get(path, &params)? else {
            return Err(bad("a page is not a JSON object".into()));
        };
        let Some(Value::Array(items)) = page.remove(list_key) else {
            return Err(bad(format!("a page has no {list_key:?} list")));
        };
        let next = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let all = merged.get_or_insert_with(|| {
            let mut first = page.clone();
            first.insert(list_key.to_owned(), Value::Array(Vec::new()));
            first
        });
        if let Some(Value::Array(list)) = all.get_mut(list_key) {
            list.extend(items);
        }
        if let (Some(Value::Object(into)), Some(Value::Object(from))) =
            (all.get_mut("revisions"), page.remove("revisions"))
        {
            into.extend(from);
        }
        match next {
            None => {
                let mut all = merged.unwrap_or_default();
                all.insert("nextCursor".into(), Value::Null);
                all.insert("hasMore".into(), Value::Bool(false));
                return Ok(Value::Object(all));
            }
            Some(next) if !seen.insert(next.clone()) => {
                return Err(bad(format!("the cursor {next:?} came back twice")));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(bad(format!("more than {MAX_PAGES} pages")))
}

/// The string at `key`, or `-` when absent; arrays of strings are joined with `, `.
pub fn text(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) if items.is_empty() => "-".into(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::Null) | None => "-".into(),
        Some(other) => other.to_string(),
    }
}

/// The array at `key`, or an empty slice.
pub fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalized_or_refused() {
        assert_eq!(
            normalize_url(" http://127.0.0.1:7411/ ").ok(),
            Some("http://127.0.0.1:7411".to_owned())
        );
        assert!(normalize_url("127.0.0.1:7411").is_err());
        assert!(normalize_url("http://").is_err());
    }

    #[test]
    fn text_joins_lists_and_marks_absence() {
        let v = serde_json::json!({"a": "x", "b": ["p", "q"], "c": [], "d": null});
        assert_eq!(text(&v, "a"), "x");
        assert_eq!(text(&v, "b"), "p, q");
        assert_eq!(text(&v, "c"), "-");
        assert_eq!(text(&v, "d"), "-");
        assert_eq!(text(&v, "e"), "-");
    }
}
