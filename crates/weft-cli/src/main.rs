//! `weft`: the one binary of the capability fabric.
//!
//! A thin shell over the library crates: it parses arguments, reads files, and prints. The
//! rules themselves live in `weft-contract` (descriptors) and the crates beside it.

mod agent;
mod bench;
mod check;
mod diff;
mod digest;
mod findings;
mod inputs;
mod remote;
mod report;
mod serve;
mod taxonomy;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc instead of the system allocator: per-call allocation churn dominated glibc's
/// malloc in profiles of the call path (see docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The capability fabric: publish what you can do, discover, pin, call.
#[derive(Debug, Parser)]
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check descriptor files (JSON or TOML), agent directories, and folders of them.
    ///
    /// Prints `id@version  revision` for every valid descriptor, `agent/id  digest` for
    /// every capability of an agent catalog, and
    /// `path:line:col: code: message` for every problem; exits 1 if anything failed.
    Check(check::CheckArgs),
    /// Print the revision of each descriptor in a file, one per line.
    Digest(digest::DigestArgs),
    /// Compare two descriptor files: every change, its effect, and the version bump it needs.
    ///
    /// Descriptors are paired by id. Prints the findings of each pair grouped as breaking,
    /// unknown, compatible and documentation, then `required bump: …` and whether the
    /// version numbers allow it (docs/compatibility.md). Exits 0 when every change is allowed
    /// by the versions given, 1 when something breaks (or a capability was removed), 2 on
    /// usage or file errors.
    Diff(diff::DiffArgs),
    /// Run a weft node: the registry and its HTTP API.
    Serve(serve::ServeArgs),
    /// Agent capability catalogs (CompozyOS format).
    #[command(subcommand)]
    Agent(agent::AgentCommand),
    /// List a node's capabilities (every page), optionally filtered.
    ///
    /// Prints `ID@VERSION  IO_MODE  REVISION  TITLE`, or with --json the API's listing with
    /// every page merged into one document.
    Discover(remote::discover::DiscoverArgs),
    /// Describe one node: its status, providers and tags, then its capabilities.
    Describe(remote::discover::DescribeArgs),
    /// Show a capability's versions, or one version's descriptor and revision history.
    Show(remote::discover::ShowArgs),
    /// Publish a descriptor file as a provider's descriptor set.
    ///
    /// The file is checked locally first; any problem is printed as
    /// `path:line:col: code: message` and nothing is sent. Then the provider is registered
    /// with exactly the file's descriptors: the registry keeps one descriptor set per
    /// provider, so descriptors the provider published before and that are not in the file
    /// are no longer served by it (their revision histories stay). Without --node the
    /// provider keeps its current node ("local" for a new provider).
    ///
    /// Prints `id@version  revision  new|revised|unchanged` for each descriptor, then on
    /// stderr the compatibility findings of those that were compared with a published one.
    /// When the tenant's compatibility policy refuses a descriptor (409 breaking_change)
    /// nothing is published: every refused descriptor is printed with its findings grouped
    /// as `weft diff` groups them, the required bump and the bump the policy allows, and the
    /// exit status is 1. With --dry-run each descriptor is only checked
    /// (docs/compatibility.md).
    Publish(remote::publish::PublishArgs),
    /// Call a capability: pin its revision, send the payload, print the result.
    ///
    /// ID@VERSION names an exact version; ID@REQUIREMENT (like echo@^1) calls the highest
    /// version a provider serves that matches, and says which on stderr. Without
    /// --revision the current revision is read first and printed on stderr as
    /// `weft: pinned ID@VERSION at REVISION`; with it, the revision is sent as is and a
    /// stale one fails with revision_mismatch and the current revision.
    ///
    /// Prints the result as JSON, or with --json the whole API answer. Failures print
    /// `weft: CODE: MESSAGE (request ID)` (for invalid_payload, then `  at POINTER: MESSAGE`
    /// per error) and exit 1; input that is not JSON is invalid_json and nothing is sent.
    /// A malformed ID@VERSION is a usage error (exit 2).
    Call(remote::call::CallArgs),
    /// List the nodes: `NODE  STATUS  LAST_SEEN  PROVIDERS  TAGS`.
    Nodes(remote::discover::NodesArgs),
    /// API tokens: create, list, revoke (admin scope).
    #[command(subcommand)]
    Token(remote::admin::TokenCommand),
    /// Tenants: create, list (operators: admins of the default tenant).
    #[command(subcommand)]
    Tenant(remote::admin::TenantCommand),
    /// The standard capability taxonomy (Swarmwage v0.1), offline: list its rows, show a
    /// standard descriptor, check ids (docs/taxonomy.md).
    #[command(subcommand)]
    Taxonomy(taxonomy::TaxonomyCommand),
    /// Checks an output against the standard verification rule of a capability id
    /// (offline; docs/verification.md). Exit 0 passed, 1 failed or no built-in verifier.
    Verify(verify::VerifyArgs),
    /// Benchmarks against baselines measured in the same run (docs/benchmarks.md).
    ///
    /// Starts this binary as the node under test. Prints a table per scenario, or with
    /// --json one JSON object per measured row (tables then go to stderr).
    Bench(bench::BenchArgs),
    /// Serves one of the servers `weft bench` compares the node against, until stdin
    /// closes (started by `weft bench` itself).
    #[command(hide = true)]
    BenchPeer(bench::BenchPeerArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Digest(args) => digest::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Agent(command) => agent::run(&command),
        Command::Serve(args) => serve::run(&args),
        Command::Discover(args) => remote::discover::run_discover(&args),
        Command::Describe(args) => remote::discover::run_describe(&args),
        Command::Show(args) => remote::discover::run_show(&args),
        Command::Publish(args) => remote::publish::run(&args),
        Command::Nodes(args) => remote::discover::run_nodes(&args),
        Command::Call(args) => remote::call::run(&args),
        Command::Token(command) => remote::admin::run_token(&command),
        Command::Tenant(command) => remote::admin::run_tenant(&command),
        Command::Bench(args) => bench::run(&args),
        Command::BenchPeer(args) => bench::run_peer(&args),
        Command::Taxonomy(command) => taxonomy::run(&command),
        Command::Verify(args) => verify::run(&args),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        // The reader went away (`weft … | head`): nothing left to say to anyone.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("weft: {error}");
            ExitCode::from(2)
        }
    }
}
