//! The node's half of a call once its line is written: waiting for the final reply, and
//! for streaming calls (protocol 2) pumping chunks both ways under credit-based flow
//! control.
//!
//! Output chunks from the child go to the fabric's [`ChunkSink`]; each is acknowledged
//! to the child (`ack`) only after `send` returned, so a slow caller holds the child back
//! by at most the window. The caller's input chunks go to the child while fewer than the
//! window are unacknowledged; the caller's half-close becomes `end`.

use std::sync::Arc;

use tokio::sync::{Notify, mpsc};
use weft_provider::{ChunkSink, ChunkSource, ProviderError};

use crate::calls::{Credit, Event, Registered, Reply};
use crate::error::ChildFailure;
use crate::protocol;
use crate::session::Session;

/// Refuses a line (with its `\n`) longer than the line limit: it is never written.
/// `what` names it in the message ("the call", "an input chunk").
pub(crate) fn check_line(
    line: &str,
    limit: usize,
    provider: &str,
    what: &str,
) -> Result<(), ProviderError> {
    let bytes = line.len().saturating_sub(1);
    if bytes > limit {
        return Err(ProviderError::Failed(format!(
            "{what} is {bytes} bytes on the wire; provider {provider} accepts lines of at most {limit}"
        )));
    }
    Ok(())
}

/// Waits for the final reply of a unary call.
pub(crate) async fn final_reply(events: &mut mpsc::UnboundedReceiver<Event>) -> Reply {
    loop {
        match events.recv().await {
            Some(Event::Done(reply)) => return reply,
            // Never for a unary call: the call table fails it as a violation instead.
            Some(Event::Chunk(_)) => {}
            None => return ended(),
        }
    }
}

/// The final reply already queued behind undelivered chunks.
fn skip_to_done(events: &mut mpsc::UnboundedReceiver<Event>) -> Reply {
    while let Ok(event) = events.try_recv() {
        if let Event::Done(reply) = event {
            return reply;
        }
    }
    ended()
}

fn ended() -> Reply {
    Reply::Ended(ChildFailure::Exited("without answering".into()))
}

/// One streaming call's pipe to the child.
pub(crate) struct Pipe<'a> {
    /// The run the call was sent to.
    pub session: &'a Session,
    /// The node-minted call id.
    pub call_id: &'a str,
    /// The line limit (input chunk lines above it are refused).
    pub max_line_bytes: usize,
    /// The provider id, for messages.
    pub provider_id: &'a str,
}

impl Pipe<'_> {
    /// Pumps chunks both ways until the child's final reply (or a failure of this side).
    pub async fn run(
        &self,
        registered: &mut Registered,
        input: Option<ChunkSource>,
        output: &ChunkSink,
    ) -> Result<Reply, ProviderError> {
        let credit = Arc::clone(&registered.credit);
        let abort = Arc::clone(&registered.abort);
        let feed = async {
            if let Some(source) = input {
                self.feed(source, &credit).await?;
            }
            // Input is done (or the call is over): the reply decides.
            std::future::pending::<Result<Reply, ProviderError>>().await
        };
        tokio::select! {
            reply = self.drain(&mut registered.events, &abort, output) => reply,
            failed = feed => failed,
        }
    }

    /// Child → caller: forwards output chunks, acknowledging each once the sink took it.
    /// A call that ends abnormally stops waiting for a slow sink.
    async fn drain(
        &self,
        events: &mut mpsc::UnboundedReceiver<Event>,
        abort: &Notify,
        output: &ChunkSink,
    ) -> Result<Reply, ProviderError> {
        loop {
            match events.recv().await {
                Some(Event::Chunk(chunk)) => {
                    tokio::select! {
                        // Deliver whenever the sink has room; give up only when it has not.
                        biased;
                        sent = output.send(chunk) => sent.map_err(|_| {
                            ProviderError::Failed("the stream was closed before it completed".into())
                        })?,
                        () = abort.notified() => return Ok(skip_to_done(events)),
                    }
                    self.session.consumed(self.call_id);
                }
                Some(Event::Done(reply)) => return Ok(reply),
                None => return Ok(ended()),
            }
        }
    }

    /// Caller → child: writes input chunks within the window, then `end`.
    async fn feed(&self, mut source: ChunkSource, credit: &Notify) -> Result<(), ProviderError> {
        while let Some(chunk) = source.next().await {
            let line = protocol::encode_chunk(self.call_id, &chunk);
            check_line(
                &line,
                self.max_line_bytes,
                self.provider_id,
                "an input chunk",
            )?;
            loop {
                match self.session.send_input(self.call_id, &line) {
                    Credit::Granted => break,
                    Credit::Exhausted => credit.notified().await,
                    Credit::Gone => return Ok(()),
                }
            }
        }
        self.session.send_end(self.call_id);
        Ok(())
    }
}
