//! [`ManagedProvider`]: the handle the node holds, and its [`Provider`] implementation.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use weft_contract::{Descriptor, IoMode, QualifiedId};
use weft_provider::{CallContext, ChunkSink, ChunkSource, Provider, ProviderError};

use crate::calls::{Flow, Registered, Reply};
use crate::config::ManagedConfig;
use crate::error::{ChildFailure, ManagedError};
use crate::protocol::{self, CallLine};
use crate::session::{CallGuard, Session};
use crate::state::{ChildState, ManagedStatus, Shared};
use crate::{stream, supervisor};

/// Extra time [`ManagedProvider::start`] allows beyond the handshake timeout (spawning).
const START_SLACK: Duration = Duration::from_secs(5);
/// Extra time [`ManagedProvider::shutdown`] allows beyond the grace period (reaping).
const SHUTDOWN_SLACK: Duration = Duration::from_secs(3);

/// A call whose `call` line was written.
struct Begun {
    session: Arc<Session>,
    call_id: String,
    registered: Registered,
}

/// A provider served by a supervised child process speaking the managed-provider
/// protocol over its stdin and stdout.
///
/// Dropping the handle requests shutdown; the child is killed at the latest when the
/// supervisor task ends.
pub struct ManagedProvider {
    shared: Arc<Shared>,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl ManagedProvider {
    /// Starts the child and waits for its first handshake.
    ///
    /// Returns once the child is ready, or fails with [`ManagedError::StartFailed`] when
    /// the first run does not complete its handshake (spawn error, handshake timeout,
    /// refused descriptors, early exit): nothing keeps running then. After a successful
    /// start, exits and faults are handled by restarting with backoff.
    pub async fn start(config: ManagedConfig) -> Result<Arc<Self>, ManagedError> {
        let id = config.id.clone();
        let limit = config.handshake_timeout + START_SLACK;
        let provider = Self::launch(config, true)?;
        let failure = match provider.settled(limit).await {
            Some(s) if s.state == ChildState::Ready => return Ok(provider),
            Some(s) => s
                .last_failure
                .unwrap_or(ChildFailure::Exited("stopped".into())),
            None => ChildFailure::HandshakeTimeout(limit),
        };
        provider.shutdown().await;
        Err(ManagedError::StartFailed {
            provider: id,
            failure,
        })
    }

    /// Starts supervising the child without waiting: the first run is retried with
    /// backoff like any later one. Use [`ManagedProvider::wait_ready`] to wait for it.
    pub fn spawn(config: ManagedConfig) -> Result<Arc<Self>, ManagedError> {
        Self::launch(config, false)
    }

    fn launch(config: ManagedConfig, stop_if_first_fails: bool) -> Result<Arc<Self>, ManagedError> {
        config.validate()?;
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| ManagedError::NoRuntime {
                provider: config.id.clone(),
            })?;
        let shared = Arc::new(Shared::new(config));
        let task = runtime.spawn(supervisor::supervise(
            Arc::clone(&shared),
            stop_if_first_fails,
        ));
        Ok(Arc::new(Self {
            shared,
            supervisor: Mutex::new(Some(task)),
        }))
    }

    /// The provider id.
    pub fn id(&self) -> &str {
        &self.shared.config.id
    }

    /// The configuration.
    pub fn config(&self) -> &ManagedConfig {
        &self.shared.config
    }

    /// Waits until the child has completed a handshake and takes calls. False when
    /// `timeout` passes first or the provider is stopped.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        self.settled(timeout)
            .await
            .is_some_and(|s| s.state == ChildState::Ready)
    }

    /// The status once it is `Ready` or `Stopped`; `None` when `timeout` passes first.
    async fn settled(&self, timeout: Duration) -> Option<ManagedStatus> {
        let mut status = self.shared.status.subscribe();
        let wait = async {
            status
                .wait_for(|s| matches!(s.state, ChildState::Ready | ChildState::Stopped))
                .await
                .map(|s| s.clone())
                .ok()
        };
        tokio::time::timeout(timeout, wait).await.ok().flatten()
    }

    /// A snapshot of the child's health.
    pub fn status(&self) -> ManagedStatus {
        self.shared.status.borrow().clone()
    }

    /// Status changes (state, generation, restarts, last failure).
    pub fn status_updates(&self) -> watch::Receiver<ManagedStatus> {
        self.shared.status.subscribe()
    }

    /// The descriptor set of the latest handshake; it changes (and the receiver is
    /// notified) only when a restarted child publishes a different set, so the node can
    /// re-register. Starts empty.
    pub fn descriptor_updates(&self) -> watch::Receiver<Vec<Descriptor>> {
        self.shared.descriptors.subscribe()
    }

    /// Calls sent to the current child and not yet answered or cancelled.
    pub fn in_flight(&self) -> usize {
        self.shared.session().map_or(0, |s| s.in_flight())
    }

    /// Stops the provider: no new calls, stdin closed so the child can finish in-flight
    /// calls and exit, then a kill after the grace period. Calls still in flight then
    /// fail. Idempotent.
    pub async fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        let task = self
            .supervisor
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut task) = task {
            let limit = self.shared.config.shutdown_grace + SHUTDOWN_SLACK;
            if tokio::time::timeout(limit, &mut task).await.is_err() {
                task.abort();
            }
        }
    }

    /// Checks that the call can go to the current child, registers it and writes its
    /// `call` line. `streaming` says which trait method is calling: the descriptor's mode
    /// must match it.
    fn begin(
        &self,
        context: &CallContext,
        payload: &Value,
        streaming: bool,
    ) -> Result<Begun, ProviderError> {
        let id = &self.shared.config.id;
        let session = self
            .shared
            .session()
            .filter(|_| !self.shared.shutting_down())
            .ok_or_else(|| self.not_running())?;
        let capability = &context.capability;
        let descriptor = session.descriptor(capability).ok_or_else(|| {
            ProviderError::Unavailable(format!(
                "provider {id} no longer serves {capability} (its child changed its descriptors)"
            ))
        })?;
        if descriptor.revision() != &context.revision {
            return Err(ProviderError::Unavailable(format!(
                "provider {id} serves {capability} at revision {}, not the pinned {}",
                descriptor.revision(),
                context.revision
            )));
        }
        let mode = descriptor.io_mode();
        if (mode != IoMode::Unary) != streaming {
            return Err(ProviderError::Failed(format!(
                "{capability} is {mode}; it cannot be called {}",
                if streaming {
                    "as a stream"
                } else {
                    "as a unary call"
                }
            )));
        }
        let remaining = context.deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(ProviderError::Failed(
                "the deadline passed before the call was sent".into(),
            ));
        }
        let window = self.shared.config.stream_window;
        let flow = streaming.then_some(Flow {
            window,
            input: mode.has_input_chunks(),
            output: mode.has_output_chunks(),
        });
        let call_id = self.shared.mint_call_id();
        let line = protocol::encode_call(&CallLine {
            call_id: &call_id,
            fabric_call_id: &context.call_id,
            capability_id: capability.id.as_str(),
            version: &capability.version.to_string(),
            revision: context.revision.as_str(),
            deadline_ms: u64::try_from(remaining.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
            payload,
            window: flow.map(|f| f.window),
        });
        stream::check_line(&line, self.shared.config.max_line_bytes, id, "call")?;
        let registered = session
            .register(&call_id, flow)
            .map_err(|f| self.ended(&f))?;
        if !session.send(line) {
            session.forget(&call_id);
            return Err(self.not_running());
        }
        Ok(Begun {
            session,
            call_id,
            registered,
        })
    }

    async fn call_inner(
        &self,
        context: &CallContext,
        payload: Value,
    ) -> Result<Value, ProviderError> {
        let Begun {
            session,
            call_id,
            mut registered,
        } = self.begin(context, &payload, false)?;
        let _guard = CallGuard::new(&session, &call_id);
        let reply = tokio::time::timeout_at(
            context.deadline.into(),
            stream::final_reply(&mut registered.events),
        )
        .await
        .map_err(|_| self.deadline_passed())?;
        self.outcome(reply)
    }

    async fn stream_inner(
        &self,
        context: &CallContext,
        payload: Value,
        input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> Result<Option<Value>, ProviderError> {
        let Begun {
            session,
            call_id,
            mut registered,
        } = self.begin(context, &payload, true)?;
        // Dropped on every way out: the child is sent a cancel unless the call is over.
        let _guard = CallGuard::new(&session, &call_id);
        let pipe = stream::Pipe {
            session: &session,
            call_id: &call_id,
            max_line_bytes: self.shared.config.max_line_bytes,
            provider_id: &self.shared.config.id,
        };
        let reply = tokio::time::timeout_at(
            context.deadline.into(),
            pipe.run(&mut registered, input, &output),
        )
        .await
        .map_err(|_| self.deadline_passed())??;
        // `null` is "completed without a payload".
        let value = self.outcome(reply)?;
        Ok((!value.is_null()).then_some(value))
    }

    /// What the caller sees for the child's final reply.
    fn outcome(&self, reply: Reply) -> Result<Value, ProviderError> {
        match reply {
            Reply::Result(value) => Ok(value),
            Reply::Error(message) => Err(ProviderError::Failed(message)),
            Reply::Violation(message) => Err(ProviderError::Transport(format!(
                "provider {} {message}; the call was cancelled",
                self.shared.config.id
            ))),
            Reply::Ended(failure) => Err(self.ended(&failure)),
        }
    }

    fn deadline_passed(&self) -> ProviderError {
        ProviderError::Failed(format!(
            "the deadline passed; provider {} was sent a cancel",
            self.shared.config.id
        ))
    }

    fn not_running(&self) -> ProviderError {
        let status = self.status();
        let why = status
            .last_failure
            .map(|f| format!(" (last run: {f})"))
            .unwrap_or_default();
        ProviderError::Unavailable(format!(
            "provider {} is not running{why}",
            self.shared.config.id
        ))
    }

    fn ended(&self, failure: &ChildFailure) -> ProviderError {
        let id = &self.shared.config.id;
        match failure {
            ChildFailure::Shutdown => ProviderError::Failed(format!(
                "provider {id} is shutting down; the call was not answered"
            )),
            other => ProviderError::Failed(format!(
                "provider process exited before answering ({other}); the call is not replayed"
            )),
        }
    }
}

impl Drop for ManagedProvider {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
    }
}

impl Provider for ManagedProvider {
    fn descriptors(&self) -> Vec<Descriptor> {
        self.shared.descriptors.borrow().clone()
    }

    fn ready(&self, capability: &QualifiedId) -> bool {
        !self.shared.shutting_down()
            && self.shared.session().is_some_and(|s| {
                s.descriptor(capability).is_some()
                    && s.pong_age() < self.shared.config.pong_freshness()
            })
    }

    fn call<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        self.call_inner(context, payload).boxed()
    }

    fn stream<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
        input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        self.stream_inner(context, payload, input, output).boxed()
    }
}
