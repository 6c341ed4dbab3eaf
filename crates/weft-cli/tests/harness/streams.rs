//! Stream clients for the `serve_*` tests: a WebSocket client for `GET /v1/streams` (bounded
//! reads) and a parser for the SSE form of a server-streaming call.

use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use super::Node;

/// A client WebSocket to a node.
pub type Socket = WebSocket<TcpStream>;

/// Opens `GET /v1/streams` with `token`; reads time out after 10 s.
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

/// Reads frames until the terminal (or an error message / close).
pub fn read_all(socket: &mut Socket) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                let v: Value = serde_json::from_str(&text).unwrap();
                let done = v.get("error").is_some() && v.get("kind").is_none()
                    || ["completed", "failed", "cancelled"]
                        .contains(&v["kind"].as_str().unwrap_or(""));
                out.push(v);
                if done {
                    return out;
                }
            }
            Ok(Message::Close(_)) | Err(_) => return out,
            Ok(_) => {}
        }
    }
}

/// The opening message of a stream for `id@1.0.0`, pinned to its current revision.
pub fn envelope(node: &Node, token: &str, id: &str, payload: Value) -> Value {
    let r = node.get(&format!("/v1/capabilities/{id}/versions/1.0.0"), token);
    json!({"call_id": format!("ws-{id}"), "capability_id": id, "version": "1.0.0",
           "descriptor_revision": r.body["revision"], "payload": payload})
}

/// The `kind` of each frame (`error` for an error message).
pub fn kinds(frames: &[Value]) -> Vec<&str> {
    frames
        .iter()
        .map(|f| f["kind"].as_str().unwrap_or("error"))
        .collect()
}

/// Frames are numbered from 0 and all flow provider → caller.
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
