//! The HTTP face of a weft node.
//!
//! `weft-server` turns the registry into the `/v1` API: handlers are plain async functions
//! in [`routes`], one per operation; cross-cutting concerns are layers — request ids and the
//! error envelope ([`layers::RequestIdLayer`]), bearer authentication ([`layers::AuthLayer`]),
//! `Idempotency-Key` replay ([`idempotency`]), body limits and tracing. Errors carry one
//! stable code each, mapped to HTTP status in one table ([`error::ERROR_CODES`]). The OpenAPI
//! 3.1 document is generated from the handlers ([`openapi`]).
//!
//! It owns no rules of its own: descriptors are checked by `weft-contract`, state lives in
//! `weft-registry`, agent catalogs come from `weft-catalog`, the standard capability taxonomy
//! (and the binding checked before a publish reaches the registry) from `weft-taxonomy`.

pub mod agents;
pub mod app;
pub mod config;
pub mod error;
pub mod extract;
pub mod features;
pub mod idempotency;
pub mod layers;
pub mod managed;
pub mod openapi;
pub mod remote;
pub mod remote_mux;
pub mod remote_pool;
pub mod remote_stream;
pub mod routes;
pub mod state;
pub mod taxonomy;
pub mod verification;

pub use app::{ServeError, node_service, open, serve};
pub use config::{ConfigFile, LogFormat, ServerConfig};
/// The compatibility policies a node and its tenants choose from (`compatibility_policy`).
pub use weft_registry::Policy;
