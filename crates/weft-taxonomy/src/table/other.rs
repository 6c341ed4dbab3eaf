//! Chart, compute, embed, classify and research rows.

use serde_json::{Value, json};

use super::schema::{
    any_object, array, base64, boolean, closed, described, integer, number, one_of, open, opt, req,
    string, with,
};
use super::{Placeholder, Row};
use crate::placeholder::ValueSet;

/// `chart.generate.from-data`: the chart types of v0.1.
pub const CHART_TYPES: [&str; 3] = ["bar", "line", "pie"];
/// `chart.generate.from-data`: the themes.
pub const CHART_THEMES: [&str; 2] = ["light", "dark"];
/// `classify.text.sentiment`: the sentiments.
pub const SENTIMENTS: [&str; 3] = ["positive", "negative", "neutral"];
/// `research.linkedin.profile.enrich`: the profile URL the seed allows
/// (`https://(www.)?linkedin.com/in/<slug>`).
pub const LINKEDIN_PROFILE_PATTERN: &str = "^https://(www\\.)?linkedin\\.com/in/[A-Za-z0-9_%-]+/?$";

fn labels() -> Value {
    open(vec![req(
        "labels",
        array(open(vec![
            req("label", string()),
            req("confidence", number()),
        ])),
    )])
}

fn vector_out() -> Value {
    open(vec![req("vector", array(number())), req("dim", integer())])
}

fn nullable(types: &[&str]) -> Value {
    json!({"type": types})
}

/// Chart, compute, embed, classify and research rows, in the seed's order.
pub(super) static ROWS: [Row; 11] = [
    Row {
        pattern: "chart.generate.from-data",
        title: "Render a chart from data as PNG",
        seed_input: "{ title?: string, data: [{ x: string|number, y: number }], chart_type: \
                     enum, width: int, height: int, x_label?: string, y_label?: string, \
                     theme?: enum }",
        seed_output: "{ image_b64: string, width: int, height: int, chart_type: string }",
        verification: "valid PNG; dimensions match input; data series non-empty; image not \
                       all-blank",
        notes: "The output is deterministic for (data, chart_type, dimensions, seed). \
                `chart_type` is one of bar, line, pie in v0.1 (more via \
                custom.<provider>.chart.* capabilities); `theme` is light or dark, default \
                seller-defined.",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                opt("title", string()),
                req(
                    "data",
                    array(closed(vec![
                        req("x", json!({"type": ["string", "number"]})),
                        req("y", number()),
                    ])),
                ),
                req("chart_type", one_of(&CHART_TYPES)),
                req("width", integer()),
                req("height", integer()),
                opt("x_label", string()),
                opt("y_label", string()),
                opt("theme", one_of(&CHART_THEMES)),
            ])
        },
        output: |_| {
            open(vec![
                req("image_b64", base64(Some("image/png"))),
                req("width", integer()),
                req("height", integer()),
                req("chart_type", string()),
            ])
        },
    },
    Row {
        pattern: "compute.math.symbolic",
        title: "Evaluate a math expression symbolically",
        seed_input: "{ expression: string, vars?: object }",
        seed_output: "{ result: string, latex?: string }",
        verification: "valid string; result parses as expression",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("expression", string()), opt("vars", any_object())]),
        output: |_| open(vec![req("result", string()), opt("latex", string())]),
    },
    Row {
        pattern: "compute.math.numeric",
        title: "Evaluate a math expression numerically",
        seed_input: "{ expression: string, vars?: object, precision?: int }",
        seed_output: "{ result: number }",
        verification: "valid number; precision honored",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                req("expression", string()),
                opt("vars", any_object()),
                opt("precision", integer()),
            ])
        },
        output: |_| open(vec![req("result", number())]),
    },
    Row {
        pattern: "compute.statistics.{op}",
        title: "Compute the {op} of a data set",
        seed_input: "{ data: number[] }",
        seed_output: "{ result: number }",
        verification: "valid number; non-NaN",
        notes: "",
        placeholders: &[Placeholder {
            name: "op",
            set: ValueSet::StatisticsOp,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("data", array(number()))]),
        output: |_| open(vec![req("result", number())]),
    },
    Row {
        pattern: "embed.text.{model}",
        title: "Embed text with {model}",
        seed_input: "{ text: string }",
        seed_output: "{ vector: number[], dim: int }",
        verification: "length(vector) = dim; declared dim matches model",
        notes: "",
        placeholders: &[Placeholder {
            name: "model",
            set: ValueSet::EmbeddingModel,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("text", string())]),
        output: |_| vector_out(),
    },
    Row {
        pattern: "embed.image.{model}",
        title: "Embed an image with {model}",
        seed_input: "{ image_b64: string }",
        seed_output: "{ vector: number[], dim: int }",
        verification: "length(vector) = dim",
        notes: "",
        placeholders: &[Placeholder {
            name: "model",
            set: ValueSet::EmbeddingModel,
            example: Some("clip-vit-l-14"),
        }],
        distinct: None,
        input: |_| closed(vec![req("image_b64", base64(None))]),
        output: |_| vector_out(),
    },
    Row {
        pattern: "classify.image.{taxonomy}",
        title: "Classify an image with the {taxonomy} labels",
        seed_input: "{ image_b64: string }",
        seed_output: "{ labels: [{ label: string, confidence: number }] }",
        verification: "sum(confidence) ≈ 1.0; labels valid in taxonomy",
        notes: "",
        placeholders: &[Placeholder {
            name: "taxonomy",
            set: ValueSet::ImageTaxonomy,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("image_b64", base64(None))]),
        output: |_| labels(),
    },
    Row {
        pattern: "classify.text.{taxonomy}",
        title: "Classify text with the {taxonomy} labels",
        seed_input: "{ text: string }",
        seed_output: "{ labels: [{ label: string, confidence: number }] }",
        verification: "sum(confidence) ≈ 1.0",
        notes: "",
        placeholders: &[Placeholder {
            name: "taxonomy",
            set: ValueSet::TextTaxonomy,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("text", string())]),
        output: |_| labels(),
    },
    Row {
        pattern: "classify.text.sentiment",
        title: "Classify the sentiment of text",
        seed_input: "{ text: string }",
        seed_output: "{ sentiment: enum, confidence: number }",
        verification: "sentiment ∈ `{positive, negative, neutral}`; 0 ≤ confidence ≤ 1",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("text", string())]),
        output: |_| {
            open(vec![
                req("sentiment", one_of(&SENTIMENTS)),
                req("confidence", number()),
            ])
        },
    },
    Row {
        pattern: "classify.text.toxicity",
        title: "Classify the toxicity of text",
        seed_input: "{ text: string }",
        seed_output: "{ toxic: boolean, confidence: number }",
        verification: "confidence ∈ [0, 1]",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("text", string())]),
        output: |_| open(vec![req("toxic", boolean()), req("confidence", number())]),
    },
    Row {
        pattern: "research.linkedin.profile.enrich",
        title: "Enrich a LinkedIn profile",
        seed_input: "{ profile_url: string (https://(www.)?linkedin.com/in/<slug>) }",
        seed_output: "{ profile: { url, name, headline, location, current_position, company, \
                      summary, skills, source } }",
        verification: "`profile` is object; `profile.url` and `profile.name` are non-empty \
                       strings; `profile.source` ∈ `{\"apify\", \"phantombuster\", \
                       \"proxycurl\", ...}` (provenance pin)",
        notes: "research.* capabilities typically wrap gated upstream APIs; every output \
                declares `source` so buyers can audit provenance. The seed gives the profile \
                fields without types: url, name and source are strings; the other fields \
                must be present and may be null when the profile lacks them (skills an \
                array of strings).",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![req(
                "profile_url",
                described(
                    with(string(), "pattern", json!(LINKEDIN_PROFILE_PATTERN)),
                    "https://(www.)?linkedin.com/in/<slug>",
                ),
            )])
        },
        output: |_| {
            let text_or_null = || nullable(&["string", "null"]);
            open(vec![req(
                "profile",
                open(vec![
                    req("url", string()),
                    req("name", string()),
                    req("headline", text_or_null()),
                    req("location", text_or_null()),
                    req("current_position", text_or_null()),
                    req("company", text_or_null()),
                    req("summary", text_or_null()),
                    req(
                        "skills",
                        with(nullable(&["array", "null"]), "items", string()),
                    ),
                    req("source", string()),
                ]),
            )])
        },
    },
];
