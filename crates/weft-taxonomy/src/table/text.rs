//! Text rows.

use super::schema::{closed, open, opt, req, string};
use super::{Placeholder, Row};
use crate::placeholder::ValueSet;

fn text_in() -> serde_json::Value {
    closed(vec![req("text", string())])
}

fn summary_out() -> serde_json::Value {
    open(vec![req("summary", string())])
}

/// `text.*`, in the seed's order.
pub(super) static ROWS: [Row; 7] = [
    Row {
        pattern: "text.translate.{src}.{tgt}.{level}",
        title: "Translate {src} text to {tgt} ({level})",
        seed_input: "{ text: string }",
        seed_output: "{ text: string, detected_lang?: string }",
        verification: "non-empty; length 0.3×–3× of input; language detected = `tgt`",
        notes: "",
        placeholders: &[
            Placeholder {
                name: "src",
                set: ValueSet::Iso639_1,
                example: None,
            },
            Placeholder {
                name: "tgt",
                set: ValueSet::Iso639_1,
                example: None,
            },
            Placeholder {
                name: "level",
                set: ValueSet::TranslationLevel,
                example: None,
            },
        ],
        distinct: Some(("src", "tgt")),
        input: |_| text_in(),
        output: |_| open(vec![req("text", string()), opt("detected_lang", string())]),
    },
    Row {
        pattern: "text.summarize.short",
        title: "Summarize text briefly",
        seed_input: "{ text: string }",
        seed_output: "{ summary: string }",
        verification: "non-empty; word_count(summary) ≤ word_count(input) × 0.2",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| text_in(),
        output: |_| summary_out(),
    },
    Row {
        pattern: "text.summarize.medium",
        title: "Summarize text at medium length",
        seed_input: "{ text: string }",
        seed_output: "{ summary: string }",
        verification: "word_count(summary) between 10% and 30% of input",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| text_in(),
        output: |_| summary_out(),
    },
    Row {
        pattern: "text.summarize.long",
        title: "Summarize text at length",
        seed_input: "{ text: string }",
        seed_output: "{ summary: string }",
        verification: "word_count(summary) between 25% and 60% of input",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| text_in(),
        output: |_| summary_out(),
    },
    Row {
        pattern: "text.rewrite.formal",
        title: "Rewrite text in a formal register",
        seed_input: "{ text: string }",
        seed_output: "{ text: string }",
        verification: "non-empty; length 0.5×–2× of input",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| text_in(),
        output: |_| open(vec![req("text", string())]),
    },
    Row {
        pattern: "text.rewrite.casual",
        title: "Rewrite text in a casual register",
        seed_input: "{ text: string }",
        seed_output: "{ text: string }",
        verification: "non-empty",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| text_in(),
        output: |_| open(vec![req("text", string())]),
    },
    Row {
        pattern: "text.expand.{factor}",
        title: "Expand text {factor}×",
        seed_input: "{ text: string }",
        seed_output: "{ text: string }",
        verification: "length ≥ input × `factor` × 0.8",
        notes: "",
        placeholders: &[Placeholder {
            name: "factor",
            set: ValueSet::ExpansionFactor,
            example: None,
        }],
        distinct: None,
        input: |_| text_in(),
        output: |_| open(vec![req("text", string())]),
    },
];
