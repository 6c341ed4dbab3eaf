//! A small blocking client for a node's `/v1` API: one request, one JSON answer or one
//! typed failure.

use std::time::Duration;

use serde_json::Value;

/// Largest response body read, in bytes.
const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one whole exchange may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The node answered with an error envelope (or at least an error status).
#[derive(Debug, Clone)]
pub struct ApiFailure {
    /// The HTTP status.
    pub status: u16,
    /// The stable error code (`http_STATUS` when the body was not an envelope).
    pub code: String,
    /// The node's explanation.
    pub message: String,
    /// The request id, from the envelope or the `X-Request-Id` header.
    pub request_id: Option<String>,
    /// Code-specific details.
    pub details: Option<Value>,
}

/// Why a remote command failed.
#[derive(Debug)]
pub enum Failure {
    /// The node answered with an error.
    Api(ApiFailure),
    /// The node could not be reached, or the exchange broke off.
    Unreachable {
        /// The node's base URL.
        url: String,
        /// What went wrong.
        message: String,
        /// True when the request may have been sent (a retry could be a duplicate).
        maybe_sent: bool,
    },
    /// The node answered something the API does not document.
    BadResponse {
        /// The request URL.
        url: String,
        /// What was wrong with it.
        message: String,
    },
    /// Something to fix before anything can be sent (no URL, no token, …).
    Usage(String),
    /// The problems were already printed.
    Reported,
    /// Writing the output failed.
    Io(std::io::Error),
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Failure::Io(error)
    }
}

/// The HTTP methods the API uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Read.
    Get,
    /// Create or replace.
    Put,
    /// Create or act.
    Post,
}

/// A successful answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status (2xx).
    pub status: u16,
    /// The JSON body.
    pub body: Value,
}

/// A connection to one node with one bearer token.
#[derive(Debug)]
pub struct Client {
    agent: ureq::Agent,
    base: String,
    token: String,
}

fn agent(limit: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_global(Some(limit))
        .user_agent(concat!("weft/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

impl Client {
    /// A client for the node at `base` (`http://host:port`, no trailing slash).
    pub fn new(base: String, token: String) -> Client {
        Client {
            agent: agent(CALL_TIMEOUT),
            base,
            token,
        }
    }

    /// The same client, waiting at most `limit` for each answer (for calls whose deadline
    /// is longer than the default).
    pub fn with_timeout(self, limit: Duration) -> Client {
        Client {
            agent: agent(limit),
            ..self
        }
    }

    /// The node's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The bearer token this client sends (for transports it does not carry itself, such
    /// as the WebSocket stream).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// `GET path?query` and its JSON body.
    pub fn get(&self, path: &str, query: &[(&str, String)]) -> Result<Value, Failure> {
        let mut target = path.to_owned();
        for (i, (key, value)) in query.iter().enumerate() {
            target.push(if i == 0 { '?' } else { '&' });
            target.push_str(&encode(key));
            target.push('=');
            target.push_str(&encode(value));
        }
        Ok(self.send(Method::Get, &target, None, None)?.body)
    }

    /// Sends one request; a 2xx JSON answer is a [`Reply`], anything else a [`Failure`].
    pub fn send(
        &self,
        method: Method,
        target: &str,
        body: Option<&Value>,
        idempotency_key: Option<&str>,
    ) -> Result<Reply, Failure> {
        let url = format!("{}{target}", self.base);
        let mut builder = ureq::http::Request::builder()
            .method(match method {
                Method::Get => "GET",
                Method::Put => "PUT",
                Method::Post => "POST",
            })
            .uri(&url)
            .header("authorization", format!("Bearer {}", self.token))
            .header("accept", "application/json");
        if let Some(key) = idempotency_key {
            builder = builder.header("idempotency-key", key);
        }
        let bytes = match body {
            Some(value) => {
                builder = builder.header("content-type", "application/json");
                serde_json::to_vec(value).map_err(|e| Failure::Usage(e.to_string()))?
            }
            None => Vec::new(),
        };
        // The message of an `http::Error` never quotes the header values (the token).
        let built = |e: ureq::http::Error| {
            Failure::Usage(format!(
                "cannot build a request to {url}: {e} (check the URL and the token)"
            ))
        };
        let result = if method == Method::Get {
            self.agent.run(builder.body(()).map_err(built)?)
        } else {
            self.agent.run(builder.body(bytes).map_err(built)?)
        };
        let mut response = result.map_err(|error| Failure::Unreachable {
            url: self.base.clone(),
            maybe_sent: !matches!(
                error,
                ureq::Error::ConnectionFailed | ureq::Error::HostNotFound | ureq::Error::BadUri(_)
            ),
            message: error.to_string(),
        })?;
        let status = response.status().as_u16();
        let header_id = response
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string()
            .map_err(|error| Failure::Unreachable {
                url: self.base.clone(),
                message: format!("reading the answer: {error}"),
                maybe_sent: true,
            })?;
        if status >= 400 {
            return Err(Failure::Api(failure_of(status, &text, header_id)));
        }
        if !(200..300).contains(&status) {
            return Err(Failure::BadResponse {
                url,
                message: format!("unexpected HTTP status {status}"),
            });
        }
        let body = serde_json::from_str(&text).map_err(|e| Failure::BadResponse {
            url,
            message: format!("the body is not JSON: {e}"),
        })?;
        Ok(Reply { status, body })
    }
}

/// Reads an error envelope, or makes do with the status when the body is not one.
fn failure_of(status: u16, text: &str, header_id: Option<String>) -> ApiFailure {
    let envelope: Option<Value> = serde_json::from_str(text).ok();
    let error = envelope.as_ref().and_then(|v| v.get("error"));
    let field = |name: &str| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match field("code") {
        Some(code) => ApiFailure {
            status,
            code,
            message: field("message").unwrap_or_default(),
            request_id: field("requestId").or(header_id),
            details: error.and_then(|e| e.get("details")).cloned(),
        },
        None => {
            let snippet: String = text.trim().chars().take(200).collect();
            ApiFailure {
                status,
                code: format!("http_{status}"),
                message: if snippet.is_empty() {
                    "the node answered with an error and no explanation".into()
                } else {
                    snippet
                },
                request_id: header_id,
                details: None,
            }
        }
    }
}

/// Percent-encodes a path segment or query component (everything but RFC 3986 unreserved).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A fresh `Idempotency-Key`: process id and the current time, unique per publish.
pub fn idempotency_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("weft-cli-{:x}-{nanos:x}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_keeps_unreserved_only() {
        assert_eq!(encode("echo-1.0_x~"), "echo-1.0_x~");
        assert_eq!(encode("feature:vision"), "feature%3Avision");
        assert_eq!(encode("a b/c?d&e=é"), "a%20b%2Fc%3Fd%26e%3D%C3%A9");
    }

    #[test]
    fn failures_read_the_envelope_or_fall_back_to_the_status() {
        let f = failure_of(
            404,
            r#"{"error":{"code":"not_found","message":"node x not found","requestId":"req-1"}}"#,
            Some("req-h".into()),
        );
        assert_eq!(
            (f.code.as_str(), f.message.as_str(), f.request_id.as_deref()),
            ("not_found", "node x not found", Some("req-1"))
        );
        let f = failure_of(502, "<html>bad gateway</html>", Some("req-h".into()));
        assert_eq!(f.code, "http_502");
        assert_eq!(f.request_id.as_deref(), Some("req-h"));
    }
}
