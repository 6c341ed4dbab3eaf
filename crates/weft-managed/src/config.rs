//! How a managed child is started, watched and restarted.

use std::path::PathBuf;
use std::time::Duration;

use weft_contract::Limits;

use crate::error::ManagedError;

/// Configuration of one managed child provider.
///
/// Build it with [`ManagedConfig::new`] (every tunable at its default) and adjust the
/// public fields; [`ManagedConfig::validate`] runs before the child is started.
#[derive(Debug, Clone)]
pub struct ManagedConfig {
    /// The provider id the node registers the child's descriptors under (also sent in
    /// `hello` and used as the `provider` field of log lines).
    pub id: String,
    /// Program and arguments; the first element is resolved through `PATH`.
    pub command: Vec<String>,
    /// Extra environment variables, set on top of the node's own environment.
    pub env: Vec<(String, String)>,
    /// Working directory of the child; the node's when `None`.
    pub cwd: Option<PathBuf>,
    /// How long the child has, from spawn, to answer `hello` with `ready`.
    pub handshake_timeout: Duration,
    /// How often the node pings a running child.
    pub ping_interval: Duration,
    /// A ping unanswered for this long is a fault (the child is killed and restarted).
    /// Checked once per ping interval.
    pub ping_timeout: Duration,
    /// Longest line, in bytes without the newline, either side may write.
    pub max_line_bytes: usize,
    /// Delays before each restart after an unrequested exit or fault; the last entry
    /// repeats. Must not be empty.
    pub restart_backoff: Vec<Duration>,
    /// A child that stayed up (after its handshake) at least this long resets the
    /// backoff to its first entry.
    pub backoff_reset_after: Duration,
    /// On shutdown, how long the child has to exit after its stdin is closed before it
    /// is killed.
    pub shutdown_grace: Duration,
    /// Limits applied when the descriptors of the handshake are checked.
    pub descriptor_limits: Limits,
    /// Flow-control window of streaming calls (protocol 2): at most this many chunks may
    /// be unacknowledged per call and direction. Sent to the child in each streaming
    /// `call`.
    pub stream_window: u32,
}

impl ManagedConfig {
    /// Default [`ManagedConfig::handshake_timeout`]: 10 s.
    pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default [`ManagedConfig::ping_interval`]: 5 s.
    pub const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(5);
    /// Default [`ManagedConfig::ping_timeout`]: 10 s.
    pub const DEFAULT_PING_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default [`ManagedConfig::max_line_bytes`]: 4 MiB.
    pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
    /// Smallest accepted [`ManagedConfig::max_line_bytes`]: 1 KiB.
    pub const MIN_MAX_LINE_BYTES: usize = 1024;
    /// Default [`ManagedConfig::backoff_reset_after`]: 10 minutes.
    pub const DEFAULT_BACKOFF_RESET_AFTER: Duration = Duration::from_secs(600);
    /// Default [`ManagedConfig::shutdown_grace`]: 2 s.
    pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
    /// Default [`ManagedConfig::stream_window`]: 16 chunks.
    pub const DEFAULT_STREAM_WINDOW: u32 = 16;

    /// The default restart backoff: 5, 15, 45, 120, 300 s, then 300 s.
    pub fn default_backoff() -> Vec<Duration> {
        [5, 15, 45, 120, 300]
            .into_iter()
            .map(Duration::from_secs)
            .collect()
    }

    /// A configuration with every tunable at its default.
    pub fn new(id: impl Into<String>, command: Vec<String>) -> Self {
        Self {
            id: id.into(),
            command,
            env: Vec::new(),
            cwd: None,
            handshake_timeout: Self::DEFAULT_HANDSHAKE_TIMEOUT,
            ping_interval: Self::DEFAULT_PING_INTERVAL,
            ping_timeout: Self::DEFAULT_PING_TIMEOUT,
            max_line_bytes: Self::DEFAULT_MAX_LINE_BYTES,
            restart_backoff: Self::default_backoff(),
            backoff_reset_after: Self::DEFAULT_BACKOFF_RESET_AFTER,
            shutdown_grace: Self::DEFAULT_SHUTDOWN_GRACE,
            descriptor_limits: Limits::default(),
            stream_window: Self::DEFAULT_STREAM_WINDOW,
        }
    }

    /// Checks the configuration: a non-blank id, a non-empty command, positive
    /// durations, a non-empty backoff, a line limit of at least 1 KiB and a stream window
    /// of at least 1.
    pub fn validate(&self) -> Result<(), ManagedError> {
        let invalid = |message: String| {
            Err(ManagedError::InvalidConfig {
                provider: self.id.clone(),
                message,
            })
        };
        if self.id.trim().is_empty() {
            return invalid("the provider id must not be blank".into());
        }
        if self
            .command
            .first()
            .is_none_or(|program| program.is_empty())
        {
            return invalid("the command must name a program".into());
        }
        for (name, value) in [
            ("handshake_timeout", self.handshake_timeout),
            ("ping_interval", self.ping_interval),
            ("ping_timeout", self.ping_timeout),
        ] {
            if value.is_zero() {
                return invalid(format!("{name} must be greater than zero"));
            }
        }
        if self.restart_backoff.is_empty() {
            return invalid("restart_backoff must have at least one entry".into());
        }
        if self.max_line_bytes < Self::MIN_MAX_LINE_BYTES {
            return invalid(format!(
                "max_line_bytes must be at least {}, got {}",
                Self::MIN_MAX_LINE_BYTES,
                self.max_line_bytes
            ));
        }
        if self.stream_window == 0 {
            return invalid("stream_window must be at least 1".into());
        }
        Ok(())
    }

    /// The delay before the next restart, given how many consecutive failed runs came
    /// before it (0 for the first restart). Past the end of the list the last entry
    /// repeats.
    pub fn backoff_delay(&self, consecutive_failures: usize) -> Duration {
        let last = self.restart_backoff.len().saturating_sub(1);
        self.restart_backoff
            .get(consecutive_failures.min(last))
            .copied()
            .unwrap_or(Duration::ZERO)
    }

    /// How old the last pong may be for the child to count as ready: three ping
    /// intervals.
    pub fn pong_freshness(&self) -> Duration {
        self.ping_interval.saturating_mul(3)
    }
}

/// The restart schedule of one supervisor: consecutive failed runs so far.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    failures: usize,
}

impl Backoff {
    /// The delay before the next run, after a run that was up for `uptime` (`None`
    /// when it never completed its handshake). A long enough uptime resets the schedule.
    pub fn next(&mut self, config: &ManagedConfig, uptime: Option<Duration>) -> Duration {
        if uptime.is_some_and(|u| u >= config.backoff_reset_after) {
            self.failures = 0;
        }
        let delay = config.backoff_delay(self.failures);
        self.failures = self.failures.saturating_add(1);
        delay
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn default_backoff_schedule_repeats_the_last_entry() {
        let config = ManagedConfig::new("p", vec!["true".into()]);
        let delays: Vec<u64> = (0..8).map(|n| config.backoff_delay(n).as_secs()).collect();
        assert_eq!(delays, [5, 15, 45, 120, 300, 300, 300, 300]);
    }

    #[test]
    fn enough_uptime_resets_the_backoff() {
        let config = ManagedConfig::new("p", vec!["true".into()]);
        let mut backoff = Backoff::default();
        let minute = Some(Duration::from_secs(60));
        let secs = |d: Duration| d.as_secs();
        assert_eq!(secs(backoff.next(&config, None)), 5);
        assert_eq!(secs(backoff.next(&config, minute)), 15);
        assert_eq!(secs(backoff.next(&config, None)), 45);
        // Ten minutes up: back to the first delay.
        assert_eq!(
            secs(backoff.next(&config, Some(Duration::from_secs(600)))),
            5
        );
        assert_eq!(secs(backoff.next(&config, minute)), 15);
    }

    #[test]
    fn validation_rejects_bad_settings() {
        let good = ManagedConfig::new("p", vec!["true".into()]);
        assert!(good.validate().is_ok());
        let mut c = good.clone();
        c.command.clear();
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.restart_backoff.clear();
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.max_line_bytes = 10;
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.ping_interval = Duration::ZERO;
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.stream_window = 0;
        assert!(c.validate().is_err());
        let mut c = good;
        c.id = " ".into();
        assert!(c.validate().is_err());
    }
}
