//! The feature catalog: a closed set of built-in model features plus entries the deployment
//! declares in its config. Read-only over HTTP.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use weft_contract::Limits;
use weft_contract::schema::CompiledSchema;

use crate::config::{ConfigError, FeatureConfig};

/// The built-in features and what each means.
pub const BUILT_IN: [(&str, &str); 13] = [
    (
        "structured-output",
        "Produces output that conforms to a caller-supplied JSON Schema.",
    ),
    ("vision", "Accepts images as input."),
    ("audio-input", "Accepts audio as input."),
    ("audio-output", "Produces audio as output."),
    (
        "tool-use",
        "Calls tools the caller declares, returning structured tool calls.",
    ),
    ("parallel-tool-use", "Emits several tool calls in one turn."),
    ("thinking", "Performs extended reasoning before answering."),
    (
        "long-context",
        "Accepts very long inputs (a large context window).",
    ),
    (
        "code-execution",
        "Runs code in a sandbox as part of answering.",
    ),
    ("web-search", "Searches the web as part of answering."),
    (
        "file-search",
        "Searches caller-provided files as part of answering.",
    ),
    ("streaming", "Streams partial output as it is produced."),
    ("batch", "Accepts asynchronous batch jobs."),
];

/// One feature-catalog entry.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeatureEntry {
    /// `feature:<name>` for built-ins; deployments may choose other ids.
    pub id: String,
    /// The feature name.
    pub feature: String,
    /// What it means.
    pub description: String,
    /// Capability kind; absent means `llm-inference`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// JSON Schema fragment for parameters a requirement may attach.
    #[serde(rename = "paramsSchema", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params_schema: Option<Value>,
}

/// The whole catalog, sorted by id.
#[derive(Debug, Clone, Default)]
pub struct FeatureCatalog {
    entries: Vec<FeatureEntry>,
}

impl FeatureCatalog {
    /// Built-ins plus the configured entries; every `params_schema` must compile as a
    /// 2020-12 schema, and ids must be unique.
    pub fn build(declared: &[FeatureConfig]) -> Result<Self, ConfigError> {
        let mut entries: Vec<FeatureEntry> = BUILT_IN
            .iter()
            .map(|(name, description)| FeatureEntry {
                id: format!("feature:{name}"),
                feature: (*name).to_owned(),
                description: (*description).to_owned(),
                kind: None,
                params_schema: None,
            })
            .collect();
        for (index, d) in declared.iter().enumerate() {
            let setting = "features";
            let invalid = |message: String| ConfigError::Invalid { setting, message };
            if d.feature.trim().is_empty() || d.description.trim().is_empty() {
                return Err(invalid(format!(
                    "features[{index}]: feature and description must not be blank"
                )));
            }
            let params_schema = match &d.params_schema {
                None => None,
                Some(toml_value) => {
                    let value = serde_json::to_value(toml_value)
                        .map_err(|e| invalid(format!("features[{index}].params_schema: {e}")))?;
                    CompiledSchema::compile(&value, &Limits::default())
                        .map_err(|e| invalid(format!("features[{index}].params_schema: {e}")))?;
                    Some(value)
                }
            };
            let id =
                d.id.clone()
                    .unwrap_or_else(|| format!("feature:{}", d.feature));
            if entries.iter().any(|e| e.id == id) {
                return Err(invalid(format!(
                    "features[{index}]: id {id:?} is already in the catalog"
                )));
            }
            entries.push(FeatureEntry {
                id,
                feature: d.feature.clone(),
                description: d.description.clone(),
                kind: d.kind.clone(),
                params_schema,
            });
        }
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Self { entries })
    }

    /// Every entry, sorted by id.
    pub fn entries(&self) -> &[FeatureEntry] {
        &self.entries
    }

    /// One entry by id.
    pub fn get(&self, id: &str) -> Option<&FeatureEntry> {
        self.entries.iter().find(|e| e.id == id)
    }
}
