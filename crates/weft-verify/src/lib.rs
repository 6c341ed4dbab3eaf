//! Verification functions for every row of weft's standard capability taxonomy (issue 8,
//! seed 004): given a row, its bound placeholders, a call's input and the output a provider
//! returned, decide whether the output is acceptable — with every check reported.
//!
//! [`verify`] is the entry point for a row; [`verify_capability`] for a capability id (it
//! asks `weft-taxonomy` which row the id instantiates, and says so when there is none).
//! A row is named by its pattern exactly as the taxonomy table writes it
//! (`"text.translate.{src}.{tgt}.{level}"`), placeholders are bound by name without braces
//! (`{"src": "en", "tgt": "it", "level": "fluent"}`). The result is a
//! [`VerificationReport`]: `{"passed": bool, "checks": [{"name", "passed", "detail"}]}` with
//! every check of the row, including those that could not run because an earlier one failed.
//!
//! Checks use the field's libraries: `png` decoding (with a difference hash over its pixels),
//! `roxmltree`/`svgtypes` for SVG, `symphonia` for MP3, `whatlang` for language detection,
//! tree-sitter grammars for the eleven programming languages (feature `code-parsers`, on by
//! default), `iso_currency`, `chrono`, `url`, `geojson` and `exmex`. Every limit and tolerance
//! is in [`VerifyOptions`]; `docs/verification.md` lists each row's checks.
//!
//! The crate is pure: no I/O, no HTTP, no clock except [`VerifyOptions::now`].

mod audio;
mod capability;
mod chart;
mod classify;
mod code;
mod compute;
mod ctx;
mod data;
mod embed;
mod error;
mod fields;
mod formats;
mod image_rows;
mod language;
mod mp3;
mod png_image;
mod report;
mod research;
mod sandbox;
mod svg;
mod text;
mod values;

use std::collections::BTreeMap;

use serde_json::Value;

pub use capability::{CapabilityReport, NO_VERIFIER_CHECK, Verifier, verify_capability};
pub use error::VerifyError;
pub use options::VerifyOptions;
pub use report::{Check, VerificationReport};

mod options;

use ctx::Ctx;

/// A row's verifier: every check of the row, in order.
type RowVerifier = fn(&Ctx<'_>) -> Result<Vec<Check>, VerifyError>;

/// Every row with a built-in verifier, by pattern, and its verifier.
const TABLE: &[(&str, RowVerifier)] = &[
    (
        "image.generate.photorealistic.png",
        image_rows::photorealistic,
    ),
    (
        "image.generate.illustration.png",
        image_rows::illustration_png,
    ),
    ("image.generate.illustration.svg", svg::illustration_svg),
    (
        "image.edit.background-remove",
        image_rows::background_remove,
    ),
    ("image.upscale.2x", image_rows::upscale_2x),
    ("image.upscale.4x", image_rows::upscale_4x),
    (
        "audio.transcribe.json-with-timestamps",
        audio::transcribe_with_timestamps,
    ),
    ("audio.transcribe.{lang}.text", audio::transcribe_text),
    ("audio.generate-speech.{voice}.mp3", audio::generate_speech),
    ("audio.translate.{src}.{tgt}", audio::translate),
    ("text.translate.{src}.{tgt}.{level}", text::translate),
    ("text.summarize.short", text::summarize_short),
    ("text.summarize.medium", text::summarize_medium),
    ("text.summarize.long", text::summarize_long),
    ("text.rewrite.formal", text::rewrite_formal),
    ("text.rewrite.casual", text::rewrite_casual),
    ("text.expand.{factor}", text::expand),
    ("code.generate.{language}.script", code::generate_script),
    ("code.generate.{language}.function", code::generate_function),
    ("code.review.{language}", code::review),
    ("code.test.{language}", code::test),
    ("code.translate.{src}.{tgt}", code::translate),
    ("code.execute.sandboxed", sandbox::execute),
    ("data.lookup.weather.{format}", data::weather::lookup),
    ("data.lookup.web-search", data::lookup::web_search),
    ("data.extract.from-url", data::extract::from_url),
    ("data.scrape.{url}.json", data::lookup::scrape),
    ("data.lookup.stock-price", data::lookup::stock_price),
    ("data.lookup.crypto-price", data::lookup::crypto_price),
    ("chart.generate.from-data", chart::from_data),
    ("compute.math.symbolic", compute::symbolic),
    ("compute.math.numeric", compute::numeric),
    ("compute.statistics.{op}", compute::statistics),
    ("embed.text.{model}", embed::text),
    ("embed.image.{model}", embed::image),
    ("classify.image.{taxonomy}", classify::image),
    ("classify.text.{taxonomy}", classify::text),
    ("classify.text.sentiment", classify::sentiment),
    ("classify.text.toxicity", classify::toxicity),
    (
        "research.linkedin.profile.enrich",
        research::linkedin_profile_enrich,
    ),
];

/// The row patterns that have a built-in verifier, in table order.
pub fn rows() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(pattern, _)| *pattern)
}

/// The placeholder names of a row pattern, in order (`"code.translate.{src}.{tgt}"` →
/// `["src", "tgt"]`).
pub fn placeholders(row: &str) -> Vec<&str> {
    row.split('.')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

/// Verifies `output` of one call of the standard row `row`.
///
/// `bindings` must bind exactly the row's placeholders. `input` is the call's input (the
/// verifier reads what it needs from it: the requested dimensions, the source text, …);
/// `output` is what the provider returned. Returns every check of the row; `Err` only when the
/// question is malformed — an unknown row ([`VerifyError::UnknownRow`], so custom rows get "no
/// built-in verifier" from the caller), bindings that do not fit, or an input the verifier
/// cannot read ([`VerifyError::InvalidInput`] with a JSON pointer).
pub fn verify(
    row: &str,
    bindings: &BTreeMap<String, String>,
    input: &Value,
    output: &Value,
    options: &VerifyOptions,
) -> Result<VerificationReport, VerifyError> {
    let (pattern, verifier) = TABLE
        .iter()
        .find(|(pattern, _)| *pattern == row)
        .ok_or_else(|| VerifyError::UnknownRow {
            row: row.to_owned(),
        })?;
    let expected = placeholders(pattern);
    for placeholder in &expected {
        if !bindings.contains_key(*placeholder) {
            return Err(VerifyError::MissingBinding {
                row: row.to_owned(),
                placeholder: (*placeholder).to_owned(),
            });
        }
    }
    if let Some(extra) = bindings
        .keys()
        .find(|key| !expected.contains(&key.as_str()))
    {
        return Err(VerifyError::UnexpectedBinding {
            row: row.to_owned(),
            placeholder: extra.clone(),
        });
    }
    let ctx = Ctx {
        row: pattern,
        bindings,
        input,
        output,
        options,
    };
    verifier(&ctx).map(VerificationReport::from_checks)
}
