//! Agent capability catalogs in the CompozyOS format, loaded exactly as CompozyOS loads them.
//!
//! An agent directory may describe what the agent is useful for in a *capability catalog*:
//! outcome-oriented records (`id`, `summary`, `outcome`, and optional `version`,
//! `context_needed`, `artifacts_expected`, `execution_outline`, `constraints`, `examples`,
//! `requirements`). This crate reads them from disk with CompozyOS's rules and produces the
//! same normalized records and the same runtime digests, byte for byte:
//!
//! * exactly one layout per agent: `capabilities.toml`, `capabilities.json` (an object with a
//!   `capabilities` array) or a `capabilities/` directory with one bare record per `.toml` or
//!   `.json` file; conflicts, wrong path types and symlinks are hard errors
//!   ([`load_agent_catalog`]);
//! * strict decoding with the quirks of the Go decoders CompozyOS uses (unknown fields and an
//!   authored `digest` rejected, trailing JSON rejected, keys matched case-insensitively,
//!   repeated JSON keys decoded again in place);
//! * normalization and validation in CompozyOS's order, every error fatal, each naming the
//!   file and, where the format allows, the line, column, record and field ([`CatalogError`]);
//! * the runtime digest, `sha256:` over Go's `json.Marshal` of the normalized record
//!   ([`canonical_digest`], [`digest`]);
//! * the inputs to watch for invalidation ([`catalog_dependency_paths`]);
//! * helpers for folders of agents: [`discover_agents`] and [`select_agents`].
//!
//! The crate reads files with `std::fs` and does nothing else: no async runtime, no network.
//! Its digest is specific to CompozyOS catalogs and unrelated to any other hash in weft.

pub mod agents;
pub mod digest;
pub mod error;
mod fsutil;
mod json;
pub mod load;
mod location;
mod raw;
pub mod record;
pub mod select;
mod toml_src;
mod validate;

pub use agents::{AGENT_MANIFEST, DiscoveredAgent, discover_agents, is_agent_dir};
pub use digest::{canonical_digest, canonical_payload};
pub use error::{CatalogError, Position};
pub use load::{
    catalog_dependency_paths, load_agent_catalog, parse_catalog_file, parse_record_files,
};
pub use record::{AgentCatalog, CapabilityRecord, CatalogSource};
pub use select::{Rejected, Selected, Selection, select_agents};
