//! The node's keep-alive HTTP/1.1 client for unary calls to remote providers.
//!
//! Each connection is driven by the task that uses it: the call's own task writes the
//! request, polls hyper's connection future and reads the response, then parks the
//! connection in the pool. A general-purpose pooled client runs every connection on a
//! task of its own and hands requests and responses across channels, which costs two
//! cross-task wake-ups per call — on these machines the largest part of the hop's latency
//! at one caller, and a fifth of its instructions.
//!
//! Invariants:
//! - A pooled connection is only reused after `poll_ready` said it can take a request
//!   while its connection future was being polled alongside, so a connection the provider
//!   closed while idle is noticed before anything is written on it.
//! - A request that was never written (hyper gives it back) is retried once on a fresh
//!   connection; a request that may have reached the provider is never resent.

use std::collections::HashMap;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::client::conn::http1::{Connection, SendRequest, handshake};
use hyper_util::rt::TokioIo;
use thiserror::Error;
use tokio::net::TcpStream;

/// How a request through the pool failed.
#[derive(Debug, Error)]
pub enum PoolError {
    /// No connection could be opened (the request was not sent).
    #[error("cannot connect to {authority}: {message}")]
    Connect {
        /// `host:port`.
        authority: String,
        /// Why.
        message: String,
    },
    /// The response body was longer than the caller allowed (the connection is dropped).
    #[error("{authority} answered with a body over {limit} bytes")]
    TooLarge {
        /// `host:port`.
        authority: String,
        /// The limit.
        limit: usize,
    },
    /// The exchange broke after the request may have been sent.
    #[error("the connection to {authority} broke off: {message}")]
    Exchange {
        /// `host:port`.
        authority: String,
        /// Why.
        message: String,
    },
}

type Driver = Pin<Box<Connection<TokioIo<TcpStream>, Full<Bytes>>>>;

/// One open connection: the request handle and the future that runs the connection.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    driver: Driver,
}

/// Idle keep-alive connections per `host:port`.
pub struct HttpPool {
    idle: Mutex<HashMap<String, Vec<Conn>>>,
    max_idle_per_host: usize,
    connect_timeout: Duration,
}

impl HttpPool {
    /// A pool keeping at most `max_idle_per_host` idle connections per provider address.
    pub fn new(max_idle_per_host: usize, connect_timeout: Duration) -> Self {
        Self {
            idle: Mutex::new(HashMap::new()),
            max_idle_per_host,
            connect_timeout,
        }
    }

    fn take(&self, authority: &str) -> Option<Conn> {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(authority)
            .and_then(Vec::pop)
    }

    fn put(&self, authority: &str, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let parked = idle.entry(authority.to_owned()).or_default();
        if parked.len() < self.max_idle_per_host {
            parked.push(conn);
        }
    }

    async fn connect(&self, authority: &str) -> Result<Conn, PoolError> {
        let failed = |message: String| PoolError::Connect {
            authority: authority.to_owned(),
            message,
        };
        let stream = tokio::time::timeout(self.connect_timeout, TcpStream::connect(authority))
            .await
            .map_err(|_| failed(format!("no connection within {:?}", self.connect_timeout)))?
            .map_err(|e| failed(e.to_string()))?;
        stream
            .set_nodelay(true)
            .map_err(|e| failed(e.to_string()))?;
        let (sender, driver) = handshake(TokioIo::new(stream))
            .await
            .map_err(|e| failed(e.to_string()))?;
        Ok(Conn {
            sender,
            driver: Box::pin(driver),
        })
    }

    /// A connection that can take a request now: a parked one that is still open, or a
    /// new one.
    async fn ready_connection(&self, authority: &str) -> Result<Conn, PoolError> {
        while let Some(mut conn) = self.take(authority) {
            if wait_ready(&mut conn).await {
                return Ok(conn);
            }
        }
        let mut conn = self.connect(authority).await?;
        if wait_ready(&mut conn).await {
            Ok(conn)
        } else {
            Err(PoolError::Connect {
                authority: authority.to_owned(),
                message: "the connection closed right after it opened".into(),
            })
        }
    }

    /// Sends `request` to `authority` (`host:port`) and reads the whole response, whose
    /// body may be at most `body_limit` bytes.
    pub async fn send(
        &self,
        authority: &str,
        request: hyper::Request<Full<Bytes>>,
        body_limit: usize,
    ) -> Result<(u16, Bytes), PoolError> {
        let mut request = request;
        // At most one retry, and only for a request hyper hands back unsent.
        for attempt in 0..2 {
            let conn = self.ready_connection(authority).await?;
            let (outcome, reusable) = exchange(conn, request, body_limit).await;
            if let Some(conn) = reusable {
                self.put(authority, conn);
            }
            match outcome {
                Exchanged::Done(status, body, _) => return Ok((status, body)),
                Exchanged::TooLarge => {
                    return Err(PoolError::TooLarge {
                        authority: authority.to_owned(),
                        limit: body_limit,
                    });
                }
                Exchanged::Unsent(back) if attempt == 0 => request = *back,
                Exchanged::Unsent(_) => {
                    return Err(PoolError::Exchange {
                        authority: authority.to_owned(),
                        message: "the connection closed before the request was sent".into(),
                    });
                }
                Exchanged::Failed(message) => {
                    return Err(PoolError::Exchange {
                        authority: authority.to_owned(),
                        message,
                    });
                }
            }
        }
        Err(PoolError::Exchange {
            authority: authority.to_owned(),
            message: "no attempt left".into(),
        })
    }
}

/// Polls the connection until it can take a request; false when it closed instead.
async fn wait_ready(conn: &mut Conn) -> bool {
    let Conn { sender, driver } = conn;
    tokio::select! {
        biased;
        ready = poll_fn(|cx| sender.poll_ready(cx)) => ready.is_ok(),
        _ = driver.as_mut() => false,
    }
}

enum Exchanged {
    /// Status, body, and whether the provider lets the connection stay open.
    Done(u16, Bytes, bool),
    /// The body went past the limit (the rest is left unread, so the connection goes).
    TooLarge,
    /// The request never left: it can be sent elsewhere.
    Unsent(Box<hyper::Request<Full<Bytes>>>),
    /// The exchange failed after the request may have been written.
    Failed(String),
}

/// One request/response on `conn`, polling its connection future in this task. Returns
/// the connection too when it can be parked for the next request.
async fn exchange(
    conn: Conn,
    request: hyper::Request<Full<Bytes>>,
    body_limit: usize,
) -> (Exchanged, Option<Conn>) {
    let Conn { mut sender, driver } = conn;
    let mut driver = Some(driver);
    let outcome = {
        let work = async {
            let response = match sender.try_send_request(request).await {
                Ok(response) => response,
                Err(mut error) => {
                    return match error.take_message() {
                        Some(unsent) => Exchanged::Unsent(Box::new(unsent)),
                        None => Exchanged::Failed(error.into_error().to_string()),
                    };
                }
            };
            let status = response.status().as_u16();
            let keep_alive = !response
                .headers()
                .get(hyper::header::CONNECTION)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
            match Limited::new(response.into_body(), body_limit)
                .collect()
                .await
            {
                Ok(body) => Exchanged::Done(status, body.to_bytes(), keep_alive),
                Err(e) if e.is::<LengthLimitError>() => Exchanged::TooLarge,
                Err(e) => Exchanged::Failed(e.to_string()),
            }
        };
        tokio::pin!(work);
        loop {
            let running = async {
                match driver.as_mut() {
                    Some(d) => {
                        let _ = d.as_mut().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                outcome = &mut work => break outcome,
                // The connection ended. Dropping it hands back an unsent request, or fails the
                // one in flight, so `work` resolves next.
                () = running => driver = None,
            }
        }
    };
    match (outcome, driver) {
        (Exchanged::Done(status, body, true), Some(driver)) => (
            Exchanged::Done(status, body, true),
            Some(Conn { sender, driver }),
        ),
        (outcome, _) => (outcome, None),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A raw HTTP/1.1 server answering `ok` to every request; after each response it
    /// closes the connection when `close_after` says so. Counts accepted connections.
    async fn server(close_after: bool) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&accepted);
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    loop {
                        let mut chunk = [0u8; 1024];
                        let n = socket.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        // Requests here carry no body: the head ends the request.
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            socket.write_all(reply).await.unwrap();
                            if close_after {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (authority, accepted)
    }

    fn request(authority: &str) -> hyper::Request<Full<Bytes>> {
        hyper::Request::get("/")
            .header(hyper::header::HOST, authority)
            .body(Full::new(Bytes::new()))
            .unwrap()
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_and_its_connection_dropped() {
        let (authority, accepted) = server(false).await;
        let pool = HttpPool::new(4, Duration::from_secs(2));
        let refused = pool.send(&authority, request(&authority), 1).await;
        assert!(
            matches!(refused, Err(PoolError::TooLarge { limit: 1, .. })),
            "{refused:?}"
        );
        // Exactly at the limit is fine, on a new connection.
        let (status, body) = pool.send(&authority, request(&authority), 2).await.unwrap();
        assert_eq!((status, &body[..]), (200, &b"ok"[..]));
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn sequential_requests_reuse_one_connection() {
        let (authority, accepted) = server(false).await;
        let pool = HttpPool::new(4, Duration::from_secs(2));
        for _ in 0..10 {
            let (status, body) = pool
                .send(&authority, request(&authority), 1024)
                .await
                .unwrap();
            assert_eq!((status, &body[..]), (200, &b"ok"[..]));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_replaced_not_failed() {
        let (authority, accepted) = server(true).await;
        let pool = HttpPool::new(4, Duration::from_secs(2));
        for _ in 0..5 {
            // Let the server's close reach us while the connection sits in the pool.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let (status, _) = pool
                .send(&authority, request(&authority), 1024)
                .await
                .unwrap();
            assert_eq!(status, 200);
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 5);
    }

    #[tokio::test]
    async fn nothing_listening_is_a_connect_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        drop(listener);
        let pool = HttpPool::new(4, Duration::from_secs(2));
        let error = pool
            .send(&authority, request(&authority), 1024)
            .await
            .unwrap_err();
        assert!(matches!(error, PoolError::Connect { .. }), "{error}");
    }

    #[tokio::test]
    async fn idle_connections_per_host_are_bounded() {
        let (authority, _) = server(false).await;
        let pool = HttpPool::new(2, Duration::from_secs(2));
        let calls = (0..6).map(|_| pool.send(&authority, request(&authority), 1024));
        for outcome in futures_util::future::join_all(calls).await {
            assert_eq!(outcome.unwrap().0, 200);
        }
        let idle = pool
            .idle
            .lock()
            .unwrap()
            .get(&authority)
            .map_or(0, Vec::len);
        assert!(idle <= 2, "{idle} idle connections");
    }
}
