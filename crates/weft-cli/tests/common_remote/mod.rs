//! Shared helpers for the client-side CLI tests: a real `weft serve` child process that is
//! killed on drop, and a runner for CLI commands against it.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a node may take to print its start-up lines.
const START_DEADLINE: Duration = Duration::from_secs(20);

/// The variables that would let the caller's environment leak into a test.
const CLEARED: [&str; 11] = [
    "WEFT_URL",
    "WEFT_TOKEN",
    "WEFT_DATA_DIR",
    "WEFT_LISTEN",
    "WEFT_CONFIG",
    "WEFT_AGENTS",
    "WEFT_NO_BUILTINS",
    "WEFT_TAXONOMY",
    "WEFT_VERIFICATION",
    "WEFT_COMPATIBILITY_POLICY",
    "WEFT_MAX_COMPATIBILITY_OVERRIDES",
];

/// A running `weft serve`, killed when dropped.
pub struct Node {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The bootstrap admin token.
    pub admin: String,
    /// The node's data directory.
    pub data_dir: PathBuf,
    /// Scratch space for the test (files to publish, a client data dir).
    pub scratch: PathBuf,
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
    /// Starts a node on a free port with a fresh data directory, without the built-ins.
    pub fn start() -> Node {
        Self::start_with(&[])
    }

    /// Like [`Node::start`], with extra `weft serve` arguments (`WEFT_NO_BUILTINS=true` is
    /// set, so `--builtins` here also shows that the flag wins over the variable).
    pub fn start_with(extra: &[&str]) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let scratch = dir.path().join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_weft"));
        for name in CLEARED {
            command.env_remove(name);
        }
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .env("WEFT_NO_BUILTINS", "true")
            .arg(&data_dir)
            .args(extra)
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
            data_dir,
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
            let line = match received.recv_timeout(left) {
                Ok(line) => line,
                Err(error) => panic!(
                    "the node did not print its URL and admin token within {START_DEADLINE:?}: \
                     {error}"
                ),
            };
            if let Some(url) = line.strip_prefix("weft: listening on ") {
                node.url = url.trim().to_owned();
            } else if line.starts_with("weft: admin token") {
                node.admin = line.rsplit(": ").next().unwrap().trim().to_owned();
            }
        }
        assert!(node.url.starts_with("http://127.0.0.1:"), "{}", node.url);
        assert!(node.admin.starts_with("weft_"), "{}", node.admin);
        node
    }

    /// Runs `weft ARGS` as the admin.
    pub fn weft(&self, args: &[&str]) -> Run {
        self.weft_as(&self.admin, args)
    }

    /// Runs `weft ARGS` with `token`.
    pub fn weft_as(&self, token: &str, args: &[&str]) -> Run {
        self.weft_stdin(token, args, None)
    }

    /// Runs `weft ARGS` with `token`, feeding `stdin` when given.
    pub fn weft_stdin(&self, token: &str, args: &[&str], stdin: Option<&str>) -> Run {
        run_stdin(
            args,
            &[("WEFT_URL", &self.url), ("WEFT_TOKEN", token)],
            stdin,
        )
    }

    /// Writes a scratch file and returns its path.
    pub fn file(&self, name: &str, contents: &str) -> String {
        let path = self.scratch.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

/// A finished CLI run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Asserts success and returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        &self.stdout
    }

    /// Asserts exit 1 with a `weft: CODE: … (request req-…)` line on stderr; returns it.
    pub fn api_error(&self, code: &str) -> &str {
        assert_eq!(self.code, 1, "expected exit 1: {self:#?}");
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("weft: {code}: ")))
            .unwrap_or_else(|| panic!("no `weft: {code}:` line: {self:#?}"));
        assert!(line.contains(" (request req-"), "{line}");
        line
    }

    /// The stderr lines.
    pub fn err_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }

    /// The stdout lines, each parsed as one JSON document (stream frames).
    pub fn frames(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not one JSON line: {line:?}: {e}: {self:#?}"))
            })
            .collect()
    }

    /// The `kind` of every frame.
    pub fn kinds(&self) -> Vec<String> {
        self.frames()
            .iter()
            .map(|f| f["kind"].as_str().unwrap_or("?").to_owned())
            .collect()
    }

    /// Parses stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.ok()).unwrap()
    }
}

/// Runs `weft ARGS` with only the given `WEFT_*` variables set.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_stdin(args, env, None)
}

/// Like [`run`], feeding `stdin` when given (closed at its end).
pub fn run_stdin(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
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
    let output: Output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// The example descriptor files.
pub fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/descriptors")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}
