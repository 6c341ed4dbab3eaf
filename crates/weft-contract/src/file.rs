//! Descriptor files: one descriptor per file, or a `descriptors` list, in JSON or TOML.
//!
//! ```text
//! {"id": "echo", ...}                    id = "echo"
//! {"descriptors": [{...}, {...}]}        [[descriptors]]
//!                                        id = "echo"
//! ```
//!
//! Every problem is reported with the line and column of the offending value, so that tools
//! can print `path:line:col: code: message`. A document-level problem (bad syntax, duplicate
//! keys, trailing data) stops the file; descriptor rule violations are collected per descriptor
//! so one bad entry does not hide the others.

use serde_json::Value;

use crate::descriptor::{Descriptor, json_type};
use crate::limits::Limits;
use crate::schema::push_token;
use crate::source::{Position, SourceDocument, SourceFormat};

/// The key that turns a file into a list of descriptors.
pub const LIST_KEY: &str = "descriptors";

/// One problem in a descriptor file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// Where in the file.
    pub position: Position,
    /// JSON pointer to the offending value within the document.
    pub pointer: String,
    /// Stable error code.
    pub code: &'static str,
    /// Human-readable explanation.
    pub message: String,
}

/// One descriptor slot in a file: built, or the problems that stopped it.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// JSON pointer of the descriptor in the document (`""` or `/descriptors/N`).
    pub pointer: String,
    /// Where the descriptor starts.
    pub position: Position,
    /// The built descriptor, or every problem found in it.
    pub result: Result<Descriptor, Vec<FileProblem>>,
}

/// Reads every descriptor in `text`.
///
/// `Err` means the file as a whole is unusable (too large, not parseable, wrong shape); `Ok`
/// holds one entry per descriptor slot, each built or failed on its own.
pub fn read_descriptor_file(
    text: &str,
    format: SourceFormat,
    limits: &Limits,
) -> Result<Vec<FileEntry>, Vec<FileProblem>> {
    if text.len() > limits.max_document_bytes {
        return Err(vec![FileProblem {
            position: Position::START,
            pointer: String::new(),
            code: "document_too_large",
            message: format!(
                "document is {} bytes; the limit is {}",
                text.len(),
                limits.max_document_bytes
            ),
        }]);
    }
    let document = SourceDocument::parse(text, format).map_err(|e| {
        vec![FileProblem {
            position: e.position,
            pointer: String::new(),
            code: e.kind.code(),
            message: e.kind.to_string(),
        }]
    })?;
    let problem = |pointer: &str, code: &'static str, message: String| FileProblem {
        position: document.position_of(pointer),
        pointer: pointer.to_owned(),
        code,
        message,
    };
    let Some(root) = document.value.as_object() else {
        return Err(vec![problem(
            "",
            "invalid_type",
            format!(
                "a descriptor file holds an object, found {}",
                json_type(&document.value)
            ),
        )]);
    };
    let Some(list) = root.get(LIST_KEY) else {
        return Ok(vec![build_entry(&document, "", &document.value, limits)]);
    };
    let mut shape_problems: Vec<FileProblem> = root
        .keys()
        .filter(|k| k.as_str() != LIST_KEY)
        .map(|k| {
            let mut pointer = String::new();
            push_token(&mut pointer, k);
            problem(
                &pointer,
                "unknown_field",
                format!("unknown field {k:?} beside {LIST_KEY:?}; a list file holds only the list"),
            )
        })
        .collect();
    let items = match list {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => {
            shape_problems.push(problem(
                "/descriptors",
                "no_descriptors",
                "the descriptors list is empty".into(),
            ));
            return Err(shape_problems);
        }
        other => {
            shape_problems.push(problem(
                "/descriptors",
                "invalid_type",
                format!("descriptors must be an array, found {}", json_type(other)),
            ));
            return Err(shape_problems);
        }
    };
    if !shape_problems.is_empty() {
        return Err(shape_problems);
    }
    Ok(items
        .iter()
        .enumerate()
        .map(|(index, item)| build_entry(&document, &format!("/{LIST_KEY}/{index}"), item, limits))
        .collect())
}

fn build_entry(document: &SourceDocument, base: &str, value: &Value, limits: &Limits) -> FileEntry {
    let result = Descriptor::from_value(value, limits).map_err(|errors| {
        errors
            .iter()
            .map(|error| {
                let pointer = format!("{base}{}", error.pointer);
                FileProblem {
                    position: document.position_of(&pointer),
                    code: error.code(),
                    message: error.to_string(),
                    pointer,
                }
            })
            .collect()
    });
    FileEntry {
        pointer: base.to_owned(),
        position: document.position_of(base),
        result,
    }
}
