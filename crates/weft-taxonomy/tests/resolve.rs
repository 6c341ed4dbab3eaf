//! Resolving ids: every row matched by sample ids (every closed value, open-set boundaries),
//! custom ids, and every invalid case with its code, segment and reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use weft_contract::CapabilityId;
use weft_taxonomy::placeholder::ValueSet;
use weft_taxonomy::{Bindings, InvalidReason, MAX_ID_LEN, Resolution, Row, resolve, rows};

fn bindings(pairs: &[(&str, &str)]) -> Bindings {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn standard(id: &str) -> (String, Bindings) {
    match resolve(id) {
        Resolution::Standard(s) => {
            assert_eq!(s.id, id);
            (s.row.pattern.to_owned(), s.bindings)
        }
        other => panic!("{id} should be standard, got {other:?}"),
    }
}

fn invalid(id: &str) -> InvalidReason {
    match resolve(id) {
        Resolution::Invalid(i) => {
            assert_eq!(i.id, id);
            i.reason
        }
        other => panic!("{id} should be invalid, got {other:?}"),
    }
}

/// Every combination of the closed sets of `row` (open sets take their example).
fn combinations(row: &Row) -> Vec<Bindings> {
    let mut all = vec![Bindings::new()];
    for p in row.placeholders {
        let values = p.set.values().unwrap_or_else(|| vec![p.set.example()]);
        all = all
            .into_iter()
            .flat_map(|b| {
                values.iter().map(move |v| {
                    let mut b = b.clone();
                    b.insert(p.name.to_owned(), (*v).to_owned());
                    b
                })
            })
            .collect();
    }
    if let Some((a, b)) = row.distinct {
        all.retain(|x| x[a] != x[b]);
    }
    all
}

#[test]
fn every_row_is_matched_by_every_combination_of_its_closed_values() {
    let mut total = 0;
    for row in rows() {
        for b in combinations(row) {
            let id = row.id_with(&b);
            assert_eq!(standard(&id), (row.pattern.to_owned(), b.clone()), "{id}");
            assert!(CapabilityId::parse(&id).is_ok(), "{id} is a weft id");
            total += 1;
        }
        assert_eq!(standard(&row.example_id()).0, row.pattern);
    }
    // 23 rows without placeholders; {lang} 11; audio and text translation 11×10 and
    // 11×10×5; {language} 4 rows × 11; code.translate 11×10; weather 3; statistics 5;
    // image taxonomies 3; six rows with open sets only, one example each.
    assert_eq!(total, 23 + 11 + 110 + 550 + 44 + 110 + 3 + 5 + 3 + 6);
}

#[test]
fn the_contract_with_the_verifiers_is_the_pattern_and_the_bindings() {
    assert_eq!(
        standard("audio.transcribe.en.text"),
        (
            "audio.transcribe.{lang}.text".to_owned(),
            bindings(&[("lang", "en")])
        )
    );
    assert_eq!(
        standard("text.translate.en.it.fluent"),
        (
            "text.translate.{src}.{tgt}.{level}".to_owned(),
            bindings(&[("src", "en"), ("tgt", "it"), ("level", "fluent")])
        )
    );
    assert_eq!(
        standard("code.execute.sandboxed"),
        ("code.execute.sandboxed".to_owned(), Bindings::new())
    );
    assert_eq!(
        standard("code.translate.python.rust"),
        (
            "code.translate.{src}.{tgt}".to_owned(),
            bindings(&[("src", "python"), ("tgt", "rust")])
        )
    );
}

#[test]
fn open_placeholders_follow_their_rules() {
    assert_eq!(
        standard("audio.generate-speech.alloy.mp3").1,
        bindings(&[("voice", "alloy")])
    );
    assert_eq!(
        standard("embed.text.text-embedding-3-large").1,
        bindings(&[("model", "text-embedding-3-large")])
    );
    assert_eq!(
        standard("embed.image.my-own-model-7").1,
        bindings(&[("model", "my-own-model-7")])
    );
    assert_eq!(
        standard("classify.text.news-topics").1,
        bindings(&[("taxonomy", "news-topics")])
    );
    // Factors span segments: `1.5` is one value.
    assert_eq!(
        standard("text.expand.1.5").1,
        bindings(&[("factor", "1.5")])
    );
    assert_eq!(
        standard("text.expand.100").1,
        bindings(&[("factor", "100")])
    );
    // Hosts span segments too.
    assert_eq!(
        standard("data.scrape.shop.example.co.uk.json"),
        (
            "data.scrape.{url}.json".to_owned(),
            bindings(&[("url", "shop.example.co.uk")])
        )
    );
    // Fixed rows win where a placeholder could also read the segment.
    assert_eq!(
        standard("classify.text.sentiment").0,
        "classify.text.sentiment"
    );
    assert_eq!(
        standard("classify.text.toxicity").0,
        "classify.text.toxicity"
    );
}

fn placeholder_value(id: &str) -> (usize, &'static str, &'static str, String) {
    match invalid(id) {
        InvalidReason::PlaceholderValue {
            segment,
            row,
            placeholder,
            value,
            rule,
        } => {
            assert!(!rule.is_empty());
            (segment, row, placeholder, value)
        }
        other => panic!("{id}: expected placeholder_value, got {other:?}"),
    }
}

#[test]
fn a_value_outside_its_set_names_the_placeholder_and_the_segment() {
    assert_eq!(
        placeholder_value("audio.transcribe.xx.text"),
        (2, "audio.transcribe.{lang}.text", "lang", "xx".to_owned())
    );
    assert_eq!(
        placeholder_value("text.translate.en.xx.fluent"),
        (
            3,
            "text.translate.{src}.{tgt}.{level}",
            "tgt",
            "xx".to_owned()
        )
    );
    assert_eq!(
        placeholder_value("text.translate.en.it.poetic"),
        (
            4,
            "text.translate.{src}.{tgt}.{level}",
            "level",
            "poetic".to_owned()
        )
    );
    assert_eq!(
        placeholder_value("code.review.cobol"),
        (2, "code.review.{language}", "language", "cobol".to_owned())
    );
    assert_eq!(
        placeholder_value("code.translate.python.en"),
        (3, "code.translate.{src}.{tgt}", "tgt", "en".to_owned())
    );
    // ISO codes are not programming languages and the other way round.
    assert_eq!(
        placeholder_value("audio.translate.python.en"),
        (2, "audio.translate.{src}.{tgt}", "src", "python".to_owned())
    );
    assert_eq!(
        placeholder_value("compute.statistics.mode"),
        (2, "compute.statistics.{op}", "op", "mode".to_owned())
    );
    assert_eq!(
        placeholder_value("data.lookup.weather.xml"),
        (
            3,
            "data.lookup.weather.{format}",
            "format",
            "xml".to_owned()
        )
    );
    assert_eq!(
        placeholder_value("classify.image.my-labels"),
        (
            2,
            "classify.image.{taxonomy}",
            "taxonomy",
            "my-labels".to_owned()
        )
    );
    // Factor boundaries: 1 is not an expansion, 100 is the largest, one spelling each.
    for (id, value) in [
        ("text.expand.1", "1"),
        ("text.expand.100.5", "100.5"),
        ("text.expand.101", "101"),
        ("text.expand.2.0", "2.0"),
        ("text.expand.02", "02"),
        ("text.expand.1.2345", "1.2345"),
        ("text.expand.two", "two"),
    ] {
        assert_eq!(
            placeholder_value(id),
            (2, "text.expand.{factor}", "factor", value.to_owned()),
            "{id}"
        );
    }
    for (id, value) in [
        ("data.scrape.localhost.json", "localhost"),
        ("data.scrape.10.0.0.1.json", "10.0.0.1"),
        ("data.scrape.printer.local.json", "printer.local"),
    ] {
        assert_eq!(
            placeholder_value(id),
            (2, "data.scrape.{url}.json", "url", value.to_owned()),
            "{id}"
        );
    }
    let long_slug = "a".repeat(65);
    let (_, _, placeholder, _) = placeholder_value(&format!("embed.text.{long_slug}"));
    assert_eq!(placeholder, "model");
    assert!(matches!(
        resolve(&format!("embed.text.{}", "a".repeat(64))),
        Resolution::Standard(_)
    ));
    let message = invalid("audio.transcribe.xx.text").to_string();
    assert!(
        message.contains("en, it, es, de, fr, pt, ja, zh, ko, ru, ar"),
        "{message}"
    );
    assert!(message.contains("must use custom."), "{message}");
}

#[test]
fn source_and_target_must_differ() {
    for id in [
        "audio.translate.en.en",
        "text.translate.it.it.fluent",
        "code.translate.rust.rust",
    ] {
        let reason = invalid(id);
        assert_eq!(reason.code(), "same_value", "{id}");
        assert!(!reason.is_malformed());
        assert!(reason.to_string().contains("must differ"), "{reason}");
    }
}

#[test]
fn custom_ids() {
    for (id, provider, capability) in [
        (
            "custom.acmecorp.handwriting-ocr",
            "acmecorp",
            "handwriting-ocr",
        ),
        ("custom.acme.chart.radar", "acme", "chart.radar"),
        ("custom.a1.x_y", "a1", "x_y"),
    ] {
        match resolve(id) {
            Resolution::Custom(c) => {
                assert_eq!(
                    (c.provider.as_str(), c.capability.as_str()),
                    (provider, capability)
                );
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    assert_eq!(invalid("custom").code(), "custom_incomplete");
    assert_eq!(invalid("custom.acme").code(), "custom_incomplete");
    assert_eq!(invalid("custom.acme_corp.x").code(), "bad_provider");
    assert_eq!(invalid("custom.-acme.x").code(), "bad_segment_start");
}

#[test]
fn every_invalid_case_has_its_code_and_segment() {
    let cases: &[(&str, &str, Option<usize>, bool)] = &[
        ("", "empty", None, true),
        ("image.generate..png", "empty_segment", Some(2), true),
        (".image", "empty_segment", Some(0), true),
        ("image.", "empty_segment", Some(1), true),
        (
            "Image.generate.photorealistic.png",
            "uppercase",
            Some(0),
            true,
        ),
        (
            "image.generate.Photorealistic.png",
            "uppercase",
            Some(2),
            true,
        ),
        ("image.generate photo", "bad_character", Some(1), true),
        ("image.generate:photo", "bad_character", Some(1), true),
        ("image.générer", "bad_character", Some(1), true),
        ("image.-generate", "bad_segment_start", Some(1), true),
        ("image", "missing_action", Some(0), true),
        ("echo", "unknown_domain", Some(0), false),
        ("video.generate.mp4", "unknown_domain", Some(0), false),
        ("exec.run.shell", "empty_domain", Some(0), false),
        ("image.resize.png", "unknown_action", Some(1), false),
        ("image.generate.cartoon.png", "no_matching_row", None, false),
        ("image.upscale.3x", "no_matching_row", None, false),
        ("text.summarize.short.extra", "no_matching_row", None, false),
        ("audio.transcribe.en", "no_matching_row", None, false),
        (
            "audio.transcribe.xx.text",
            "placeholder_value",
            Some(2),
            false,
        ),
    ];
    for (id, code, segment, malformed) in cases {
        let reason = invalid(id);
        assert_eq!(reason.code(), *code, "{id}: {reason}");
        assert_eq!(reason.segment(), *segment, "{id}");
        assert_eq!(reason.is_malformed(), *malformed, "{id}");
        assert!(!reason.to_string().is_empty());
    }
    let no_row = invalid("image.generate.cartoon.png").to_string();
    assert!(
        no_row.contains("image.generate.photorealistic.png")
            && no_row.contains("custom.<provider>.<capability>"),
        "{no_row}"
    );
    let action = invalid("image.resize.png").to_string();
    assert!(
        action.contains("(its actions: generate, edit, upscale)"),
        "{action}"
    );
    match invalid("data.fetch.json") {
        InvalidReason::UnknownAction { actions, .. } => {
            assert_eq!(actions, ["lookup", "extract", "scrape"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_length_limit_is_weft_s_and_inclusive() {
    let prefix = "custom.acme.";
    let at = format!("{prefix}{}", "a".repeat(MAX_ID_LEN - prefix.len()));
    assert_eq!(at.len(), 128);
    assert!(matches!(resolve(&at), Resolution::Custom(_)));
    let over = format!("{at}a");
    assert_eq!(invalid(&over), InvalidReason::TooLong { len: 129 });
    // A long host still fits a standard id up to the limit.
    let host = format!("{}.com", "a".repeat(63));
    let id = format!("data.scrape.{host}.json");
    assert!(id.len() <= MAX_ID_LEN);
    assert_eq!(standard(&id).1, bindings(&[("url", &host)]));
}

#[test]
fn open_sets_reject_what_closed_sets_would_accept_only_by_rule() {
    // `{voice}` is open, but still a slug.
    assert_eq!(
        placeholder_value("audio.generate-speech.a--b.mp3").2,
        "voice"
    );
    assert!(ValueSet::Voice.check("nova").is_ok());
    // The reserved text taxonomies cannot be bound through the placeholder row.
    let row = weft_taxonomy::row("classify.text.{taxonomy}").unwrap();
    assert_eq!(
        row.id_with(&bindings(&[("taxonomy", "sentiment")])),
        "classify.text.sentiment"
    );
    assert_eq!(
        standard("classify.text.sentiment").0,
        "classify.text.sentiment"
    );
}
