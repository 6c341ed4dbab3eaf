//! The capability descriptor: a checked, immutable contract with a content revision.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::checker::Checker;
use crate::error::{DescriptorError, DescriptorErrorKind, DescriptorErrors};
use crate::id::CapabilityId;
use crate::limits::Limits;
use crate::revision::{DescriptorRevision, canonical_json};
use crate::schema::{CompiledSchema, SchemaRole, ValidationErrors};
use crate::version::{CapabilityVersion, QualifiedId};

/// The ten descriptor fields, in the order the seed lists them.
pub const FIELDS: [&str; 10] = [
    "id",
    "version",
    "title",
    "description",
    "input_schema",
    "output_schema",
    "io_mode",
    "input_chunk_schema",
    "output_chunk_schema",
    "annotations",
];

/// How a call moves data.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum IoMode {
    /// One request, one result.
    #[default]
    Unary,
    /// One request, a stream of provider chunks, an optional final result.
    ServerStreaming,
    /// One request, a stream of caller chunks, an optional final result.
    ClientStreaming,
    /// Both directions stream at once.
    Bidirectional,
}

impl IoMode {
    /// All four modes.
    pub const ALL: [IoMode; 4] = [
        IoMode::Unary,
        IoMode::ServerStreaming,
        IoMode::ClientStreaming,
        IoMode::Bidirectional,
    ];

    /// The wire name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            IoMode::Unary => "unary",
            IoMode::ServerStreaming => "server_streaming",
            IoMode::ClientStreaming => "client_streaming",
            IoMode::Bidirectional => "bidirectional",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }

    /// Whether the caller sends chunks (so `input_chunk_schema` is required).
    pub fn has_input_chunks(self) -> bool {
        matches!(self, IoMode::ClientStreaming | IoMode::Bidirectional)
    }

    /// Whether the provider sends chunks (so `output_chunk_schema` is required).
    pub fn has_output_chunks(self) -> bool {
        matches!(self, IoMode::ServerStreaming | IoMode::Bidirectional)
    }
}

impl fmt::Display for IoMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A checked capability descriptor.
///
/// Invariants, kept by [`Descriptor::from_value`], the only constructor: every field obeys the
/// contract rules, every present schema compiled when the descriptor was built, chunk
/// schemas match the I/O mode, and `revision` is the digest of `canonical`.
///
/// The descriptor keeps its canonical JSON text, not parsed schema trees: a registry holds
/// many descriptors and few are called. Validators are compiled on first use, once, and
/// shared by every clone.
#[derive(Debug, Clone)]
pub struct Descriptor {
    id: CapabilityId,
    version: CapabilityVersion,
    title: String,
    description: String,
    io_mode: IoMode,
    annotations: BTreeMap<String, String>,
    revision: DescriptorRevision,
    /// The canonical text, checked as JSON once here so that serving it never re-parses.
    canonical: Arc<RawValue>,
    present: [bool; 4],
    validators: Arc<Validators>,
    limits: Limits,
}

/// Compiled validators, one slot per [`SchemaRole`], filled on first use.
#[derive(Debug, Default)]
struct Validators {
    slots: [OnceLock<Option<CompiledSchema>>; 4],
}

fn role_index(role: SchemaRole) -> usize {
    match role {
        SchemaRole::Input => 0,
        SchemaRole::Output => 1,
        SchemaRole::InputChunk => 2,
        SchemaRole::OutputChunk => 3,
    }
}

impl PartialEq for Descriptor {
    fn eq(&self, other: &Self) -> bool {
        self.revision == other.revision
    }
}

impl Eq for Descriptor {}

impl Descriptor {
    /// Checks a JSON value against every descriptor rule and compiles its schemas.
    ///
    /// All violations are reported, each with the JSON pointer of its field. `null` and an
    /// absent field mean the same; an empty `annotations` map is the same as none.
    pub fn from_value(value: &Value, limits: &Limits) -> Result<Self, DescriptorErrors> {
        let Some(object) = value.as_object() else {
            return Err(DescriptorErrors(vec![DescriptorError {
                pointer: String::new(),
                kind: DescriptorErrorKind::InvalidType {
                    expected: "an object",
                    found: json_type(value),
                },
            }]));
        };
        // Size first, so that an oversized document costs no schema compilation.
        let bytes = match canonical_json(value) {
            Ok(bytes) => bytes.len(),
            Err(e) => {
                return Err(DescriptorErrors(vec![DescriptorError {
                    pointer: String::new(),
                    kind: DescriptorErrorKind::NotCanonical {
                        message: e.to_string(),
                    },
                }]));
            }
        };
        if bytes > limits.max_descriptor_bytes {
            return Err(DescriptorErrors(vec![DescriptorError {
                pointer: String::new(),
                kind: DescriptorErrorKind::TooLarge {
                    bytes,
                    limit: limits.max_descriptor_bytes,
                },
            }]));
        }
        let mut checker = Checker {
            object,
            errors: Vec::new(),
        };
        checker.unknown_fields();
        let id = checker.id();
        let version = checker.version();
        let title = checker.text("title");
        let description = checker.text("description");
        let io_mode = checker.io_mode();
        let annotations = checker.annotations();
        let input_schema = checker.schema(SchemaRole::Input, true, limits);
        let output_schema = checker.schema(SchemaRole::Output, false, limits);
        let input_chunk_schema = checker.chunk_schema(SchemaRole::InputChunk, io_mode, limits);
        let output_chunk_schema = checker.chunk_schema(SchemaRole::OutputChunk, io_mode, limits);

        let schemas_ok = input_schema.flatten().is_some()
            && output_schema.is_some()
            && input_chunk_schema.is_some()
            && output_chunk_schema.is_some();
        match (id, version, title, description, io_mode, annotations) {
            (
                Some(id),
                Some(version),
                Some(title),
                Some(description),
                Some(io_mode),
                Some(annotations),
            ) if checker.errors.is_empty() && schemas_ok => {
                let present = SchemaRole::ALL.map(|role| checker.field(role.field()).is_some());
                let mut map = Map::new();
                map.insert("id".into(), Value::String(id.to_string()));
                map.insert("version".into(), Value::String(version.to_string()));
                map.insert("title".into(), Value::String(title.clone()));
                map.insert("description".into(), Value::String(description.clone()));
                map.insert("io_mode".into(), Value::String(io_mode.as_str().into()));
                for role in SchemaRole::ALL {
                    if let Some(schema) = checker.field(role.field()) {
                        map.insert(role.field().into(), schema.clone());
                    }
                }
                if !annotations.is_empty() {
                    let values = annotations
                        .iter()
                        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                        .collect();
                    map.insert("annotations".into(), Value::Object(values));
                }
                let canonical = canonical_json(&Value::Object(map))
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| String::from_utf8(bytes).map_err(|e| e.to_string()))
                    .and_then(|text| RawValue::from_string(text).map_err(|e| e.to_string()))
                    .map_err(|message| {
                        DescriptorErrors(vec![DescriptorError {
                            pointer: String::new(),
                            kind: DescriptorErrorKind::NotCanonical { message },
                        }])
                    })?;
                Ok(Descriptor {
                    revision: DescriptorRevision::of_canonical_bytes(canonical.get().as_bytes()),
                    id,
                    version,
                    title,
                    description,
                    io_mode,
                    annotations,
                    canonical: Arc::from(canonical),
                    present,
                    validators: Arc::default(),
                    limits: *limits,
                })
            }
            _ => Err(DescriptorErrors(checker.errors)),
        }
    }

    /// The descriptor as the JSON object its revision is computed over: `io_mode` always
    /// present, absent optional fields (and empty annotations) omitted.
    pub fn canonical_value(&self) -> Value {
        // The text was produced by the canonicalizer from a Value, so it parses.
        serde_json::from_str(self.canonical.get()).unwrap_or_default()
    }

    /// The RFC 8785 canonical JSON bytes the revision digests.
    pub fn canonical_json(&self) -> Vec<u8> {
        self.canonical.get().as_bytes().to_vec()
    }

    /// The RFC 8785 canonical JSON text (cheap: no copy, no parse).
    pub fn canonical_str(&self) -> &str {
        self.canonical.get()
    }

    /// The canonical JSON as a [`RawValue`], to embed in a response as-is (no copy, no
    /// parse).
    pub fn canonical_raw(&self) -> &RawValue {
        &self.canonical
    }

    /// The capability id.
    pub fn id(&self) -> &CapabilityId {
        &self.id
    }
    /// The contract version.
    pub fn version(&self) -> &CapabilityVersion {
        &self.version
    }
    /// `id@version`.
    pub fn qualified_id(&self) -> QualifiedId {
        QualifiedId::new(self.id.clone(), self.version.clone())
    }
    /// Short human-facing name.
    pub fn title(&self) -> &str {
        &self.title
    }
    /// What the capability does, for people and LLMs.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// How the call moves data.
    pub fn io_mode(&self) -> IoMode {
        self.io_mode
    }
    /// Opaque string hints, never interpreted by the fabric.
    pub fn annotations(&self) -> &BTreeMap<String, String> {
        &self.annotations
    }
    /// The content revision.
    pub fn revision(&self) -> &DescriptorRevision {
        &self.revision
    }

    /// Whether the descriptor has a schema for `role`.
    #[inline]
    pub fn has_schema(&self, role: SchemaRole) -> bool {
        self.present[role_index(role)]
    }

    /// The compiled schema for `role`, if the descriptor has one. Compiled on first use.
    #[inline]
    pub fn schema(&self, role: SchemaRole) -> Option<&CompiledSchema> {
        let index = role_index(role);
        if !self.present[index] {
            return None;
        }
        self.validators.slots[index]
            .get_or_init(|| {
                let value = self.canonical_value();
                // It compiled when the descriptor was built; same input, same result.
                CompiledSchema::compile(value.get(role.field())?, &self.limits).ok()
            })
            .as_ref()
    }

    /// Validates `value` against the schema for `role`, reporting up to `max_errors` failures.
    ///
    /// A role without a schema accepts any value: an absent `output_schema` means the result
    /// body carries no contract. (Chunk schemas are always present for the directions the
    /// I/O mode has; the fabric refuses chunks in directions it lacks before validating.)
    #[inline]
    pub fn validate(
        &self,
        role: SchemaRole,
        value: &Value,
        max_errors: usize,
    ) -> Result<(), ValidationErrors> {
        if !self.has_schema(role) {
            return Ok(());
        }
        match self.schema(role) {
            Some(schema) => schema.validate(value, max_errors),
            None => Err(ValidationErrors {
                errors: vec![crate::schema::ValidationFailure {
                    instance_pointer: String::new(),
                    schema_path: String::new(),
                    message: format!("the {} could not be compiled", role.field()),
                }],
                truncated: false,
            }),
        }
    }
}

impl serde::Serialize for Descriptor {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.canonical_raw().serialize(serializer)
    }
}

/// The JSON type name of a value, for error messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
