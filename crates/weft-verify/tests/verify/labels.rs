//! `embed.*`, `classify.*` and `research.*` rows.

use serde_json::json;

use crate::support::*;

#[test]
fn embeddings_match_their_declared_and_known_dimensions() {
    for (row, input) in [
        ("embed.text.{model}", json!({"text": "hello"})),
        (
            "embed.image.{model}",
            json!({"image_b64": b64(&gradient_png(2, 2))}),
        ),
    ] {
        for (model, dim) in [
            ("text-embedding-3-small", 1536),
            ("text-embedding-3-large", 3072),
            ("clip-vit-l-14", 768),
            ("siglip-base", 768),
        ] {
            let vector = vec![0.01; dim];
            assert_passes(&run(
                row,
                &[("model", model)],
                input.clone(),
                json!({"vector": vector, "dim": dim}),
            ));
            let short = vec![0.01; dim - 1];
            assert_fails(
                &run(
                    row,
                    &[("model", model)],
                    input.clone(),
                    json!({"vector": short, "dim": dim}),
                ),
                &["vector_length_matches_dim"],
            );
            let halved = vec![0.01; dim / 2];
            assert_fails(
                &run(
                    row,
                    &[("model", model)],
                    input.clone(),
                    json!({"vector": halved, "dim": dim / 2}),
                ),
                &["dim_matches_model"],
            );
        }
        // An unknown model: the model check is reported as not applicable, not silently dropped.
        let report = run(
            row,
            &[("model", "acme-embed-7")],
            input.clone(),
            json!({"vector": [0.1, 0.2], "dim": 2}),
        );
        assert_passes(&report);
        assert!(detail(&report, "dim_matches_model").starts_with("not applicable: unknown model"));
        assert_fails(
            &run(
                row,
                &[("model", "acme-embed-7")],
                input.clone(),
                json!({"vector": [0.1, "x"], "dim": 2}),
            ),
            &["output_shape", "vector_length_matches_dim"],
        );
        assert_fails(
            &run(
                row,
                &[("model", "acme-embed-7")],
                input,
                json!({"vector": [], "dim": 0}),
            ),
            &["vector_length_matches_dim"],
        );
    }
}

fn labels(pairs: &[(&str, f64)]) -> serde_json::Value {
    json!({"labels": pairs.iter().map(|(label, confidence)| json!({"label": label, "confidence": confidence})).collect::<Vec<_>>()})
}

#[test]
fn image_classification_labels_come_from_the_taxonomy() {
    let row = "classify.image.{taxonomy}";
    let input = json!({"image_b64": b64(&gradient_png(2, 2))});
    for (taxonomy, good, bad) in [
        (
            "imagenet-1k",
            ["great white shark", "Granny_Smith"],
            "shark",
        ),
        (
            "coco-categories",
            ["person", "Traffic Light"],
            "traffic_cone",
        ),
        ("safe-content", ["safe", "violence"], "nsfw"),
    ] {
        let bindings = [("taxonomy", taxonomy)];
        assert_passes(&run(
            row,
            &bindings,
            input.clone(),
            labels(&[(good[0], 0.7), (good[1], 0.3)]),
        ));
        let report = run(
            row,
            &bindings,
            input.clone(),
            labels(&[(good[0], 0.7), (bad, 0.3)]),
        );
        assert_fails(&report, &["labels_in_taxonomy"]);
        assert!(detail(&report, "labels_in_taxonomy").contains(bad));
    }
    let bindings = [("taxonomy", "coco-categories")];
    // ±0.01 around 1.0, inclusive.
    assert_passes(&run(
        row,
        &bindings,
        input.clone(),
        labels(&[("cat", 0.5), ("dog", 0.495)]),
    ));
    assert_fails(
        &run(
            row,
            &bindings,
            input.clone(),
            labels(&[("cat", 0.5), ("dog", 0.48)]),
        ),
        &["confidence_sum"],
    );
    for edge in [0.49, 0.51] {
        assert_passes(&run(
            row,
            &bindings,
            input.clone(),
            labels(&[("cat", 0.5), ("dog", edge)]),
        ));
    }
    assert_fails(
        &run(
            row,
            &bindings,
            input.clone(),
            labels(&[("cat", 0.5), ("dog", 0.5101)]),
        ),
        &["confidence_sum"],
    );
    assert_fails(
        &run(
            row,
            &bindings,
            input.clone(),
            labels(&[("cat", 1.5), ("dog", -0.5)]),
        ),
        &["confidences_in_range"],
    );
    assert_fails(
        &run(row, &bindings, input.clone(), json!({"labels": []})),
        &[
            "labels_well_formed",
            "confidences_in_range",
            "confidence_sum",
            "labels_in_taxonomy",
        ],
    );
    assert_fails(
        &run(
            row,
            &bindings,
            input.clone(),
            json!({"labels": [{"label": "cat"}]}),
        ),
        &[
            "labels_well_formed",
            "confidences_in_range",
            "confidence_sum",
            "labels_in_taxonomy",
        ],
    );
    let error = try_run(
        &options(),
        row,
        &[("taxonomy", "openimages")],
        input,
        labels(&[]),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_binding");
}

#[test]
fn label_files_have_the_documented_sizes() {
    let count = |file: &str| {
        file.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .count()
    };
    assert_eq!(count(include_str!("../../data/imagenet-1k.txt")), 1000);
    assert_eq!(count(include_str!("../../data/coco-categories.txt")), 80);
    assert_eq!(count(include_str!("../../data/safe-content.txt")), 10);
}

#[test]
fn text_classification() {
    let row = "classify.text.{taxonomy}";
    let bindings = [("taxonomy", "topics")];
    let input = json!({"text": "The match ended 2-1."});
    assert_passes(&run(
        row,
        &bindings,
        input.clone(),
        labels(&[("sport", 0.9), ("politics", 0.1)]),
    ));
    assert_fails(
        &run(row, &bindings, input.clone(), labels(&[("sport", 0.9)])),
        &["confidence_sum"],
    );
    assert_fails(
        &run(
            row,
            &bindings,
            input,
            labels(&[("sport", 1.2), ("x", -0.2)]),
        ),
        &["confidences_in_range"],
    );
}

#[test]
fn sentiment_and_toxicity() {
    let input = json!({"text": "I love it"});
    let sentiment = "classify.text.sentiment";
    assert_passes(&run(
        sentiment,
        &[],
        input.clone(),
        json!({"sentiment": "positive", "confidence": 0.93}),
    ));
    assert_fails(
        &run(
            sentiment,
            &[],
            input.clone(),
            json!({"sentiment": "Positive", "confidence": 0.93}),
        ),
        &["sentiment_valid"],
    );
    assert_fails(
        &run(
            sentiment,
            &[],
            input.clone(),
            json!({"sentiment": "neutral", "confidence": 1.01}),
        ),
        &["confidence_in_range"],
    );
    let toxicity = "classify.text.toxicity";
    assert_passes(&run(
        toxicity,
        &[],
        input.clone(),
        json!({"toxic": false, "confidence": 0.0}),
    ));
    assert_fails(
        &run(
            toxicity,
            &[],
            input.clone(),
            json!({"toxic": false, "confidence": -0.1}),
        ),
        &["confidence_in_range"],
    );
    assert_fails(
        &run(
            toxicity,
            &[],
            input,
            json!({"toxic": "no", "confidence": 1}),
        ),
        &["output_shape"],
    );
}

#[test]
fn research_profiles_carry_provenance() {
    let row = "research.linkedin.profile.enrich";
    let input = json!({"profile_url": "https://www.linkedin.com/in/ada"});
    let profile = |source: &str| {
        json!({"profile": {"url": "https://www.linkedin.com/in/ada", "name": "Ada Lovelace", "headline": "Analyst",
            "location": "London", "current_position": "Analyst", "company": "Engines", "summary": "", "skills": [], "source": source}})
    };
    assert_passes(&run(row, &[], input.clone(), profile("proxycurl")));
    assert_passes(&run(row, &[], input.clone(), profile("Apify")));
    let report = run(row, &[], input.clone(), profile("scraped-myself"));
    assert_fails(&report, &["source_known"]);
    let options = weft_verify::VerifyOptions {
        extra_research_sources: vec!["scraped-myself".to_owned()],
        ..options()
    };
    assert_passes(&run_with(
        &options,
        row,
        &[],
        input.clone(),
        profile("scraped-myself"),
    ));
    let mut nameless = profile("apify");
    nameless["profile"]["name"] = json!("");
    nameless["profile"]["url"] = json!(null);
    assert_fails(
        &run(row, &[], input.clone(), nameless),
        &["profile_url_nonempty", "profile_name_nonempty"],
    );
    assert_fails(
        &run(row, &[], input, json!({"profile": "Ada"})),
        &[
            "output_shape",
            "profile_is_object",
            "profile_url_nonempty",
            "profile_name_nonempty",
            "source_known",
        ],
    );
}
