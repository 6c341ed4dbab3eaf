//! `chart.generate.from-data`: valid PNG; dimensions match the input; data series non-empty;
//! image not blank; and (weft) the output's `chart_type` echoes the input.

use crate::ctx::{Ctx, expected};
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::image_rows::{declared_size, decoded_size, not_blank, requested_size};
use crate::png_image;
use crate::report::{Check, Checks, after};

/// v0.1 chart types; others belong under `custom.<provider>.chart.*`.
pub(crate) const CHART_TYPES: [&str; 3] = ["bar", "line", "pie"];

/// `chart.generate.from-data`.
pub(crate) fn from_data(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let (width, height) = requested_size(ctx)?;
    let chart_type = ctx.input_str("chart_type")?;
    if !CHART_TYPES.contains(&chart_type) {
        return Err(VerifyError::input(
            "/chart_type",
            format!("`{chart_type}` is not one of {}", CHART_TYPES.join(", ")),
        ));
    }
    let data = ctx.input_array("data")?;
    for (index, point) in data.iter().enumerate() {
        let x = point.get("x");
        if !x.is_some_and(|x| x.is_string() || x.is_number()) {
            return Err(VerifyError::input(
                &format!("/data/{index}/x"),
                "must be a string or a number",
            ));
        }
        if let Some(y) = point.get("y").filter(|y| !y.is_number()) {
            return Err(VerifyError::input(
                &format!("/data/{index}/y"),
                expected("a number", y),
            ));
        }
        if point.get("y").is_none() {
            return Err(VerifyError::input(
                &format!("/data/{index}/y"),
                "is required",
            ));
        }
    }
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/image_b64", Kind::Str, true),
                ("/width", Kind::Int, true),
                ("/height", Kind::Int, true),
                ("/chart_type", Kind::Str, true),
            ],
        ),
    );
    let png = png_image::output_png(ctx, &mut checks);
    checks.add(
        "dimensions_match",
        after(&png, "png_valid", |png| {
            decoded_size(png, width, height)?;
            declared_size(ctx, width, height)
        }),
    );
    checks.add(
        "data_nonempty",
        if data.is_empty() {
            Err("the input data series is empty: there is nothing to chart".to_owned())
        } else {
            Ok(format!("{} data points", data.len()))
        },
    );
    checks.add("not_blank", after(&png, "png_valid", not_blank));
    checks.add(
        "chart_type_matches",
        fields::string(output, "/chart_type").and_then(|got| {
            if got == chart_type {
                Ok(format!("`{got}`"))
            } else {
                Err(format!(
                    "chart_type `{got}`, the input asked for `{chart_type}`"
                ))
            }
        }),
    );
    Ok(checks.finish())
}
