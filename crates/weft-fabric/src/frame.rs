//! The stream frame model: `{call_id, direction, sequence, kind, payload?, error?}`.

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
