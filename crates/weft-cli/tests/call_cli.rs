//! `weft call` against a real `weft serve --builtins` child: pinning, requirements, inputs,
//! output modes and the error lines of each failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_remote;

use common_remote::{Node, Run, run_stdin as run};
use serde_json::json;

/// A node with the built-ins (`echo@1.0.0`) on.
fn start() -> Node {
    Node::start_with(&["--builtins"])
}

/// What these tests need of a node beyond the shared helpers.
trait CallNode {
    fn run(&self, token: &str, args: &[&str], stdin: Option<&str>) -> Run;
    fn echo_revision(&self) -> String;
    fn token(&self, scope: &str) -> String;
}

impl CallNode for Node {
    /// `weft ARGS` with `token`, feeding `stdin` when given.
    fn run(&self, token: &str, args: &[&str], stdin: Option<&str>) -> Run {
        self.weft_stdin(token, args, stdin)
    }

    /// The current revision of `echo@1.0.0`, as `weft show` reports it.
    fn echo_revision(&self) -> String {
        let view = self.weft(&["show", "echo@1.0.0", "--json"]).json();
        let revision = view["revision"].as_str().unwrap().to_owned();
        assert!(!revision.is_empty());
        revision
    }

    /// A token of the default tenant with only `scope`.
    fn token(&self, scope: &str) -> String {
        let created = self
            .weft(&["token", "create", "--name", "t", "--scope", scope, "--json"])
            .json();
        created["token"].as_str().unwrap().to_owned()
    }
}

/// Asserts an API error that printed nothing on stdout; returns its line.
fn api_error<'a>(run: &'a Run, code: &str) -> &'a str {
    assert_eq!(run.stdout, "", "{run:#?}");
    run.api_error(code)
}

#[test]
fn echo_round_trips_and_the_pin_is_announced() {
    let node = start();
    let revision = node.echo_revision();

    // Human mode: the result alone, pretty, on stdout; the pin on stderr.
    let human = node.weft(&["call", "echo@1.0.0", "--input", r#"{"text":"hi"}"#]);
    assert_eq!(human.json(), json!({"text": "hi"}));
    assert_eq!(human.stdout, "{\n  \"text\": \"hi\"\n}\n");
    assert_eq!(
        human.err_lines(),
        [format!("weft: pinned echo@1.0.0 at {revision}")]
    );

    // --json: the whole answer, with the options passed through.
    let full = node
        .weft(&[
            "call",
            "echo@1.0.0",
            "--input",
            r#"{"text":"whole"}"#,
            "--json",
            "--call-id",
            "cli-call-1",
            "--provider",
            "builtin",
            "--timeout",
            "5.5",
        ])
        .json();
    assert_eq!(full["call_id"], "cli-call-1");
    assert_eq!(full["result"], json!({"text": "whole"}));
    assert_eq!(full["capability_id"], "echo");
    assert_eq!(full["version"], "1.0.0");
    assert_eq!(full["revision"], revision.as_str());
    assert_eq!(full["provider_id"], "builtin");
    assert!(full["node_id"].is_string(), "{full}");
    assert!(full["duration_ms"].is_number(), "{full}");

    // With --revision nothing is read first, so nothing is announced.
    let pinned = node.weft(&[
        "call",
        "echo@1.0.0",
        "--revision",
        &revision,
        "--input",
        r#"{"text":"as is"}"#,
    ]);
    assert_eq!(pinned.json(), json!({"text": "as is"}));
    assert_eq!(pinned.stderr, "");

    // --provider and --node are routing constraints the node applies.
    node.weft(&["call", "echo@1.0.0", "--provider", "nobody"])
        .api_error("not_found");
    node.weft(&["call", "echo@1.0.0", "--node", "elsewhere"])
        .api_error("not_found");
}

#[test]
fn a_stale_revision_fails_with_the_current_one() {
    let node = start();
    let revision = node.echo_revision();
    let stale = node.weft(&[
        "call",
        "echo@1.0.0",
        "--revision",
        "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        "--input",
        r#"{"text":"hi"}"#,
    ]);
    api_error(&stale, "revision_mismatch");
    assert_eq!(
        stale.err_lines().last().copied(),
        Some(
            format!(
                "weft: the current revision is {revision}; rediscover with weft show echo@1.0.0"
            )
            .as_str()
        ),
        "{stale:#?}"
    );
}

#[test]
fn an_invalid_payload_lists_every_pointer() {
    let node = start();
    let bad = node.weft(&[
        "call",
        "echo@1.0.0",
        "--input",
        r#"{"text": 5, "extra": 1}"#,
    ]);
    api_error(&bad, "invalid_payload");
    let at: Vec<&str> = bad
        .err_lines()
        .into_iter()
        .filter(|l| l.starts_with("  at "))
        .collect();
    assert!(at.iter().any(|l| l.starts_with("  at /text: ")), "{bad:#?}");
    assert!(
        at.len() >= 2,
        "one line per error (type and extra field): {bad:#?}"
    );
    // The default payload `{}` misses the required text.
    node.weft(&["call", "echo@1.0.0"])
        .api_error("invalid_payload");
}

#[test]
fn the_payload_comes_from_a_file_or_stdin_and_must_be_json() {
    let node = start();
    let file = node.file("in.json", "{\"text\": \"from a file\"}\n");
    let from_file = node.weft(&["call", "echo@1.0.0", "--input", &format!("@{file}")]);
    assert_eq!(from_file.json(), json!({"text": "from a file"}));

    let from_stdin = node.run(
        &node.admin,
        &["call", "echo@1.0.0", "--input", "-"],
        Some("{\"text\": \"from stdin\"}"),
    );
    assert_eq!(from_stdin.json(), json!({"text": "from stdin"}));

    // Not JSON: refused before anything is read from or sent to a node (no URL is needed).
    let bad_file = format!("@{}", node.file("bad.json", "[1,"));
    for (input, what) in [("{text: nope}", "--input"), (bad_file.as_str(), "bad.json")] {
        let refused = run(&["call", "echo@1.0.0", "--input", input], &[], None);
        assert_eq!(refused.code, 1, "{refused:#?}");
        let line = refused.err_lines()[0];
        assert!(line.starts_with("weft: invalid_json: "), "{refused:#?}");
        assert!(line.contains(what), "{refused:#?}");
    }
    let piped = node.run(
        &node.admin,
        &["call", "echo@1.0.0", "--input", "-"],
        Some("not json"),
    );
    assert_eq!(piped.code, 1, "{piped:#?}");
    assert!(
        piped.stderr.starts_with("weft: invalid_json: stdin "),
        "{piped:#?}"
    );
    assert!(!piped.stderr.contains("pinned"), "{piped:#?}");

    let missing = node.weft(&["call", "echo@1.0.0", "--input", "@/nonexistent/in.json"]);
    assert_eq!(missing.code, 1, "{missing:#?}");
    assert!(
        missing
            .stderr
            .starts_with("weft: cannot read /nonexistent/in.json: "),
        "{missing:#?}"
    );
}

#[test]
fn a_requirement_resolves_to_the_highest_served_version() {
    let node = start();
    let revision = node.echo_revision();
    let resolved = node.weft(&["call", "echo@^1", "--input", r#"{"text":"req"}"#, "--json"]);
    let answer = resolved.json();
    assert_eq!(answer["version"], "1.0.0");
    assert_eq!(answer["result"], json!({"text": "req"}));
    assert_eq!(
        resolved.err_lines(),
        [
            "weft: resolved echo@^1 to echo@1.0.0".to_owned(),
            format!("weft: pinned echo@1.0.0 at {revision}"),
        ]
    );

    let none = node.weft(&["call", "echo@^2"]);
    assert_eq!(none.code, 1, "{none:#?}");
    assert_eq!(
        none.stderr,
        "weft: version_mismatch: no served version of echo matches ^2; served: 1.0.0\n"
    );
    // Versions that no provider matching --provider serves do not count.
    let filtered = node.weft(&["call", "echo@*", "--provider", "nobody"]);
    assert_eq!(filtered.code, 1, "{filtered:#?}");
    assert!(filtered.stderr.ends_with("served: none\n"), "{filtered:#?}");
}

#[test]
fn unknown_versions_and_capabilities_are_named_by_the_node() {
    let node = start();
    let wrong = node.weft(&["call", "echo@2.0.0", "--input", r#"{"text":"hi"}"#]);
    let line = api_error(&wrong, "version_mismatch");
    assert!(line.contains("1.0.0"), "the available versions: {line}");
    assert!(!wrong.stderr.contains("pinned"), "{wrong:#?}");
    // With an explicit revision the call itself says so.
    node.weft(&["call", "echo@2.0.0", "--revision", "sha256:x"])
        .api_error("version_mismatch");
    node.weft(&["call", "nope@1.0.0"]).api_error("not_found");
}

#[test]
fn the_call_scope_is_required() {
    let node = start();
    let reader = node.token("capabilities:read");
    let denied = node.run(
        &reader,
        &["call", "echo@1.0.0", "--input", r#"{"text":"hi"}"#],
        None,
    );
    api_error(&denied, "forbidden");
    // The pin (a read) worked; the call did not.
    assert!(denied.stderr.starts_with("weft: pinned echo@1.0.0 at "));

    // A call-only token cannot pin, but can call with --revision.
    let caller = node.token("capabilities:call");
    let cannot_pin = node.run(&caller, &["call", "echo@1.0.0"], None);
    api_error(&cannot_pin, "forbidden");
    assert!(
        cannot_pin.stderr.contains("must pass --revision"),
        "{cannot_pin:#?}"
    );
    let revision = node.echo_revision();
    let called = node.run(
        &caller,
        &[
            "call",
            "echo@1.0.0",
            "--revision",
            &revision,
            "--input",
            r#"{"text":"ok"}"#,
        ],
        None,
    );
    assert_eq!(called.json(), json!({"text": "ok"}));
}

#[test]
fn the_node_checks_the_timeout() {
    let node = start();
    for timeout in ["0", "-1", "100000"] {
        let refused = node.weft(&[
            "call",
            "echo@1.0.0",
            "--timeout",
            timeout,
            "--input",
            r#"{"text":"hi"}"#,
        ]);
        let line = api_error(&refused, "invalid_request");
        assert!(line.contains("timeout_seconds"), "{line}");
    }
    let ok = node.weft(&[
        "call",
        "echo@1.0.0",
        "--timeout",
        "0.5",
        "--input",
        r#"{"text":"in time"}"#,
    ]);
    assert_eq!(ok.json(), json!({"text": "in time"}));
}

#[test]
fn malformed_targets_and_options_are_usage_errors() {
    for args in [
        &["call", "echo"][..],
        &["call", "Echo@1.0.0"],
        &["call", "echo@one"],
        &["call", "echo@1.0.0", "--timeout", "nan"],
        &["call", "echo@1.0.0", "--input", "@"],
    ] {
        let refused = run(args, &[], None);
        assert_eq!(refused.code, 2, "{args:?}: {refused:#?}");
        assert!(refused.stderr.contains("error: "), "{refused:#?}");
    }
    let bare = run(&["call", "echo"], &[], None);
    assert!(bare.stderr.contains("ID@VERSION"), "{bare:#?}");
}
