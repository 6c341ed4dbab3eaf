//! The restart loop: run the child, handshake, serve until it exits or faults, fail what
//! was in flight (never replaying it), wait out the backoff, start again.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};
use weft_contract::{Descriptor, IoMode};

use crate::calls::Reply;
use crate::child::{self, ChildProcess, Incoming, Outgoing};
use crate::config::{Backoff, ManagedConfig};
use crate::error::ChildFailure;
use crate::protocol::{
    self, ChildMessage, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, STREAMING_PROTOCOL,
};
use crate::session::Session;
use crate::state::{ChildState, Shared};

/// How long a child that closed stdout (or stdin) gets to exit before it is a fault.
const EXIT_WAIT: Duration = Duration::from_secs(1);
/// How long replies already written are still read after the child exited.
const DRAIN_WAIT: Duration = Duration::from_millis(500);
/// How long a killed child gets to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(2);
/// How much of an offending line a fault message quotes.
const QUOTE_BYTES: usize = 120;

/// Supervises the child until shutdown. With `stop_if_first_fails`, a first run that
/// does not complete its handshake stops everything (`Stopped`) instead of restarting.
pub(crate) async fn supervise(shared: Arc<Shared>, stop_if_first_fails: bool) {
    let config = &shared.config;
    let mut shutdown = shared.shutdown.subscribe();
    let mut backoff = Backoff::default();
    let mut runs = 0u64;
    while !shared.shutting_down() {
        shared.set_status(|s| {
            s.state = ChildState::Starting;
            s.pid = None;
            s.restarts = runs;
        });
        runs += 1;
        let (failure, uptime) = run_once(&shared, &mut shutdown).await;
        shared.set_status(|s| {
            s.state = ChildState::Down;
            s.pid = None;
            s.restarts = runs - 1;
            s.last_failure = Some(failure.clone());
        });
        if failure == ChildFailure::Shutdown || shared.shutting_down() {
            break;
        }
        if stop_if_first_fails && runs == 1 && uptime.is_none() {
            tracing::error!(provider = %config.id, "managed provider did not start: {failure}");
            break;
        }
        let delay = backoff.next(config, uptime);
        tracing::warn!(
            provider = %config.id,
            "managed provider stopped ({failure}); restarting in {delay:?}"
        );
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stopped(&mut shutdown) => break,
        }
    }
    shared.set_status(|s| {
        s.state = ChildState::Stopped;
        s.pid = None;
    });
}

/// One run: spawn, handshake, serve. Returns why it ended and, when the handshake
/// succeeded, how long the child was up.
async fn run_once(
    shared: &Arc<Shared>,
    shutdown: &mut watch::Receiver<bool>,
) -> (ChildFailure, Option<Duration>) {
    let config = &shared.config;
    let mut proc = match child::spawn(config) {
        Ok(proc) => proc,
        Err(e) => return (ChildFailure::Spawn(e), None),
    };
    let pid = proc.child.id();
    shared.set_status(|s| s.pid = pid);
    tracing::info!(provider = %config.id, pid, "managed provider started; sending hello");
    let _ = proc.outgoing.send(Outgoing::Line(protocol::encode_hello(
        &config.id,
        config.max_line_bytes,
    )));
    let handshake = tokio::select! {
        r = tokio::time::timeout(config.handshake_timeout, handshake(&mut proc, config)) => {
            r.unwrap_or(Err(ChildFailure::HandshakeTimeout(config.handshake_timeout)))
        }
        () = stopped(shutdown) => Err(ChildFailure::Shutdown),
    };
    let (protocol, descriptors) = match handshake {
        Ok(accepted) => accepted,
        Err(failure) => {
            if matches!(failure, ChildFailure::Refused(_)) {
                tracing::error!(provider = %config.id, "refused the child's handshake: {failure}");
            }
            reap(&mut proc).await;
            return (failure, None);
        }
    };
    let generation = shared.status.borrow().generation + 1;
    let session = Arc::new(Session::new(
        generation,
        pid,
        protocol,
        &descriptors,
        proc.outgoing.clone(),
    ));
    tracing::info!(
        provider = %config.id,
        generation,
        protocol,
        capabilities = descriptors.len(),
        "managed provider ready"
    );
    shared.install(Arc::clone(&session), descriptors);
    let failure = serve(shared, &session, &mut proc, shutdown).await;
    let uptime = session.started.elapsed();
    shared.uninstall(generation);
    // Kill first (a faulty child's further output is not read), then fail its calls.
    reap(&mut proc).await;
    let failed = session.in_flight();
    if failed > 0 {
        tracing::warn!(
            provider = %config.id,
            generation,
            "failing {failed} in-flight call(s), not replayed: {failure}"
        );
    }
    session.close(&failure);
    (failure, Some(uptime))
}

/// Reads the handshake: the first line must be an acceptable `ready`. Returns the chosen
/// protocol version and the descriptors.
async fn handshake(
    proc: &mut ChildProcess,
    config: &ManagedConfig,
) -> Result<(u32, Vec<Descriptor>), ChildFailure> {
    let line = match proc.incoming.recv().await {
        Some(Incoming::Line(line)) => line,
        Some(Incoming::TooLong) => return Err(too_long(config)),
        Some(Incoming::Io(e)) => return Err(ChildFailure::Protocol(format!("stdout: {e}"))),
        Some(Incoming::Partial | Incoming::Eof) | None => {
            return Err(stdout_closed(proc, "before its handshake").await);
        }
    };
    match protocol::decode_child(&line, MIN_PROTOCOL_VERSION) {
        Ok(ChildMessage::Ready {
            protocol,
            descriptors,
        }) => Ok((protocol, check_ready(protocol, &descriptors, config)?)),
        Ok(_) => Err(ChildFailure::Protocol(format!(
            "expected \"ready\" as the first line, got {}",
            quote(&line)
        ))),
        Err(e) => Err(ChildFailure::Protocol(format!(
            "{e}; line: {}",
            quote(&line)
        ))),
    }
}

/// Checks the handshake's protocol version and descriptors.
fn check_ready(
    protocol: u32,
    values: &[serde_json::Value],
    config: &ManagedConfig,
) -> Result<Vec<Descriptor>, ChildFailure> {
    if !(MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&protocol) {
        return Err(ChildFailure::Refused(format!(
            "the child chose protocol {protocol}; this node speaks {MIN_PROTOCOL_VERSION} to {PROTOCOL_VERSION}"
        )));
    }
    let mut seen = HashSet::new();
    let mut descriptors = Vec::with_capacity(values.len());
    for (index, value) in values.iter().enumerate() {
        let name = match (value.get("id"), value.get("version")) {
            (Some(id), Some(version)) => format!("{}@{}", id, version).replace('"', ""),
            _ => "(unnamed)".into(),
        };
        let descriptor =
            Descriptor::from_value(value, &config.descriptor_limits).map_err(|errors| {
                let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
                ChildFailure::Refused(format!(
                    "descriptor #{index} {name} is invalid: {}",
                    all.join("; ")
                ))
            })?;
        if descriptor.io_mode() != IoMode::Unary && protocol < STREAMING_PROTOCOL {
            return Err(ChildFailure::Refused(format!(
                "descriptor #{index} {name} is {}; protocol {protocol} serves unary capabilities only (streaming needs protocol {STREAMING_PROTOCOL})",
                descriptor.io_mode()
            )));
        }
        if !seen.insert(descriptor.qualified_id()) {
            return Err(ChildFailure::Refused(format!(
                "descriptor #{index} {name} is listed twice"
            )));
        }
        descriptors.push(descriptor);
    }
    Ok(descriptors)
}

/// Serves a handshaken child until it exits, faults, or shutdown is requested.
async fn serve(
    shared: &Shared,
    session: &Session,
    proc: &mut ChildProcess,
    shutdown: &mut watch::Receiver<bool>,
) -> ChildFailure {
    let config = &shared.config;
    let mut ticker =
        tokio::time::interval_at(Instant::now() + config.ping_interval, config.ping_interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut pings: HashMap<String, Instant> = HashMap::new();
    let mut next_ping = 0u64;
    loop {
        tokio::select! {
            event = proc.incoming.recv() => match event {
                Some(Incoming::Line(line)) => {
                    if let Err(failure) = handle_line(session, &mut pings, &line) {
                        return failure;
                    }
                }
                Some(Incoming::TooLong) => return too_long(config),
                Some(Incoming::Io(e)) => return ChildFailure::Protocol(format!("stdout: {e}")),
                Some(Incoming::Partial) => {
                    return ChildFailure::Protocol("stdout ended in the middle of a line".into());
                }
                Some(Incoming::Eof) | None => return stdout_closed(proc, "while running").await,
            },
            status = proc.child.wait() => {
                drain(proc, session, &mut pings).await;
                return ChildFailure::Exited(exit_text(status));
            }
            written = writer_done(&mut proc.writer), if proc.writer.is_some() => {
                proc.writer = None;
                let why = written.unwrap_or_else(|e| format!("stdin writer stopped: {e}"));
                tracing::debug!(provider = %config.id, "{why}");
                return stdout_closed(proc, "after its stdin closed").await;
            }
            _ = ticker.tick() => {
                let oldest = pings.values().map(Instant::elapsed).max();
                if let Some(age) = oldest.filter(|age| *age >= config.ping_timeout) {
                    return ChildFailure::PingTimeout(age);
                }
                next_ping += 1;
                let id = next_ping.to_string();
                pings.insert(id.clone(), Instant::now());
                session.send(protocol::encode_ping(&id));
            }
            () = stopped(shutdown) => {
                graceful_stop(shared, session, proc, &mut pings).await;
                return ChildFailure::Shutdown;
            }
        }
    }
}

/// Handles one line from a running child.
fn handle_line(
    session: &Session,
    pings: &mut HashMap<String, Instant>,
    line: &[u8],
) -> Result<(), ChildFailure> {
    let message = protocol::decode_child(line, session.protocol)
        .map_err(|e| ChildFailure::Protocol(format!("{e}; line: {}", quote(line))))?;
    match message {
        ChildMessage::Result { call_id, result } => session
            .deliver(&call_id, Reply::Result(result))
            .map_err(ChildFailure::Protocol),
        ChildMessage::Error { call_id, message } => session
            .deliver(&call_id, Reply::Error(message))
            .map_err(ChildFailure::Protocol),
        ChildMessage::Chunk { call_id, chunk } => session
            .chunk(&call_id, chunk)
            .map_err(ChildFailure::Protocol),
        ChildMessage::Ack { call_id, chunks } => session
            .ack(&call_id, chunks)
            .map_err(ChildFailure::Protocol),
        ChildMessage::Pong { id } => {
            if pings.remove(&id).is_some() {
                session.pong();
                Ok(())
            } else {
                Err(ChildFailure::Protocol(format!(
                    "pong for ping id {id:?}, which is not outstanding"
                )))
            }
        }
        ChildMessage::Ready { .. } => Err(ChildFailure::Protocol(
            "\"ready\" after the handshake was complete".into(),
        )),
    }
}

/// Stops taking calls, closes stdin, lets in-flight calls finish within the grace
/// period; the caller kills whatever is left.
async fn graceful_stop(
    shared: &Shared,
    session: &Session,
    proc: &mut ChildProcess,
    pings: &mut HashMap<String, Instant>,
) {
    shared.uninstall(session.generation);
    session.close_stdin();
    let deadline = Instant::now() + shared.config.shutdown_grace;
    loop {
        tokio::select! {
            event = proc.incoming.recv() => match event {
                Some(Incoming::Line(line)) => { let _ = handle_line(session, pings, &line); }
                _ => break,
            },
            () = tokio::time::sleep_until(deadline) => return,
        }
    }
    let _ = tokio::time::timeout_at(deadline, proc.child.wait()).await;
}

/// After the child exited: deliver replies it wrote before exiting.
async fn drain(proc: &mut ChildProcess, session: &Session, pings: &mut HashMap<String, Instant>) {
    let deadline = Instant::now() + DRAIN_WAIT;
    while let Ok(Some(Incoming::Line(line))) =
        tokio::time::timeout_at(deadline, proc.incoming.recv()).await
    {
        if handle_line(session, pings, &line).is_err() {
            return;
        }
    }
}

/// The child closed a pipe: an exit if it follows shortly, otherwise a fault.
async fn stdout_closed(proc: &mut ChildProcess, when: &str) -> ChildFailure {
    match tokio::time::timeout(EXIT_WAIT, proc.child.wait()).await {
        Ok(status) => ChildFailure::Exited(format!("{} {when}", exit_text(status))),
        Err(_) => ChildFailure::Protocol(format!(
            "the child closed its stdio {when} but kept running"
        )),
    }
}

/// Kills the child if it still runs, reaps it, and stops the I/O tasks.
async fn reap(proc: &mut ChildProcess) {
    if matches!(proc.child.try_wait(), Ok(None)) {
        let _ = proc.child.start_kill();
        let _ = tokio::time::timeout(REAP_WAIT, proc.child.wait()).await;
    }
    proc.stop_io();
}

/// Resolves once shutdown is requested (or its sender is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

async fn writer_done(
    writer: &mut Option<JoinHandle<Result<(), String>>>,
) -> Result<String, tokio::task::JoinError> {
    match writer {
        Some(handle) => handle.await.map(|r| match r {
            Ok(()) => "stdin closed".to_owned(),
            Err(e) => e,
        }),
        None => std::future::pending().await,
    }
}

fn exit_text(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => format!("exited ({status})"),
        Err(e) => format!("exited (status unknown: {e})"),
    }
}

fn too_long(config: &ManagedConfig) -> ChildFailure {
    ChildFailure::Protocol(format!(
        "a line exceeds max_line_bytes ({} bytes)",
        config.max_line_bytes
    ))
}

fn quote(line: &[u8]) -> String {
    let cut = line.len().min(QUOTE_BYTES);
    let text = String::from_utf8_lossy(&line[..cut]);
    if cut < line.len() {
        format!("{text:?}…")
    } else {
        format!("{text:?}")
    }
}
