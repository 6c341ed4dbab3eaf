//! `weft diff OLD NEW`: what changed between two descriptor files, and whether the version
//! numbers allow it. The rules live in `weft-compat`; this module pairs, prints and exits.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anstyle::{AnsiColor, Style};
use clap::Args;
use serde::Serialize;
use weft_compat::{CompatReport, allowed, compare};
use weft_contract::Descriptor;

use crate::check::{LimitArgs, load_file};
use crate::report::Report;

/// Arguments of `weft diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The descriptor file as it was (JSON or TOML).
    pub old: PathBuf,
    /// The descriptor file as it is now.
    pub new: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// One compared pair, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Comparison {
    #[serde(flatten)]
    report: CompatReport,
    /// Whether the two versions allow `required_bump`.
    allowed: bool,
}

/// Everything one `weft diff` run found, as `--json` prints it.
#[derive(Debug, Serialize)]
struct DiffOutput {
    /// True when every pair is allowed and no capability was removed.
    ok: bool,
    comparisons: Vec<Comparison>,
    /// Ids only in OLD: callers of them find nothing (breaking).
    removed: Vec<String>,
    /// Ids only in NEW.
    added: Vec<String>,
}

fn usage(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

/// Runs the comparison; `Ok(true)` when every change is allowed.
pub fn run(args: &DiffArgs) -> std::io::Result<bool> {
    let limits = args.limits.limits();
    let mut problems = Vec::new();
    let old = load_file(&args.old, &limits, &mut problems);
    let new = load_file(&args.new, &limits, &mut problems);
    if !problems.is_empty() {
        Report {
            errors: problems,
            ..Report::default()
        }
        .print_human()?;
        return Err(usage("OLD or NEW is not a valid descriptor file".into()));
    }
    let by_id = |list: Vec<Descriptor>| -> Result<BTreeMap<String, Descriptor>, std::io::Error> {
        let mut map = BTreeMap::new();
        for d in list {
            let id = d.id().to_string();
            if map.insert(id.clone(), d).is_some() {
                return Err(usage(format!(
                    "{id} appears twice in one file; cannot pair it"
                )));
            }
        }
        Ok(map)
    };
    let (old, new) = (by_id(old)?, by_id(new)?);
    if old.len() == 1 && new.len() == 1 && old.keys().ne(new.keys()) {
        return Err(usage(format!(
            "OLD describes {} and NEW describes {}: weft diff compares versions of one capability",
            old.keys().next().map_or("", String::as_str),
            new.keys().next().map_or("", String::as_str),
        )));
    }
    let mut output = DiffOutput {
        ok: true,
        comparisons: Vec::new(),
        removed: old
            .keys()
            .filter(|id| !new.contains_key(*id))
            .cloned()
            .collect(),
        added: new
            .keys()
            .filter(|id| !old.contains_key(*id))
            .cloned()
            .collect(),
    };
    for (id, before) in &old {
        if let Some(after) = new.get(id) {
            let report = compare(before, after);
            let allowed = allowed(before.version(), after.version(), &report);
            output.comparisons.push(Comparison { report, allowed });
        }
    }
    output.ok = output.removed.is_empty() && output.comparisons.iter().all(|c| c.allowed);
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &output)?;
        writeln!(out)?;
    } else {
        print_human(&output)?;
    }
    Ok(output.ok)
}

fn print_human(output: &DiffOutput) -> std::io::Result<()> {
    let mut out = anstream::stdout();
    let bold = Style::new().bold();
    let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
    let green = Style::new().fg_color(Some(AnsiColor::Green.into())).bold();
    for c in &output.comparisons {
        let r = &c.report;
        writeln!(
            out,
            "{bold}{}{bold:#} {} -> {}",
            r.id, r.old_version, r.new_version
        )?;
        crate::findings::write_grouped(&mut out, &r.findings, "  ")?;
        if r.findings.is_empty() {
            writeln!(out, "  no changes")?;
        }
        writeln!(out, "  required bump: {}", r.required_bump.as_str())?;
        let step = weft_compat::bump_between(
            &parse_version(&r.old_version)?,
            &parse_version(&r.new_version)?,
        )
        .map_or("a downgrade", |b| b.as_str());
        if c.allowed {
            writeln!(
                out,
                "  {green}allowed{green:#}: {} -> {} is a {step} step",
                r.old_version, r.new_version
            )?;
        } else {
            writeln!(
                out,
                "  {red}breaks{red:#}: {} -> {} is a {step} step; these changes need {}",
                r.old_version,
                r.new_version,
                r.required_bump.as_str()
            )?;
        }
    }
    for id in &output.removed {
        writeln!(
            out,
            "{bold}{id}{bold:#} {red}removed{red:#}: only in OLD; its callers find nothing (breaking)"
        )?;
    }
    for id in &output.added {
        writeln!(out, "{bold}{id}{bold:#} added: only in NEW")?;
    }
    Ok(())
}

fn parse_version(text: &str) -> std::io::Result<weft_contract::CapabilityVersion> {
    weft_contract::CapabilityVersion::parse(text).map_err(|e| usage(e.to_string()))
}
