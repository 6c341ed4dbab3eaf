//! The descriptor rules, checked field by field with every violation collected.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::descriptor::{FIELDS, IoMode, json_type};
use crate::error::{DescriptorError, DescriptorErrorKind};
use crate::id::CapabilityId;
use crate::limits::Limits;
use crate::schema::{CompiledSchema, SchemaRole, push_token};
use crate::version::CapabilityVersion;

/// Walks one descriptor object, collecting every violation.
pub(crate) struct Checker<'a> {
    pub(crate) object: &'a Map<String, Value>,
    pub(crate) errors: Vec<DescriptorError>,
}

impl Checker<'_> {
    pub(crate) fn fail(&mut self, pointer: String, kind: DescriptorErrorKind) {
        self.errors.push(DescriptorError { pointer, kind });
    }

    /// The field's value; `null` counts as absent.
    pub(crate) fn field(&self, name: &str) -> Option<&Value> {
        self.object.get(name).filter(|v| !v.is_null())
    }

    pub(crate) fn unknown_fields(&mut self) {
        let unknown: Vec<String> = self
            .object
            .keys()
            .filter(|k| !FIELDS.contains(&k.as_str()))
            .cloned()
            .collect();
        for field in unknown {
            let mut pointer = String::new();
            push_token(&mut pointer, &field);
            self.fail(pointer, DescriptorErrorKind::UnknownField { field });
        }
    }

    pub(crate) fn string(&mut self, name: &'static str) -> Option<&str> {
        let object = self.object;
        match object.get(name).filter(|v| !v.is_null()) {
            None => {
                self.fail(
                    format!("/{name}"),
                    DescriptorErrorKind::MissingField { field: name },
                );
                None
            }
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => {
                self.fail(
                    format!("/{name}"),
                    DescriptorErrorKind::InvalidType {
                        expected: "a string",
                        found: json_type(other),
                    },
                );
                None
            }
        }
    }

    pub(crate) fn id(&mut self) -> Option<CapabilityId> {
        let raw = self.string("id")?;
        CapabilityId::parse(raw)
            .map_err(|e| self.fail("/id".into(), DescriptorErrorKind::InvalidId(e)))
            .ok()
    }

    pub(crate) fn version(&mut self) -> Option<CapabilityVersion> {
        let raw = self.string("version")?;
        CapabilityVersion::parse(raw)
            .map_err(|e| self.fail("/version".into(), DescriptorErrorKind::InvalidVersion(e)))
            .ok()
    }

    pub(crate) fn text(&mut self, name: &'static str) -> Option<String> {
        let raw = self.string(name)?.to_owned();
        if raw.trim().is_empty() {
            self.fail(
                format!("/{name}"),
                DescriptorErrorKind::Blank { field: name },
            );
            return None;
        }
        Some(raw)
    }

    pub(crate) fn io_mode(&mut self) -> Option<IoMode> {
        match self.field("io_mode") {
            None => Some(IoMode::Unary),
            Some(Value::String(s)) => {
                let found = s.clone();
                IoMode::parse(&found).or_else(|| {
                    self.fail(
                        "/io_mode".into(),
                        DescriptorErrorKind::InvalidIoMode { found },
                    );
                    None
                })
            }
            Some(other) => {
                let found = json_type(other);
                self.fail(
                    "/io_mode".into(),
                    DescriptorErrorKind::InvalidType {
                        expected: "a string",
                        found,
                    },
                );
                None
            }
        }
    }

    pub(crate) fn annotations(&mut self) -> Option<BTreeMap<String, String>> {
        let object = self.object;
        let Some(value) = object.get("annotations").filter(|v| !v.is_null()) else {
            return Some(BTreeMap::new());
        };
        let Value::Object(map) = value else {
            self.fail(
                "/annotations".into(),
                DescriptorErrorKind::InvalidType {
                    expected: "an object of strings",
                    found: json_type(value),
                },
            );
            return None;
        };
        let mut annotations = BTreeMap::new();
        for (key, value) in map {
            match value {
                Value::String(s) => {
                    annotations.insert(key.clone(), s.clone());
                }
                other => {
                    let mut pointer = "/annotations".to_owned();
                    push_token(&mut pointer, key);
                    self.fail(
                        pointer,
                        DescriptorErrorKind::InvalidType {
                            expected: "a string",
                            found: json_type(other),
                        },
                    );
                }
            }
        }
        Some(annotations)
    }

    /// `None`: broken (error recorded). `Some(None)`: absent. `Some(Some(_))`: compiled.
    pub(crate) fn schema(
        &mut self,
        role: SchemaRole,
        required: bool,
        limits: &Limits,
    ) -> Option<Option<CompiledSchema>> {
        let name = role.field();
        let object = self.object;
        let Some(value) = object.get(name).filter(|v| !v.is_null()) else {
            if required {
                self.fail(
                    format!("/{name}"),
                    DescriptorErrorKind::MissingField { field: name },
                );
                return None;
            }
            return Some(None);
        };
        if !value.is_object() {
            self.fail(
                format!("/{name}"),
                DescriptorErrorKind::InvalidType {
                    expected: "a JSON Schema object",
                    found: json_type(value),
                },
            );
            return None;
        }
        match CompiledSchema::compile(value, limits) {
            Ok(schema) => Some(Some(schema)),
            Err(error) => {
                let pointer = format!("/{name}{}", error.pointer());
                self.fail(pointer, DescriptorErrorKind::Schema(error));
                None
            }
        }
    }

    pub(crate) fn chunk_schema(
        &mut self,
        role: SchemaRole,
        io_mode: Option<IoMode>,
        limits: &Limits,
    ) -> Option<Option<CompiledSchema>> {
        let name = role.field();
        let present = self.field(name).is_some();
        if let Some(mode) = io_mode {
            let needed = match role {
                SchemaRole::InputChunk => mode.has_input_chunks(),
                _ => mode.has_output_chunks(),
            };
            if needed && !present {
                self.fail(
                    format!("/{name}"),
                    DescriptorErrorKind::ChunkSchemaRequired {
                        field: name,
                        io_mode: mode.as_str(),
                    },
                );
                return None;
            }
            if !needed && present {
                self.fail(
                    format!("/{name}"),
                    DescriptorErrorKind::ChunkSchemaForbidden {
                        field: name,
                        io_mode: mode.as_str(),
                    },
                );
                return None;
            }
        }
        self.schema(role, false, limits)
    }
}
