//! `weft digest`: print the revision of every descriptor in one file.

use std::path::PathBuf;

use clap::Args;

use crate::check::check_paths;

/// Arguments of `weft digest`.
#[derive(Debug, Args)]
pub struct DigestArgs {
    /// A descriptor file (JSON or TOML).
    pub file: PathBuf,
    #[command(flatten)]
    pub limits: crate::check::LimitArgs,
}

/// Prints one revision per line; problems go to stderr and make the run fail.
pub fn run(args: &DigestArgs) -> std::io::Result<bool> {
    let report = check_paths(std::slice::from_ref(&args.file), &args.limits.limits());
    for found in &report.descriptors {
        println!("{}", found.revision);
    }
    let problems_only = crate::report::Report {
        ok: report.ok,
        descriptors: Vec::new(),
        agent_capabilities: Vec::new(),
        errors: report.errors,
    };
    problems_only.print_human()?;
    Ok(problems_only.ok)
}
