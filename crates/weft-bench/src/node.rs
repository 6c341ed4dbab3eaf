//! The node under test: a real `weft serve` child process on an ephemeral port.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::BenchError;

/// A running node; killed when dropped.
pub struct NodeUnderTest {
    child: Child,
    /// `http://127.0.0.1:port`.
    pub url: String,
    /// The listening address.
    pub addr: SocketAddr,
    /// The bootstrap admin token.
    pub token: String,
    agent: ureq::Agent,
    /// The data directory; taken back by [`NodeUnderTest::stop`].
    data: Option<tempfile::TempDir>,
}

impl Drop for NodeUnderTest {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeUnderTest {
    /// Starts `weft serve` with a fresh data directory and `extra` arguments, and waits
    /// until it listens.
    pub fn start(weft: &Path, extra: &[&str]) -> Result<Self, BenchError> {
        let data = tempfile::tempdir().map_err(BenchError::io("creating a data directory"))?;
        Self::spawn(weft, data, extra, true)
    }

    /// Starts `weft serve` on the data directory of a node that was [stopped](Self::stop),
    /// and waits until it listens (its registry is loaded by then). The admin token is read
    /// from the data directory, since a restarted node does not print it.
    pub fn start_in(
        weft: &Path,
        data: tempfile::TempDir,
        extra: &[&str],
    ) -> Result<Self, BenchError> {
        Self::spawn(weft, data, extra, false)
    }

    fn spawn(
        weft: &Path,
        data: tempfile::TempDir,
        extra: &[&str],
        fresh: bool,
    ) -> Result<Self, BenchError> {
        let mut child = Command::new(weft)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .args(extra)
            .env("WEFT_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(BenchError::io("starting weft serve"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| BenchError::Node("no stdout".into()))?;
        let mut lines = BufReader::new(stdout).lines();
        let mut next_line = || -> Result<String, BenchError> {
            lines
                .next()
                .transpose()
                .map_err(BenchError::io("reading the node's stdout"))?
                .ok_or_else(|| BenchError::Node("exited before it was ready".into()))
        };
        let url = next_line()?
            .trim_start_matches("weft: listening on ")
            .to_owned();
        let token = if fresh {
            next_line()?
                .rsplit(' ')
                .next()
                .unwrap_or_default()
                .to_owned()
        } else {
            std::fs::read_to_string(data.path().join("admin.token"))
                .map_err(BenchError::io("reading the admin token"))?
                .trim()
                .to_owned()
        };
        let addr = url
            .trim_start_matches("http://")
            .parse()
            .map_err(|e| BenchError::Node(format!("bad listen line {url:?}: {e}")))?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Self {
            child,
            url,
            addr,
            token,
            agent,
            data: Some(data),
        })
    }

    /// Stops the node as an operator would (SIGTERM: drain, close the store), waiting up to
    /// `grace` before killing it, and hands back its data directory for
    /// [`NodeUnderTest::start_in`].
    pub fn stop(mut self, grace: Duration) -> Result<tempfile::TempDir, BenchError> {
        let pid = self.pid().to_string();
        let _ = Command::new("kill")
            .args(["-TERM", &pid])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        self.data
            .take()
            .ok_or_else(|| BenchError::Node("the data directory was already taken".into()))
    }

    /// `GET path` without credentials; only the status (0 when the request failed).
    pub fn status_of(&self, path: &str) -> u16 {
        match self.agent.get(&format!("{}{path}", self.url)).call() {
            Ok(mut response) => {
                let _ = response.body_mut().read_to_vec();
                response.status().as_u16()
            }
            Err(_) => 0,
        }
    }

    /// The node's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size of the node, in MiB.
    pub fn rss_mib(&self) -> f64 {
        rss_mib(self.pid())
    }

    /// `GET path` with the admin token; the JSON body of a 2xx answer.
    pub fn get(&self, path: &str) -> Result<Value, BenchError> {
        let response = self
            .agent
            .get(&format!("{}{path}", self.url))
            .header("authorization", &format!("Bearer {}", self.token))
            .call();
        Self::json(path, response)
    }

    /// `method path` with a JSON body and the admin token; the JSON body of a 2xx answer.
    pub fn send(&self, method: &str, path: &str, body: &Value) -> Result<Value, BenchError> {
        let url = format!("{}{path}", self.url);
        let auth = format!("Bearer {}", self.token);
        let response = match method {
            "PUT" => self
                .agent
                .put(&url)
                .header("authorization", &auth)
                .send_json(body),
            _ => self
                .agent
                .post(&url)
                .header("authorization", &auth)
                .send_json(body),
        };
        Self::json(path, response)
    }

    fn json(
        path: &str,
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, BenchError> {
        let mut response = response.map_err(|e| BenchError::Node(format!("{path}: {e}")))?;
        let status = response.status().as_u16();
        let body: Value = response
            .body_mut()
            .read_json()
            .map_err(|e| BenchError::Node(format!("{path}: {e}")))?;
        if !(200..300).contains(&status) {
            return Err(BenchError::Node(format!("{path}: HTTP {status}: {body}")));
        }
        Ok(body)
    }

    /// The current revision of `id@version`.
    pub fn revision(&self, id: &str, version: &str) -> Result<String, BenchError> {
        let descriptor = self.get(&format!("/v1/capabilities/{id}/versions/{version}"))?;
        descriptor["revision"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| BenchError::Node(format!("no revision for {id}@{version}")))
    }
}

/// Resident set size of process `pid`, in MiB (0 when unreadable).
pub fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}
