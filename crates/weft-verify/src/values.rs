//! The closed value sets of the taxonomy's placeholders that verifiers depend on.

use crate::ctx::Ctx;
use crate::error::VerifyError;

/// `{lang}`, `{src}` and `{tgt}` of audio and text rows: the seed's eleven ISO 639-1 codes.
pub(crate) const HUMAN_LANGUAGES: [&str; 11] = [
    "en", "it", "es", "de", "fr", "pt", "ja", "zh", "ko", "ru", "ar",
];

/// `{language}` of code rows, and `{src}`/`{tgt}` of `code.translate`.
pub(crate) const CODE_LANGUAGES: [&str; 11] = [
    "python",
    "javascript",
    "typescript",
    "go",
    "rust",
    "java",
    "ruby",
    "php",
    "csharp",
    "swift",
    "kotlin",
];

/// `{level}` of `text.translate`.
pub(crate) const LEVELS: [&str; 5] = ["literal", "fluent", "business", "casual", "technical"];

/// The value of `placeholder`, which must be one of `allowed`.
pub(crate) fn one_of<'a>(
    ctx: &Ctx<'a>,
    placeholder: &str,
    allowed: &[&str],
) -> Result<&'a str, VerifyError> {
    let value = ctx.binding(placeholder)?;
    if allowed.contains(&value) {
        Ok(value)
    } else {
        Err(ctx.invalid_binding(
            placeholder,
            format!("expected one of {}", allowed.join(", ")),
        ))
    }
}
