//! `weft call` on a streaming capability: the call over the node's `GET /v1/streams`
//! WebSocket.
//!
//! The envelope is the first message. Every message from the node is printed as one compact
//! NDJSON line on stdout (flushed at once). For `client_streaming` and `bidirectional`
//! capabilities stdin is read as NDJSON, one chunk payload per line (blank lines skipped),
//! on its own thread, while the socket keeps being read; its end half-closes the input.

use std::io::{BufRead, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use super::client::{ApiFailure, Failure};

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the upgrade handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one read of the socket waits before stdin is looked at again.
const POLL: Duration = Duration::from_millis(50);
/// How many stdin lines may wait to be sent.
const STDIN_QUEUE: usize = 64;

/// The call modes that send caller chunks.
pub fn takes_input(io_mode: &str) -> bool {
    matches!(io_mode, "client_streaming" | "bidirectional")
}

/// `ws://host:port/v1/streams` and `host:port` from an `http://` base URL; `https://` is
/// refused (this build has no TLS).
fn endpoint(base: &str) -> Result<(String, String), Failure> {
    if base.starts_with("https://") {
        return Err(Failure::Usage(format!(
            "streaming calls need a plain http:// node URL: this build has no TLS for \
             WebSocket (wss://), and {base} is https"
        )));
    }
    let Some(rest) = base.strip_prefix("http://") else {
        return Err(Failure::Usage(format!(
            "invalid node URL {base:?}: use http://HOST:PORT"
        )));
    };
    let authority = rest.split('/').next().unwrap_or_default();
    // A port-less authority (`host`, `[::1]`) gets the HTTP default.
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    let address = if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    Ok((format!("ws://{rest}/v1/streams"), address))
}

/// The failure for a broken exchange with the node.
fn broken(base: &str, message: impl std::fmt::Display) -> Failure {
    Failure::Unreachable {
        url: base.to_owned(),
        message: message.to_string(),
        maybe_sent: true,
    }
}

/// An `{"error": {...}}` body as an API failure.
fn api_failure(status: u16, body: &Value) -> ApiFailure {
    let error = body.get("error").unwrap_or(&Value::Null);
    let field = |name: &str| error.get(name).and_then(Value::as_str).map(str::to_owned);
    ApiFailure {
        status,
        code: field("code").unwrap_or_else(|| format!("http_{status}")),
        message: field("message").unwrap_or_default(),
        request_id: field("requestId").or_else(|| field("request_id")),
        details: error.get("details").cloned(),
    }
}

/// Opens the socket: TCP, then the upgrade with the bearer token.
fn open(base: &str, token: &str) -> Result<WebSocket<TcpStream>, Failure> {
    let (url, address) = endpoint(base)?;
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| Failure::Usage(format!("invalid node URL {base:?}: {e}")))?;
    let header = format!("Bearer {token}").parse().map_err(|_| {
        Failure::Usage("the token cannot be sent in a header (check the token)".into())
    })?;
    request.headers_mut().insert("authorization", header);
    let unreachable = |message: String| Failure::Unreachable {
        url: base.to_owned(),
        message,
        maybe_sent: false,
    };
    let addresses: Vec<_> = address
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve {address}: {e}")))?
        .collect();
    let mut last = format!("{address} resolves to no address");
    let mut stream = None;
    for candidate in addresses {
        match TcpStream::connect_timeout(&candidate, CONNECT_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let stream = stream.ok_or_else(|| unreachable(last))?;
    stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
    stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT))?;
    let (socket, _) = match tungstenite::client(request, stream) {
        Ok(opened) => opened,
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response))) => {
            let status = response.status().as_u16();
            let body = response
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                .unwrap_or(Value::Null);
            let mut api = api_failure(status, &body);
            if api.request_id.is_none() {
                api.request_id = response
                    .headers()
                    .get("x-request-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
            }
            if api.message.is_empty() {
                api.message = format!("the node refused the WebSocket upgrade (HTTP {status})");
            }
            return Err(Failure::Api(api));
        }
        Err(e) => return Err(broken(base, format!("WebSocket upgrade failed: {e}"))),
    };
    socket.get_ref().set_read_timeout(Some(POLL))?;
    Ok(socket)
}

/// One line of stdin, or why reading stopped.
enum Input {
    Line(String),
    Failed(std::io::Error),
}

/// Reads stdin line by line on its own thread; the channel ends with stdin.
fn read_stdin() -> Receiver<Input> {
    let (lines, received) = mpsc::sync_channel(STDIN_QUEUE);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let item = match line {
                Ok(line) => Input::Line(line),
                Err(e) => Input::Failed(e),
            };
            let stop = matches!(item, Input::Failed(_));
            if lines.send(item).is_err() || stop {
                break;
            }
        }
    });
    received
}

/// Where sending caller chunks stands.
struct Feed {
    input: Receiver<Input>,
    /// The stdin line number of the last line read.
    line: usize,
    /// The sequence of the next caller frame.
    sequence: u64,
}

/// What the stdin side asks for after a poll.
enum FeedState {
    /// More may come.
    Open,
    /// Stdin ended and the half-close was sent.
    Closed,
    /// Stdin failed or held invalid JSON: the call was cancelled with this reason.
    Cancelled(Failure),
}

impl Feed {
    /// Sends every chunk stdin has ready.
    fn pump(
        &mut self,
        socket: &mut WebSocket<TcpStream>,
        base: &str,
    ) -> Result<FeedState, Failure> {
        loop {
            let failure = match self.input.try_recv() {
                Err(TryRecvError::Empty) => return Ok(FeedState::Open),
                Err(TryRecvError::Disconnected) => {
                    let frame = json!({"kind": "completed", "sequence": self.sequence});
                    send(socket, &frame, base)?;
                    return Ok(FeedState::Closed);
                }
                Ok(Input::Line(text)) => {
                    self.line += 1;
                    if text.trim().is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Value>(&text) {
                        Ok(payload) => {
                            let frame = json!({"kind": "chunk", "sequence": self.sequence,
                                               "payload": payload});
                            send(socket, &frame, base)?;
                            self.sequence += 1;
                            continue;
                        }
                        Err(e) => Failure::Usage(format!("invalid_json: line {}: {e}", self.line)),
                    }
                }
                Ok(Input::Failed(e)) => Failure::Usage(format!("cannot read stdin: {e}")),
            };
            send(socket, &json!({"kind": "cancelled"}), base)?;
            return Ok(FeedState::Cancelled(failure));
        }
    }
}

/// Sends one caller message.
fn send(socket: &mut WebSocket<TcpStream>, frame: &Value, base: &str) -> Result<(), Failure> {
    socket
        .send(Message::Text(frame.to_string().into()))
        .map_err(|e| broken(base, format!("sending to the stream failed: {e}")))
}

/// True for a read that found nothing yet.
fn idle(error: &tungstenite::Error) -> bool {
    matches!(error, tungstenite::Error::Io(e)
        if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

/// Runs the call over `/v1/streams`: `envelope` first, then frames until the terminal.
/// `Ok` only when the terminal is `completed`.
pub fn run(base: &str, token: &str, envelope: &Value, io_mode: &str) -> Result<(), Failure> {
    let mut socket = open(base, token)?;
    send(&mut socket, envelope, base)?;
    let mut feed = takes_input(io_mode).then(|| Feed {
        input: read_stdin(),
        line: 0,
        sequence: 1,
    });
    let mut cancelled: Option<Failure> = None;
    let mut out = std::io::stdout().lock();
    loop {
        if let Some(active) = feed.as_mut() {
            match active.pump(&mut socket, base)? {
                FeedState::Open => {}
                FeedState::Closed => feed = None,
                FeedState::Cancelled(reason) => {
                    cancelled = Some(reason);
                    feed = None;
                }
            }
        }
        let text = match socket.read() {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_))
            | Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                return Err(cancelled.unwrap_or_else(|| {
                    broken(base, "the node closed the stream before its terminal frame")
                }));
            }
            Ok(_) => continue,
            Err(e) if idle(&e) => continue,
            Err(e) => return Err(cancelled.unwrap_or_else(|| broken(base, e))),
        };
        let value: Value = serde_json::from_str(text.as_str())
            .map_err(|e| broken(base, format!("a stream message is not JSON: {e}")))?;
        if value.get("kind").is_none() && value.get("error").is_some() {
            // A guard failure: the call never started.
            return Err(Failure::Api(api_failure(400, &value)));
        }
        if text.contains(['\n', '\r']) {
            writeln!(out, "{value}")?;
        } else {
            writeln!(out, "{}", text.as_str())?;
        }
        out.flush()?;
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !matches!(kind, "completed" | "failed" | "cancelled") {
            continue;
        }
        let _ = socket.close(None);
        if let Some(reason) = cancelled {
            return Err(reason);
        }
        if kind == "completed" {
            return Ok(());
        }
        let error = value.get("error").unwrap_or(&Value::Null);
        let field = |name: &str| error.get(name).and_then(Value::as_str).map(str::to_owned);
        return Err(Failure::Api(ApiFailure {
            status: 0,
            code: field("code").unwrap_or_else(|| kind.to_owned()),
            message: field("message").unwrap_or_else(|| format!("the call ended {kind}")),
            request_id: None,
            details: error.get("details").cloned(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_come_from_http_urls_only() {
        let (url, address) = endpoint("http://127.0.0.1:7411").ok().unwrap_or_default();
        assert_eq!(url, "ws://127.0.0.1:7411/v1/streams");
        assert_eq!(address, "127.0.0.1:7411");
        let (_, address) = endpoint("http://node.example").ok().unwrap_or_default();
        assert_eq!(address, "node.example:80");
        assert!(matches!(
            endpoint("https://node.example"),
            Err(Failure::Usage(m)) if m.contains("TLS")
        ));
    }

    #[test]
    fn only_input_modes_read_stdin() {
        assert!(takes_input("client_streaming"));
        assert!(takes_input("bidirectional"));
        assert!(!takes_input("server_streaming"));
        assert!(!takes_input("unary"));
    }
}
