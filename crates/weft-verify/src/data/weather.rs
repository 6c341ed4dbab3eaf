//! `data.lookup.weather.{format}`: "valid in declared format; contains required fields".
//!
//! The seed leaves the format-specific output open; weft defines it (`docs/verification.md`):
//! a weather record is `location` (non-empty string), `date` (ISO 8601 date or date-time),
//! `temperature_c` (number) and `conditions` (non-empty string).
//! - `json`: the output object is the record.
//! - `geojson`: the output is a GeoJSON `Feature` — or a non-empty `FeatureCollection` — whose
//!   geometry is a `Point` (longitude in [-180, 180], latitude in [-90, 90]) and whose
//!   `properties` are the record. Parsed with the `geojson` crate, after a depth limit.
//! - `summary-text`: the output is `{"text": string}`, non-empty, and states a temperature
//!   with its unit (a number followed by `°`, `℃`, `℉` or the word "degrees").

use serde_json::{Map, Value};

use crate::ctx::{Ctx, expected};
use crate::error::VerifyError;
use crate::formats;
use crate::report::{Check, Checks, Outcome};
use crate::values::one_of;

/// `{format}` values.
pub(crate) const FORMATS: [&str; 3] = ["geojson", "json", "summary-text"];

/// `data.lookup.weather.{format}`.
pub(crate) fn lookup(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let format = one_of(ctx, "format", &FORMATS)?;
    ctx.input_str("location")?;
    let requested_date = ctx.input_opt_str("date")?;
    if let Some(date) = requested_date {
        formats::iso_8601_date_or_datetime(date)
            .map_err(|reason| VerifyError::input("/date", reason))?;
    }
    let output = ctx.output;
    let mut checks = Checks::new();
    let records: Result<Vec<&Map<String, Value>>, String> = match format {
        "json" => output
            .as_object()
            .map(|record| vec![record])
            .ok_or_else(|| format!("output: {}", expected("an object", output))),
        "geojson" => geojson_records(output, ctx.options.max_json_depth),
        _ => summary_text(output).map(|_| Vec::new()),
    };
    checks.add(
        "valid_format",
        records
            .as_ref()
            .map(|records| match format {
                "geojson" => format!("GeoJSON with {} Point feature(s)", records.len()),
                "json" => "a JSON object".to_owned(),
                _ => "a non-empty text".to_owned(),
            })
            .map_err(Clone::clone),
    );
    let required: Outcome = match (&records, format) {
        (Err(_), _) => Err(crate::report::not_checked("valid_format")),
        (Ok(_), "summary-text") => summary_text(output).and_then(mentions_temperature),
        (Ok(records), _) => records
            .iter()
            .enumerate()
            .try_for_each(|(index, record)| required_fields(record, index, records.len()))
            .map(|()| "location, date, temperature_c and conditions present".to_owned()),
    };
    checks.add("required_fields", required);
    checks.add(
        "date_matches_input",
        match (&records, requested_date) {
            (_, None) => Ok("no date requested".to_owned()),
            (_, Some(_)) if format == "summary-text" => {
                Ok("not applicable: summary-text has no date field".to_owned())
            }
            (Err(_), Some(_)) => Err(crate::report::not_checked("valid_format")),
            (Ok(records), Some(date)) => records
                .iter()
                .map(|record| {
                    record
                        .get("date")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                })
                .find(|found| found.get(..10) != date.get(..10))
                .map_or_else(
                    || Ok(format!("weather for {date}")),
                    |found| Err(format!("weather for `{found}`, requested {date}")),
                ),
        },
    );
    Ok(checks.finish())
}

fn required_fields(record: &Map<String, Value>, index: usize, count: usize) -> Result<(), String> {
    let at = if count > 1 {
        format!("feature {index}: ")
    } else {
        String::new()
    };
    for key in ["location", "conditions"] {
        match record.get(key).and_then(Value::as_str) {
            Some(text) if !text.trim().is_empty() => {}
            _ => return Err(format!("{at}`{key}` must be a non-empty string")),
        }
    }
    let date = record
        .get("date")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{at}`date` must be a string"))?;
    formats::iso_8601_date_or_datetime(date).map_err(|reason| format!("{at}`date`: {reason}"))?;
    if !record.get("temperature_c").is_some_and(Value::is_number) {
        return Err(format!("{at}`temperature_c` must be a number"));
    }
    Ok(())
}

fn geojson_records(output: &Value, max_depth: usize) -> Result<Vec<&Map<String, Value>>, String> {
    if super::depth(output, max_depth) > max_depth {
        return Err(format!("output nests deeper than {max_depth} levels"));
    }
    let parsed: geojson::GeoJson = serde_json::from_value(output.clone())
        .map_err(|error| format!("not valid GeoJSON: {error}"))?;
    let features = match &parsed {
        geojson::GeoJson::Feature(feature) => vec![feature],
        geojson::GeoJson::FeatureCollection(collection) if !collection.features.is_empty() => {
            collection.features.iter().collect()
        }
        geojson::GeoJson::FeatureCollection(_) => {
            return Err("the FeatureCollection has no feature".to_owned());
        }
        geojson::GeoJson::Geometry(_) => {
            return Err("a bare Geometry has no properties: expected a Feature".to_owned());
        }
    };
    for (index, feature) in features.iter().enumerate() {
        let point = match feature.geometry.as_ref().map(|geometry| &geometry.value) {
            Some(geojson::GeometryValue::Point { coordinates }) => coordinates.as_slice().to_vec(),
            _ => return Err(format!("feature {index} has no Point geometry")),
        };
        match point.as_slice() {
            [longitude, latitude, ..]
                if (-180.0..=180.0).contains(longitude) && (-90.0..=90.0).contains(latitude) => {}
            _ => {
                return Err(format!(
                    "feature {index}: Point {point:?} is not [longitude, latitude]"
                ));
            }
        }
    }
    // The parsed features own copies; read the properties from the output itself.
    let raw_features: Vec<&Value> = match output.get("features").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None => vec![output],
    };
    raw_features
        .into_iter()
        .enumerate()
        .map(|(index, feature)| {
            feature
                .get("properties")
                .and_then(Value::as_object)
                .ok_or_else(|| format!("feature {index} has no properties object"))
        })
        .collect()
}

fn summary_text(output: &Value) -> Result<&str, String> {
    let text = crate::fields::string(output, "/text")?;
    if text.trim().is_empty() {
        Err("/text is empty".to_owned())
    } else {
        Ok(text)
    }
}

/// A number followed (after optional spaces) by `°`, `℃`, `℉` or "degrees".
fn mentions_temperature(text: &str) -> Outcome {
    let chars: Vec<char> = text.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        if chars[index].is_ascii_digit() {
            let start = index;
            while index < chars.len() && (chars[index].is_ascii_digit() || chars[index] == '.') {
                index += 1;
            }
            let mut after = index;
            while after < chars.len() && chars[after] == ' ' {
                after += 1;
            }
            let rest: String = chars[after..].iter().take(7).collect();
            if rest.starts_with(['°', '℃', '℉']) || rest.to_lowercase().starts_with("degrees")
            {
                let number: String = chars[start..index].iter().collect();
                return Ok(format!(
                    "states a temperature ({number}{})",
                    rest.chars().next().unwrap_or(' ')
                ));
            }
        } else {
            index += 1;
        }
    }
    Err("the text states no temperature with a unit (°, ℃, ℉ or degrees)".to_owned())
}
