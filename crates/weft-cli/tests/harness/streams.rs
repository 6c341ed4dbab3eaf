//! Stream clients for the `serve_*` tests: a blocking WebSocket caller for `GET /v1/streams`
//! (reads bounded by a 10 s socket timeout, so a node that never answers fails the test)
//! and a parser for the SSE form of a server-streaming call.

use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use super::Node;

/// A caller's socket.
pub type Socket = WebSocket<TcpStream>;

/// Opens `/v1/streams` on `node` with `token`.
pub fn connect(node: &Node, token: &str) -> Socket {
    let url = node.url.replacen("http://", "ws://", 1) + "/v1/streams";
    let mut request = url.as_str().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    let host = node.url.trim_start_matches("http://").to_owned();
    let stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (socket, response) = tungstenite::client(request, stream).unwrap();
    assert_eq!(response.status().as_u16(), 101);
    socket
}

/// Sends one JSON text message.
pub fn send(socket: &mut Socket, value: Value) {
    socket
        .send(Message::Text(value.to_string().into()))
        .unwrap();
}

/// Whether `frame` ends the stream: a terminal frame, or a guard failure's error message.
pub fn is_last(frame: &Value) -> bool {
    frame.get("error").is_some() && frame.get("kind").is_none()
        || ["completed", "failed", "cancelled"].contains(&frame["kind"].as_str().unwrap_or(""))
}

/// The next frame; `None` when the socket closed or failed.
pub fn next(socket: &mut Socket) -> Option<Value> {
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).unwrap()),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Reads frames until the terminal (or an error message / close).
pub fn read_all(socket: &mut Socket) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(frame) = next(socket) {
        let done = is_last(&frame);
        out.push(frame);
        if done {
            break;
        }
    }
    out
}

/// Reads frames after the terminal until the socket closes; a well-behaved node sends none.
pub fn after_terminal(socket: &mut Socket) -> Vec<Value> {
    std::iter::from_fn(|| next(socket)).collect()
}

/// The call envelope for `id@1.0.0` at its current revision.
pub fn envelope(node: &Node, token: &str, id: &str, payload: Value) -> Value {
    let r = node.get(&format!("/v1/capabilities/{id}/versions/1.0.0"), token);
    json!({"call_id": format!("ws-{id}"), "capability_id": id, "version": "1.0.0",
           "descriptor_revision": r.body["revision"], "payload": payload})
}

/// The `kind` of every frame (`error` for a guard failure's message).
pub fn kinds(frames: &[Value]) -> Vec<&str> {
    frames
        .iter()
        .map(|f| f["kind"].as_str().unwrap_or("error"))
        .collect()
}

/// Asserts the frames are provider → caller with contiguous sequences from 0.
pub fn assert_sequenced(frames: &[Value]) {
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f["sequence"], json!(i), "{frames:?}");
        assert_eq!(f["direction"], "provider_to_caller");
    }
}

/// The `(event, data)` pairs of a complete SSE body.
pub fn sse_events(text: &str) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    let (mut event, mut data) = (String::new(), String::new());
    for line in text.lines() {
        if let Some(e) = line.strip_prefix("event: ") {
            event = e.to_owned();
        } else if let Some(d) = line.strip_prefix("data: ") {
            data = d.to_owned();
        } else if line.is_empty() && !event.is_empty() {
            events.push((
                std::mem::take(&mut event),
                serde_json::from_str(&data).unwrap(),
            ));
            data.clear();
        }
    }
    events
}
