//! `classify.*` rows: label distributions, sentiment, toxicity.
//!
//! `sum(confidence) ≈ 1.0` means |sum − 1| ≤ [`crate::VerifyOptions::confidence_sum_tolerance`]
//! (default 0.01). Image taxonomies are data files of this crate (`data/*.txt`); labels are
//! compared case-insensitively with `_` and space equivalent.

use serde_json::Value;

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks, after};
use crate::values::one_of;

/// `{taxonomy}` values of `classify.image`, with their label lists.
pub(crate) const IMAGE_TAXONOMIES: [(&str, &str); 3] = [
    ("imagenet-1k", include_str!("../data/imagenet-1k.txt")),
    (
        "coco-categories",
        include_str!("../data/coco-categories.txt"),
    ),
    ("safe-content", include_str!("../data/safe-content.txt")),
];

/// `classify.text.sentiment` values.
pub(crate) const SENTIMENTS: [&str; 3] = ["positive", "negative", "neutral"];

/// The labels of a taxonomy file: non-empty lines that are not `#` comments.
pub(crate) fn labels(file: &str) -> impl Iterator<Item = &str> {
    file.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
}

fn normalize(label: &str) -> String {
    label.trim().to_lowercase().replace('_', " ")
}

struct Label<'a> {
    label: &'a str,
    confidence: f64,
}

/// `classify.image.{taxonomy}`: sum(confidence) ≈ 1.0; labels valid in taxonomy.
pub(crate) fn image(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let names: Vec<&str> = IMAGE_TAXONOMIES.iter().map(|(name, _)| *name).collect();
    let taxonomy = one_of(ctx, "taxonomy", &names)?;
    ctx.input_str("image_b64")?;
    let file = IMAGE_TAXONOMIES
        .iter()
        .find(|(name, _)| *name == taxonomy)
        .map(|(_, file)| *file)
        .unwrap_or_default();
    let (mut checks, parsed) = distribution(ctx);
    checks.add(
        "labels_in_taxonomy",
        after(&parsed, "labels_well_formed", |list| {
            let known: std::collections::BTreeSet<String> = labels(file).map(normalize).collect();
            match list
                .iter()
                .find(|item| !known.contains(&normalize(item.label)))
            {
                Some(item) => Err(format!("`{}` is not a {taxonomy} label", item.label)),
                None => Ok(format!("every label is a {taxonomy} label")),
            }
        }),
    );
    Ok(checks.finish())
}

/// `classify.text.{taxonomy}`: sum(confidence) ≈ 1.0.
pub(crate) fn text(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    if ctx.binding("taxonomy")?.is_empty() {
        return Err(ctx.invalid_binding("taxonomy", "must not be empty"));
    }
    ctx.input_str("text")?;
    Ok(distribution(ctx).0.finish())
}

/// The checks shared by label distributions, and the parsed labels.
fn distribution<'a>(ctx: &Ctx<'a>) -> (Checks, Result<Vec<Label<'a>>, String>) {
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(output, &[("/labels", Kind::Arr, true)]),
    );
    let parsed = fields::array(output, "/labels").and_then(|items| {
        if items.is_empty() {
            return Err("/labels is empty".to_owned());
        }
        items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let label = item.get("label").and_then(Value::as_str);
                let confidence = item.get("confidence").and_then(Value::as_f64);
                match (label, confidence) {
                    (Some(label), Some(confidence)) => Ok(Label { label, confidence }),
                    (None, _) => Err(format!("/labels/{index}/label is not a string")),
                    (_, None) => Err(format!("/labels/{index}/confidence is not a number")),
                }
            })
            .collect()
    });
    checks.add(
        "labels_well_formed",
        parsed
            .as_ref()
            .map(|list: &Vec<Label<'_>>| format!("{} labels with confidence", list.len()))
            .map_err(Clone::clone),
    );
    checks.add(
        "confidences_in_range",
        after(&parsed, "labels_well_formed", |list| {
            match list
                .iter()
                .position(|item| !(0.0..=1.0).contains(&item.confidence))
            {
                Some(index) => Err(format!(
                    "/labels/{index}/confidence = {}, outside [0, 1]",
                    list[index].confidence
                )),
                None => Ok("every confidence in [0, 1]".to_owned()),
            }
        }),
    );
    let tolerance = ctx.options.confidence_sum_tolerance;
    checks.add(
        "confidence_sum",
        after(&parsed, "labels_well_formed", |list| {
            let sum: f64 = list.iter().map(|item| item.confidence).sum();
            // Inclusive: 0.5 + 0.49 is 0.99 to a person, 0.98999… to a float.
            if (sum - 1.0).abs() <= tolerance + 1e-12 {
                Ok(format!("sum {sum:.4} ≈ 1 (±{tolerance})"))
            } else {
                Err(format!("sum {sum:.4} is not within ±{tolerance} of 1"))
            }
        }),
    );
    (checks, parsed)
}

/// `classify.text.sentiment`: sentiment ∈ {positive, negative, neutral}; 0 ≤ confidence ≤ 1.
pub(crate) fn sentiment(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("text")?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/sentiment", Kind::Str, true),
                ("/confidence", Kind::Num, true),
            ],
        ),
    );
    checks.add(
        "sentiment_valid",
        fields::string(output, "/sentiment").and_then(|sentiment| {
            if SENTIMENTS.contains(&sentiment) {
                Ok(format!("`{sentiment}`"))
            } else {
                Err(format!(
                    "`{sentiment}` is not one of {}",
                    SENTIMENTS.join(", ")
                ))
            }
        }),
    );
    checks.add(
        "confidence_in_range",
        fields::unit_interval(output, "/confidence"),
    );
    Ok(checks.finish())
}

/// `classify.text.toxicity`: confidence ∈ [0, 1] (and `toxic` is a boolean).
pub(crate) fn toxicity(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("text")?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/toxic", Kind::Bool, true),
                ("/confidence", Kind::Num, true),
            ],
        ),
    );
    checks.add(
        "confidence_in_range",
        fields::unit_interval(output, "/confidence"),
    );
    Ok(checks.finish())
}
