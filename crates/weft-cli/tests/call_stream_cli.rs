//! `weft call` on streaming capabilities against a real `weft serve --builtins` child: the
//! frames as NDJSON on stdout, stdin as the caller's chunks, failed terminals and guard
//! failures as error lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
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
    /// Starts a node with the built-ins on a free port and a fresh data dir.
    fn start() -> Node {
        let dir = tempfile::tempdir().unwrap();
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

    /// `weft ARGS` as the admin, feeding `stdin` when given.
    fn weft(&self, args: &[&str], stdin: Option<&str>) -> Run {
        run(
            args,
            &[("WEFT_URL", &self.url), ("WEFT_TOKEN", &self.admin)],
            stdin,
        )
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
    /// The stdout lines, each parsed as one JSON document.
    fn frames(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not one JSON line: {line:?}: {e}: {self:#?}"))
            })
            .collect()
    }

    /// The `kind` of every frame.
    fn kinds(&self) -> Vec<String> {
        self.frames()
            .iter()
            .map(|f| f["kind"].as_str().unwrap_or("?").to_owned())
            .collect()
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
    command.envs(env.iter().copied()).env("NO_COLOR", "1");
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
fn server_streaming_prints_every_frame_as_one_ndjson_line() {
    let node = Node::start();
    let run = node.weft(&["call", "count@1.0.0", "--input", r#"{"to":3}"#], None);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.kinds(),
        ["started", "chunk", "chunk", "chunk", "completed"],
        "{run:#?}"
    );
    let frames = run.frames();
    for (i, frame) in frames.iter().enumerate() {
        assert_eq!(frame["sequence"], json!(i), "{run:#?}");
        assert_eq!(frame["direction"], "provider_to_caller");
    }
    assert_eq!(frames[4]["payload"], json!({"count": 3}));
    // Compact: one line per frame, no indentation.
    assert_eq!(run.stdout.lines().count(), 5);
    assert!(!run.stdout.contains("\n "), "{run:#?}");
    assert!(
        run.stderr.starts_with("weft: pinned count@1.0.0 at "),
        "{run:#?}"
    );
}

#[test]
fn client_streaming_sends_stdin_lines_as_chunks_until_eof() {
    let node = Node::start();
    let run = node.weft(
        &["call", "sum@1.0.0"],
        Some("{\"value\":1}\n\n{\"value\":2.5}\n"),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.kinds(), ["started", "completed"], "{run:#?}");
    let last = run.frames().pop().unwrap();
    assert_eq!(last["payload"], json!({"sum": 3.5, "count": 2}), "{run:#?}");
}

#[test]
fn bidirectional_answers_each_stdin_chunk() {
    let node = Node::start();
    let run = node.weft(
        &["call", "upper@1.0.0"],
        Some("{\"text\":\"ab\"}\n{\"text\":\"cd\"}\n"),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.kinds(),
        ["started", "chunk", "chunk", "completed"],
        "{run:#?}"
    );
    let frames = run.frames();
    assert_eq!(frames[1]["payload"], json!({"text": "AB"}));
    assert_eq!(frames[2]["payload"], json!({"text": "CD"}));
    assert_eq!(frames[3]["payload"], json!({"chunks": 2}));
}

#[test]
fn an_invalid_chunk_fails_the_call() {
    let node = Node::start();
    let run = node.weft(&["call", "sum@1.0.0"], Some("{\"value\":\"x\"}\n"));
    assert_eq!(run.code, 1, "{run:#?}");
    let last = run.frames().pop().unwrap();
    assert_eq!(last["kind"], "failed", "{run:#?}");
    assert_eq!(last["error"]["code"], "invalid_frame", "{run:#?}");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("weft: invalid_frame: ")),
        "{run:#?}"
    );
}

#[test]
fn invalid_json_on_stdin_cancels_the_call() {
    let node = Node::start();
    let run = node.weft(&["call", "sum@1.0.0"], Some("{\"value\":1}\nnot json\n"));
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("weft: invalid_json: line 2: ")),
        "{run:#?}"
    );
    // Whatever the node said ends with one cancelled terminal.
    assert_eq!(
        run.kinds().last().map(String::as_str),
        Some("cancelled"),
        "{run:#?}"
    );
}

#[test]
fn a_stale_revision_on_a_stream_is_a_revision_mismatch() {
    let node = Node::start();
    let stale = "sha256:3333333333333333333333333333333333333333333333333333333333333333";
    let run = node.weft(
        &[
            "call",
            "count@1.0.0",
            "--revision",
            stale,
            "--input",
            r#"{"to":1}"#,
        ],
        None,
    );
    assert_eq!(run.code, 1, "{run:#?}");
    assert_eq!(run.stdout, "", "{run:#?}");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("weft: revision_mismatch: ")),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains("the current revision is sha256:"),
        "{run:#?}"
    );
}
