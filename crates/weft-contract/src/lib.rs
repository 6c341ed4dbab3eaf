//! The contract core of weft: what a capability *is*, independent of how it is served.
//!
//! This crate owns the capability descriptor and everything that decides whether one is
//! acceptable: the id grammar ([`id`]), contract versions, `id@version` pins and version
//! requirements ([`version`]), the content revision ([`revision`]), schema compilation and
//! validation without network access ([`schema`]), the descriptor rules themselves
//! ([`descriptor`]), and reading descriptor files in JSON or TOML with line and column
//! positions ([`source`], [`file`]).
//!
//! It has no async runtime, performs no I/O (callers hand it text and values) and knows
//! nothing of HTTP. Every other weft crate depends on it; it depends on none of them.

mod checker;
pub mod descriptor;
pub mod error;
pub mod file;
pub mod id;
pub mod limits;
pub mod revision;
pub mod schema;
pub mod source;
pub mod version;

pub use descriptor::{Descriptor, IoMode};
pub use error::{DescriptorError, DescriptorErrorKind, DescriptorErrors};
pub use id::CapabilityId;
pub use limits::Limits;
pub use revision::DescriptorRevision;
pub use schema::{CompiledSchema, SchemaRole, ValidationErrors, ValidationFailure, encoded_len};
pub use version::{CapabilityRequirement, CapabilityVersion, QualifiedId, VersionRequirement};
