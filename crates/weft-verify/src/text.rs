//! `text.*` rows: translation, summaries, rewrites, expansion.
//!
//! Lengths are counted in Unicode scalar values (`char`s); words are Unicode words (UAX #29,
//! `unicode-segmentation`), so "l'été" is one word and each CJK ideograph is one. Ratio
//! bounds are inclusive and compared in exact integer arithmetic where the table's factors
//! allow it.

use unicode_segmentation::UnicodeSegmentation;

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::language;
use crate::report::{Check, Checks, Outcome};
use crate::values::{HUMAN_LANGUAGES, LEVELS, one_of};

/// Unicode words in `text`.
pub(crate) fn word_count(text: &str) -> usize {
    text.unicode_words().count()
}

fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// `text.translate.{src}.{tgt}.{level}`: non-empty; length 0.3×–3× of the input; language
/// detected = `tgt`.
pub(crate) fn translate(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    one_of(ctx, "src", &HUMAN_LANGUAGES)?;
    let target = one_of(ctx, "tgt", &HUMAN_LANGUAGES)?;
    one_of(ctx, "level", &LEVELS)?;
    let source = ctx.input_str("text")?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            ctx.output,
            &[
                ("/text", Kind::Str, true),
                ("/detected_lang", Kind::Str, false),
            ],
        ),
    );
    checks.add("text_nonempty", fields::nonempty_text(ctx.output, "/text"));
    checks.add("length_ratio", length_ratio(ctx, source, (3, 10), (3, 1)));
    checks.add(
        "language_detected",
        fields::string(ctx.output, "/text")
            .and_then(|text| language::detected_is(text, target, ctx.options)),
    );
    Ok(checks.finish())
}

/// `text.summarize.short`: non-empty; word_count(summary) ≤ 20% of the input's.
pub(crate) fn summarize_short(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let source = ctx.input_str("text")?;
    let mut checks = summary_checks(ctx);
    checks.add(
        "summary_nonempty",
        fields::nonempty_text(ctx.output, "/summary"),
    );
    checks.add("summary_word_ratio", word_ratio(ctx, source, None, 20));
    Ok(checks.finish())
}

/// `text.summarize.medium`: word_count(summary) between 10% and 30% of the input's.
pub(crate) fn summarize_medium(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let source = ctx.input_str("text")?;
    let mut checks = summary_checks(ctx);
    checks.add("summary_word_ratio", word_ratio(ctx, source, Some(10), 30));
    Ok(checks.finish())
}

/// `text.summarize.long`: word_count(summary) between 25% and 60% of the input's.
pub(crate) fn summarize_long(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let source = ctx.input_str("text")?;
    let mut checks = summary_checks(ctx);
    checks.add("summary_word_ratio", word_ratio(ctx, source, Some(25), 60));
    Ok(checks.finish())
}

fn summary_checks(ctx: &Ctx<'_>) -> Checks {
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/summary", Kind::Str, true)]),
    );
    checks
}

/// Summary words within `[low%, high%]` of the source's (no lower bound when `low` is None).
fn word_ratio(ctx: &Ctx<'_>, source: &str, low: Option<usize>, high: usize) -> Outcome {
    let summary = fields::string(ctx.output, "/summary")?;
    let (words, source_words) = (word_count(summary), word_count(source));
    let percent = if source_words == 0 {
        String::from("n/a")
    } else {
        format!("{:.1}%", words as f64 * 100.0 / source_words as f64)
    };
    let detail = format!("{words} words for {source_words} input words ({percent})");
    let above_low = low.is_none_or(|low| words * 100 >= source_words * low);
    let below_high = words * 100 <= source_words * high;
    let range = match low {
        Some(low) => format!("{low}%–{high}%"),
        None => format!("≤ {high}%"),
    };
    if above_low && below_high {
        Ok(format!("{detail}, within {range}"))
    } else {
        Err(format!("{detail}, outside {range}"))
    }
}

/// `text.rewrite.formal`: non-empty; length 0.5×–2× of the input.
pub(crate) fn rewrite_formal(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let source = ctx.input_str("text")?;
    let mut checks = rewrite_checks(ctx);
    checks.add("length_ratio", length_ratio(ctx, source, (1, 2), (2, 1)));
    Ok(checks.finish())
}

/// `text.rewrite.casual`: non-empty.
pub(crate) fn rewrite_casual(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("text")?;
    Ok(rewrite_checks(ctx).finish())
}

fn rewrite_checks(ctx: &Ctx<'_>) -> Checks {
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/text", Kind::Str, true)]),
    );
    checks.add("text_nonempty", fields::nonempty_text(ctx.output, "/text"));
    checks
}

/// Output characters within `[low, high]` × the source's, each bound a fraction
/// `(numerator, denominator)`.
fn length_ratio(ctx: &Ctx<'_>, source: &str, low: (usize, usize), high: (usize, usize)) -> Outcome {
    let text = fields::string(ctx.output, "/text")?;
    let (length, source_length) = (char_count(text), char_count(source));
    let above_low = length * low.1 >= source_length * low.0;
    let below_high = length * high.1 <= source_length * high.0;
    let ratio = |(n, d): (usize, usize)| format!("{}", n as f64 / d as f64);
    let detail = format!(
        "{length} characters for {source_length} input characters; allowed {}×–{}×",
        ratio(low),
        ratio(high)
    );
    if above_low && below_high {
        Ok(detail)
    } else {
        Err(detail)
    }
}

/// `text.expand.{factor}`: length ≥ input × factor × 0.8.
pub(crate) fn expand(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let factor_text = ctx.binding("factor")?;
    let factor: f64 = factor_text
        .parse()
        .ok()
        .filter(|factor: &f64| factor.is_finite() && *factor > 0.0)
        .ok_or_else(|| ctx.invalid_binding("factor", "must be a positive decimal number"))?;
    let source = ctx.input_str("text")?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/text", Kind::Str, true)]),
    );
    checks.add(
        "length_ratio",
        fields::string(ctx.output, "/text").and_then(|text| {
            let (length, source_length) = (char_count(text), char_count(source));
            let minimum = source_length as f64 * factor * 0.8;
            let detail = format!(
                "{length} characters for {source_length} input characters; need ≥ {minimum:.1} ({factor_text} × 0.8 ×)"
            );
            // Inclusive, with float rounding (10 × 2 × 0.8 is 16.000000000000004) forgiven.
            if length as f64 >= minimum - 1e-9 {
                Ok(detail)
            } else {
                Err(detail)
            }
        }),
    );
    Ok(checks.finish())
}
