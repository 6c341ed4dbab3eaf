//! `audio.*` rows: transcription (with timestamps, or plain text in a language), speech
//! generation (MP3) and speech translation.

use serde_json::Value;

use crate::ctx::{Ctx, as_integer};
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks, Outcome, after};
use crate::values::{HUMAN_LANGUAGES, one_of};
use crate::{formats, language, mp3, png_image};

/// `audio.transcribe.json-with-timestamps`: `language` is lowercase ISO 639-1 (and equals
/// `language_hint` when one is given); segments non-empty; each segment `start_ms ≤ end_ms`;
/// timestamps monotonic per the seed's rule.
pub(crate) fn transcribe_with_timestamps(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let hint = ctx.input_opt_str("language_hint")?;
    ctx.input_str("audio_url")?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/language", Kind::Str, true),
                ("/segments", Kind::Arr, true),
            ],
        ),
    );
    let language = fields::string(output, "/language");
    checks.add(
        "language_iso_639_1",
        language
            .clone()
            .and_then(|code| formats::iso_639_1(code).map(|()| format!("`{code}` is ISO 639-1"))),
    );
    checks.add(
        "language_matches_hint",
        match hint {
            None => Ok("no language_hint given: language is auto-detected".to_owned()),
            Some(hint) => language.and_then(|code| {
                if code == hint {
                    Ok(format!("`{code}` as language_hint forces"))
                } else {
                    Err(format!("`{code}`, but language_hint forces `{hint}`"))
                }
            }),
        },
    );
    let segments = segments(output);
    checks.add(
        "segments_nonempty",
        fields::array(output, "/segments").and_then(|items| {
            if items.is_empty() {
                Err("/segments is empty".to_owned())
            } else {
                Ok(format!("{} segments", items.len()))
            }
        }),
    );
    checks.add(
        "segments_well_formed",
        segments
            .as_ref()
            .map(|list| format!("{} segments with start_ms, end_ms, text", list.len()))
            .map_err(Clone::clone),
    );
    checks.add(
        "segments_start_before_end",
        after(&segments, "segments_well_formed", |list| {
            match list.iter().position(|segment| segment.start > segment.end) {
                Some(index) => Err(format!(
                    "/segments/{index}: start_ms {} > end_ms {}",
                    list[index].start, list[index].end
                )),
                None => Ok("every start_ms ≤ end_ms".to_owned()),
            }
        }),
    );
    checks.add(
        "timestamps_monotonic",
        after(&segments, "segments_well_formed", |list| monotonic(list)),
    );
    Ok(checks.finish())
}

/// One transcript segment's timestamps.
struct Segment {
    start: i64,
    end: i64,
}

/// Every segment is an object with integer `start_ms` ≥ 0, integer `end_ms` and string `text`.
fn segments(output: &Value) -> Result<Vec<Segment>, String> {
    let items = fields::array(output, "/segments")?;
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let at = |key: &str| format!("/segments/{index}/{key}");
            let start = item.get("start_ms").and_then(as_integer);
            let end = item.get("end_ms").and_then(as_integer);
            let text = item.get("text").and_then(Value::as_str);
            match (start, end, text) {
                (Some(start), Some(end), Some(_)) if start >= 0 => Ok(Segment { start, end }),
                (Some(_), Some(_), Some(_)) => Err(format!("{} is negative", at("start_ms"))),
                (None, _, _) => Err(format!("{} is not an integer", at("start_ms"))),
                (_, None, _) => Err(format!("{} is not an integer", at("end_ms"))),
                (_, _, None) => Err(format!("{} is not a string", at("text"))),
            }
        })
        .collect()
}

/// The seed's rule: for n ≥ 1, `start_n ≥ end_{n-1}` OR `start_n ≥ start_{n-1}`.
fn monotonic(list: &[Segment]) -> Outcome {
    for (index, pair) in list.windows(2).enumerate() {
        let (previous, current) = (&pair[0], &pair[1]);
        if !(current.start >= previous.end || current.start >= previous.start) {
            return Err(format!(
                "/segments/{}: start_ms {} is before both start_ms {} and end_ms {} of the previous segment",
                index + 1,
                current.start,
                previous.start,
                previous.end
            ));
        }
    }
    Ok("each start_ms ≥ the previous segment's end_ms or start_ms".to_owned())
}

/// `audio.transcribe.{lang}.text`: non-empty; language detected = `lang`.
pub(crate) fn transcribe_text(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let lang = one_of(ctx, "lang", &HUMAN_LANGUAGES)?;
    ctx.input_str("audio_url")?;
    Ok(text_in_language(ctx, lang))
}

/// `audio.translate.{src}.{tgt}`: non-empty; language detected = `tgt`.
pub(crate) fn translate(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    one_of(ctx, "src", &HUMAN_LANGUAGES)?;
    let target = one_of(ctx, "tgt", &HUMAN_LANGUAGES)?;
    ctx.input_str("audio_url")?;
    Ok(text_in_language(ctx, target))
}

fn text_in_language(ctx: &Ctx<'_>, lang: &str) -> Vec<Check> {
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/text", Kind::Str, true)]),
    );
    checks.add("text_nonempty", fields::nonempty_text(ctx.output, "/text"));
    checks.add(
        "language_detected",
        fields::string(ctx.output, "/text")
            .and_then(|text| language::detected_is(text, lang, ctx.options)),
    );
    checks.finish()
}

/// `audio.generate-speech.{voice}.mp3`: valid MP3 (every frame decodes); decoded duration > 0;
/// declared `duration_ms` > 0 and within the tolerance of the decoded duration.
pub(crate) fn generate_speech(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let voice = ctx.binding("voice")?;
    if voice.is_empty() {
        return Err(ctx.invalid_binding("voice", "must not be empty"));
    }
    ctx.input_str("text")?;
    let output = ctx.output;
    let options = ctx.options;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/audio_b64", Kind::Str, true),
                ("/duration_ms", Kind::Int, true),
            ],
        ),
    );
    let audio = fields::string(output, "/audio_b64").and_then(|text| {
        let bytes = png_image::decode_base64(text, options.max_base64_bytes)
            .map_err(|error| format!("/audio_b64: {error}"))?;
        mp3::decode(bytes, options.max_audio_bytes)
    });
    checks.add(
        "mp3_valid",
        audio
            .as_ref()
            .map(|audio| {
                format!(
                    "{} MP3 frames at {} Hz decoded",
                    audio.packets, audio.sample_rate
                )
            })
            .map_err(Clone::clone),
    );
    checks.add(
        "duration_positive",
        after(&audio, "mp3_valid", |audio| {
            if audio.duration_ms > 0.0 {
                Ok(format!("decoded duration {:.1} ms", audio.duration_ms))
            } else {
                Err("decoded duration is 0 ms".to_owned())
            }
        }),
    );
    checks.add(
        "duration_matches_declared",
        after(&audio, "mp3_valid", |audio| {
            let declared = fields::integer(output, "/duration_ms")?;
            if declared <= 0 {
                return Err(format!("declared duration_ms {declared} is not positive"));
            }
            let tolerance = options.mp3_duration_tolerance_ms as f64;
            let difference = (declared as f64 - audio.duration_ms).abs();
            if difference <= tolerance {
                Ok(format!(
                    "declared {declared} ms, decoded {:.1} ms (within ±{tolerance} ms)",
                    audio.duration_ms
                ))
            } else {
                Err(format!(
                    "declared {declared} ms, decoded {:.1} ms: off by {difference:.1} ms, over ±{tolerance} ms",
                    audio.duration_ms
                ))
            }
        }),
    );
    Ok(checks.finish())
}
