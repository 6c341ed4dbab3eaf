//! "Language detected = X": `whatlang` detection mapped to ISO 639-1.
//!
//! The detector sees at most [`VerifyOptions::max_language_sample_bytes`] of the text. A text
//! with fewer than [`VerifyOptions::min_language_letters`] letters fails as too short to
//! detect (never passes); a detection below [`VerifyOptions::min_language_confidence`] fails
//! with the detector's guess. whatlang reports ISO 639-3 codes; they are mapped to ISO 639-1
//! with `isolang`, Mandarin (`cmn`) to `zh`.

use crate::options::VerifyOptions;
use crate::report::Outcome;

/// The ISO 639-1 code of a whatlang language, if it has one.
fn iso_639_1(lang: whatlang::Lang) -> Option<&'static str> {
    if lang == whatlang::Lang::Cmn {
        return Some("zh");
    }
    isolang::Language::from_639_3(lang.code())?.to_639_1()
}

/// The check that `text` is written in `expected` (an ISO 639-1 code).
pub(crate) fn detected_is(text: &str, expected: &str, options: &VerifyOptions) -> Outcome {
    let sample = prefix(text, options.max_language_sample_bytes);
    let letters = sample.chars().filter(|c| c.is_alphabetic()).count();
    if letters < options.min_language_letters {
        return Err(format!(
            "too short to detect a language: {letters} letters, need at least {}",
            options.min_language_letters
        ));
    }
    let info = whatlang::detect(sample).ok_or_else(|| "no language detected".to_owned())?;
    let name = info.lang().eng_name();
    let confidence = info.confidence();
    let Some(code) = iso_639_1(info.lang()) else {
        return Err(format!(
            "detected {name} ({}), which has no ISO 639-1 code; expected `{expected}`",
            info.lang().code()
        ));
    };
    if code != expected {
        return Err(format!(
            "detected `{code}` ({name}, confidence {confidence:.2}), expected `{expected}`"
        ));
    }
    if confidence < options.min_language_confidence {
        return Err(format!(
            "detected `{code}` ({name}) with confidence {confidence:.2}, below {}",
            options.min_language_confidence
        ));
    }
    Ok(format!(
        "detected `{code}` ({name}, confidence {confidence:.2})"
    ))
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character
/// boundary.
pub(crate) fn prefix(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}
