//! `weft call` against a real `weft serve --builtins` child: pinning, requirements, inputs,
//! output modes and the error lines of each failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a node may take to print its start-up lines.
const START_DEADLINE: Duration = Duration::from_secs(20);

/// The variables that would let the caller's environment leak into a test.
const CLEARED: [&str; 7] = [
    "WEFT_URL",
    "WEFT_TOKEN",
    "WEFT_DATA_DIR",
    "WEFT_LISTEN",
    "WEFT_CONFIG",
    "WEFT_AGENTS",
    "WEFT_NO_BUILTINS",
];

/// A running `weft serve --builtins`, killed when dropped.
struct Node {
    child: Child,
    url: String,
    admin: String,
    scratch: PathBuf,
    // Declared last: removed after the child is gone.
    _dir: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    /// Starts a node with the built-in `echo@1.0.0` on a free port and a fresh data dir.
    /// `WEFT_NO_BUILTINS=true` is set too: `--builtins` must win over it.
    fn start() -> Node {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_weft"));
        for name in CLEARED {
            command.env_remove(name);
        }
        let mut child = command
            .args([
                "serve",
                "--builtins",
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
            ])
            .arg(dir.path().join("data"))
            .env("WEFT_NO_BUILTINS", "true")
            .env("WEFT_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut node = Node {
            child,
            url: String::new(),
            admin: String::new(),
            scratch,
            _dir: dir,
        };
        let (lines, received) = mpsc::channel();
        // Reads (and keeps draining) the node's stdout; ends when the child does.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = lines.send(line);
            }
        });
        let deadline = Instant::now() + START_DEADLINE;
        while node.url.is_empty() || node.admin.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = received
                .recv_timeout(left)
                .expect("the node did not print its URL and admin token in time");
            if let Some(url) = line.strip_prefix("weft: listening on ") {
                node.url = url.trim().to_owned();
            } else if line.starts_with("weft: admin token") {
                node.admin = line.rsplit(": ").next().unwrap().trim().to_owned();
            }
        }
        node
    }

    /// `weft ARGS` as the admin.
    fn weft(&self, args: &[&str]) -> Run {
        self.run(&self.admin, args, None)
    }

    /// `weft ARGS` with `token`, feeding `stdin` when given.
    fn run(&self, token: &str, args: &[&str], stdin: Option<&str>) -> Run {
        run(
            args,
            &[("WEFT_URL", &self.url), ("WEFT_TOKEN", token)],
            stdin,
        )
    }

    /// Writes a scratch file and returns its path.
    fn file(&self, name: &str, contents: &str) -> String {
        let path = self.scratch.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_owned()
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

/// A finished CLI run.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Asserts success and returns stdout.
    fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        &self.stdout
    }

    /// Asserts success and parses stdout as JSON.
    fn json(&self) -> Value {
        serde_json::from_str(self.ok()).unwrap()
    }

    /// Asserts exit 1, nothing on stdout, and a `weft: CODE: … (request req-…)` line;
    /// returns that line.
    fn api_error(&self, code: &str) -> &str {
        assert_eq!(self.code, 1, "expected exit 1: {self:#?}");
        assert_eq!(self.stdout, "", "{self:#?}");
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("weft: {code}: ")))
            .unwrap_or_else(|| panic!("no `weft: {code}:` line: {self:#?}"));
        assert!(line.contains(" (request req-"), "{line}");
        line
    }

    /// The stderr lines.
    fn err_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }
}

/// Runs `weft ARGS` with only the given `WEFT_*` variables set.
fn run(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weft"));
    for name in CLEARED {
        command.env_remove(name);
    }
    // Never fall back to the real user's data directory.
    command.env("WEFT_DATA_DIR", "/nonexistent/weft-test-data-dir");
    command.envs(env.iter().copied()).env_remove("NO_COLOR");
    let mut child = command
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(text.as_bytes()).unwrap();
        // Dropping the pipe closes it: the child sees the end of its input.
    }
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[test]
fn echo_round_trips_and_the_pin_is_announced() {
    let node = Node::start();
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
    let node = Node::start();
    let revision = node.echo_revision();
    let stale = node.weft(&[
        "call",
        "echo@1.0.0",
        "--revision",
        "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        "--input",
        r#"{"text":"hi"}"#,
    ]);
    stale.api_error("revision_mismatch");
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
    let node = Node::start();
    let bad = node.weft(&[
        "call",
        "echo@1.0.0",
        "--input",
        r#"{"text": 5, "extra": 1}"#,
    ]);
    bad.api_error("invalid_payload");
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
    let node = Node::start();
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
    let node = Node::start();
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
    let node = Node::start();
    let wrong = node.weft(&["call", "echo@2.0.0", "--input", r#"{"text":"hi"}"#]);
    let line = wrong.api_error("version_mismatch");
    assert!(line.contains("1.0.0"), "the available versions: {line}");
    assert!(!wrong.stderr.contains("pinned"), "{wrong:#?}");
    // With an explicit revision the call itself says so.
    node.weft(&["call", "echo@2.0.0", "--revision", "sha256:x"])
        .api_error("version_mismatch");
    node.weft(&["call", "nope@1.0.0"]).api_error("not_found");
}

#[test]
fn the_call_scope_is_required() {
    let node = Node::start();
    let reader = node.token("capabilities:read");
    let denied = node.run(
        &reader,
        &["call", "echo@1.0.0", "--input", r#"{"text":"hi"}"#],
        None,
    );
    denied.api_error("forbidden");
    // The pin (a read) worked; the call did not.
    assert!(denied.stderr.starts_with("weft: pinned echo@1.0.0 at "));

    // A call-only token cannot pin, but can call with --revision.
    let caller = node.token("capabilities:call");
    let cannot_pin = node.run(&caller, &["call", "echo@1.0.0"], None);
    cannot_pin.api_error("forbidden");
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
    let node = Node::start();
    for timeout in ["0", "-1", "100000"] {
        let refused = node.weft(&[
            "call",
            "echo@1.0.0",
            "--timeout",
            timeout,
            "--input",
            r#"{"text":"hi"}"#,
        ]);
        let line = refused.api_error("invalid_request");
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
