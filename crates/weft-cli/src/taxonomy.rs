//! `weft taxonomy list|show|check`: the standard capability taxonomy, offline (the table is
//! compiled in). The rules live in `weft-taxonomy`; the JSON documents are the API's
//! (`weft_server::routes::taxonomy`), so `--json` prints what `GET /v1/taxonomy` serves.

use std::io::Write;

use anstyle::{AnsiColor, Style};
use clap::{Args, Subcommand};
use serde::Serialize;
use weft_server::routes::taxonomy::{entry, full_list};
use weft_taxonomy::view::ClassificationView;
use weft_taxonomy::{DOMAINS, Resolution, ValueSet, resolve, rows};

use crate::remote::table::Table;

/// `weft taxonomy …`.
#[derive(Debug, Subcommand)]
pub enum TaxonomyCommand {
    /// List the rows of the standard taxonomy: `ROW  EXAMPLE  TITLE`, then the placeholders.
    ///
    /// With --json, the document `GET /v1/taxonomy` serves, every row in one page.
    List(ListArgs),
    /// Print the standard descriptor of a concrete id, as JSON (ready for `weft publish`).
    ///
    /// With --json, the document `GET /v1/taxonomy/ID` serves (classification, verification
    /// rule and descriptor; custom ids have no descriptor). Exits 1 when the id has no
    /// standard descriptor (custom, or not a taxonomy id), with the reason on stderr.
    Show(ShowArgs),
    /// Say what each id is: standard (row and bindings), custom, or invalid with the reason.
    ///
    /// Exits 1 when any id is invalid.
    Check(CheckArgs),
}

/// Arguments of `weft taxonomy list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this standard domain (image, audio, text, code, data, chart, compute, exec,
    /// embed, classify, research).
    #[arg(long, value_name = "DOMAIN")]
    pub domain: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `weft taxonomy show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A concrete id, like audio.transcribe.en.text.
    pub id: String,
    /// Print the API's entry document instead of the bare descriptor.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `weft taxonomy check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The ids to check.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// Print a JSON array of `{id, classification}` instead of one line per id.
    #[arg(long)]
    pub json: bool,
}

/// Runs a taxonomy command; `Ok(false)` means exit 1.
pub fn run(command: &TaxonomyCommand) -> std::io::Result<bool> {
    match command {
        TaxonomyCommand::List(args) => list(args),
        TaxonomyCommand::Show(args) => show(args),
        TaxonomyCommand::Check(args) => check(args),
    }
}

fn usage(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

fn print_json(value: &impl Serialize) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)
}

fn list(args: &ListArgs) -> std::io::Result<bool> {
    let domain = args.domain.as_deref();
    if let Some(d) = domain
        && !DOMAINS.contains(&d)
    {
        return Err(usage(format!(
            "{d:?} is not a standard domain; one of {}",
            DOMAINS.join(", ")
        )));
    }
    if args.json {
        print_json(&full_list(domain))?;
        return Ok(true);
    }
    let selected: Vec<_> = rows()
        .iter()
        .filter(|r| domain.is_none_or(|d| r.domain() == d))
        .collect();
    let mut table = Table::new(&["ROW", "EXAMPLE", "TITLE"]);
    for row in &selected {
        table.row(vec![
            row.pattern.to_owned(),
            row.example_id(),
            row.title.to_owned(),
        ]);
    }
    if table.is_empty() {
        writeln!(
            anstream::stderr(),
            "weft: the {} domain has no standard capabilities in taxonomy {}",
            domain.unwrap_or_default(),
            weft_taxonomy::TAXONOMY_VERSION
        )?;
        return Ok(true);
    }
    table.print()?;
    // Each value set once, with the placeholders (and rows) that use it.
    let mut sets: Vec<(ValueSet, Vec<String>)> = Vec::new();
    for row in &selected {
        for p in row.placeholders {
            let name = format!("{{{}}}", p.name);
            match sets.iter_mut().find(|(set, _)| *set == p.set) {
                Some((_, names)) if !names.contains(&name) => names.push(name),
                Some(_) => {}
                None => sets.push((p.set, vec![name])),
            }
        }
    }
    let mut out = anstream::stdout().lock();
    if !sets.is_empty() {
        let bold = Style::new().bold();
        writeln!(out, "\n{bold}placeholders{bold:#}")?;
        for (set, names) in sets {
            writeln!(out, "  {}: {}", names.join(" "), set.rule())?;
        }
    }
    let constrained: Vec<&str> = selected
        .iter()
        .filter(|r| r.distinct.is_some())
        .map(|r| r.pattern)
        .collect();
    if !constrained.is_empty() {
        writeln!(
            out,
            "  {{src}} and {{tgt}} differ in {}",
            constrained.join(", ")
        )?;
    }
    Ok(true)
}

fn show(args: &ShowArgs) -> std::io::Result<bool> {
    let resolution = resolve(&args.id);
    let entry = entry(&resolution).map_err(|errors| {
        std::io::Error::other(format!(
            "the standard descriptor of {} breaks weft's rules (a defect): {errors}",
            args.id
        ))
    })?;
    let mut err = anstream::stderr();
    match (&resolution, entry) {
        (Resolution::Invalid(invalid), _) => {
            writeln!(
                err,
                "weft: {}: {}: {}",
                args.id,
                invalid.reason.code(),
                invalid.reason
            )?;
            Ok(false)
        }
        (_, Some(entry)) if args.json => {
            print_json(&entry)?;
            Ok(true)
        }
        (_, Some(entry)) => match entry.descriptor {
            Some(raw) => {
                let descriptor: serde_json::Value = serde_json::from_str(raw.get())?;
                print_json(&descriptor)?;
                Ok(true)
            }
            None => {
                writeln!(
                    err,
                    "weft: {} is a custom capability: the taxonomy has no descriptor for it \
                     (its provider publishes its own)",
                    args.id
                )?;
                Ok(false)
            }
        },
        (_, None) => Ok(false),
    }
}

/// One checked id, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Checked {
    id: String,
    classification: ClassificationView,
}

fn check(args: &CheckArgs) -> std::io::Result<bool> {
    let resolutions: Vec<(String, Resolution)> = args
        .ids
        .iter()
        .map(|id| (id.clone(), resolve(id)))
        .collect();
    let all_valid = !resolutions
        .iter()
        .any(|(_, r)| matches!(r, Resolution::Invalid(_)));
    if args.json {
        let checked: Vec<Checked> = resolutions
            .iter()
            .map(|(id, r)| Checked {
                id: id.clone(),
                classification: ClassificationView::of(r),
            })
            .collect();
        print_json(&checked)?;
        return Ok(all_valid);
    }
    let mut out = anstream::stdout().lock();
    let bold = Style::new().bold();
    for (id, resolution) in &resolutions {
        let (color, detail) = match resolution {
            Resolution::Standard(s) => {
                let bindings: Vec<String> =
                    s.bindings.iter().map(|(k, v)| format!("{k}={v}")).collect();
                (
                    AnsiColor::Green,
                    format!("{}  {}", s.row.pattern, bindings.join(" "))
                        .trim_end()
                        .to_owned(),
                )
            }
            Resolution::Custom(c) => (
                AnsiColor::Cyan,
                format!("provider={} capability={}", c.provider, c.capability),
            ),
            Resolution::Invalid(i) => {
                (AnsiColor::Red, format!("{}: {}", i.reason.code(), i.reason))
            }
        };
        let style = Style::new().fg_color(Some(color.into()));
        writeln!(
            out,
            "{bold}{id}{bold:#}  {style}{}{style:#}  {detail}",
            resolution.kind()
        )?;
    }
    Ok(all_valid)
}
