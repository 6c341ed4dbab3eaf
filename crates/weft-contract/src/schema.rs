//! Compiling the four descriptor schemas and validating values against them.
//!
//! Every schema is compiled once, when its descriptor is built, as JSON Schema 2020-12:
//!
//! - `$schema`, wherever a schema declares one, must name 2020-12 (`unsupported_dialect`).
//! - References never leave the document. The validator is built without its HTTP and file
//!   resolvers (no `resolve-*` features) *and* with [`DenyRemote`] as its retriever, so even a
//!   feature re-enabled by another crate cannot fetch: any `$ref` that is not inside the
//!   document fails the build (`remote_reference`).
//! - `pattern` and `patternProperties` use the linear-time `regex` engine: schemas are untrusted,
//!   and a backtracking engine would let one pattern stall every call.
//! - `format` is an annotation, as 2020-12 specifies by default.

use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, PatternOptions, ReferencingError, Retrieve, Uri};
use serde_json::Value;
use thiserror::Error;

use crate::limits::Limits;

/// The meta-schema URI of the only dialect weft accepts.
pub const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords whose values are instance data, not subschemas: `$schema` inside them is data.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Which of the descriptor's four schemas a value is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaRole {
    /// `input_schema`: the call payload.
    Input,
    /// `output_schema`: the unary result, or a stream's `completed` payload.
    Output,
    /// `input_chunk_schema`: one caller-to-provider stream chunk.
    InputChunk,
    /// `output_chunk_schema`: one provider-to-caller stream chunk.
    OutputChunk,
}

impl SchemaRole {
    /// All four roles, in descriptor field order.
    pub const ALL: [SchemaRole; 4] = [
        SchemaRole::Input,
        SchemaRole::Output,
        SchemaRole::InputChunk,
        SchemaRole::OutputChunk,
    ];

    /// The descriptor field holding this schema.
    pub fn field(self) -> &'static str {
        match self {
            SchemaRole::Input => "input_schema",
            SchemaRole::Output => "output_schema",
            SchemaRole::InputChunk => "input_chunk_schema",
            SchemaRole::OutputChunk => "output_chunk_schema",
        }
    }
}

/// Why a schema could not be compiled. Pointers are relative to the schema's root.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchemaError {
    /// `$schema` names a dialect other than 2020-12.
    #[error(
        "schema at {pointer:?} declares dialect {found:?}; only {DIALECT_2020_12} is supported"
    )]
    UnsupportedDialect {
        /// Where the `$schema` keyword is.
        pointer: String,
        /// The declared dialect.
        found: String,
    },
    /// A `$ref` points outside the document.
    #[error("reference to {uri} is not inside the schema document; weft never fetches schemas")]
    RemoteReference {
        /// The resolved URI that would have been fetched.
        uri: String,
    },
    /// The schema nests deeper than [`Limits::max_schema_depth`].
    #[error("schema nests deeper than the limit of {limit} levels")]
    TooDeep {
        /// The configured limit.
        limit: usize,
    },
    /// The schema is not a valid 2020-12 schema.
    #[error("invalid schema at {pointer:?}: {message}")]
    Invalid {
        /// Where in the schema the problem is.
        pointer: String,
        /// What is wrong.
        message: String,
    },
}

impl SchemaError {
    /// The stable error code for this failure.
    pub fn code(&self) -> &'static str {
        match self {
            SchemaError::UnsupportedDialect { .. } => "unsupported_dialect",
            SchemaError::RemoteReference { .. } => "remote_reference",
            SchemaError::TooDeep { .. } => "schema_too_deep",
            SchemaError::Invalid { .. } => "invalid_schema",
        }
    }

    /// The pointer, relative to the schema root, where the problem is (root when unknown).
    pub fn pointer(&self) -> &str {
        match self {
            SchemaError::UnsupportedDialect { pointer, .. }
            | SchemaError::Invalid { pointer, .. } => pointer,
            SchemaError::RemoteReference { .. } | SchemaError::TooDeep { .. } => "",
        }
    }
}

/// A retriever that refuses every URI.
///
/// Installed on every validator so that no build can reach the network or the file system,
/// whatever features Cargo unifies into `jsonschema`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyRemote;

/// The error [`DenyRemote`] returns.
#[derive(Debug, Error)]
#[error("weft does not fetch remote schemas")]
struct RemoteFetchRefused;

impl Retrieve for DenyRemote {
    fn retrieve(
        &self,
        _uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(Box::new(RemoteFetchRefused))
    }
}

/// A schema compiled for validation, together with its source.
///
/// Cloning is cheap: the compiled validator is shared.
#[derive(Clone)]
pub struct CompiledSchema {
    source: Value,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl PartialEq for CompiledSchema {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// One reason a value failed validation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ValidationFailure {
    /// JSON pointer to the offending part of the value (`""` for the root).
    pub instance_pointer: String,
    /// JSON pointer to the schema keyword that failed.
    pub schema_path: String,
    /// What is wrong, in words.
    pub message: String,
}

/// Every reason (up to [`Limits::max_validation_errors`]) a value failed validation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Error)]
#[error("{} validation error(s){}, first at {:?}: {}",
    .errors.len(),
    if *.truncated { " (more not shown)" } else { "" },
    .errors.first().map(|e| e.instance_pointer.as_str()).unwrap_or(""),
    .errors.first().map(|e| e.message.as_str()).unwrap_or(""))]
pub struct ValidationErrors {
    /// The failures, in the validator's order; never empty.
    pub errors: Vec<ValidationFailure>,
    /// Whether more failures existed than the cap allowed.
    pub truncated: bool,
}

impl CompiledSchema {
    /// Compiles `schema` as JSON Schema 2020-12 under `limits`.
    pub fn compile(schema: &Value, limits: &Limits) -> Result<Self, SchemaError> {
        if json_depth(schema) > limits.max_schema_depth {
            return Err(SchemaError::TooDeep {
                limit: limits.max_schema_depth,
            });
        }
        check_dialect(schema, &mut String::new())?;
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .with_retriever(DenyRemote)
            .with_pattern_options(PatternOptions::regex())
            .build(schema)
            .map_err(|error| match error.kind() {
                ValidationErrorKind::Referencing(ReferencingError::Unretrievable {
                    uri, ..
                }) => SchemaError::RemoteReference { uri: uri.clone() },
                _ => SchemaError::Invalid {
                    pointer: error.instance_path().as_str().to_owned(),
                    message: error.to_string(),
                },
            })?;
        Ok(Self {
            source: schema.clone(),
            validator: Arc::new(validator),
        })
    }

    /// The schema as authored.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// Whether `value` is valid, without collecting errors.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Validates `value`, collecting up to `max_errors` failures.
    #[inline]
    pub fn validate(&self, value: &Value, max_errors: usize) -> Result<(), ValidationErrors> {
        // The valid case is the hot one (every call's payload and result): keep it to the
        // validator's own check, and the error collection out of line.
        if self.validator.is_valid(value) {
            return Ok(());
        }
        Err(self.collect_errors(value, max_errors))
    }

    #[cold]
    fn collect_errors(&self, value: &Value, max_errors: usize) -> ValidationErrors {
        let mut errors = Vec::new();
        let mut truncated = false;
        for error in self.validator.iter_errors(value) {
            if errors.len() == max_errors {
                truncated = true;
                break;
            }
            errors.push(ValidationFailure {
                instance_pointer: error.instance_path().as_str().to_owned(),
                schema_path: error.schema_path().as_str().to_owned(),
                message: error.to_string(),
            });
        }
        if errors.is_empty() && !truncated {
            // `is_valid` and `iter_errors` disagreeing would be a validator bug; never
            // let it turn an invalid value into a valid one.
            errors.push(ValidationFailure {
                instance_pointer: String::new(),
                schema_path: String::new(),
                message: "value is not valid against the schema".to_owned(),
            });
        }
        ValidationErrors { errors, truncated }
    }
}

/// Nesting depth of a JSON value: scalars are 0, `{}` and `[]` are 1.
pub fn json_depth(value: &Value) -> usize {
    // Iterative so that a hostile document cannot overflow the stack here.
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        match node {
            Value::Object(map) => {
                deepest = deepest.max(depth + 1);
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Length in bytes of `value` encoded as compact JSON, measured without building the text.
pub fn encoded_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

fn check_dialect(schema: &Value, pointer: &mut String) -> Result<(), SchemaError> {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(dialect)) = map.get("$schema") {
                let bare = dialect.strip_suffix('#').unwrap_or(dialect);
                if bare != DIALECT_2020_12 {
                    return Err(SchemaError::UnsupportedDialect {
                        pointer: format!("{pointer}/$schema"),
                        found: dialect.clone(),
                    });
                }
            }
            for (key, child) in map {
                if DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                let len = pointer.len();
                push_token(pointer, key);
                check_dialect(child, pointer)?;
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&index.to_string());
                check_dialect(child, pointer)?;
                pointer.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Appends `/token` to a JSON pointer, escaping `~` and `/` as RFC 6901 requires.
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}
