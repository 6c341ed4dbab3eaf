//! The stream frame model: `{call_id, direction, sequence, kind, payload?, error?}`, and the
//! parser for the frames a caller sends ([`CallerFrame`]).

use serde::Serialize;
use serde_json::Value;

/// Which way a frame travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the caller to the provider.
    CallerToProvider,
    /// From the provider to the caller.
    ProviderToCaller,
}

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameKind {
    /// Sequence 0: the stream is open.
    Started,
    /// One chunk of data.
    Chunk,
    /// Terminal: success, with an optional final payload.
    Completed,
    /// Terminal: failure, with an error.
    Failed,
    /// Terminal: cancelled by the caller.
    Cancelled,
}

/// A terminal frame's error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameError {
    /// Stable code (`provider_error`, `invalid_frame`, `invalid_result`, `timeout`, …).
    pub code: String,
    /// What happened.
    pub message: String,
}

/// One frame of a stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// The call.
    pub call_id: String,
    /// Which way it travels.
    pub direction: Direction,
    /// Contiguous per direction, from 0.
    pub sequence: u64,
    /// What it is.
    pub kind: FrameKind,
    /// Chunk or completed payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Failure details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<FrameError>,
}

impl Frame {
    /// Whether this frame ends its direction.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.kind,
            FrameKind::Completed | FrameKind::Failed | FrameKind::Cancelled
        )
    }
}

/// What one message from the caller of a stream asks for.
///
/// A caller of a client-streaming or bidirectional call sends its own frames, as JSON text:
///
/// - `{"kind": "chunk", "sequence": N, "payload": ...}`: one chunk of input. Sequences start
///   at 1 (0 is the call envelope, the caller's `started`) and are contiguous;
/// - `{"kind": "completed", "sequence": N}`: half-close; no payload (`null` counts as none);
/// - `{"kind": "cancelled"}`: cancel the call; no sequence is needed.
///
/// A `direction` member, when present, must be `"caller_to_provider"`; other members are
/// ignored. Parsing checks the frame's shape and its sequence only: whether the call takes
/// chunks at all, and whether a chunk matches `input_chunk_schema`, is the stream's business.
#[derive(Debug, Clone, PartialEq)]
pub enum CallerFrame {
    /// A chunk of input, with its payload.
    Chunk(Value),
    /// The caller will send no more chunks (its `completed`); output keeps flowing.
    HalfClose,
    /// The caller cancels the call (its `cancelled`).
    Cancel,
}

impl CallerFrame {
    /// Parses one caller message, expecting `expected_sequence` for a chunk or a half-close.
    ///
    /// The error is a human-readable reason, meant for an `invalid_frame` failure of the
    /// call. A `cancelled` frame is accepted whatever its sequence (or without one), and
    /// does not consume a sequence number; every other accepted frame consumes
    /// `expected_sequence`, so the next one expects `expected_sequence + 1`.
    pub fn parse(text: &str, expected_sequence: u64) -> Result<CallerFrame, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("caller frame is not JSON: {e}"))?;
        let kind = value["kind"].as_str().ok_or("caller frame has no kind")?;
        if kind == "cancelled" {
            return Ok(CallerFrame::Cancel);
        }
        if value
            .get("direction")
            .is_some_and(|d| d != "caller_to_provider")
        {
            return Err("caller frames travel caller_to_provider".into());
        }
        let sequence = value["sequence"]
            .as_u64()
            .ok_or("caller frame has no sequence")?;
        if sequence != expected_sequence {
            return Err(format!(
                "caller frame sequence {sequence}, expected {expected_sequence}"
            ));
        }
        match kind {
            "chunk" => value
                .get("payload")
                .cloned()
                .map(CallerFrame::Chunk)
                .ok_or_else(|| "a chunk needs a payload".to_owned()),
            "completed" if value.get("payload").is_none_or(Value::is_null) => {
                Ok(CallerFrame::HalfClose)
            }
            "completed" => {
                Err("the caller's completed half-closes input and carries no payload".into())
            }
            other => Err(format!(
                "a caller may send chunk, completed or cancelled, not {other}"
            )),
        }
    }
}

/// Numbers frames of the provider → caller direction.
pub(crate) struct Emitter {
    pub(crate) call_id: String,
    pub(crate) next: u64,
}

impl Emitter {
    pub(crate) fn frame(
        &mut self,
        kind: FrameKind,
        payload: Option<Value>,
        error: Option<(&str, String)>,
    ) -> Frame {
        let frame = Frame {
            call_id: self.call_id.clone(),
            direction: Direction::ProviderToCaller,
            sequence: self.next,
            kind,
            payload,
            error: error.map(|(code, message)| FrameError {
                code: code.to_owned(),
                message,
            }),
        };
        self.next += 1;
        frame
    }
}
