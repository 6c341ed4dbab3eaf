//! Administration: `weft token create|list|revoke` and `weft tenant create|list`.

use std::io::Write;

use anstyle::Style;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::client::{Failure, Method, encode};
use super::discover::PageArgs;
use super::table::Table;
use super::{ConnectArgs, fetch_all, finish, items, print_json, text};

/// `weft token …`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token; its secret is printed once and never again.
    Create(TokenCreateArgs),
    /// List the tokens of your tenant (operators: of any tenant, with --tenant).
    List(TokenListArgs),
    /// Revoke a token: it stops working at once.
    Revoke(TokenRevokeArgs),
}

/// Arguments of `weft token create`.
#[derive(Debug, Args)]
pub struct TokenCreateArgs {
    /// A label for the token.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// A scope: capabilities:read, capabilities:call, capabilities:publish or admin
    /// (repeat for several).
    #[arg(long = "scope", value_name = "SCOPE", required = true)]
    pub scopes: Vec<String>,
    /// The tenant the token acts for (operators only) [default: your tenant].
    #[arg(long, value_name = "TENANT")]
    pub tenant: Option<String>,
    /// Print the API's JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Arguments of `weft token list`.
#[derive(Debug, Args)]
pub struct TokenListArgs {
    /// The tenant whose tokens to list (operators only) [default: your tenant].
    #[arg(long, value_name = "TENANT")]
    pub tenant: Option<String>,
    /// Print the API's JSON (every page merged into one document) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Arguments of `weft token revoke`.
#[derive(Debug, Args)]
pub struct TokenRevokeArgs {
    /// The token id (`tok_…`), as `weft token list` shows it.
    pub id: String,
    /// Print the API's JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `weft tenant …`.
#[derive(Debug, Subcommand)]
pub enum TenantCommand {
    /// Create a tenant (operators only).
    Create(TenantCreateArgs),
    /// List tenants (operators only).
    List(TenantListArgs),
}

/// Arguments of `weft tenant create`.
#[derive(Debug, Args)]
pub struct TenantCreateArgs {
    /// The tenant id: lowercase letters, digits, '.', '_' and '-'.
    pub id: String,
    /// A display name [default: the id].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Print the API's JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Arguments of `weft tenant list`.
#[derive(Debug, Args)]
pub struct TenantListArgs {
    /// Print the API's JSON (every page merged into one document) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Runs a `weft token` command.
pub fn run_token(command: &TokenCommand) -> std::io::Result<bool> {
    finish(match command {
        TokenCommand::Create(args) => token_create(args),
        TokenCommand::List(args) => token_list(args),
        TokenCommand::Revoke(args) => token_revoke(args),
    })
}

/// Runs a `weft tenant` command.
pub fn run_tenant(command: &TenantCommand) -> std::io::Result<bool> {
    finish(match command {
        TenantCommand::Create(args) => tenant_create(args),
        TenantCommand::List(args) => tenant_list(args),
    })
}

/// Prints `label: value` lines with bold labels.
fn print_fields(fields: &[(&str, String)]) -> std::io::Result<()> {
    let mut out = anstream::stdout().lock();
    let label = Style::new().bold();
    let width = fields.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 1;
    for (name, value) in fields {
        let name = format!("{name}:");
        writeln!(out, "{label}{name:<width$}{label:#} {value}")?;
    }
    Ok(())
}

fn token_create(args: &TokenCreateArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let mut body = json!({ "name": args.name, "scopes": args.scopes });
    if let (Some(tenant), Value::Object(map)) = (&args.tenant, &mut body) {
        map.insert("tenant".into(), Value::String(tenant.clone()));
    }
    let reply = client.send(Method::Post, "/v1/tokens", Some(&body), None)?;
    if args.json {
        print_json(&reply.body)?;
        return Ok(());
    }
    let token = &reply.body;
    print_fields(&[
        ("id", text(token, "id")),
        ("tenant", text(token, "tenant")),
        ("name", text(token, "name")),
        ("scopes", text(token, "scopes")),
        ("token", text(token, "token")),
    ])?;
    writeln!(
        anstream::stderr(),
        "weft: store the token now: it is not shown again"
    )?;
    Ok(())
}

fn token_list(args: &TokenListArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let mut query = vec![args.page.limit()];
    if let Some(tenant) = &args.tenant {
        query.push(("tenant", tenant.clone()));
    }
    let list = fetch_all(&client, "/v1/tokens", &query, "tokens")?;
    if args.json {
        print_json(&list)?;
        return Ok(());
    }
    let mut table = Table::new(&["ID", "NAME", "TENANT", "SCOPES", "CREATED", "REVOKED"]);
    for token in items(&list, "tokens") {
        table.row(
            ["id", "name", "tenant", "scopes", "createdAt", "revokedAt"]
                .iter()
                .map(|key| text(token, key))
                .collect(),
        );
    }
    table.print()?;
    Ok(())
}

fn token_revoke(args: &TokenRevokeArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let path = format!("/v1/tokens/{}/revoke", encode(&args.id));
    let reply = client.send(Method::Post, &path, None, None)?;
    if args.json {
        print_json(&reply.body)?;
    } else {
        writeln!(
            anstream::stdout(),
            "revoked {} (at {})",
            text(&reply.body, "id"),
            text(&reply.body, "revokedAt")
        )?;
    }
    Ok(())
}

fn tenant_create(args: &TenantCreateArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let mut body = json!({ "id": args.id });
    if let (Some(name), Value::Object(map)) = (&args.name, &mut body) {
        map.insert("name".into(), Value::String(name.clone()));
    }
    let reply = client.send(Method::Post, "/v1/tenants", Some(&body), None)?;
    if args.json {
        print_json(&reply.body)?;
        return Ok(());
    }
    let tenant = &reply.body;
    print_fields(&[
        ("tenant", text(tenant, "id")),
        ("name", text(tenant, "name")),
        ("created", text(tenant, "createdAt")),
    ])?;
    Ok(())
}

fn tenant_list(args: &TenantListArgs) -> Result<(), Failure> {
    let client = args.connect.client()?;
    let list = fetch_all(&client, "/v1/tenants", &[args.page.limit()], "tenants")?;
    if args.json {
        print_json(&list)?;
        return Ok(());
    }
    let mut table = Table::new(&["ID", "NAME", "CREATED"]);
    for tenant in items(&list, "tenants") {
        table.row(
            ["id", "name", "createdAt"]
                .iter()
                .map(|key| text(tenant, key))
                .collect(),
        );
    }
    table.print()?;
    Ok(())
}
