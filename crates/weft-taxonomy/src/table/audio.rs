//! Audio rows.

use super::schema::{array, base64, closed, described, integer, open, opt, req, string};
use super::{Placeholder, Row};
use crate::placeholder::ValueSet;

fn audio_url() -> serde_json::Value {
    described(string(), "URL of the audio to process.")
}

/// `audio.*`, in the seed's order.
pub(super) static ROWS: [Row; 4] = [
    Row {
        pattern: "audio.transcribe.json-with-timestamps",
        title: "Transcribe speech to timestamped JSON segments",
        seed_input: "{ audio_url: string, language_hint?: string }",
        seed_output: "{ language: string, segments: [{ start_ms: int, end_ms: int, text: string }] }",
        verification: "valid JSON; `language` is ISO 639-1 lowercase non-empty string \
                       (auto-detected unless `language_hint` forces it); segments non-empty; \
                       timestamps monotonic (`start_ms_n ≥ end_ms_{n-1}` OR \
                       `start_ms_n ≥ start_ms_{n-1}`)",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                req("audio_url", audio_url()),
                opt(
                    "language_hint",
                    described(string(), "Forces the transcription language."),
                ),
            ])
        },
        output: |_| {
            open(vec![
                req("language", string()),
                req(
                    "segments",
                    array(open(vec![
                        req("start_ms", integer()),
                        req("end_ms", integer()),
                        req("text", string()),
                    ])),
                ),
            ])
        },
    },
    Row {
        pattern: "audio.transcribe.{lang}.text",
        title: "Transcribe {lang} speech to text",
        seed_input: "{ audio_url: string }",
        seed_output: "{ text: string }",
        verification: "non-empty; language detected = `lang`",
        notes: "",
        placeholders: &[Placeholder {
            name: "lang",
            set: ValueSet::Iso639_1,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("audio_url", audio_url())]),
        output: |_| open(vec![req("text", string())]),
    },
    Row {
        pattern: "audio.generate-speech.{voice}.mp3",
        title: "Generate speech as MP3 with the {voice} voice",
        seed_input: "{ text: string }",
        seed_output: "{ audio_b64: string, duration_ms: int }",
        verification: "valid MP3; duration > 0",
        notes: "",
        placeholders: &[Placeholder {
            name: "voice",
            set: ValueSet::Voice,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("text", string())]),
        output: |_| {
            open(vec![
                req("audio_b64", base64(Some("audio/mpeg"))),
                req("duration_ms", integer()),
            ])
        },
    },
    Row {
        pattern: "audio.translate.{src}.{tgt}",
        title: "Translate {src} speech to {tgt} text",
        seed_input: "{ audio_url: string }",
        seed_output: "{ text: string }",
        verification: "non-empty; language detected = `tgt`",
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
        ],
        distinct: Some(("src", "tgt")),
        input: |_| closed(vec![req("audio_url", audio_url())]),
        output: |_| open(vec![req("text", string())]),
    },
];
