//! `audio.*` rows: transcripts with timestamps, language detection, MP3 decoding.

use serde_json::json;

use crate::support::*;

const TIMESTAMPS: &str = "audio.transcribe.json-with-timestamps";

fn transcript(language: &str, segments: serde_json::Value) -> serde_json::Value {
    json!({"language": language, "segments": segments})
}

#[test]
fn timestamped_transcript_passes() {
    let report = run(
        TIMESTAMPS,
        &[],
        json!({"audio_url": "https://example.com/a.mp3"}),
        transcript(
            "it",
            json!([
                {"start_ms": 0, "end_ms": 1200, "text": "Buongiorno"},
                {"start_ms": 1100, "end_ms": 2000, "text": "a tutti"},
                {"start_ms": 2000, "end_ms": 2000, "text": ""}
            ]),
        ),
    );
    assert_passes(&report);
}

#[test]
fn timestamped_transcript_fails_each_check() {
    let input = json!({"audio_url": "https://example.com/a.mp3"});
    for code in ["IT", "italian", "cmn", "", "qq"] {
        let report = run(
            TIMESTAMPS,
            &[],
            input.clone(),
            transcript(code, json!([{"start_ms": 0, "end_ms": 1, "text": "x"}])),
        );
        assert_fails(&report, &["language_iso_639_1"]);
    }
    let report = run(TIMESTAMPS, &[], input.clone(), transcript("en", json!([])));
    assert_fails(&report, &["segments_nonempty"]);
    // The seed's OR rule: a start before both the previous start and end fails.
    let report = run(
        TIMESTAMPS,
        &[],
        input.clone(),
        transcript(
            "en",
            json!([
                {"start_ms": 500, "end_ms": 900, "text": "a"},
                {"start_ms": 400, "end_ms": 950, "text": "b"}
            ]),
        ),
    );
    assert_fails(&report, &["timestamps_monotonic"]);
    assert!(detail(&report, "timestamps_monotonic").contains("/segments/1"));
    let report = run(
        TIMESTAMPS,
        &[],
        input.clone(),
        transcript("en", json!([{"start_ms": 900, "end_ms": 100, "text": "a"}])),
    );
    assert_fails(&report, &["segments_start_before_end"]);
    let report = run(
        TIMESTAMPS,
        &[],
        input.clone(),
        transcript("en", json!([{"start_ms": "0", "end_ms": 100, "text": "a"}])),
    );
    assert_fails(
        &report,
        &[
            "segments_well_formed",
            "segments_start_before_end",
            "timestamps_monotonic",
        ],
    );
    let report = run(
        TIMESTAMPS,
        &[],
        json!({"audio_url": "https://example.com/a.mp3", "language_hint": "fr"}),
        transcript("en", json!([{"start_ms": 0, "end_ms": 100, "text": "a"}])),
    );
    assert_fails(&report, &["language_matches_hint"]);
    let report = run(TIMESTAMPS, &[], input, json!(["not", "an", "object"]));
    assert!(!report.passed);
    assert!(
        report
            .checks
            .iter()
            .all(|check| !check.passed || check.name == "language_matches_hint")
    );
}

const ITALIAN: &str =
    "Il gatto dorme tranquillo sul divano mentre fuori piove e la città si prepara alla sera.";
const ENGLISH: &str =
    "The quick brown fox jumps over the lazy dog while the children watch from the window.";

#[test]
fn transcribe_text_detects_the_language() {
    let row = "audio.transcribe.{lang}.text";
    let input = json!({"audio_url": "https://example.com/a.mp3"});
    assert_passes(&run(
        row,
        &[("lang", "it")],
        input.clone(),
        json!({"text": ITALIAN}),
    ));
    let report = run(
        row,
        &[("lang", "it")],
        input.clone(),
        json!({"text": ENGLISH}),
    );
    assert_fails(&report, &["language_detected"]);
    assert!(detail(&report, "language_detected").contains("detected `en`"));
    let report = run(row, &[("lang", "it")], input.clone(), json!({"text": "  "}));
    assert_fails(&report, &["text_nonempty", "language_detected"]);
    // Too short to detect is a failure, not a pass.
    let report = run(row, &[("lang", "it")], input, json!({"text": "Ciao"}));
    assert_fails(&report, &["language_detected"]);
    assert!(detail(&report, "language_detected").contains("too short"));
}

#[test]
fn audio_translate_detects_the_target_language() {
    let row = "audio.translate.{src}.{tgt}";
    let bindings = [("src", "en"), ("tgt", "it")];
    let input = json!({"audio_url": "https://example.com/a.mp3"});
    assert_passes(&run(
        row,
        &bindings,
        input.clone(),
        json!({"text": ITALIAN}),
    ));
    assert_fails(
        &run(row, &bindings, input, json!({"text": ENGLISH})),
        &["language_detected"],
    );
}

const SPEECH: &str = "audio.generate-speech.{voice}.mp3";

#[test]
fn generated_speech_decodes_and_its_duration_is_measured() {
    // 50 frames × 24 ms = 1200 ms.
    let audio = b64(&mp3_silence(50));
    let input = json!({"text": "hello"});
    let report = run(
        SPEECH,
        &[("voice", "alloy")],
        input.clone(),
        json!({"audio_b64": audio, "duration_ms": 1200}),
    );
    assert_passes(&report);
    assert!(
        detail(&report, "duration_positive").contains("1200.0 ms"),
        "{report:?}"
    );
    // Within the ±100 ms tolerance, and just outside it.
    assert_passes(&run(
        SPEECH,
        &[("voice", "alloy")],
        input.clone(),
        json!({"audio_b64": audio, "duration_ms": 1300}),
    ));
    let report = run(
        SPEECH,
        &[("voice", "alloy")],
        input.clone(),
        json!({"audio_b64": audio, "duration_ms": 1301}),
    );
    assert_fails(&report, &["duration_matches_declared"]);
    let report = run(
        SPEECH,
        &[("voice", "alloy")],
        input.clone(),
        json!({"audio_b64": audio, "duration_ms": 0}),
    );
    assert_fails(&report, &["duration_matches_declared"]);
}

#[test]
fn speech_that_is_not_mp3_fails_every_audio_check() {
    let input = json!({"text": "hello"});
    for bytes in [
        b"RIFF....WAVEfmt ".to_vec(),
        vec![0u8; 2000],
        gradient_png(4, 4),
    ] {
        let report = run(
            SPEECH,
            &[("voice", "alloy")],
            input.clone(),
            json!({"audio_b64": b64(&bytes), "duration_ms": 1000}),
        );
        assert_fails(
            &report,
            &[
                "mp3_valid",
                "duration_positive",
                "duration_matches_declared",
            ],
        );
    }
    let report = run(
        SPEECH,
        &[("voice", "alloy")],
        input,
        json!({"audio_b64": "%%%", "duration_ms": 1000}),
    );
    assert!(detail(&report, "mp3_valid").contains("base64"));
}

#[test]
fn oversized_audio_is_refused_unread() {
    let options = weft_verify::VerifyOptions {
        max_audio_bytes: 1000,
        ..options()
    };
    let report = run_with(
        &options,
        SPEECH,
        &[("voice", "alloy")],
        json!({"text": "hello"}),
        json!({"audio_b64": b64(&mp3_silence(10)), "duration_ms": 240}),
    );
    assert_fails(
        &report,
        &[
            "mp3_valid",
            "duration_positive",
            "duration_matches_declared",
        ],
    );
    assert!(detail(&report, "mp3_valid").contains("over the limit of 1000"));
}
