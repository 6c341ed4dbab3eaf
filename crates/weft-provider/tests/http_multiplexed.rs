//! The SDK's side of the multiplexed call connection (`GET /weft/v1/calls`), driven by a
//! node written by hand from docs/remote-providers.md §3: answers leave as calls finish and
//! name their `ref`; `cancel` drops the work and nothing answers it; a broken call line that
//! names a `ref` gets an error answer, a message that cannot be tied to a call closes the
//! connection with a close code; `max_calls_per_connection` bounds the calls running at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use weft_contract::{Descriptor, Limits};
use weft_provider::http::{CALLS_PATH, HttpOptions, serve_with};
use weft_provider::{CallContext, Provider, ProviderError};

/// Echoes its payload after `delay_ms`, counting calls running, the most ever running at
/// once, and calls dropped before they finished.
#[derive(Default)]
struct Sleepy {
    running: AtomicUsize,
    most: AtomicUsize,
    dropped: Arc<AtomicUsize>,
}

struct Running<'a>(&'a Sleepy, bool);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        if !self.1 {
            self.0.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Provider for Sleepy {
    fn descriptors(&self) -> Vec<Descriptor> {
        let any = json!({"type": "object"});
        let d = json!({"id": "sleepy", "version": "1.0.0", "title": "Sleepy",
                       "description": "Echoes after delay_ms.", "input_schema": any, "output_schema": any});
        vec![Descriptor::from_value(&d, &Limits::default()).unwrap()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async move {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            let mut running = Running(self, false);
            let delay = payload["delay_ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(delay)).await;
            running.1 = true;
            if payload["fail"] == true {
                return Err(ProviderError::Failed("asked to fail".into()));
            }
            Ok(payload)
        }
        .boxed()
    }
}

type Socket = WebSocketStream<TcpStream>;

async fn serve(provider: Arc<Sleepy>, options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(serve_with(provider, listener, options));
    addr
}

async fn connect(addr: &str) -> Socket {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let url = format!("ws://{addr}{CALLS_PATH}");
    tokio_tungstenite::client_async(url, tcp).await.unwrap().0
}

fn line(reference: u64, payload: Value) -> Message {
    let rev = Sleepy::default().descriptors()[0].revision().to_string();
    Message::Text(
        json!({"ref": reference, "call_id": format!("c{reference}"), "capability_id": "sleepy",
               "version": "1.0.0", "revision": rev, "deadline_ms": 10_000, "payload": payload})
        .to_string()
        .into(),
    )
}

/// The next message, as JSON (a close frame as `{"close": code}`); fails after 5 s.
async fn next(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), socket.next())
            .await
            .expect("no message within 5 s");
        match message {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(text.as_str()).unwrap(),
            Some(Ok(Message::Close(frame))) => {
                return json!({"close": frame.map(|f| u16::from(f.code))});
            }
            Some(Ok(_)) => continue,
            other => return json!({"ended": format!("{other:?}")}),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_leave_as_calls_finish_and_cancel_drops_the_work() {
    let provider = Arc::new(Sleepy::default());
    let addr = serve(Arc::clone(&provider), HttpOptions::default()).await;
    let mut socket = connect(&addr).await;

    socket
        .send(line(1, json!({"delay_ms": 300, "n": 1})))
        .await
        .unwrap();
    socket.send(line(2, json!({"n": 2}))).await.unwrap();
    socket.send(line(3, json!({"fail": true}))).await.unwrap();
    let mut answers = [next(&mut socket).await, next(&mut socket).await];
    answers.sort_by_key(|a| a["ref"].as_u64());
    assert_eq!(answers[0], json!({"ref": 2, "result": {"n": 2}}));
    assert_eq!(
        answers[1],
        json!({"ref": 3, "error": {"message": "asked to fail"}})
    );
    assert_eq!(
        next(&mut socket).await,
        json!({"ref": 1, "result": {"delay_ms": 300, "n": 1}})
    );

    socket
        .send(line(4, json!({"delay_ms": 5_000})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let cancel = json!({"type": "cancel", "ref": 4}).to_string();
    socket.send(Message::Text(cancel.into())).await.unwrap();
    for _ in 0..100 {
        if provider.dropped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(provider.dropped.load(Ordering::SeqCst), 1);
    // Nothing answers the cancelled call: the next answer is the next call's.
    socket.send(line(5, json!({"n": 5}))).await.unwrap();
    assert_eq!(
        next(&mut socket).await,
        json!({"ref": 5, "result": {"n": 5}})
    );
    // A cancel for a call that is not running is ignored.
    let stray = json!({"type": "cancel", "ref": 99}).to_string();
    socket.send(Message::Text(stray.into())).await.unwrap();
    socket.send(line(6, json!({"n": 6}))).await.unwrap();
    assert_eq!(
        next(&mut socket).await,
        json!({"ref": 6, "result": {"n": 6}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_messages_fail_their_call_or_close_the_connection() {
    let provider = Arc::new(Sleepy::default());
    let addr = serve(provider, HttpOptions::default()).await;

    // Names its call: that call gets an error answer, the connection goes on.
    let mut socket = connect(&addr).await;
    let no_payload = json!({"ref": 7, "call_id": "x", "capability_id": "sleepy"}).to_string();
    socket.send(Message::Text(no_payload.into())).await.unwrap();
    let answer = next(&mut socket).await;
    assert_eq!(answer["ref"], 7, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("malformed call line")
    );
    let bad_id = json!({"ref": 8, "call_id": "x", "capability_id": "Bad", "version": "1.0.0",
                        "revision": "sha256:00", "deadline_ms": 1, "payload": {}});
    socket
        .send(Message::Text(bad_id.to_string().into()))
        .await
        .unwrap();
    let answer = next(&mut socket).await;
    assert_eq!(answer["ref"], 8, "{answer}");
    assert!(answer["error"]["message"].is_string(), "{answer}");
    socket.send(line(9, json!({"n": 9}))).await.unwrap();
    assert_eq!(next(&mut socket).await["ref"], 9);

    // Cannot be tied to a call: closed, with a code saying why.
    for (message, code) in [
        (Message::Text("not json".into()), 1007),
        (
            Message::Text(json!({"type": "cancel"}).to_string().into()),
            1007,
        ),
        (Message::Binary(vec![1, 2, 3].into()), 1002),
    ] {
        let mut socket = connect(&addr).await;
        socket.send(message).await.unwrap();
        assert_eq!(next(&mut socket).await, json!({"close": code}));
    }
    // A call line without `ref` cannot be answered on this connection either.
    let mut socket = connect(&addr).await;
    let Message::Text(text) = line(1, json!({})) else {
        unreachable!()
    };
    let mut unnumbered: Value = serde_json::from_str(text.as_str()).unwrap();
    unnumbered.as_object_mut().unwrap().remove("ref");
    socket
        .send(Message::Text(unnumbered.to_string().into()))
        .await
        .unwrap();
    assert_eq!(next(&mut socket).await, json!({"close": 1007}));
    // A `ref` already in flight is a violation too.
    let mut socket = connect(&addr).await;
    socket
        .send(line(1, json!({"delay_ms": 2_000})))
        .await
        .unwrap();
    socket.send(line(1, json!({}))).await.unwrap();
    assert_eq!(next(&mut socket).await, json!({"close": 1008}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_calls_per_connection_bounds_the_calls_running_at_once() {
    let provider = Arc::new(Sleepy::default());
    let options = HttpOptions {
        max_calls_per_connection: 2,
        ..HttpOptions::default()
    };
    let addr = serve(Arc::clone(&provider), options).await;
    let mut socket = connect(&addr).await;
    for reference in 0..6 {
        socket
            .send(line(reference, json!({"delay_ms": 100})))
            .await
            .unwrap();
    }
    let mut answered: Vec<u64> = Vec::new();
    for _ in 0..6 {
        answered.push(next(&mut socket).await["ref"].as_u64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(provider.most.load(Ordering::SeqCst), 2);
}
