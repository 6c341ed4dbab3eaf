//! The node's compatibility checks, for people: a publish refused with `breaking_change`,
//! the findings of an accepted publish, and `weft publish --dry-run`
//! (`POST /v1/compatibility/check`). Findings print as `weft diff` prints them.

use std::io::Write;
use std::path::Path;

use anstyle::{AnsiColor, Style};
use serde::Deserialize;
use serde_json::{Value, json};
use weft_compat::{Bump, Finding};

use super::client::{ApiFailure, Client, Failure, Method};
use super::{items, print_json};

/// A published `id@version` a descriptor was compared with.
#[derive(Debug, Deserialize)]
struct Published {
    id: String,
    version: String,
    revision: String,
}

/// The comparison with the next higher version of a back-filled one.
#[derive(Debug, Deserialize)]
struct Successor {
    verdict: String,
    successor: Published,
    required_bump: Bump,
    allowed_bump: Bump,
    findings: Vec<Finding>,
}

/// One compatibility check, as the API returns it.
#[derive(Debug, Deserialize)]
struct Check {
    verdict: String,
    policy: String,
    policy_source: String,
    baseline: Option<Published>,
    required_bump: Bump,
    allowed_bump: Bump,
    findings: Vec<Finding>,
    #[serde(default)]
    successor: Option<Successor>,
}

/// A check that refused one descriptor of a registration.
#[derive(Debug, Deserialize)]
struct Refusal {
    index: usize,
    id: String,
    version: String,
    #[serde(flatten)]
    check: Check,
}

fn verdict_style(verdict: &str) -> Style {
    let color = if verdict == "allowed" {
        AnsiColor::Green
    } else {
        AnsiColor::Red
    };
    Style::new().fg_color(Some(color.into())).bold()
}

fn source_text(source: &str) -> &str {
    match source {
        "override" => "override for this id",
        "tenant" => "tenant default",
        "node" => "node default",
        other => other,
    }
}

/// `HEAD allowed|refused (policy P, SOURCE)`, what it was compared with, the findings by
/// effect, the required and allowed bumps, then the same for a successor.
fn write_check(out: &mut impl Write, head: &str, check: &Check) -> std::io::Result<()> {
    let style = verdict_style(&check.verdict);
    writeln!(
        out,
        "{head} {style}{}{style:#} (policy {}, {})",
        check.verdict,
        check.policy,
        source_text(&check.policy_source)
    )?;
    match &check.baseline {
        Some(b) => writeln!(out, "  compared with {}@{} {}", b.id, b.version, b.revision)?,
        None => writeln!(
            out,
            "  the first version of this capability: nothing to compare"
        )?,
    }
    crate::findings::write_grouped(out, &check.findings, "  ")?;
    writeln!(
        out,
        "  required bump: {}; the policy allows: {}",
        check.required_bump.as_str(),
        check.allowed_bump.as_str()
    )?;
    if let Some(s) = &check.successor {
        let style = verdict_style(&s.verdict);
        writeln!(
            out,
            "  next version {}@{} {}: {style}{}{style:#}",
            s.successor.id, s.successor.version, s.successor.revision, s.verdict
        )?;
        crate::findings::write_grouped(out, &s.findings, "    ")?;
        writeln!(
            out,
            "    required bump: {}; the policy allows: {}",
            s.required_bump.as_str(),
            s.allowed_bump.as_str()
        )?;
    }
    Ok(())
}

fn parse<T: for<'de> Deserialize<'de>>(value: &Value, url: &str) -> Result<T, Failure> {
    T::deserialize(value).map_err(|e| Failure::BadResponse {
        url: url.to_owned(),
        message: format!("not a compatibility check: {e}"),
    })
}

/// For a 409 `breaking_change`: every refused descriptor, with its findings, on stderr.
pub fn print_refusals(path: &Path, failure: &ApiFailure, url: &str) -> Result<(), Failure> {
    let mut err = anstream::stderr();
    let place = Style::new().bold();
    let refusals = failure
        .details
        .as_ref()
        .map_or(&[][..], |d| items(d, "refusals"));
    for value in refusals {
        let refusal: Refusal = parse(value, url)?;
        let head = format!(
            "{place}{}{place:#}: descriptor {}: {}@{}",
            path.display(),
            refusal.index,
            refusal.id,
            refusal.version
        );
        write_check(&mut err, &head, &refusal.check)?;
    }
    Ok(())
}

/// After an accepted publish: the findings of every descriptor that has some, on stderr.
/// The publish succeeded, so a check that cannot be read is only a warning.
pub fn print_accepted_findings(body: &Value) -> std::io::Result<()> {
    let mut err = anstream::stderr();
    for outcome in items(body, "descriptors") {
        let Some(value) = outcome.get("compatibility") else {
            continue;
        };
        let check = match Check::deserialize(value) {
            Ok(check) => check,
            Err(error) => {
                writeln!(
                    err,
                    "weft: cannot read the compatibility check of {}@{}: {error}",
                    super::text(outcome, "id"),
                    super::text(outcome, "version")
                )?;
                continue;
            }
        };
        let successor_findings = check
            .successor
            .as_ref()
            .is_some_and(|s| !s.findings.is_empty());
        if check.findings.is_empty() && !successor_findings {
            continue;
        }
        let head = format!(
            "weft: {}@{}",
            super::text(outcome, "id"),
            super::text(outcome, "version")
        );
        write_check(&mut err, &head, &check)?;
    }
    Ok(())
}

/// `weft publish --dry-run`: checks each descriptor with `POST /v1/compatibility/check`
/// and prints the verdicts; nothing is published. `Ok(())` when every one is allowed.
pub fn dry_run(client: &Client, descriptors: &[Value], json_output: bool) -> Result<(), Failure> {
    let path = "/v1/compatibility/check";
    let url = format!("{}{path}", client.base());
    let mut checks = Vec::with_capacity(descriptors.len());
    for descriptor in descriptors {
        let reply = client.send(
            Method::Post,
            path,
            Some(&json!({ "descriptor": descriptor })),
            None,
        )?;
        let check: Check = parse(&reply.body, &url)?;
        checks.push((descriptor, check, reply.body));
    }
    let refused = checks
        .iter()
        .filter(|(_, check, _)| check.verdict != "allowed")
        .count();
    if json_output {
        let list: Vec<Value> = checks
            .iter()
            .map(|(descriptor, _, body)| {
                let mut entry = json!({"id": descriptor["id"], "version": descriptor["version"]});
                if let (Some(entry), Some(fields)) = (entry.as_object_mut(), body.as_object()) {
                    entry.extend(fields.clone());
                }
                entry
            })
            .collect();
        print_json(&json!({ "ok": refused == 0, "checks": list }))?;
    } else {
        let mut out = anstream::stdout();
        let bold = Style::new().bold();
        for (descriptor, check, _) in &checks {
            let head = format!(
                "{bold}{}@{}{bold:#}",
                super::text(descriptor, "id"),
                super::text(descriptor, "version")
            );
            write_check(&mut out, &head, check)?;
        }
    }
    let mut err = anstream::stderr();
    if refused == 0 {
        writeln!(
            err,
            "weft: dry run: {} descriptor(s) would be accepted; nothing was published",
            checks.len()
        )?;
        Ok(())
    } else {
        writeln!(
            err,
            "weft: dry run: {refused} of {} descriptor(s) would be refused with breaking_change; \
             nothing was published",
            checks.len()
        )?;
        Err(Failure::Reported)
    }
}
