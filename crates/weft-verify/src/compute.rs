//! `compute.*` rows. Deterministic capabilities are recomputed:
//! - `compute.statistics.{op}`: population variance and standard deviation (n denominator;
//!   [`crate::VerifyOptions::sample_variance`] switches to n − 1), median as the mean of the
//!   two middle values for even n, `percentile-95` by linear interpolation between closest
//!   ranks (NumPy's default, R type 7: rank h = 0.95 × (n − 1)).
//! - `compute.math.numeric`: the expression is evaluated with `exmex` (operators `+ - * / ^`,
//!   functions `sin cos tan asin acos atan sinh cosh tanh sqrt cbrt exp ln log log2 log10
//!   abs floor ceil round trunc`, constants `PI`/`π`, `E`, `TAU`) with `vars` bound.
//! - `compute.math.symbolic`: the result must parse in the same grammar.

use std::collections::BTreeMap;

use exmex::Express as _;
use serde_json::Value;

use crate::ctx::{Ctx, expected};
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks, Outcome};
use crate::values::one_of;

/// `{op}` values.
pub(crate) const OPS: [&str; 5] = ["mean", "median", "stddev", "variance", "percentile-95"];
/// Longest expression parsed, in bytes.
pub(crate) const MAX_EXPRESSION_BYTES: usize = 10_000;
/// Deepest parenthesis nesting parsed.
pub(crate) const MAX_EXPRESSION_NESTING: usize = 64;
/// Most decimal places `precision` may ask for (an f64 carries ~15 significant digits).
pub(crate) const MAX_PRECISION: i64 = 15;

/// `compute.statistics.{op}`: valid number; non-NaN; equal to the recomputed statistic.
pub(crate) fn statistics(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let op = one_of(ctx, "op", &OPS)?;
    let data: Vec<f64> = ctx
        .input_array("data")?
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value.as_f64().ok_or_else(|| {
                VerifyError::input(&format!("/data/{index}"), expected("a number", value))
            })
        })
        .collect::<Result<_, _>>()?;
    if data.is_empty() {
        return Err(VerifyError::input(
            "/data",
            "is empty: no statistic of an empty series",
        ));
    }
    let want = statistic(op, &data, ctx.options.sample_variance);
    let tolerance = ctx.options.numeric_relative_tolerance;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/result", Kind::Num, true)]),
    );
    checks.add("result_is_number", result_is_number(ctx.output));
    checks.add(
        "result_matches",
        fields::number(ctx.output, "/result").and_then(|got| {
            let allowed = tolerance * want.abs().max(1.0);
            if want.is_finite() && (got - want).abs() <= allowed {
                Ok(format!("{got} = recomputed {op} {want} (±{allowed:e})"))
            } else {
                Err(format!("{got}, recomputed {op} is {want} (±{allowed:e})"))
            }
        }),
    );
    Ok(checks.finish())
}

/// The statistic `op` of a non-empty series.
fn statistic(op: &str, data: &[f64], sample: bool) -> f64 {
    let n = data.len() as f64;
    let mean = sum(data.iter().copied()) / n;
    let variance = || {
        let denominator = if sample && data.len() > 1 { n - 1.0 } else { n };
        sum(data.iter().map(|x| (x - mean) * (x - mean))) / denominator
    };
    let sorted = || {
        let mut sorted = data.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted
    };
    match op {
        "mean" => mean,
        "variance" => variance(),
        "stddev" => variance().sqrt(),
        "median" => percentile(&sorted(), 0.5),
        _ => percentile(&sorted(), 0.95),
    }
}

/// Linear interpolation between closest ranks of a sorted, non-empty series.
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    let rank = fraction * (sorted.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = rank.ceil() as usize;
    let (Some(&a), Some(&b)) = (sorted.get(low), sorted.get(high)) else {
        return f64::NAN;
    };
    a + (rank - low as f64) * (b - a)
}

/// Neumaier-compensated sum: summation order barely moves the result.
fn sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut total, mut compensation) = (0.0f64, 0.0f64);
    for value in values {
        let next = total + value;
        compensation += if total.abs() >= value.abs() {
            (total - next) + value
        } else {
            (value - next) + total
        };
        total = next;
    }
    total + compensation
}

fn result_is_number(output: &Value) -> Outcome {
    let value = fields::number(output, "/result")?;
    if value.is_nan() {
        Err("result is NaN".to_owned())
    } else {
        Ok(format!("{value}"))
    }
}

/// `compute.math.numeric`: valid number; equal to the expression's value; precision honored.
pub(crate) fn numeric(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let expression = ctx.input_str("expression")?;
    let vars = variables(ctx)?;
    let precision = ctx.input_opt_int("precision")?;
    if precision.is_some_and(|p| !(0..=MAX_PRECISION).contains(&p)) {
        return Err(VerifyError::input(
            "/precision",
            format!("must be between 0 and {MAX_PRECISION} decimal places"),
        ));
    }
    let want = evaluate(expression, &vars)?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(output, &[("/result", Kind::Num, true)]),
    );
    checks.add("result_is_number", result_is_number(output));
    let relative = ctx.options.numeric_relative_tolerance;
    checks.add(
        "result_matches",
        fields::number(output, "/result").and_then(|got| {
            if !want.is_finite() {
                return Err(format!(
                    "the expression evaluates to {want}: no JSON number matches"
                ));
            }
            let rounding = precision.map_or(0.0, |p| 0.5 * 10f64.powi(-(p as i32)));
            let allowed = rounding + relative * want.abs().max(1.0);
            if (got - want).abs() <= allowed {
                Ok(format!("{got} matches {want} (±{allowed:e})"))
            } else {
                Err(format!(
                    "{got}, the expression evaluates to {want} (±{allowed:e})"
                ))
            }
        }),
    );
    checks.add(
        "precision_honored",
        fields::number(output, "/result").and_then(|got| match precision {
            None => Ok("no precision requested".to_owned()),
            Some(p) => {
                let scale = 10f64.powi(p as i32);
                let rounded = (got * scale).round() / scale;
                if (got - rounded).abs() <= relative * got.abs().max(1.0) {
                    Ok(format!("{got} has at most {p} decimal places"))
                } else {
                    Err(format!("{got} has more than {p} decimal places"))
                }
            }
        }),
    );
    Ok(checks.finish())
}

/// `compute.math.symbolic`: valid string; result parses as an expression.
pub(crate) fn symbolic(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("expression")?;
    variables(ctx)?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[("/result", Kind::Str, true), ("/latex", Kind::Str, false)],
        ),
    );
    checks.add(
        "result_parses",
        fields::string(output, "/result").and_then(|result| {
            if result.trim().is_empty() {
                return Err("/result is empty".to_owned());
            }
            parse(result).map(|_| format!("`{result}` parses as an expression"))
        }),
    );
    Ok(checks.finish())
}

/// The input's `vars`: names bound to numbers.
fn variables(ctx: &Ctx<'_>) -> Result<BTreeMap<String, f64>, VerifyError> {
    let Some(vars) = ctx.input_opt("vars") else {
        return Ok(BTreeMap::new());
    };
    let members = vars
        .as_object()
        .ok_or_else(|| VerifyError::input("/vars", expected("an object", vars)))?;
    members
        .iter()
        .map(|(name, value)| {
            value
                .as_f64()
                .map(|number| (name.clone(), number))
                .ok_or_else(|| {
                    VerifyError::input(&format!("/vars/{name}"), expected("a number", value))
                })
        })
        .collect()
}

/// Parses an expression within the size and nesting limits.
fn parse(text: &str) -> Result<exmex::FlatEx<f64>, String> {
    if text.len() > MAX_EXPRESSION_BYTES {
        return Err(format!(
            "expression is {} bytes, over {MAX_EXPRESSION_BYTES}",
            text.len()
        ));
    }
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_EXPRESSION_NESTING {
            return Err(format!(
                "expression nests deeper than {MAX_EXPRESSION_NESTING} parentheses"
            ));
        }
    }
    exmex::parse::<f64>(text).map_err(|error| format!("does not parse as an expression: {error}"))
}

fn evaluate(expression: &str, vars: &BTreeMap<String, f64>) -> Result<f64, VerifyError> {
    let parsed = parse(expression).map_err(|reason| VerifyError::input("/expression", reason))?;
    let values = parsed
        .var_names()
        .iter()
        .map(|name| {
            vars.get(name).copied().ok_or_else(|| {
                VerifyError::input("/vars", format!("no value for variable `{name}`"))
            })
        })
        .collect::<Result<Vec<f64>, _>>()?;
    parsed
        .eval(&values)
        .map_err(|error| VerifyError::input("/expression", format!("does not evaluate: {error}")))
}
