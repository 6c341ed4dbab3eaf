//! `weft publish` and the compatibility policy, as the real binary against a real node: a
//! refused publish explains itself as `weft diff` would, `--dry-run` judges without
//! publishing, and an accepted publish still shows what it changed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_remote;

use common_remote::{Node, Run};
use serde_json::json;

/// A descriptor file: `echo@VERSION` whose input `text` is at most `max_len` long.
fn echo(node: &Node, name: &str, version: &str, max_len: u32, description: &str) -> String {
    let descriptor = json!({"id": "echo", "version": version, "title": "Echo",
        "description": description,
        "input_schema": {"type": "object",
                         "properties": {"text": {"type": "string", "maxLength": max_len}}}});
    node.file(name, &serde_json::to_string_pretty(&descriptor).unwrap())
}

/// The finding lines (`    PATH  CHANGE: REASON`) and group headings of a rendering (both
/// indented).
fn finding_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            if t.len() == l.len() {
                return false;
            }
            t.starts_with('/')
                || ["breaking (", "unknown (", "compatible (", "documentation ("]
                    .iter()
                    .any(|g| t.starts_with(g))
        })
        .map(|l| l.trim().to_owned())
        .collect()
}

fn not_published(node: &Node, qualified: &str) {
    node.weft(&["show", qualified]).api_error("not_found");
}

#[test]
fn a_refused_publish_prints_the_findings_as_weft_diff_does_and_exits_1() {
    let node = Node::start();
    let v1 = echo(&node, "v1.json", "1.0.0", 10, "Echo.");
    node.weft(&["publish", &v1, "--provider", "p1"]).ok();
    let v2 = echo(&node, "v2.json", "1.1.0", 5, "Echo, tighter.");
    let run: Run = node.weft(&["publish", &v2, "--provider", "p1"]);
    run.api_error("breaking_change");
    assert!(run.stdout.is_empty(), "{run:#?}");
    let lines = run.err_lines();
    assert!(
        lines[0].starts_with(&format!(
            "{v2}: descriptor 0: echo@1.1.0 refused (policy semver, node default)"
        )),
        "{run:#?}"
    );
    assert!(
        lines[1].starts_with("  compared with echo@1.0.0 sha256:"),
        "{run:#?}"
    );
    assert!(
        lines.contains(&"  required bump: major; the policy allows: minor"),
        "{run:#?}"
    );
    // The findings, grouped and worded exactly as `weft diff` prints them.
    let diff = node.weft(&["diff", &v1, &v2]);
    assert_eq!(diff.code, 1, "{diff:#?}");
    let expected = finding_lines(&diff.stdout);
    assert_eq!(
        expected,
        [
            "breaking (1):",
            "/input_schema/properties/text/maxLength  max_length_tightened: `maxLength` changed \
             from 10 to 5: a payload where `/text` is a string of 6 characters was accepted and \
             is now refused",
            "documentation (1):",
            "/description  description_changed: `description` changed; documentation only",
        ]
    );
    assert_eq!(finding_lines(&run.stderr), expected);
    not_published(&node, "echo@1.1.0");
}

#[test]
fn dry_run_judges_without_publishing_and_exits_by_the_verdict() {
    let node = Node::start();
    let v1 = echo(&node, "v1.json", "1.0.0", 10, "Echo.");
    // No --provider needed; the first version has nothing to compare with.
    let first = node.weft(&["publish", &v1, "--dry-run"]);
    assert_eq!(
        first.ok().lines().collect::<Vec<_>>(),
        [
            "echo@1.0.0 allowed (policy semver, node default)",
            "  the first version of this capability: nothing to compare",
            "  required bump: none; the policy allows: major",
        ]
    );
    assert!(
        first
            .stderr
            .contains("1 descriptor(s) would be accepted; nothing was published"),
        "{first:#?}"
    );
    not_published(&node, "echo@1.0.0");

    node.weft(&["publish", &v1, "--provider", "p1"]).ok();
    let patch = echo(&node, "patch.json", "1.0.1", 20, "Echo.");
    let refused = node.weft(&["publish", &patch, "--dry-run"]);
    assert_eq!(refused.code, 1, "{refused:#?}");
    assert!(
        refused
            .stdout
            .starts_with("echo@1.0.1 refused (policy semver, node default)"),
        "{refused:#?}"
    );
    assert!(
        refused
            .stdout
            .contains("  required bump: minor; the policy allows: patch"),
        "{refused:#?}"
    );
    assert!(
        refused
            .stderr
            .contains("1 of 1 descriptor(s) would be refused with breaking_change"),
        "{refused:#?}"
    );
    let json_run = node.weft(&["publish", &patch, "--dry-run", "--json"]);
    assert_eq!(json_run.code, 1, "{json_run:#?}");
    let doc: serde_json::Value = serde_json::from_str(&json_run.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["checks"][0]["id"], "echo");
    assert_eq!(doc["checks"][0]["version"], "1.0.1");
    assert_eq!(doc["checks"][0]["verdict"], "refused");
    assert_eq!(doc["checks"][0]["baseline"]["version"], "1.0.0");
    not_published(&node, "echo@1.0.1");

    // The dry run needs the publish scope, as publishing does.
    let reader = node.weft(&[
        "token",
        "create",
        "--name",
        "r",
        "--scope",
        "capabilities:read",
        "--json",
    ]);
    let reader = reader.json()["token"].as_str().unwrap().to_owned();
    node.weft_as(&reader, &["publish", &patch, "--dry-run"])
        .api_error("forbidden");
    // Publishing for real still needs a provider.
    let usage = node.weft(&["publish", &patch]);
    assert_eq!(usage.code, 2, "{usage:#?}");
    assert!(usage.stderr.contains("--provider"), "{usage:#?}");
}

#[test]
fn an_accepted_publish_still_prints_what_it_changed() {
    let node = Node::start_with(&["--compatibility-policy", "none"]);
    let v1 = echo(&node, "v1.json", "1.0.0", 10, "Echo.");
    node.weft(&["publish", &v1, "--provider", "p1"]).ok();
    let again = echo(&node, "again.json", "1.0.0", 3, "Echo.");
    let run = node.weft(&["publish", &again, "--provider", "p1"]);
    let line = run.ok().lines().next().unwrap().to_owned();
    assert!(
        line.starts_with("echo@1.0.0  sha256:") && line.ends_with("  revised"),
        "{line}"
    );
    let lines = run.err_lines();
    assert_eq!(
        lines[0], "weft: echo@1.0.0 allowed (policy none, node default)",
        "{run:#?}"
    );
    assert_eq!(finding_lines(&run.stderr)[0], "breaking (1):", "{run:#?}");
    assert!(
        lines.contains(&"  required bump: major; the policy allows: major"),
        "{run:#?}"
    );
    // An unchanged publish has nothing to report.
    let quiet = node.weft(&["publish", &again, "--provider", "p1"]);
    quiet.ok();
    assert!(finding_lines(&quiet.stderr).is_empty(), "{quiet:#?}");
}
