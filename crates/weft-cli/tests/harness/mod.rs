//! Shared harness for the `serve_*` integration tests: a real `weft serve` child process on a
//! loopback port, an HTTP helper over `ureq`, an SSE reader, and small builders.
//!
//! Nothing here ever waits without a deadline: start-up, shutdown, HTTP calls and SSE reads
//! are all bounded, so a misbehaving server fails a test instead of hanging the suite.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod streams;

/// How long a node may take to print its listening line.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long any single HTTP call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variables `weft serve` reads; cleared so the host cannot leak settings in.
const WEFT_VARS: [&str; 16] = [
    "WEFT_LISTEN",
    "WEFT_DATA_DIR",
    "WEFT_CONFIG",
    "WEFT_AGENTS",
    "WEFT_LOG_FORMAT",
    "WEFT_MAX_BODY_BYTES",
    "WEFT_EVENT_RETENTION",
    "WEFT_IDEMPOTENCY_HOURS",
    "WEFT_AGENTS_POLL_MS",
    "WEFT_LOG",
    "WEFT_HEADER_READ_TIMEOUT",
    "WEFT_TAXONOMY",
    "WEFT_VERIFICATION",
    "WEFT_COMPATIBILITY_POLICY",
    "WEFT_MAX_COMPATIBILITY_OVERRIDES",
    "WEFT_REMOTE_CONNECTIONS",
];

/// The `weft serve` command for `data_dir` with extra arguments, environment cleaned.
pub fn serve_command(data_dir: &Path, extra_args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weft"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .env("WEFT_NO_BUILTINS", "true")
        .arg(data_dir)
        .args(extra_args);
    for var in WEFT_VARS {
        command.env_remove(var);
    }
    command
}

/// Waits for `child` to exit, at most `timeout`.
pub fn wait_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `weft serve` expecting it to exit by itself (a configuration error); returns the
/// exit status and stderr. Kills it and panics if it is still running after 20 s.
pub fn serve_expecting_exit(data_dir: &Path, extra_args: &[&str]) -> (ExitStatus, String) {
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let mut child = serve_command(data_dir, extra_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr.reopen().unwrap()))
        .spawn()
        .unwrap();
    let status = wait_timeout(&mut child, START_TIMEOUT);
    let text = std::fs::read_to_string(stderr.path()).unwrap_or_default();
    match status {
        Some(status) => (status, text),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("weft serve {extra_args:?} kept running; stderr:\n{text}");
        }
    }
}

/// A response: status, lowercase header names, the body parsed as JSON (`Null` when empty,
/// the text as a JSON string when it is not JSON) and the raw text.
#[derive(Debug, Clone)]
pub struct Resp {
    /// HTTP status.
    pub status: u16,
    /// Headers (lowercase names; the last value wins).
    pub headers: HashMap<String, String>,
    /// The body as JSON.
    pub body: Value,
    /// The body as text.
    pub text: String,
}

impl Resp {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

fn headers_of(map: &ureq::http::HeaderMap) -> HashMap<String, String> {
    map.iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// An HTTP agent that never turns statuses into errors and never waits forever.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// One request with any method, optional bearer token, optional raw body and extra headers.
pub fn request(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&[u8]>,
    headers: &[(&str, &str)],
) -> Result<Resp, ureq::Error> {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = match body {
        Some(bytes) => {
            let has_type = headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
            if !has_type {
                builder = builder.header("content-type", "application/json");
            }
            agent.run(builder.body(bytes.to_vec()).unwrap())?
        }
        // ureq sends a body-less POST/PUT as an empty *chunked* body, which races with
        // routes that answer without reading it (see serve_routes'
        // `body_less_posts_keep_the_connection_usable`): send `Content-Length: 0` instead.
        None if matches!(method, "POST" | "PUT" | "PATCH") => {
            agent.run(builder.body(Vec::new()).unwrap())?
        }
        None => agent.run(builder.body(()).unwrap())?,
    };
    let status = response.status().as_u16();
    let headers = headers_of(response.headers());
    let text = response.into_body().read_to_string()?;
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()))
    };
    Ok(Resp {
        status,
        headers,
        body,
        text,
    })
}

/// A running `weft serve` child. Dropping it kills the process.
pub struct Node {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The admin token printed on first start (`None` on a restart).
    pub admin_token: Option<String>,
    /// The data directory.
    pub data_dir: PathBuf,
    /// Stdout lines after the start-up lines.
    pub lines: Mutex<Receiver<String>>,
    stderr: tempfile::NamedTempFile,
    agent: ureq::Agent,
}

fn forward_lines(stdout: ChildStdout) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Node {
    /// Starts `weft serve` on `127.0.0.1:0` over `data_dir` and waits (at most 20 s) for its
    /// listening line and, on a first start, its admin-token line.
    pub fn start(data_dir: &Path, extra_args: &[&str]) -> Node {
        Self::start_with_env(data_dir, extra_args, &[])
    }

    /// [`Node::start`] with environment variables set for the node (after the `WEFT_*`
    /// variables of the host were cleared).
    pub fn start_with_env(data_dir: &Path, extra_args: &[&str], env: &[(&str, &str)]) -> Node {
        let first_start = !data_dir.join("admin.token").exists();
        let stderr = tempfile::NamedTempFile::new().unwrap();
        let mut child = serve_command(data_dir, extra_args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr.reopen().unwrap()))
            .spawn()
            .unwrap();
        let lines = forward_lines(child.stdout.take().unwrap());
        let deadline = Instant::now() + START_TIMEOUT;
        let stderr_path = stderr.path().to_owned();
        let fail = move |child: &mut Child, why: &str| {
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            panic!("weft serve {extra_args:?}: {why}; stderr:\n{text}");
        };
        let next_line = |child: &mut Child, until: Instant| -> Option<String> {
            let wait = until.saturating_duration_since(Instant::now());
            match lines.recv_timeout(wait) {
                Ok(line) => Some(line),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    fail(child, "exited before it was ready");
                    None
                }
            }
        };
        let Some(first) = next_line(&mut child, deadline) else {
            fail(&mut child, "no listening line within 20 s");
            unreachable!()
        };
        let Some(url) = first.strip_prefix("weft: listening on ") else {
            fail(&mut child, &format!("unexpected first line {first:?}"));
            unreachable!()
        };
        let url = url.trim().to_owned();
        // Both lines are written under one lock and flushed together.
        let token_deadline = if first_start {
            deadline
        } else {
            Instant::now() + Duration::from_millis(300)
        };
        let admin_token = match next_line(&mut child, token_deadline) {
            Some(line) => {
                assert!(
                    line.starts_with("weft: admin token (shown once; saved to "),
                    "{line}"
                );
                let (_, secret) = line.split_once("): ").expect("token after \"): \"");
                Some(secret.trim().to_owned())
            }
            None if first_start => {
                fail(&mut child, "no admin token line on first start");
                None
            }
            None => None,
        };
        Node {
            child,
            url,
            admin_token,
            data_dir: data_dir.to_owned(),
            lines: Mutex::new(lines),
            stderr,
            agent: agent(CALL_TIMEOUT),
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the node wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr.path()).unwrap_or_default()
    }

    /// The admin token: the printed one, or the one saved in the data directory.
    pub fn admin(&self) -> String {
        match &self.admin_token {
            Some(token) => token.clone(),
            None => std::fs::read_to_string(self.data_dir.join("admin.token"))
                .unwrap()
                .trim()
                .to_owned(),
        }
    }

    /// Sends SIGTERM and waits at most `timeout` for the exit status.
    pub fn stop_term_within(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM failed");
        wait_timeout(&mut self.child, timeout)
    }

    /// Sends SIGTERM and waits (at most 15 s) for the exit status.
    pub fn stop_term(&mut self) -> Option<ExitStatus> {
        self.stop_term_within(Duration::from_secs(15))
    }

    /// SIGKILL, and reap.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Any request; panics on a transport error.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let url = format!("{}{path}", self.url);
        request(&self.agent, method, &url, token, body, headers)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}; stderr:\n{}", self.stderr()))
    }

    /// `GET` with a token.
    pub fn get(&self, path: &str, token: &str) -> Resp {
        self.call("GET", path, Some(token), None, &[])
    }

    /// A JSON body with a token.
    pub fn send(&self, method: &str, path: &str, token: &str, body: &Value) -> Resp {
        let bytes = serde_json::to_vec(body).unwrap();
        self.call(method, path, Some(token), Some(&bytes), &[])
    }

    /// Registers `provider` on `node_id` with `descriptors`.
    pub fn register(
        &self,
        token: &str,
        provider: &str,
        node_id: &str,
        descriptors: &[Value],
    ) -> Resp {
        self.send(
            "PUT",
            &format!("/v1/providers/{provider}"),
            token,
            &json!({"node_id": node_id, "descriptors": descriptors}),
        )
    }

    /// Creates a token (as `admin`) and returns its secret.
    pub fn token(&self, admin: &str, tenant: Option<&str>, scopes: &[&str]) -> String {
        self.token_with_id(admin, tenant, scopes).0
    }

    /// Creates a token (as `admin`) and returns its secret and id.
    pub fn token_with_id(
        &self,
        admin: &str,
        tenant: Option<&str>,
        scopes: &[&str],
    ) -> (String, String) {
        let mut body = json!({"name": format!("t-{}", scopes.join("+")), "scopes": scopes});
        if let Some(tenant) = tenant {
            body["tenant"] = json!(tenant);
        }
        let r = self.send("POST", "/v1/tokens", admin, &body);
        assert_eq!(r.status, 201, "{}", r.text);
        let field = |name: &str| r.body[name].as_str().unwrap().to_owned();
        (field("token"), field("id"))
    }

    /// Creates tenant `id` (as the operator) and returns an admin token of it.
    pub fn tenant(&self, operator: &str, id: &str) -> String {
        let r = self.send("POST", "/v1/tenants", operator, &json!({"id": id}));
        assert_eq!(r.status, 201, "{}", r.text);
        self.token(operator, Some(id), &["admin"])
    }

    /// The node's resident set size in KiB (`VmRSS` of `/proc/<pid>/status`; Linux only).
    pub fn rss_kib(&self) -> u64 {
        proc_status_kib(self.pid(), "VmRSS:")
            .unwrap_or_else(|| panic!("no VmRSS for node pid {}", self.pid()))
    }

    /// How many file descriptors the node has open (`/proc/<pid>/fd`; Linux only).
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count()
    }

    /// Whether the node process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `active_calls` and `active_streams` of `GET /v1/diagnostics/node`.
    pub fn active(&self, token: &str) -> (u64, u64) {
        let r = self.get("/v1/diagnostics/node", token);
        assert_eq!(r.status, 200, "{}", r.text);
        (
            r.body["active_calls"].as_u64().unwrap(),
            r.body["active_streams"].as_u64().unwrap(),
        )
    }

    /// Waits (at most 30 s) until no call and no stream is active; panics otherwise.
    pub fn assert_idle(&self, token: &str) {
        let idle = poll(Duration::from_secs(30), || {
            (self.active(token) == (0, 0)).then_some(())
        });
        assert!(
            idle.is_some(),
            "admission slots still held: {:?}",
            self.active(token)
        );
    }

    /// The current revision of `id@version`, waiting (at most 15 s) for it to be listed.
    pub fn pin(&self, token: &str, id: &str, version: &str) -> String {
        let path = format!("/v1/capabilities/{id}/versions/{version}");
        let r = poll(Duration::from_secs(15), || {
            let r = self.get(&path, token);
            (r.status == 200).then_some(r)
        })
        .unwrap_or_else(|| panic!("{id}@{version} never appeared"));
        r.body["revision"].as_str().unwrap().to_owned()
    }

    /// A unary `POST /v1/calls` of `id@1.0.0` pinned to `revision`.
    pub fn unary(
        &self,
        token: &str,
        id: &str,
        revision: &str,
        payload: Value,
        timeout_seconds: Option<f64>,
    ) -> Resp {
        let mut body = json!({"capability_id": id, "version": "1.0.0",
                              "descriptor_revision": revision, "payload": payload});
        if let Some(t) = timeout_seconds {
            body["timeout_seconds"] = json!(t);
        }
        self.send("POST", "/v1/calls", token, &body)
    }

    /// Opens the change feed (see [`Sse::open`]).
    pub fn events(&self, token: &str, headers: &[(&str, &str)], query: &str) -> Sse {
        Sse::open(&format!("{}/v1/events{query}", self.url), token, headers)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`, …).
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// Asserts `r` is an error with `status` and `code` in the documented envelope, whose
/// `requestId` equals the `X-Request-Id` header.
pub fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "{}",
        r.text
    );
    let error = r.body["error"]
        .as_object()
        .unwrap_or_else(|| panic!("no error envelope: {}", r.text));
    assert_eq!(r.body.as_object().unwrap().len(), 1, "{}", r.text);
    assert_eq!(error["code"], code, "{}", r.text);
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{}",
        r.text
    );
    for key in error.keys() {
        assert!(
            ["code", "message", "details", "requestId"].contains(&key.as_str()),
            "unexpected {key} in {}",
            r.text
        );
    }
    let header = r.header("x-request-id").expect("X-Request-Id header");
    assert_eq!(error["requestId"], header, "{}", r.text);
}

/// A descriptor: unary, with an object input schema.
pub fn descriptor(id: &str, version: &str, title: &str) -> Value {
    json!({
        "id": id,
        "version": version,
        "title": title,
        "description": format!("{title}: test capability {id}@{version}."),
        "input_schema": {"type": "object"},
    })
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Polls `f` every 50 ms until it returns `Some`, at most `timeout`.
pub fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = f() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One Server-Sent Event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// `id:`.
    pub id: u64,
    /// `event:`.
    pub event: String,
    /// `data:` as JSON.
    pub data: Value,
}

enum SseMsg {
    Head(u16, HashMap<String, String>),
    Event(SseEvent),
    Body(String),
    Failed(String),
}

/// A change-feed reader on its own thread. Dropping it lets the thread end (and close the
/// connection) at the next line it reads.
pub struct Sse {
    rx: Receiver<SseMsg>,
    head: Option<(u16, HashMap<String, String>)>,
    body: Option<String>,
}

impl Sse {
    /// Opens `url` with a bearer token and headers. Returns at once: the response head may
    /// come later (the server may hold it until the first event).
    pub fn open(url: &str, token: &str, headers: &[(&str, &str)]) -> Sse {
        let (tx, rx) = mpsc::channel();
        let url = url.to_owned();
        let token = token.to_owned();
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        std::thread::spawn(move || {
            let agent = agent(Duration::from_secs(60));
            let mut builder = ureq::http::Request::builder()
                .uri(url)
                .header("authorization", format!("Bearer {token}"));
            for (k, v) in &headers {
                builder = builder.header(k, v);
            }
            let response = match agent.run(builder.body(()).unwrap()) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(SseMsg::Failed(e.to_string()));
                    return;
                }
            };
            let status = response.status().as_u16();
            if tx
                .send(SseMsg::Head(status, headers_of(response.headers())))
                .is_err()
            {
                return;
            }
            if status != 200 {
                let text = response.into_body().read_to_string().unwrap_or_default();
                let _ = tx.send(SseMsg::Body(text));
                return;
            }
            let reader = BufReader::new(response.into_body().into_reader());
            let (mut id, mut event, mut data) = (None, String::new(), String::new());
            for line in reader.lines() {
                let Ok(line) = line else { return };
                if line.is_empty() {
                    if let Some(id) = id.take() {
                        let data =
                            serde_json::from_str(&data).unwrap_or(Value::String(data.clone()));
                        let message = SseMsg::Event(SseEvent {
                            id,
                            event: std::mem::take(&mut event),
                            data,
                        });
                        if tx.send(message).is_err() {
                            return;
                        }
                    }
                    event.clear();
                    data.clear();
                } else if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().parse::<u64>().expect("numeric event id"));
                } else if let Some(v) = line.strip_prefix("event:") {
                    event = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
        });
        Sse {
            rx,
            head: None,
            body: None,
        }
    }

    fn pump(&mut self, timeout: Duration) -> Option<SseEvent> {
        match self.rx.recv_timeout(timeout) {
            Ok(SseMsg::Head(status, headers)) => {
                self.head = Some((status, headers));
                None
            }
            Ok(SseMsg::Event(e)) => Some(e),
            Ok(SseMsg::Body(text)) => {
                self.body = Some(text);
                None
            }
            Ok(SseMsg::Failed(e)) => panic!("event stream failed: {e}"),
            Err(_) => None,
        }
    }

    /// The response status and headers, waiting at most `timeout`.
    pub fn head(&mut self, timeout: Duration) -> Option<(u16, HashMap<String, String>)> {
        let deadline = Instant::now() + timeout;
        while self.head.is_none() && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(e) = self.pump(left) {
                panic!("event {e:?} before the response head");
            }
        }
        self.head.clone()
    }

    /// An error response, as [`Resp`] (waits at most 10 s).
    pub fn error(&mut self) -> Resp {
        let (status, headers) = self.head(Duration::from_secs(10)).expect("a response");
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.body.is_none() && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(self.pump(left).is_none(), "an event in an error response");
        }
        let text = self.body.clone().expect("an error body");
        Resp {
            status,
            headers,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
        }
    }

    /// The next event, waiting at most `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Option<SseEvent> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(e) = self.pump(left) {
                return Some(e);
            }
            if Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// Exactly `n` events, each within 10 s; panics with what arrived otherwise.
    pub fn take(&mut self, n: usize) -> Vec<SseEvent> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next(Duration::from_secs(10)) {
                Some(e) => out.push(e),
                None => panic!(
                    "expected {n} events, got {}: {:?}",
                    out.len(),
                    out.iter().map(|e| e.id).collect::<Vec<_>>()
                ),
            }
        }
        out
    }
}

/// Serves `provider` over HTTP with the provider SDK (`weft_provider::http`), as a remote
/// provider process would, on a runtime of its own: dropping the runtime stops it. Returns
/// the runtime and the provider's base URL.
pub fn serve_remote_provider<P: weft_provider::Provider + 'static>(
    provider: std::sync::Arc<P>,
) -> (tokio::runtime::Runtime, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let _ = weft_provider::http::serve(provider, listener).await;
    });
    (runtime, url)
}
