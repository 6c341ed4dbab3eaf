//! `weft`: the one binary of the capability fabric.
//!
//! A thin shell over the library crates: it parses arguments, reads files, and prints. The
//! rules themselves live in `weft-contract` (descriptors) and the crates beside it.

mod agent;
mod check;
mod digest;
mod inputs;
mod report;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Run a weft node: the registry and its HTTP API.
    Serve(serve::ServeArgs),
    /// Agent capability catalogs (CompozyOS format).
    #[command(subcommand)]
    Agent(agent::AgentCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Digest(args) => digest::run(&args),
        Command::Agent(command) => agent::run(&command),
        Command::Serve(args) => serve::run(&args),
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
