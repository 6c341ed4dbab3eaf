//! Compatibility findings for people: grouped as breaking, unknown, compatible and
//! documentation, one line each. `weft diff` and `weft publish` print them the same way.

use std::io::Write;

use anstyle::{AnsiColor, Style};
use weft_compat::{Effect, Finding};

/// The groups, in the order they are printed, with their styles.
fn groups() -> [(&'static str, Style); 4] {
    [
        (
            "breaking",
            Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
        ),
        (
            "unknown",
            Style::new().fg_color(Some(AnsiColor::Yellow.into())).bold(),
        ),
        (
            "compatible",
            Style::new().fg_color(Some(AnsiColor::Green.into())).bold(),
        ),
        ("documentation", Style::new().bold()),
    ]
}

/// The group a finding is printed in.
pub fn group(finding: &Finding) -> &'static str {
    match finding.effect {
        Effect::Breaking => "breaking",
        Effect::Unknown => "unknown",
        Effect::Compatible if finding.is_documentation() => "documentation",
        Effect::Compatible => "compatible",
    }
}

/// Writes `findings` grouped by effect, each group under `indent`:
/// `breaking (N):` then `  PATH  CHANGE: REASON` per finding. Empty groups are skipped.
pub fn write_grouped(
    out: &mut impl Write,
    findings: &[Finding],
    indent: &str,
) -> std::io::Result<()> {
    for (name, style) in groups() {
        let found: Vec<&Finding> = findings.iter().filter(|f| group(f) == name).collect();
        if found.is_empty() {
            continue;
        }
        writeln!(out, "{indent}{style}{name}{style:#} ({}):", found.len())?;
        for f in found {
            writeln!(out, "{indent}  {}  {}: {}", f.path, f.change, f.reason)?;
        }
    }
    Ok(())
}
