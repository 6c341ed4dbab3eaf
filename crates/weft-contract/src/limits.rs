//! Explicit size limits for descriptors and validation.
//!
//! Descriptors are untrusted input (anyone with publish scope can send one), so every
//! dimension that costs memory or time is bounded. The defaults are documented in
//! `docs/contract.md`; servers and the CLI may override them.

/// Limits applied when a descriptor is built and when values are validated against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest descriptor, measured as the bytes of its canonical (RFC 8785) JSON form.
    pub max_descriptor_bytes: usize,
    /// Deepest nesting of objects and arrays inside one schema; the schema itself is depth 1.
    pub max_schema_depth: usize,
    /// Largest document (a descriptor file or request body) read before parsing.
    pub max_document_bytes: usize,
    /// Most validation errors reported for one value; further errors are counted as truncated.
    pub max_validation_errors: usize,
}

impl Limits {
    /// Default for [`Limits::max_descriptor_bytes`]: 256 KiB.
    pub const DEFAULT_MAX_DESCRIPTOR_BYTES: usize = 256 * 1024;
    /// Default for [`Limits::max_schema_depth`]: 64 levels.
    pub const DEFAULT_MAX_SCHEMA_DEPTH: usize = 64;
    /// Default for [`Limits::max_document_bytes`]: 8 MiB.
    pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 8 * 1024 * 1024;
    /// Default for [`Limits::max_validation_errors`]: 100 errors.
    pub const DEFAULT_MAX_VALIDATION_ERRORS: usize = 100;
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_descriptor_bytes: Self::DEFAULT_MAX_DESCRIPTOR_BYTES,
            max_schema_depth: Self::DEFAULT_MAX_SCHEMA_DEPTH,
            max_document_bytes: Self::DEFAULT_MAX_DOCUMENT_BYTES,
            max_validation_errors: Self::DEFAULT_MAX_VALIDATION_ERRORS,
        }
    }
}
