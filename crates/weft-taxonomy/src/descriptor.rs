//! Standard capabilities as weft descriptors.
//!
//! A concrete standard id becomes a unary descriptor at the taxonomy's version: its title
//! with the bindings spelled out, a description stating input, output and the verification
//! rule, the row's schemas for those bindings, and annotations naming the row.

use serde_json::{Map, Value, json};
use weft_contract::{Descriptor, DescriptorErrors, Limits};

use crate::TAXONOMY_VERSION;
use crate::resolve::StandardId;
use crate::table::{Bindings, Row};

/// Annotation naming the row a standard descriptor instantiates.
pub const ANNOTATION_ROW: &str = "taxonomy.row";
/// Annotation holding the taxonomy version.
pub const ANNOTATION_VERSION: &str = "taxonomy.version";
/// Annotation holding the verification rule, verbatim.
pub const ANNOTATION_VERIFICATION: &str = "taxonomy.verification";

/// `{name}` in `template` replaced by each binding, closed-set codes with their display
/// name (`English`, `C#`); unbound placeholders stay as they are.
pub fn render(template: &str, row: &Row, bindings: &Bindings) -> String {
    let mut out = template.to_owned();
    for placeholder in row.placeholders {
        if let Some(value) = bindings.get(placeholder.name) {
            let shown = placeholder.set.display_name(value).unwrap_or(value);
            out = out.replace(&format!("{{{}}}", placeholder.name), shown);
        }
    }
    out
}

fn bindings_text(row: &Row, bindings: &Bindings) -> String {
    row.placeholders
        .iter()
        .filter_map(|p| {
            let value = bindings.get(p.name)?;
            Some(match p.set.display_name(value) {
                Some(name) => format!("{} = {value} ({name})", p.name),
                None => format!("{} = {value}", p.name),
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl StandardId {
    /// The title, with the bindings spelled out.
    pub fn title(&self) -> String {
        render(self.row.title, self.row, &self.bindings)
    }

    /// The description: what the capability is, its input and output as the seed writes
    /// them, the verification rule, and the row's further normative text.
    pub fn description(&self) -> String {
        let row = self.row;
        let bound = bindings_text(row, &self.bindings);
        let mut text = format!(
            "{title}. Standard capability of the weft taxonomy {TAXONOMY_VERSION} (Swarmwage \
             capability taxonomy v0.1), row `{pattern}`",
            title = self.title(),
            pattern = row.pattern,
        );
        if !bound.is_empty() {
            text.push_str(" with ");
            text.push_str(&bound);
        }
        text.push_str(&format!(
            ". Input: {}. Output: {}. Verification: {}.",
            row.seed_input, row.seed_output, row.verification
        ));
        if !row.notes.is_empty() {
            text.push(' ');
            text.push_str(row.notes);
        }
        text
    }

    /// The input schema for this id.
    pub fn input_schema(&self) -> Value {
        self.row.input_schema(&self.bindings)
    }

    /// The output schema for this id.
    pub fn output_schema(&self) -> Value {
        self.row.output_schema(&self.bindings)
    }

    /// The descriptor as JSON, before weft's checks.
    pub fn descriptor_value(&self) -> Value {
        let mut annotations = Map::new();
        annotations.insert(ANNOTATION_ROW.into(), json!(self.row.pattern));
        annotations.insert(ANNOTATION_VERSION.into(), json!(TAXONOMY_VERSION));
        annotations.insert(ANNOTATION_VERIFICATION.into(), json!(self.row.verification));
        json!({
            "id": self.id,
            "version": TAXONOMY_VERSION,
            "title": self.title(),
            "description": self.description(),
            "input_schema": self.input_schema(),
            "output_schema": self.output_schema(),
            "io_mode": "unary",
            "annotations": annotations,
        })
    }

    /// The descriptor, checked by weft's own rules (default limits).
    ///
    /// Every row passes for every binding its tests try; an error here would be a defect in
    /// the table, reported rather than hidden.
    pub fn descriptor(&self) -> Result<Descriptor, DescriptorErrors> {
        Descriptor::from_value(&self.descriptor_value(), &Limits::default())
    }
}
