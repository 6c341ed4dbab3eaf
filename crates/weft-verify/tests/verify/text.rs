//! `text.*` rows: language detection in eleven languages, length and word ratios.

use serde_json::json;

use crate::support::*;

/// A sentence or two in each of the seed's eleven languages, long enough to detect.
pub const SAMPLES: [(&str, &str); 11] = [
    (
        "en",
        "The weather was lovely this morning, so we walked along the river and talked about our plans for the summer.",
    ),
    (
        "it",
        "Questa mattina il tempo era bellissimo, così abbiamo passeggiato lungo il fiume parlando dei nostri progetti per l'estate.",
    ),
    (
        "es",
        "Esta mañana hacía un tiempo precioso, así que paseamos junto al río y hablamos de nuestros planes para el verano.",
    ),
    (
        "de",
        "Heute Morgen war das Wetter herrlich, also sind wir am Fluss entlang spaziert und haben über unsere Pläne für den Sommer gesprochen.",
    ),
    (
        "fr",
        "Ce matin, il faisait un temps magnifique, alors nous avons marché le long de la rivière en parlant de nos projets pour l'été.",
    ),
    (
        "pt",
        "Esta manhã o tempo estava lindo, então caminhamos ao longo do rio e conversamos sobre os nossos planos para o verão.",
    ),
    (
        "ja",
        "今朝はとても良い天気だったので、私たちは川沿いを散歩しながら、夏の計画について話しました。",
    ),
    (
        "zh",
        "今天早上天气非常好，所以我们沿着河边散步，一起讨论了我们夏天的计划和安排。",
    ),
    (
        "ko",
        "오늘 아침 날씨가 정말 좋아서 우리는 강을 따라 산책하며 여름 계획에 대해 이야기했습니다.",
    ),
    (
        "ru",
        "Сегодня утром была прекрасная погода, поэтому мы гуляли вдоль реки и говорили о наших планах на лето.",
    ),
    (
        "ar",
        "كان الطقس جميلا هذا الصباح، لذلك مشينا على طول النهر وتحدثنا عن خططنا لفصل الصيف القادم.",
    ),
];

const TRANSLATE: &str = "text.translate.{src}.{tgt}.{level}";

#[test]
fn translation_into_each_language_is_detected() {
    let source = SAMPLES[0].1;
    for (code, text) in SAMPLES {
        let report = run(
            TRANSLATE,
            &[("src", "en"), ("tgt", code), ("level", "fluent")],
            json!({"text": source}),
            json!({"text": text}),
        );
        assert_passes(&report);
    }
}

#[test]
fn translation_into_the_wrong_language_fails() {
    let (_, english) = SAMPLES[0];
    for (code, text) in SAMPLES.iter().skip(1) {
        // An English "translation" is not in the target language.
        let report = run(
            TRANSLATE,
            &[("src", "en"), ("tgt", code), ("level", "literal")],
            json!({"text": text}),
            json!({"text": english}),
        );
        assert_fails(&report, &["language_detected"]);
    }
}

#[test]
fn translation_length_ratio_bounds_are_inclusive() {
    let bindings = [("src", "en"), ("tgt", "it"), ("level", "business")];
    let length = SAMPLES[1].1.chars().count() / 3 * 3;
    let italian: String = SAMPLES[1].1.chars().take(length).collect();
    // Output is exactly 3× the input: passes.
    let source: String = italian.chars().take(length / 3).collect();
    assert_eq!(source.chars().count() * 3, length);
    assert_passes(&run(
        TRANSLATE,
        &bindings,
        json!({"text": source}),
        json!({"text": italian}),
    ));
    // Input one character shorter: output is over 3×.
    let shorter: String = source.chars().skip(1).collect();
    assert_fails(
        &run(
            TRANSLATE,
            &bindings,
            json!({"text": shorter}),
            json!({"text": italian}),
        ),
        &["length_ratio"],
    );
    // Output under 0.3× of a long input.
    let long = italian.repeat(4);
    assert_fails(
        &run(
            TRANSLATE,
            &bindings,
            json!({"text": long}),
            json!({"text": italian}),
        ),
        &["length_ratio"],
    );
    let report = run(
        TRANSLATE,
        &bindings,
        json!({"text": "x"}),
        json!({"text": ""}),
    );
    assert_fails(
        &report,
        &["text_nonempty", "length_ratio", "language_detected"],
    );
}

fn words(count: usize) -> String {
    (0..count)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn summary_word_ratios() {
    let input = json!({"text": words(100)});
    let cases = [
        ("text.summarize.short", 20, true),
        ("text.summarize.short", 21, false),
        ("text.summarize.medium", 10, true),
        ("text.summarize.medium", 9, false),
        ("text.summarize.medium", 30, true),
        ("text.summarize.medium", 31, false),
        ("text.summarize.long", 25, true),
        ("text.summarize.long", 24, false),
        ("text.summarize.long", 60, true),
        ("text.summarize.long", 61, false),
    ];
    for (row, count, passes) in cases {
        let report = run(row, &[], input.clone(), json!({"summary": words(count)}));
        if passes {
            assert_passes(&report);
        } else {
            assert_fails(&report, &["summary_word_ratio"]);
        }
    }
    let report = run("text.summarize.short", &[], input, json!({"summary": " "}));
    assert_fails(&report, &["summary_nonempty"]);
}

#[test]
fn words_are_unicode_words() {
    // "l'été" and "don't" are one word each; punctuation is no word.
    let input = json!({"text": "l'été don't , ; stop — go ".repeat(10)});
    let report = run(
        "text.summarize.short",
        &[],
        input,
        json!({"summary": "l'été don't stop go"}),
    );
    assert!(detail(&report, "summary_word_ratio").starts_with("4 words for 40 input words"));
}

#[test]
fn rewrites() {
    let source = "Please send me the report by Friday, thanks.";
    let length = source.chars().count();
    let formal_ok = "Kindly forward the report to me by Friday. Thank you very much.";
    assert_passes(&run(
        "text.rewrite.formal",
        &[],
        json!({"text": source}),
        json!({"text": formal_ok}),
    ));
    let too_long = "x".repeat(length * 2 + 1);
    assert_fails(
        &run(
            "text.rewrite.formal",
            &[],
            json!({"text": source}),
            json!({"text": too_long}),
        ),
        &["length_ratio"],
    );
    let too_short = "x".repeat(length / 2 - 1);
    assert_fails(
        &run(
            "text.rewrite.formal",
            &[],
            json!({"text": source}),
            json!({"text": too_short}),
        ),
        &["length_ratio"],
    );
    assert_passes(&run(
        "text.rewrite.casual",
        &[],
        json!({"text": source}),
        json!({"text": "send it friday ok?"}),
    ));
    assert_fails(
        &run(
            "text.rewrite.casual",
            &[],
            json!({"text": source}),
            json!({"text": "\n"}),
        ),
        &["text_nonempty"],
    );
    assert_fails(
        &run(
            "text.rewrite.casual",
            &[],
            json!({"text": source}),
            json!({"content": "hi"}),
        ),
        &["output_shape", "text_nonempty"],
    );
}

#[test]
fn expand_by_a_factor() {
    let source = "0123456789"; // 10 characters
    let row = "text.expand.{factor}";
    // factor 2: at least 10 × 2 × 0.8 = 16 characters.
    assert_passes(&run(
        row,
        &[("factor", "2")],
        json!({"text": source}),
        json!({"text": "x".repeat(16)}),
    ));
    assert_fails(
        &run(
            row,
            &[("factor", "2")],
            json!({"text": source}),
            json!({"text": "x".repeat(15)}),
        ),
        &["length_ratio"],
    );
    assert_passes(&run(
        row,
        &[("factor", "1.5")],
        json!({"text": source}),
        json!({"text": "x".repeat(12)}),
    ));
    let error = try_run(
        &options(),
        row,
        &[("factor", "twice")],
        json!({"text": source}),
        json!({}),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_binding");
}

#[test]
fn language_detection_confidence_threshold_is_a_knob() {
    let options = weft_verify::VerifyOptions {
        min_language_confidence: 1.01,
        ..options()
    };
    let report = run_with(
        &options,
        TRANSLATE,
        &[("src", "en"), ("tgt", "it"), ("level", "fluent")],
        json!({"text": SAMPLES[0].1}),
        json!({"text": SAMPLES[1].1}),
    );
    assert_fails(&report, &["language_detected"]);
    assert!(detail(&report, "language_detected").contains("below 1.01"));
}
