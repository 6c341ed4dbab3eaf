//! Dispatch: unknown rows, bindings, the report's JSON form.

use serde_json::json;
use weft_verify::VerifyError;

use crate::support::*;

#[test]
fn every_row_of_the_seed_has_a_verifier() {
    let rows: Vec<&str> = weft_verify::rows().collect();
    assert_eq!(rows.len(), 40);
    let seed_rows = [
        "image.generate.photorealistic.png",
        "image.generate.illustration.png",
        "image.generate.illustration.svg",
        "image.edit.background-remove",
        "image.upscale.2x",
        "image.upscale.4x",
        "audio.transcribe.json-with-timestamps",
        "audio.transcribe.{lang}.text",
        "audio.generate-speech.{voice}.mp3",
        "audio.translate.{src}.{tgt}",
        "text.translate.{src}.{tgt}.{level}",
        "text.summarize.short",
        "text.summarize.medium",
        "text.summarize.long",
        "text.rewrite.formal",
        "text.rewrite.casual",
        "text.expand.{factor}",
        "code.generate.{language}.script",
        "code.generate.{language}.function",
        "code.review.{language}",
        "code.test.{language}",
        "code.translate.{src}.{tgt}",
        "code.execute.sandboxed",
        "data.lookup.weather.{format}",
        "data.lookup.web-search",
        "data.extract.from-url",
        "data.scrape.{url}.json",
        "data.lookup.stock-price",
        "data.lookup.crypto-price",
        "chart.generate.from-data",
        "compute.math.symbolic",
        "compute.math.numeric",
        "compute.statistics.{op}",
        "embed.text.{model}",
        "embed.image.{model}",
        "classify.image.{taxonomy}",
        "classify.text.{taxonomy}",
        "classify.text.sentiment",
        "classify.text.toxicity",
        "research.linkedin.profile.enrich",
    ];
    for row in seed_rows {
        assert!(rows.contains(&row), "{row}");
    }
}

#[test]
fn unknown_and_custom_rows_have_no_builtin_verifier() {
    for row in [
        "custom.acme.ocr",
        "text.summarize.tiny",
        "text.translate.en.it.fluent",
    ] {
        let error = try_run(&options(), row, &[], json!({}), json!({})).unwrap_err();
        assert_eq!(
            error,
            VerifyError::UnknownRow {
                row: row.to_owned()
            }
        );
        assert_eq!(error.code(), "unknown_row");
    }
}

#[test]
fn bindings_must_fit_the_row() {
    let row = "text.translate.{src}.{tgt}.{level}";
    let output = json!({"text": "x"});
    let input = json!({"text": "x"});
    let missing = try_run(
        &options(),
        row,
        &[("src", "en"), ("tgt", "it")],
        input.clone(),
        output.clone(),
    )
    .unwrap_err();
    assert_eq!(
        missing,
        VerifyError::MissingBinding {
            row: row.to_owned(),
            placeholder: "level".to_owned()
        }
    );
    let extra = try_run(
        &options(),
        row,
        &[
            ("src", "en"),
            ("tgt", "it"),
            ("level", "fluent"),
            ("tone", "x"),
        ],
        input.clone(),
        output.clone(),
    )
    .unwrap_err();
    assert_eq!(extra.code(), "unexpected_binding");
    let invalid = try_run(
        &options(),
        row,
        &[("src", "en"), ("tgt", "nl"), ("level", "fluent")],
        input.clone(),
        output.clone(),
    )
    .unwrap_err();
    assert!(
        matches!(invalid, VerifyError::InvalidBinding { ref placeholder, ref value, .. } if placeholder == "tgt" && value == "nl")
    );
    let level = try_run(
        &options(),
        row,
        &[("src", "en"), ("tgt", "it"), ("level", "poetic")],
        input,
        output,
    )
    .unwrap_err();
    assert_eq!(level.code(), "invalid_binding");
    assert_eq!(weft_verify::placeholders(row), ["src", "tgt", "level"]);
}

#[test]
fn missing_input_fields_are_typed_errors_with_pointers() {
    let error = try_run(
        &options(),
        "text.summarize.short",
        &[],
        json!({"txt": "a"}),
        json!({"summary": "a"}),
    )
    .unwrap_err();
    assert_eq!(
        error,
        VerifyError::InvalidInput {
            pointer: "/text".to_owned(),
            reason: "is required".to_owned()
        }
    );
    let error = try_run(
        &options(),
        "text.summarize.short",
        &[],
        json!("a"),
        json!({"summary": "a"}),
    )
    .unwrap_err();
    assert!(matches!(error, VerifyError::InvalidInput { ref pointer, .. } if pointer.is_empty()));
    let error = try_run(
        &options(),
        "image.generate.photorealistic.png",
        &[],
        json!({"prompt": "p", "width": 0, "height": 4}),
        json!({}),
    )
    .unwrap_err();
    assert!(matches!(error, VerifyError::InvalidInput { ref pointer, .. } if pointer == "/width"));
}

#[test]
fn the_report_serializes_as_documented() {
    let report = run(
        "text.rewrite.casual",
        &[],
        json!({"text": "hi"}),
        json!({"text": ""}),
    );
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(
        value,
        json!({"passed": false, "checks": [
            {"name": "output_shape", "passed": true, "detail": "object with /text (a string)"},
            {"name": "text_nonempty", "passed": false, "detail": "/text is empty or only whitespace"}
        ]})
    );
    let back: weft_verify::VerificationReport = serde_json::from_value(value).unwrap();
    assert_eq!(back, report);
}
