//! Reading the registry: `weft discover`, `weft describe`, `weft show` and `weft nodes`.

use std::io::Write;

use anstyle::Style;
use clap::Args;
use serde_json::Value;

use super::client::{Failure, encode};
use super::table::Table;
use super::{ConnectArgs, fetch_all, finish, items, print_json, text};

/// Page size for listings, when fetching every page.
#[derive(Debug, Clone, Copy, Args)]
pub struct PageArgs {
    /// Items fetched per request (1-100); every page is fetched either way.
    #[arg(long, value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u8).range(1..=100))]
    pub page_size: u8,
}

impl PageArgs {
    /// The `limit` query parameter.
    pub fn limit(self) -> (&'static str, String) {
        ("limit", self.page_size.to_string())
    }
}

/// Arguments of `weft discover`.
#[derive(Debug, Args)]
pub struct DiscoverArgs {
    /// Only this capability id.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Only capabilities served on this node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// Only capabilities served by this provider.
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// Only this I/O mode: unary, server_streaming, client_streaming or bidirectional.
    #[arg(long, value_name = "MODE")]
    pub io_mode: Option<String>,
    /// Case-insensitive text to find in the id, title or description.
    #[arg(long, value_name = "TEXT")]
    pub q: Option<String>,
    /// Print the API's JSON (every page merged into one document) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Arguments of `weft describe`.
#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The node id.
    pub node: String,
    /// Print JSON: the node's capability listing (every page merged) with the node under
    /// `node`.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// What `weft show` looks at: a capability id, or one version of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The capability id.
    pub id: String,
    /// The version, when one was named.
    pub version: Option<String>,
}

/// Parses `ID` or `ID@VERSION`.
fn parse_target(text: &str) -> Result<Target, String> {
    let (id, version) = match text.split_once('@') {
        Some((id, version)) => (id, Some(version)),
        None => (text, None),
    };
    if id.is_empty() || version.is_some_and(str::is_empty) {
        return Err("expected ID or ID@VERSION".into());
    }
    Ok(Target {
        id: id.to_owned(),
        version: version.map(str::to_owned),
    })
}

/// Arguments of `weft show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A capability id (every version) or ID@VERSION (the descriptor and its history).
    #[arg(value_name = "ID[@VERSION]", value_parser = parse_target)]
    pub target: Target,
    /// Print the API's JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Arguments of `weft nodes`.
#[derive(Debug, Args)]
pub struct NodesArgs {
    /// Print the API's JSON (every page merged into one document) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// The capabilities of a listing as a table.
fn capability_table(list: &Value) -> Table {
    let revisions = list.get("revisions");
    let mut table = Table::new(&["ID@VERSION", "IO_MODE", "REVISION", "TITLE"]);
    for descriptor in items(list, "capabilities") {
        let qualified = format!("{}@{}", text(descriptor, "id"), text(descriptor, "version"));
        let revision = revisions
            .and_then(|r| r.get(&qualified))
            .and_then(Value::as_str)
            .unwrap_or("-")
            .to_owned();
        table.row(vec![
            qualified,
            text(descriptor, "io_mode"),
            revision,
            text(descriptor, "title"),
        ]);
    }
    table
}

fn print_capabilities(list: &Value) -> std::io::Result<()> {
    let table = capability_table(list);
    if table.is_empty() {
        writeln!(anstream::stderr(), "weft: no capabilities found")
    } else {
        table.print()
    }
}

/// Runs `weft discover`.
pub fn run_discover(args: &DiscoverArgs) -> std::io::Result<bool> {
    finish(discover(args))
}

fn discover(args: &DiscoverArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let mut query = vec![args.page.limit()];
    let filters = [
        ("id", &args.id),
        ("node_id", &args.node),
        ("provider_id", &args.provider),
        ("io_mode", &args.io_mode),
        ("q", &args.q),
    ];
    for (key, value) in filters {
        if let Some(value) = value {
            query.push((key, value.clone()));
        }
    }
    let list = fetch_all(&client, "/v1/capabilities", &query, "capabilities")?;
    if args.json {
        print_json(&list)?;
    } else {
        print_capabilities(&list)?;
    }
    Ok(())
}

/// Runs `weft describe`.
pub fn run_describe(args: &DescribeArgs) -> std::io::Result<bool> {
    finish(describe(args))
}

fn describe(args: &DescribeArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let node = client.get(&format!("/v1/nodes/{}", encode(&args.node)), &[])?;
    let query = [args.page.limit(), ("node_id", args.node.clone())];
    let mut list = fetch_all(&client, "/v1/capabilities", &query, "capabilities")?;
    if args.json {
        if let Value::Object(map) = &mut list {
            map.insert("node".into(), node);
        }
        print_json(&list)?;
        return Ok(());
    }
    let mut out = anstream::stdout().lock();
    let label = Style::new().bold();
    for (name, key) in [
        ("node", "node_id"),
        ("status", "status"),
        ("last seen", "last_seen"),
        ("providers", "providers"),
        ("tags", "tags"),
    ] {
        writeln!(out, "{label}{name:<10}{label:#} {}", text(&node, key))?;
    }
    writeln!(out)?;
    drop(out);
    print_capabilities(&list)?;
    Ok(())
}

/// Runs `weft show`.
pub fn run_show(args: &ShowArgs) -> std::io::Result<bool> {
    finish(show(args))
}

fn show(args: &ShowArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let id = encode(&args.target.id);
    let path = match &args.target.version {
        None => format!("/v1/capabilities/{id}"),
        Some(version) => format!("/v1/capabilities/{id}/versions/{}", encode(version)),
    };
    let view = client.get(&path, &[])?;
    if args.json {
        print_json(&view)?;
    } else if args.target.version.is_some() {
        print_version(&args.target, &view)?;
    } else {
        print_versions(&view)?;
    }
    Ok(())
}

/// `GET /v1/capabilities/{id}` for people: the versions table, or a feature entry's fields.
fn print_versions(view: &Value) -> Result<(), Failure> {
    let bold = Style::new().bold();
    let mut out = anstream::stdout().lock();
    writeln!(out, "{bold}{}{bold:#}", text(view, "id"))?;
    let Some(versions) = view.get("versions").and_then(Value::as_array) else {
        // A feature-catalog entry: print its fields.
        if let Value::Object(map) = view {
            for (key, value) in map.iter().filter(|(k, _)| k.as_str() != "id") {
                let shown = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                writeln!(out, "{key}: {shown}")?;
            }
        }
        return Ok(());
    };
    drop(out);
    let mut table = Table::new(&["VERSION", "IO_MODE", "REVISION", "TITLE", "PROVIDERS"]);
    for version in versions {
        let current = text(version, "revision");
        let providers: Vec<String> = items(version, "providers")
            .iter()
            .map(|p| {
                let stale = if text(p, "revision") == current {
                    ""
                } else {
                    ", older revision"
                };
                format!("{} ({}{stale})", text(p, "provider_id"), text(p, "node_id"))
            })
            .collect();
        table.row(vec![
            text(version, "version"),
            text(version, "io_mode"),
            current,
            text(version, "title"),
            if providers.is_empty() {
                "-".into()
            } else {
                providers.join(", ")
            },
        ]);
    }
    table.print()?;
    Ok(())
}

/// `GET /v1/capabilities/{id}/versions/{version}` for people.
fn print_version(target: &Target, view: &Value) -> Result<(), Failure> {
    let bold = Style::new().bold();
    let mut out = anstream::stdout().lock();
    let version = target.version.as_deref().unwrap_or_default();
    writeln!(out, "{bold}{}@{version}{bold:#}", target.id)?;
    writeln!(out, "revision: {}", text(view, "revision"))?;
    writeln!(out, "\n{bold}history{bold:#} (oldest first)")?;
    drop(out);
    let mut history = Table::new(&["REVISION", "PUBLISHED_AT"]);
    for entry in items(view, "history") {
        history.row(vec![text(entry, "revision"), text(entry, "published_at")]);
    }
    history.print()?;
    let mut out = anstream::stdout().lock();
    writeln!(out, "\n{bold}providers{bold:#}")?;
    drop(out);
    let mut providers = Table::new(&["PROVIDER", "NODE", "REVISION"]);
    for p in items(view, "providers") {
        providers.row(vec![
            text(p, "provider_id"),
            text(p, "node_id"),
            text(p, "revision"),
        ]);
    }
    if providers.is_empty() {
        writeln!(anstream::stdout(), "-")?;
    } else {
        providers.print()?;
    }
    let mut out = anstream::stdout().lock();
    writeln!(out, "\n{bold}descriptor{bold:#}")?;
    let descriptor = view.get("descriptor").unwrap_or(&Value::Null);
    let pretty = serde_json::to_string_pretty(descriptor).map_err(std::io::Error::other)?;
    writeln!(out, "{pretty}")?;
    Ok(())
}

/// Runs `weft nodes`.
pub fn run_nodes(args: &NodesArgs) -> std::io::Result<bool> {
    finish(nodes(args))
}

fn nodes(args: &NodesArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let list = fetch_all(&client, "/v1/nodes", &[args.page.limit()], "nodes")?;
    if args.json {
        print_json(&list)?;
        return Ok(());
    }
    let mut table = Table::new(&["NODE", "STATUS", "LAST_SEEN", "PROVIDERS", "TAGS"]);
    for node in items(&list, "nodes") {
        table.row(
            ["node_id", "status", "last_seen", "providers", "tags"]
                .iter()
                .map(|key| text(node, key))
                .collect(),
        );
    }
    if table.is_empty() {
        writeln!(anstream::stderr(), "weft: no nodes")?;
    } else {
        table.print()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_at_the_at_sign() {
        assert_eq!(
            parse_target("echo@1.0.0"),
            Ok(Target {
                id: "echo".into(),
                version: Some("1.0.0".into())
            })
        );
        assert_eq!(parse_target("feature:vision").map(|t| t.version), Ok(None));
        assert!(parse_target("@1.0.0").is_err());
        assert!(parse_target("echo@").is_err());
    }
}
