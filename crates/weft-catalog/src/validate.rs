//! Normalization and validation of decoded records, in CompozyOS's order, plus the digest.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::digest::{digest_of_payload, payload_of_normalized};
use crate::error::{CatalogError, FirstOccurrence, RecordAt, RecordLayout};
use crate::raw::{GoSlice, LineIndex, RawRecord, Text, go_trim};
use crate::record::CapabilityRecord;

/// A record file's name without its extension, as CompozyOS compares it with the id.
pub(crate) struct Basename {
    /// The raw basename for messages (lossy when the name is not UTF-8).
    pub(crate) display: String,
    /// The basename when it is valid UTF-8; a name that is not can never equal an id.
    pub(crate) utf8: Option<String>,
}

/// One decoded record with what is needed to validate it and locate errors.
pub(crate) struct Decoded<'a> {
    pub(crate) index: usize,
    /// The catalog file (single-file mode) or the record file (directory mode).
    pub(crate) path: &'a Path,
    /// The decoded text of that file, for turning offsets into positions.
    pub(crate) text: &'a str,
    pub(crate) raw: &'a RawRecord,
    /// Directory mode only.
    pub(crate) basename: Option<&'a Basename>,
}

/// Validates records one by one, in catalog order, rejecting duplicate ids.
pub(crate) struct Validator {
    catalog: PathBuf,
    layout: RecordLayout,
    seen: HashMap<String, FirstOccurrence>,
    records: Vec<CapabilityRecord>,
    /// Line starts of the text last validated: every record's id position is kept for the
    /// duplicate-id error, and scanning the text for each would be quadratic in a catalog.
    lines: Option<Arc<LineIndex>>,
}

/// Trims entries and drops blanks, keeping order (`normalizeCapabilityStringList`).
fn descriptive_list(list: &GoSlice<Text>) -> Vec<String> {
    list.as_slice()
        .iter()
        .map(|text| go_trim(&text.value))
        .filter(|value| !value.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Validator {
    pub(crate) fn new(catalog: PathBuf, layout: RecordLayout, capacity: usize) -> Self {
        Validator {
            catalog,
            layout,
            seen: HashMap::with_capacity(capacity),
            records: Vec::with_capacity(capacity),
            lines: None,
        }
    }

    /// Normalizes, validates and digests one record, then checks its id is new.
    pub(crate) fn push(&mut self, decoded: &Decoded<'_>) -> Result<(), CatalogError> {
        let raw = decoded.raw;
        let lines = match &self.lines {
            Some(lines) if lines.indexes(decoded.text) => Arc::clone(lines),
            _ => {
                let lines = Arc::new(LineIndex::new(decoded.text));
                self.lines = Some(Arc::clone(&lines));
                lines
            }
        };
        let position = |offset: Option<usize>| offset.map(|o| lines.position(o));
        let record_position = position(raw.offset);
        let at = |offset: Option<usize>| RecordAt {
            path: decoded.path.to_path_buf(),
            index: decoded.index,
            layout: self.layout,
            position: position(offset).or(record_position),
        };

        let id = go_trim(&raw.id.value);
        let summary = go_trim(&raw.summary.value);
        let outcome = go_trim(&raw.outcome.value);
        let version = go_trim(&raw.version.value);
        for (value, text, field) in [
            (id, &raw.id, "id"),
            (summary, &raw.summary, "summary"),
            (outcome, &raw.outcome, "outcome"),
        ] {
            if value.is_empty() {
                return Err(CatalogError::MissingField {
                    at: at(text.offset),
                    field,
                });
            }
        }
        if let Some(basename) = decoded.basename {
            let matches = basename
                .utf8
                .as_deref()
                .is_some_and(|name| go_trim(name) == id);
            if !matches {
                return Err(CatalogError::BasenameMismatch {
                    at: at(raw.id.offset),
                    basename: basename.display.clone(),
                    id: id.to_owned(),
                });
            }
        }
        if !raw.version.value.is_empty() && version.is_empty() {
            return Err(CatalogError::BlankVersion {
                at: at(raw.version.offset),
            });
        }

        let authored = raw.requirements.as_slice();
        let mut first_index: HashMap<&str, usize> = HashMap::with_capacity(authored.len());
        for (index, text) in authored.iter().enumerate() {
            let value = go_trim(&text.value);
            if value.is_empty() {
                return Err(CatalogError::BlankRequirement {
                    at: at(text.offset),
                    index,
                });
            }
            if let Some(&first) = first_index.get(value) {
                return Err(CatalogError::DuplicateRequirement {
                    at: at(text.offset),
                    value: value.to_owned(),
                    first,
                    second: index,
                });
            }
            first_index.insert(value, index);
        }
        let mut requirements: Vec<String> = authored
            .iter()
            .map(|text| go_trim(&text.value).to_owned())
            .collect();
        requirements.sort();

        if let Some(first) = self.seen.get(id) {
            return Err(CatalogError::DuplicateId {
                catalog: self.catalog.clone(),
                id: id.to_owned(),
                first: Box::new(first.clone()),
                at: at(raw.id.offset),
            });
        }

        let mut record = CapabilityRecord {
            id: id.to_owned(),
            summary: summary.to_owned(),
            outcome: outcome.to_owned(),
            version: (!version.is_empty()).then(|| version.to_owned()),
            context_needed: descriptive_list(&raw.context_needed),
            artifacts_expected: descriptive_list(&raw.artifacts_expected),
            execution_outline: descriptive_list(&raw.execution_outline),
            constraints: descriptive_list(&raw.constraints),
            examples: descriptive_list(&raw.examples),
            requirements,
            digest: String::new(),
        };
        record.digest = digest_of_payload(&payload_of_normalized(&record));

        self.seen.insert(
            record.id.clone(),
            FirstOccurrence {
                index: decoded.index,
                path: decoded.path.to_path_buf(),
                position: position(raw.id.offset),
            },
        );
        self.records.push(record);
        Ok(())
    }

    pub(crate) fn finish(self) -> Vec<CapabilityRecord> {
        self.records
    }
}
