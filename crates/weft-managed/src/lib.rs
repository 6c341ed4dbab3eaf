//! Managed child providers.
//!
//! The node starts a configured command and speaks the managed-provider protocol with it:
//! newline-delimited JSON over the child's stdin and stdout, calls multiplexed by
//! `call_id`, stderr forwarded to the node's log. The protocol is specified in
//! `docs/provider-protocol.md`; this crate is the node's side of it.
//!
//! [`ManagedProvider`] implements [`weft_provider::Provider`], so the fabric calls a
//! child like any other provider, unary or streaming. A child that chooses protocol 2 may
//! serve streaming capabilities: chunks flow both ways under credit-based flow control
//! (at most [`ManagedConfig::stream_window`] unacknowledged per call and direction), and
//! a child that breaks a call's window fails only that call. A supervisor task runs the child: it sends `hello`,
//! checks the `ready` handshake (every descriptor must pass
//! [`weft_contract::Descriptor::from_value`]), pings it, and on exit or protocol fault
//! kills it, fails every in-flight call (calls are never replayed) and restarts it with
//! backoff (5, 15, 45, 120, 300 s by default; reset after 10 minutes of uptime).
//!
//! ```no_run
//! # async fn run() -> Result<(), weft_managed::ManagedError> {
//! use std::time::Duration;
//! use weft_managed::{ManagedConfig, ManagedProvider};
//!
//! let config = ManagedConfig::new(
//!     "py",
//!     vec!["python3".into(), "examples/providers/python/echo_provider.py".into()],
//! );
//! let provider = ManagedProvider::start(config).await?;
//! let mut changes = provider.descriptor_updates();
//! // Register `changes.borrow()` now, and again after every `changes.changed()`.
//! # let _ = changes.changed().await;
//! provider.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod calls;
mod child;
mod config;
mod error;
pub mod protocol;
mod provider;
mod session;
mod state;
mod stream;
mod supervisor;

pub use config::ManagedConfig;
pub use error::{ChildFailure, ManagedError};
pub use provider::ManagedProvider;
pub use state::{ChildState, ManagedStatus};
