//! `data.extract.from-url`: a typed record extracted from a page.
//!
//! Programmatic checks from the seed: every requested field is a key of `extracted` (`null`
//! allowed); the field-level conventions hold for the requested fields that are not `null`;
//! `confidence` ∈ [0, 1]; `extracted_at` parses as ISO 8601; and the output echoes the input
//! `url`. Each convention is its own check, passing with "not requested" when it does not
//! apply, so the list of checks is the same for every call.

use serde_json::{Map, Value};

use crate::ctx::{Ctx, expected};
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::formats;
use crate::report::{Check, Checks, Outcome, after};

/// The table's `description_short` limit, in characters.
pub(crate) const DESCRIPTION_SHORT_MAX_CHARS: usize = 280;
/// `availability` values.
pub(crate) const AVAILABILITY: [&str; 3] = ["in_stock", "out_of_stock", "unknown"];

/// `data.extract.from-url`.
pub(crate) fn from_url(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let url = ctx.input_str("url")?;
    let requested: Vec<&str> = ctx
        .input_array("fields")?
        .iter()
        .enumerate()
        .map(|(index, field)| {
            field.as_str().ok_or_else(|| {
                VerifyError::input(&format!("/fields/{index}"), expected("a string", field))
            })
        })
        .collect::<Result<_, _>>()?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/url", Kind::Str, true),
                ("/extracted", Kind::Obj, true),
                ("/confidence", Kind::Num, true),
                ("/extracted_at", Kind::Str, true),
            ],
        ),
    );
    checks.add(
        "url_echoed",
        fields::string(output, "/url").and_then(|echo| {
            if echo == url {
                Ok("output url equals the input url".to_owned())
            } else {
                Err(format!("output url `{echo}`, input url `{url}`"))
            }
        }),
    );
    let extracted = fields::field(output, "/extracted").and_then(|value| {
        value
            .as_object()
            .ok_or_else(|| format!("/extracted: {}", expected("an object", value)))
    });
    checks.add(
        "requested_fields_present",
        after(&extracted, "output_shape", |record| {
            let missing: Vec<&str> = requested
                .iter()
                .copied()
                .filter(|field| !record.contains_key(*field))
                .collect();
            if missing.is_empty() {
                Ok(format!("all {} requested fields present", requested.len()))
            } else {
                Err(format!("missing requested fields: {}", missing.join(", ")))
            }
        }),
    );
    let conventions: [Convention; 6] = [
        (
            "price_currency_iso_4217",
            |f| f == "price_currency",
            price_currency,
        ),
        ("price_amount_valid", |f| f == "price_amount", price_amount),
        ("availability_valid", |f| f == "availability", availability),
        ("url_fields_https", |f| f.ends_with("_url"), https_field),
        (
            "description_short_length",
            |f| f == "description_short",
            description_short,
        ),
        (
            "published_at_iso_8601",
            |f| f == "published_at",
            published_at,
        ),
    ];
    for (name, applies, check) in conventions {
        checks.add(
            name,
            after(&extracted, "output_shape", |record| {
                convention(record, &requested, applies, check)
            }),
        );
    }
    checks.add(
        "confidence_in_range",
        fields::unit_interval(output, "/confidence"),
    );
    checks.add(
        "extracted_at_iso_8601",
        fields::string(output, "/extracted_at")
            .and_then(|text| formats::iso_8601_datetime(text).map(|()| format!("`{text}` parses"))),
    );
    Ok(checks.finish())
}

/// A field-level convention: its check name, which requested fields it applies to, and the
/// check of one value.
type Convention = (
    &'static str,
    fn(&str) -> bool,
    fn(&Value) -> Result<(), String>,
);

/// Runs `check` on every requested, present, non-null field `applies` selects.
fn convention(
    record: &Map<String, Value>,
    requested: &[&str],
    applies: fn(&str) -> bool,
    check: fn(&Value) -> Result<(), String>,
) -> Outcome {
    let mut checked = Vec::new();
    for field in requested.iter().copied().filter(|field| applies(field)) {
        match record.get(field) {
            None | Some(Value::Null) => {}
            Some(value) => {
                check(value).map_err(|reason| format!("/extracted/{field}: {reason}"))?;
                checked.push(field);
            }
        }
    }
    if checked.is_empty() {
        Ok("not applicable: no such field requested with a value".to_owned())
    } else {
        Ok(format!("{} conform", checked.join(", ")))
    }
}

fn as_text(value: &Value) -> Result<&str, String> {
    value.as_str().ok_or_else(|| expected("a string", value))
}

fn price_currency(value: &Value) -> Result<(), String> {
    formats::iso_4217(as_text(value)?)
}

/// A JSON number ≥ 0, or a string of plain decimal digits (`"1299.00"`; no thousands
/// separator, sign or currency symbol).
fn price_amount(value: &Value) -> Result<(), String> {
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(amount) if amount >= 0.0 => Ok(()),
            _ => Err(format!("{number} is negative")),
        },
        Value::String(text) => {
            let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
            let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
            if digits(whole) && digits(fraction) {
                Ok(())
            } else {
                Err(format!(
                    "`{text}` is not a plain non-negative decimal number"
                ))
            }
        }
        other => Err(expected("a number", other)),
    }
}

fn availability(value: &Value) -> Result<(), String> {
    let text = as_text(value)?;
    if AVAILABILITY.contains(&text) {
        Ok(())
    } else {
        Err(format!(
            "`{text}` is not one of {}",
            AVAILABILITY.join(", ")
        ))
    }
}

fn https_field(value: &Value) -> Result<(), String> {
    formats::https_url(as_text(value)?)
}

fn description_short(value: &Value) -> Result<(), String> {
    let count = as_text(value)?.chars().count();
    if count <= DESCRIPTION_SHORT_MAX_CHARS {
        Ok(())
    } else {
        Err(format!(
            "{count} characters, over {DESCRIPTION_SHORT_MAX_CHARS}"
        ))
    }
}

fn published_at(value: &Value) -> Result<(), String> {
    formats::iso_8601_date_or_datetime(as_text(value)?)
}
