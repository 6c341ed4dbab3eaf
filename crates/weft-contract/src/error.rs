//! Typed descriptor errors: every rule violation names its field by JSON pointer.

use thiserror::Error;

use crate::id::IdError;
use crate::schema::SchemaError;
use crate::version::VersionError;

/// One rule violation in a descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}: {kind}", display_pointer(.pointer))]
pub struct DescriptorError {
    /// JSON pointer to the offending part of the descriptor (`""` is the descriptor itself).
    pub pointer: String,
    /// What rule was broken.
    pub kind: DescriptorErrorKind,
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(descriptor)"
    } else {
        pointer
    }
}

/// The rules a descriptor can break. Each maps to one stable code ([`DescriptorErrorKind::code`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DescriptorErrorKind {
    /// A field that is not one of the ten descriptor fields.
    #[error(
        "unknown field {field:?}; a descriptor has exactly id, version, title, description, input_schema, output_schema, io_mode, input_chunk_schema, output_chunk_schema and annotations"
    )]
    UnknownField {
        /// The unexpected field name.
        field: String,
    },
    /// A required field is absent or null.
    #[error("required field {field:?} is missing")]
    MissingField {
        /// The missing field.
        field: &'static str,
    },
    /// A value has the wrong JSON type.
    #[error("expected {expected}, found {found}")]
    InvalidType {
        /// The expected JSON type.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// `id` breaks the id grammar.
    #[error(transparent)]
    InvalidId(IdError),
    /// `version` is not an accepted semantic version.
    #[error(transparent)]
    InvalidVersion(VersionError),
    /// `title` or `description` is empty after trimming whitespace.
    #[error("{field} must not be blank")]
    Blank {
        /// The blank field.
        field: &'static str,
    },
    /// `io_mode` is not one of the four modes.
    #[error(
        "io_mode {found:?} is not one of unary, server_streaming, client_streaming, bidirectional"
    )]
    InvalidIoMode {
        /// The rejected value.
        found: String,
    },
    /// A chunk schema the I/O mode needs is absent.
    #[error("{field} is required when io_mode is {io_mode}")]
    ChunkSchemaRequired {
        /// The missing chunk-schema field.
        field: &'static str,
        /// The descriptor's I/O mode.
        io_mode: &'static str,
    },
    /// A chunk schema is present for a direction the I/O mode does not have.
    #[error("{field} is not allowed when io_mode is {io_mode}")]
    ChunkSchemaForbidden {
        /// The forbidden chunk-schema field.
        field: &'static str,
        /// The descriptor's I/O mode.
        io_mode: &'static str,
    },
    /// A schema does not compile.
    #[error(transparent)]
    Schema(SchemaError),
    /// The descriptor cannot be written as RFC 8785 JSON (for example a number JCS rejects).
    #[error("descriptor cannot be canonicalized: {message}")]
    NotCanonical {
        /// What the canonicalizer objected to.
        message: String,
    },
    /// The descriptor's canonical form exceeds the size limit.
    #[error("descriptor is {bytes} bytes as canonical JSON; the limit is {limit}")]
    TooLarge {
        /// Canonical size in bytes.
        bytes: usize,
        /// The configured limit.
        limit: usize,
    },
}

impl DescriptorErrorKind {
    /// The stable, snake_case code of this error, shared by the CLI and the HTTP API.
    pub fn code(&self) -> &'static str {
        match self {
            DescriptorErrorKind::UnknownField { .. } => "unknown_field",
            DescriptorErrorKind::MissingField { .. } => "missing_field",
            DescriptorErrorKind::InvalidType { .. } => "invalid_type",
            DescriptorErrorKind::InvalidId(_) => "invalid_id",
            DescriptorErrorKind::InvalidVersion(_) => "invalid_version",
            DescriptorErrorKind::Blank { .. } => "blank_field",
            DescriptorErrorKind::InvalidIoMode { .. } => "invalid_io_mode",
            DescriptorErrorKind::ChunkSchemaRequired { .. } => "chunk_schema_required",
            DescriptorErrorKind::ChunkSchemaForbidden { .. } => "chunk_schema_forbidden",
            DescriptorErrorKind::Schema(e) => e.code(),
            DescriptorErrorKind::NotCanonical { .. } => "not_canonical",
            DescriptorErrorKind::TooLarge { .. } => "descriptor_too_large",
        }
    }
}

impl DescriptorError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

/// Every violation found in one descriptor; never empty.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{} problem(s) in descriptor; first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
pub struct DescriptorErrors(pub Vec<DescriptorError>);

impl DescriptorErrors {
    /// The individual violations.
    pub fn iter(&self) -> impl Iterator<Item = &DescriptorError> {
        self.0.iter()
    }
}
