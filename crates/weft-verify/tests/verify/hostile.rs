//! Hostile outputs stay bounded: huge claimed images, truncated and oversized encodings,
//! deep JSON, huge code and expressions.

use serde_json::{Value, json};

use crate::support::*;

const ILLUSTRATION: &str = "image.generate.illustration.png";

fn illustration(image_b64: String) -> weft_verify::VerificationReport {
    run(
        ILLUSTRATION,
        &[],
        json!({"prompt": "p", "width": 2, "height": 2}),
        json!({"image_b64": image_b64}),
    )
}

#[test]
fn a_png_claiming_a_huge_size_is_refused_from_its_header() {
    // 100000 × 100000 RGB would need 30 GB; it is refused before allocation.
    let report = illustration(b64(&png_claiming(100_000, 100_000)));
    assert_fails(&report, &["png_valid", "dimensions_match", "not_blank"]);
    assert!(
        detail(&report, "png_valid").contains("10000000000 pixels, over the limit"),
        "{report:?}"
    );
    // Exactly at the limit passes the header check (and then fails on its missing data).
    let options = weft_verify::VerifyOptions {
        max_image_pixels: 4,
        ..options()
    };
    let report = run_with(
        &options,
        ILLUSTRATION,
        &[],
        json!({"prompt": "p", "width": 2, "height": 2}),
        json!({"image_b64": b64(&gradient_png(2, 2))}),
    );
    assert_passes(&report);
    let report = run_with(
        &options,
        ILLUSTRATION,
        &[],
        json!({"prompt": "p", "width": 3, "height": 2}),
        json!({"image_b64": b64(&gradient_png(3, 2))}),
    );
    assert!(detail(&report, "png_valid").contains("over the limit of 4"));
}

#[test]
fn a_claimed_size_that_does_not_match_the_data_fails() {
    let report = illustration(b64(&png_claiming(4000, 4000)));
    assert_fails(&report, &["png_valid", "dimensions_match", "not_blank"]);
}

#[test]
fn truncated_encodings_fail_cleanly() {
    let image = gradient_png(2, 2);
    let text = b64(&image);
    // Truncated base64 (bad padding) and a truncated PNG (valid base64 of half a file).
    let report = illustration(text[..text.len() - 3].to_owned());
    assert!(detail(&report, "png_valid").contains("base64"));
    let report = illustration(b64(&image[..image.len() / 2]));
    assert_fails(&report, &["png_valid", "dimensions_match", "not_blank"]);
    // A PNG without its IEND chunk.
    let report = illustration(b64(&image[..image.len() - 12]));
    assert_fails(&report, &["png_valid", "dimensions_match", "not_blank"]);
    // A data: URL is not base64.
    let report = illustration(format!("data:image/png;base64,{text}"));
    assert_fails(&report, &["png_valid", "dimensions_match", "not_blank"]);
}

#[test]
fn oversized_base64_is_refused_unread() {
    let options = weft_verify::VerifyOptions {
        max_base64_bytes: 64,
        ..options()
    };
    let report = run_with(
        &options,
        ILLUSTRATION,
        &[],
        json!({"prompt": "p", "width": 2, "height": 2}),
        json!({"image_b64": "A".repeat(68)}),
    );
    assert!(detail(&report, "png_valid").contains("over the limit of 64"));
}

#[test]
fn deep_geojson_is_refused_by_depth() {
    let mut deep = json!(1);
    for _ in 0..1000 {
        deep = json!([deep]);
    }
    let output = json!({
        "type": "Feature",
        "geometry": {"type": "GeometryCollection", "geometries": []},
        "properties": {"nested": deep}
    });
    let report = run(
        "data.lookup.weather.{format}",
        &[("format", "geojson")],
        json!({"location": "x"}),
        output,
    );
    assert!(detail(&report, "valid_format").contains("deeper than 64"));
}

#[test]
fn deep_values_elsewhere_are_not_walked() {
    let mut deep = json!("x");
    for _ in 0..1000 {
        deep = json!({"a": deep});
    }
    let mut output = json!({"url": "https://a.com", "extracted": {"title": "t"}, "confidence": 0.5, "extracted_at": "2026-06-01T00:00:00Z"});
    output["extracted"]["blob"] = deep;
    let report = run(
        "data.extract.from-url",
        &[],
        json!({"url": "https://a.com", "fields": ["title", "blob"]}),
        output,
    );
    assert_passes(&report);
}

#[test]
fn huge_code_is_refused_before_parsing() {
    let options = weft_verify::VerifyOptions {
        max_code_bytes: 1000,
        ..options()
    };
    let report = run_with(
        &options,
        "code.generate.{language}.script",
        &[("language", "python")],
        json!({"task": "t"}),
        json!({"code": "x = 1\n".repeat(200)}),
    );
    assert_fails(&report, &["code_parses"]);
    assert!(detail(&report, "code_parses").contains("over the limit of 1000"));
}

#[cfg(feature = "code-parsers")]
#[test]
fn deeply_nested_code_parses_without_recursion() {
    let code = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    let report = run(
        "code.generate.{language}.script",
        &[("language", "python")],
        json!({"task": "t"}),
        json!({"code": code}),
    );
    assert_passes(&report);
}

#[test]
fn hostile_symbolic_results_stay_bounded() {
    let row = "compute.math.symbolic";
    for result in ["(".repeat(100_000), "1+".repeat(20_000) + "1"] {
        let report = run(
            row,
            &[],
            json!({"expression": "x"}),
            json!({"result": result}),
        );
        assert_fails(&report, &["result_parses"]);
    }
}

#[test]
fn huge_svg_is_refused_and_entity_bombs_fail() {
    let options = weft_verify::VerifyOptions {
        max_svg_bytes: 100,
        ..options()
    };
    let big = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\">{}</svg>",
        "<path d=\"M0 0\"/>".repeat(20)
    );
    let report = run_with(
        &options,
        "image.generate.illustration.svg",
        &[],
        json!({"prompt": "p"}),
        json!({"svg": big}),
    );
    assert!(detail(&report, "svg_parses").contains("over the limit of 100"));
    let bomb = r#"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]><svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0 L1 1"/><text>&h;</text></svg>"#;
    let report = run(
        "image.generate.illustration.svg",
        &[],
        json!({"prompt": "p"}),
        json!({"svg": bomb}),
    );
    assert_fails(&report, &["svg_parses", "has_path", "max_paths"]);
}

#[test]
fn non_object_outputs_fail_every_check_without_panicking() {
    for row in weft_verify::rows() {
        let bindings: Vec<(&str, &str)> = weft_verify::placeholders(row)
            .into_iter()
            .map(|name| (name, binding_for(row, name)))
            .collect();
        let input = input_for(row);
        for output in [Value::Null, json!([1, 2]), json!("text"), json!(3)] {
            let report = run(row, &bindings, input.clone(), output);
            assert!(!report.passed, "{row}");
            // The first check is the output's shape (`valid_format` for weather).
            assert!(!report.checks[0].passed, "{row}: {report:?}");
            assert!(["output_shape", "valid_format"].contains(&report.checks[0].name.as_str()));
        }
    }
}

fn binding_for(row: &str, name: &str) -> &'static str {
    match (row, name) {
        (_, "lang") => "en",
        (r, "src") if r.starts_with("code.") => "python",
        (r, "tgt") if r.starts_with("code.") => "go",
        (_, "src") => "en",
        (_, "tgt") => "it",
        (_, "level") => "fluent",
        (_, "language") => "rust",
        (_, "format") => "json",
        (_, "op") => "mean",
        (_, "factor") => "2",
        (_, "taxonomy") => "coco-categories",
        (_, "model") => "siglip-base",
        _ => "anything",
    }
}

fn input_for(row: &str) -> Value {
    let png = b64(&gradient_png(2, 2));
    let data = if row.starts_with("compute.statistics") {
        json!([1, 2, 3])
    } else {
        json!([{"x": 1, "y": 2}])
    };
    json!({
        "prompt": "p", "width": 2, "height": 2, "image_b64": png, "audio_url": "https://a.com/x.mp3",
        "text": "hello", "task": "t", "signature": "fn f()", "behavior": "b", "code": "fn f() {}",
        "test_framework": "builtin", "location": "Turin", "query": "q", "url": "https://a.com",
        "fields": ["title"], "ticker": "ACME", "symbol": "BTC", "data": data,
        "chart_type": "bar", "expression": "1+1", "profile_url": "https://www.linkedin.com/in/a"
    })
}

/// Deterministic byte mutations (xorshift): flips, truncations, insertions.
fn mutations(original: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut state = 0x9E37_79B9_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as usize
    };
    (0..count)
        .map(|_| {
            let mut bytes = original.to_vec();
            match next() % 3 {
                0 => {
                    for _ in 0..1 + next() % 4 {
                        let at = next() % bytes.len();
                        bytes[at] ^= 1 << (next() % 8);
                    }
                }
                1 => bytes.truncate(next() % bytes.len()),
                _ => {
                    let at = next() % bytes.len();
                    bytes.insert(at, next() as u8);
                }
            }
            bytes
        })
        .collect()
}

#[test]
fn mutated_pngs_never_panic() {
    let original = gradient_rgba_png(12, 9);
    for bytes in mutations(&original, 300) {
        let report = run(
            "image.edit.background-remove",
            &[],
            json!({"image_b64": b64(&gradient_png(12, 9))}),
            json!({"image_b64": b64(&bytes), "mask_b64": b64(&bytes)}),
        );
        // Either it still decodes (a flipped bit in an ancillary chunk) or it fails cleanly.
        let valid = report.check("png_valid").unwrap();
        assert!(valid.passed || !valid.detail.is_empty());
    }
}

#[test]
fn mutated_mp3s_never_panic() {
    let original = mp3_silence(8);
    for bytes in mutations(&original, 300) {
        let report = run(
            "audio.generate-speech.{voice}.mp3",
            &[("voice", "v")],
            json!({"text": "t"}),
            json!({"audio_b64": b64(&bytes), "duration_ms": 192}),
        );
        assert!(report.check("mp3_valid").is_some());
    }
}

#[test]
fn mutated_svgs_never_panic() {
    let original =
        br#"<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0 C1 2 3 4 5 6 Z"/></svg>"#;
    for bytes in mutations(original, 300) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let report = run(
            "image.generate.illustration.svg",
            &[],
            json!({"prompt": "p"}),
            json!({"svg": text}),
        );
        assert!(report.check("svg_parses").is_some());
    }
}
