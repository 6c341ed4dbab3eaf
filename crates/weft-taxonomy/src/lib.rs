//! The standard capability taxonomy: which capability ids mean the same thing everywhere.
//!
//! The Swarmwage capability taxonomy v0.1 (seed 004 of the spec) names capabilities
//! `<domain>.<action>[.<modifier>]*[.<format>]` — lowercase, dot-separated — and fixes, for
//! each standard one, an input schema, an output schema and a verification rule.
//! Out-of-tree capabilities are `custom.<provider>.<capability>`. This crate owns:
//!
//! - the table ([`table`]): every v0.1 row with its pattern exactly as the seed writes it,
//!   the seed's columns verbatim, and JSON Schemas derived from them;
//! - placeholder value sets ([`placeholder`]): `{lang}`, `{language}`, `{src}`/`{tgt}`,
//!   `{level}`, `{op}`, `{format}`, `{taxonomy}`, and the open `{voice}`, `{model}`,
//!   `{factor}`, `{url}` with their rules;
//! - resolving an id ([`resolve()`]): standard (row and bindings), custom, or invalid with a
//!   typed [`InvalidReason`];
//! - standard descriptors ([`descriptor`]): any concrete standard id as a weft
//!   [`weft_contract::Descriptor`];
//! - the publish binding ([`binding`]): a descriptor published under a standard id must
//!   honour the standard contract, checked with `weft-compat`'s inclusion engine;
//! - the JSON views the API and CLI print ([`view`]).
//!
//! It is pure: no I/O, no HTTP, no async. Verifying results against the table's rules is
//! another crate's job; the two meet at the row pattern string and the bindings map.
//! Decisions where the seed is silent are in `docs/taxonomy.md`.

pub mod binding;
pub mod descriptor;
pub mod placeholder;
pub mod reason;
pub mod resolve;
pub mod table;
pub mod view;

pub use binding::{Binding, BindingError, BindingMode, bind};
pub use placeholder::ValueSet;
pub use reason::InvalidReason;
pub use resolve::{CustomId, InvalidId, Resolution, StandardId, in_namespace, resolve};
pub use table::{Bindings, Placeholder, Row, row, rows, rows_of};

/// The taxonomy's version: the `version` of every standard descriptor.
pub const TAXONOMY_VERSION: &str = "0.1.0";

/// The specification the table transcribes.
pub const SPEC: &str = "swarmwage/v0.1";

/// The standard domains, in the seed's order (`research` has rows in the seed's table but
/// is missing from its list of domains; it is a domain here).
pub const DOMAINS: [&str; 11] = [
    "image", "audio", "text", "code", "data", "chart", "compute", "exec", "embed", "classify",
    "research",
];

/// The first segment of out-of-tree ids.
pub const CUSTOM_DOMAIN: &str = "custom";

/// How custom ids are written.
pub const CUSTOM_FORM: &str = "custom.<provider>.<capability>";

/// Longest taxonomy id, in characters: weft's own id limit
/// ([`weft_contract::id::MAX_ID_LEN`]).
pub const MAX_ID_LEN: usize = weft_contract::id::MAX_ID_LEN;
