//! Streaming calls: the frame model, one terminal per direction, every chunk validated, and
//! flow control so a slow reader slows the provider instead of growing memory.
//!
//! Frames are `{call_id, direction, sequence, kind, payload?, error?}`. For the provider →
//! caller direction the fabric emits `started` at sequence 0, then one `chunk` per provider
//! chunk (each checked against `output_chunk_schema` and the size limit), then exactly one
//! terminal: `completed` (its payload, when present, checked against `output_schema`),
//! `failed` (with an error code) or `cancelled`. The terminal is sent only after the
//! provider's future has finished, so its cleanup is done before the caller sees success.
//!
//! Queues are bounded (`stream_queue` frames each way) and sending waits when they are full:
//! a caller that reads slowly makes the provider's `send` wait. The single deadline covers
//! the whole stream; expiry ends it with `failed`/`timeout` and drops the provider's work.
//! Dropping the [`StreamCall`] (the caller went away) cancels the provider.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use weft_contract::{Descriptor, IoMode, QualifiedId, SchemaRole};
use weft_provider::{CallContext, ChunkSink, ChunkSource, ProviderError, SharedProvider};
use weft_registry::{Registry, TenantId};

use crate::diagnostics::{StreamEnd, StreamProbe};
use crate::error::CallError;
use crate::fabric::{CallRequest, Fabric, Mode};
use crate::frame::Emitter;
pub use crate::frame::{Direction, Frame, FrameError, FrameKind};

/// Why the stream must stop early.
#[derive(Debug, Clone)]
enum Stop {
    /// The caller cancelled (or went away).
    Cancel(String),
    /// The caller broke the contract (for example an invalid chunk).
    Fail(&'static str, String),
}

/// An open stream, as a transport sees it.
pub struct StreamCall {
    /// The call id.
    pub call_id: String,
    /// The pinned descriptor.
    pub descriptor: Arc<Descriptor>,
    /// Who serves it.
    pub provider_id: String,
    /// Where.
    pub node_id: String,
    frames: Frames,
    input: Option<InputHandle>,
    stopper: Stopper,
}

impl StreamCall {
    /// The next provider → caller frame; `None` after the terminal.
    pub async fn next(&mut self) -> Option<Frame> {
        self.frames.next().await
    }

    /// Cancels the call; the stream then ends with one `cancelled` terminal.
    pub fn cancel(&mut self, reason: &str) {
        self.stopper.cancel(reason);
    }

    /// Splits the stream so a transport can read frames, send input and stop it from
    /// different places. Dropping the [`Stopper`] cancels the call.
    pub fn split(self) -> (Frames, Option<InputHandle>, Stopper) {
        (self.frames, self.input, self.stopper)
    }
}

/// The provider → caller frames of a stream.
pub struct Frames {
    receiver: mpsc::Receiver<Frame>,
}

impl Frames {
    /// The next frame; `None` after the terminal.
    pub async fn next(&mut self) -> Option<Frame> {
        self.receiver.recv().await
    }

    /// The next frame if one is already queued, without waiting (to coalesce writes).
    pub fn try_next(&mut self) -> Option<Frame> {
        self.receiver.try_recv().ok()
    }
}

/// Ends a stream early. Dropping it cancels the call (the caller went away).
pub struct Stopper {
    stop: Option<oneshot::Sender<Stop>>,
}

impl Stopper {
    /// Cancels: the stream ends with one `cancelled` terminal carrying `reason`.
    pub fn cancel(&mut self, reason: &str) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(Stop::Cancel(reason.to_owned()));
        }
    }

    /// Fails the call because the caller broke the contract: one `failed` terminal.
    pub fn fail(&mut self, code: &'static str, message: String) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(Stop::Fail(code, message));
        }
    }
}

impl Drop for Stopper {
    fn drop(&mut self) {
        self.cancel("the caller went away");
    }
}

/// The caller → provider side of a client-streaming or bidirectional call.
pub struct InputHandle {
    sender: Option<mpsc::Sender<Value>>,
    descriptor: Arc<Descriptor>,
    limit: usize,
    max_errors: usize,
    probe: Arc<StreamProbe>,
}

impl InputHandle {
    /// Checks one caller chunk against the size limit and `input_chunk_schema`; a chunk
    /// that passes is counted as a frame in.
    pub fn check(&self, chunk: &Value) -> Result<(), String> {
        let size = weft_contract::encoded_len(chunk);
        if size > self.limit {
            return Err(format!(
                "a chunk of {size} bytes exceeds the limit of {}",
                self.limit
            ));
        }
        self.descriptor
            .validate(SchemaRole::InputChunk, chunk, self.max_errors)
            .map_err(|e| format!("chunk failed input_chunk_schema validation: {e}"))?;
        // Counted as a frame in once it passed; the transport queues it next.
        self.probe.frame_in(size);
        Ok(())
    }

    /// The bounded queue toward the provider (`None` after half-close). Reserve a slot
    /// before sending so a transport can keep forwarding output while the provider is slow.
    pub fn sender(&self) -> Option<&mpsc::Sender<Value>> {
        self.sender.as_ref()
    }

    /// Half-closes input: the provider's chunk source ends; output keeps flowing.
    pub fn half_close(&mut self) {
        self.sender = None;
    }
}

impl Fabric {
    /// Opens a streaming call through the same guards as a unary one (stream slots are
    /// admitted separately). Guard failures are returned before any frame exists.
    pub async fn open_stream(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: CallRequest,
    ) -> Result<StreamCall, CallError> {
        let started = Instant::now();
        let (timeout, call_id) = self
            .check_envelope(&request)
            .and_then(|checked| {
                if request.verify {
                    return Err(CallError::InvalidRequest(
                        "verify applies to unary calls; a stream's chunks are not verified".into(),
                    ));
                }
                Ok(checked)
            })
            .map_err(|e| self.reject_stream(registry, tenant, &request, e))?;
        let deadline = started + timeout;
        let resolved = self
            .resolve(registry, tenant, &request, Mode::Stream)
            .map_err(|e| self.reject_stream(registry, tenant, &request, e))?;
        let descriptor = resolved.descriptor;
        let qualified = resolved.qualified;
        let permit = self
            .stream_admission
            .clone()
            .try_acquire_owned()
            .map_err(|_| {
                self.diagnostics()
                    .stream_rejected(Some(&qualified), "overloaded");
                CallError::Overloaded {
                    limit: self.options().max_concurrent_streams,
                }
            })?;
        let probe = Arc::new(self.diagnostics().stream_admitted(&qualified, started));
        let limit = self.options().max_payload_bytes;
        let payload = match self.check_stream_payload(&descriptor, request.payload.get()) {
            Ok(payload) => payload,
            Err(error) => {
                probe.finish(StreamEnd::Failed(error.code()));
                return Err(error);
            }
        };
        let (frames_tx, frames_rx) = mpsc::channel(self.options().stream_queue);
        let (cancel_tx, cancel_rx) = oneshot::channel();
        let (input, source) = if descriptor.io_mode().has_input_chunks() {
            let (tx, rx) = mpsc::channel(self.options().stream_queue);
            let handle = InputHandle {
                sender: Some(tx),
                descriptor: descriptor.clone(),
                limit,
                max_errors: self.options().max_validation_errors,
                probe: probe.clone(),
            };
            (Some(handle), Some(ChunkSource::new(rx)))
        } else {
            (None, None)
        };
        let run = Run {
            probe,
            emitter: Emitter {
                call_id: call_id.clone(),
                next: 0,
            },
            context: CallContext {
                call_id: call_id.clone(),
                capability: QualifiedId::new(descriptor.id().clone(), descriptor.version().clone()),
                revision: descriptor.revision().clone(),
                deadline,
            },
            descriptor: descriptor.clone(),
            provider: resolved.provider,
            frames: frames_tx,
            queue: self.options().stream_queue,
            limit,
            max_errors: self.options().max_validation_errors,
        };
        tokio::spawn(async move {
            let _slot = permit;
            run.run(payload, source, cancel_rx).await;
        });
        Ok(StreamCall {
            call_id,
            descriptor,
            provider_id: resolved.provider_id.to_string(),
            node_id: resolved.node_id.to_string(),
            frames: Frames {
                receiver: frames_rx,
            },
            input,
            stopper: Stopper {
                stop: Some(cancel_tx),
            },
        })
    }
}

impl Fabric {
    /// The payload guards of a stream open: size as received, then `input_schema`.
    fn check_stream_payload(&self, descriptor: &Descriptor, raw: &str) -> Result<Value, CallError> {
        let limit = self.options().max_payload_bytes;
        if raw.len() > limit {
            return Err(CallError::PayloadTooLarge {
                bytes: raw.len(),
                limit,
            });
        }
        let payload: Value = serde_json::from_str(raw).map_err(|e| CallError::InvalidPayload {
            message: e.to_string(),
            errors: Value::Array(Vec::new()),
        })?;
        descriptor
            .validate(
                SchemaRole::Input,
                &payload,
                self.options().max_validation_errors,
            )
            .map_err(|errors| CallError::InvalidPayload {
                message: errors.to_string(),
                errors: serde_json::to_value(&errors.errors).unwrap_or(Value::Null),
            })?;
        Ok(payload)
    }
}

/// One running stream.
struct Run {
    probe: Arc<StreamProbe>,
    emitter: Emitter,
    context: CallContext,
    descriptor: Arc<Descriptor>,
    provider: SharedProvider,
    frames: mpsc::Sender<Frame>,
    queue: usize,
    limit: usize,
    max_errors: usize,
}

fn stopped(stop: Result<Stop, oneshot::error::RecvError>) -> End {
    match stop {
        Ok(Stop::Cancel(reason)) => End::Cancelled(reason),
        Ok(Stop::Fail(code, message)) => End::Failed(code, message),
        Err(_) => End::Cancelled("the caller went away".into()),
    }
}

/// How the stream ended, before it becomes a terminal frame.
enum End {
    Cancelled(String),
    Failed(&'static str, String),
    Completed(Option<Value>),
    /// The reader is gone: nothing more can be delivered.
    ReaderGone,
}

impl Run {
    /// Checks a provider chunk; `Ok` carries its size in bytes.
    fn check_chunk(&self, chunk: &Value) -> Result<usize, String> {
        let size = weft_contract::encoded_len(chunk);
        if size > self.limit {
            return Err(format!(
                "a chunk of {size} bytes exceeds the limit of {}",
                self.limit
            ));
        }
        self.descriptor
            .validate(SchemaRole::OutputChunk, chunk, self.max_errors)
            .map_err(|e| format!("chunk failed output_chunk_schema validation: {e}"))?;
        Ok(size)
    }

    async fn run(
        mut self,
        payload: Value,
        source: Option<ChunkSource>,
        mut cancel: oneshot::Receiver<Stop>,
    ) {
        let started = self.emitter.frame(FrameKind::Started, None, None);
        if self.frames.send(started).await.is_err() {
            self.probe.finish(StreamEnd::Cancelled);
            return;
        }
        let (sink_tx, mut sink_rx) = mpsc::channel(self.queue);
        let provider = self.provider.clone();
        let context = self.context.clone();
        let mut task = tokio::spawn(async move {
            provider
                .stream(&context, payload, source, ChunkSink::new(sink_tx))
                .await
        });
        let sleep = tokio::time::sleep_until(self.context.deadline.into());
        tokio::pin!(sleep);
        let timeout_message = || "the stream exceeded its single deadline".to_owned();
        let mut task_done = false;
        let end = 'stream: loop {
            let chunk = tokio::select! {
                biased;
                stop = &mut cancel => break 'stream stopped(stop),
                () = &mut sleep => break 'stream End::Failed("timeout", timeout_message()),
                chunk = sink_rx.recv() => chunk,
            };
            let Some(chunk) = chunk else {
                // The provider dropped its sink: it finished (or is finishing).
                let joined = tokio::select! {
                    biased;
                    stop = &mut cancel => break 'stream stopped(stop),
                    () = &mut sleep => break 'stream End::Failed("timeout", timeout_message()),
                    joined = &mut task => joined,
                };
                task_done = true;
                break 'stream match joined {
                    Ok(Ok(completed)) => self.check_completed(completed),
                    Ok(Err(ProviderError::Failed(m))) => End::Failed("provider_error", m),
                    Ok(Err(ProviderError::Unavailable(m))) => End::Failed("unreachable", m),
                    Ok(Err(ProviderError::Transport(m))) => End::Failed("transport_error", m),
                    Err(e) => {
                        End::Failed("provider_error", format!("the provider task failed: {e}"))
                    }
                };
            };
            let size = match self.check_chunk(&chunk) {
                Ok(size) => size,
                Err(message) => break 'stream End::Failed("invalid_frame", message),
            };
            let frame = self.emitter.frame(FrameKind::Chunk, Some(chunk), None);
            // Wait for the reader (flow control), but stay responsive to cancel and deadline.
            tokio::select! {
                biased;
                stop = &mut cancel => break 'stream stopped(stop),
                () = &mut sleep => break 'stream End::Failed("timeout", timeout_message()),
                sent = self.frames.send(frame) => if sent.is_err() { break 'stream End::ReaderGone },
            }
            self.probe.frame_out(size);
            self.probe
                .queue_depth(self.queue.saturating_sub(self.frames.capacity()));
        };
        // Whatever ended the stream, the provider's work stops here and is never resumed;
        // wait for it to wind down so the terminal follows its cleanup.
        if !task_done {
            task.abort();
            let _ = task.await;
        }
        self.probe.finish(match &end {
            End::Completed(_) => StreamEnd::Completed,
            End::Failed(code, _) => StreamEnd::Failed(code),
            End::Cancelled(_) | End::ReaderGone => StreamEnd::Cancelled,
        });
        let terminal = match end {
            End::ReaderGone => return,
            End::Cancelled(reason) => {
                self.emitter
                    .frame(FrameKind::Cancelled, None, Some(("cancelled", reason)))
            }
            End::Failed(code, message) => {
                self.emitter
                    .frame(FrameKind::Failed, None, Some((code, message)))
            }
            End::Completed(payload) => self.emitter.frame(FrameKind::Completed, payload, None),
        };
        let _ = self.frames.send(terminal).await;
    }

    fn check_completed(&self, completed: Option<Value>) -> End {
        // A client-streaming call's result is its completed payload: an absent one is
        // checked as `{}`, so a schema that requires fields refuses it.
        let payload = match completed {
            Some(payload) => payload,
            None if self.descriptor.io_mode() == IoMode::ClientStreaming
                && self.descriptor.has_schema(SchemaRole::Output) =>
            {
                Value::Object(serde_json::Map::new())
            }
            None => return End::Completed(None),
        };
        if let Err(errors) = self
            .descriptor
            .validate(SchemaRole::Output, &payload, self.max_errors)
        {
            return End::Failed(
                "invalid_result",
                format!("completed payload failed output_schema validation: {errors}"),
            );
        }
        End::Completed(Some(payload))
    }
}
