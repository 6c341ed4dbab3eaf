//! `data.lookup.web-search`, `data.scrape.{url}.json`, `data.lookup.stock-price` and
//! `data.lookup.crypto-price`.

use serde_json::Value;

use crate::ctx::{Ctx, expected};
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::formats;
use crate::options::VerifyOptions;
use crate::report::{Check, Checks, Outcome, after};

/// `data.lookup.web-search`: results array; each result has `url`, `title`, `snippet`
/// strings; URLs well-formed (absolute `http`/`https` with a host); no more than `limit`.
pub(crate) fn web_search(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("query")?;
    let limit = ctx.input_opt_int("limit")?;
    if limit.is_some_and(|limit| limit < 1) {
        return Err(VerifyError::input("/limit", "must be at least 1"));
    }
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(output, &[("/results", Kind::Arr, true)]),
    );
    let results = fields::array(output, "/results");
    let well_formed = after(&results, "output_shape", |items| {
        for (index, item) in items.iter().enumerate() {
            for key in ["url", "title", "snippet"] {
                if !item.get(key).is_some_and(Value::is_string) {
                    return Err(format!("/results/{index}/{key} is not a string"));
                }
            }
        }
        Ok(format!(
            "{} results with url, title and snippet",
            items.len()
        ))
    });
    let usable = well_formed.is_ok();
    checks.add("results_well_formed", well_formed);
    checks.add(
        "urls_well_formed",
        after(&results, "output_shape", |items| {
            if !usable {
                return Err(crate::report::not_checked("results_well_formed"));
            }
            for (index, item) in items.iter().enumerate() {
                let url = item.get("url").and_then(Value::as_str).unwrap_or_default();
                formats::web_url(url, &["http", "https"])
                    .map_err(|reason| format!("/results/{index}/url: {reason}"))?;
            }
            Ok("every url is an absolute http(s) URL".to_owned())
        }),
    );
    checks.add(
        "results_within_limit",
        after(&results, "output_shape", |items| match limit {
            None => Ok("no limit requested".to_owned()),
            Some(limit) if items.len() as i64 <= limit => {
                Ok(format!("{} results ≤ limit {limit}", items.len()))
            }
            Some(limit) => Err(format!("{} results > limit {limit}", items.len())),
        }),
    );
    Ok(checks.finish())
}

/// `data.scrape.{url}.json`: `data` is an object; every field the input `schema` specifies
/// (its `required` list and its `properties` keys) is a key of `data`.
pub(crate) fn scrape(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    if ctx.binding("url")?.is_empty() {
        return Err(ctx.invalid_binding("url", "must not be empty"));
    }
    ctx.input_str("url")?;
    let wanted = match ctx.input_opt("schema") {
        None => Vec::new(),
        Some(schema) => schema_fields(schema)?,
    };
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(output, &[("/data", Kind::Obj, true)]),
    );
    checks.add(
        "schema_fields_present",
        fields::field(output, "/data").and_then(|data| {
            let data = data
                .as_object()
                .ok_or_else(|| format!("/data: {}", expected("an object", data)))?;
            let missing: Vec<&str> = wanted
                .iter()
                .map(String::as_str)
                .filter(|field| !data.contains_key(*field))
                .collect();
            if wanted.is_empty() {
                Ok("no schema fields specified".to_owned())
            } else if missing.is_empty() {
                Ok(format!("all {} schema fields present", wanted.len()))
            } else {
                Err(format!("missing schema fields: {}", missing.join(", ")))
            }
        }),
    );
    Ok(checks.finish())
}

/// The field names a scrape `schema` specifies: `required` entries and `properties` keys.
fn schema_fields(schema: &Value) -> Result<Vec<String>, VerifyError> {
    let object = schema
        .as_object()
        .ok_or_else(|| VerifyError::input("/schema", expected("an object", schema)))?;
    let mut names: Vec<String> = Vec::new();
    if let Some(required) = object.get("required") {
        let list = required.as_array().ok_or_else(|| {
            VerifyError::input("/schema/required", expected("an array", required))
        })?;
        for (index, name) in list.iter().enumerate() {
            let name = name.as_str().ok_or_else(|| {
                VerifyError::input(
                    &format!("/schema/required/{index}"),
                    expected("a string", name),
                )
            })?;
            names.push(name.to_owned());
        }
    }
    if let Some(properties) = object.get("properties") {
        let map = properties.as_object().ok_or_else(|| {
            VerifyError::input("/schema/properties", expected("an object", properties))
        })?;
        names.extend(map.keys().cloned());
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// `data.lookup.stock-price`: price > 0; timestamp recent (Unix seconds, no older than
/// [`VerifyOptions::stock_max_age_secs`], no further ahead than the clock skew); weft adds:
/// the ticker echoes the input, the currency is ISO 4217.
pub(crate) fn stock_price(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let ticker = ctx.input_str("ticker")?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/ticker", Kind::Str, true),
                ("/price", Kind::Num, true),
                ("/currency", Kind::Str, true),
                ("/timestamp", Kind::Int, true),
            ],
        ),
    );
    checks.add("ticker_matches_input", echoes(output, "/ticker", ticker));
    checks.add("price_positive", price_positive(output));
    checks.add(
        "currency_iso_4217",
        fields::string(output, "/currency")
            .and_then(|code| formats::iso_4217(code).map(|()| format!("`{code}`"))),
    );
    checks.add("timestamp_recent", timestamp_recent(output, ctx.options));
    Ok(checks.finish())
}

/// `data.lookup.crypto-price`: price > 0; weft adds: symbol (and `vs`, when requested)
/// echo the input.
pub(crate) fn crypto_price(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let symbol = ctx.input_str("symbol")?;
    let vs = ctx.input_opt_str("vs")?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/symbol", Kind::Str, true),
                ("/price", Kind::Num, true),
                ("/vs", Kind::Str, true),
                ("/timestamp", Kind::Int, true),
            ],
        ),
    );
    checks.add("symbol_matches_input", echoes(output, "/symbol", symbol));
    checks.add(
        "vs_matches_input",
        match vs {
            Some(vs) => echoes(output, "/vs", vs),
            None => fields::nonempty_text(output, "/vs"),
        },
    );
    checks.add("price_positive", price_positive(output));
    Ok(checks.finish())
}

/// The string at `pointer` equals `want`, ignoring ASCII case.
fn echoes(output: &Value, pointer: &str, want: &str) -> Outcome {
    let got = fields::string(output, pointer)?;
    if got.eq_ignore_ascii_case(want) {
        Ok(format!("`{got}`"))
    } else {
        Err(format!(
            "{pointer} is `{got}`, the input asked for `{want}`"
        ))
    }
}

fn price_positive(output: &Value) -> Outcome {
    let price = fields::number(output, "/price")?;
    if price > 0.0 {
        Ok(format!("price {price}"))
    } else {
        Err(format!("price {price} is not > 0"))
    }
}

/// Unix seconds within [now − max age, now + skew].
fn timestamp_recent(output: &Value, options: &VerifyOptions) -> Outcome {
    let timestamp = fields::integer(output, "/timestamp")?;
    let now = options.now();
    if timestamp > 100_000_000_000 {
        return Err(format!(
            "timestamp {timestamp} looks like milliseconds; Unix seconds expected"
        ));
    }
    let age = now.saturating_sub(timestamp);
    if age > options.stock_max_age_secs {
        Err(format!(
            "timestamp {timestamp} is {age} s old, over {} s",
            options.stock_max_age_secs
        ))
    } else if -age > options.max_clock_skew_secs {
        Err(format!(
            "timestamp {timestamp} is {} s in the future, over the {} s skew allowed",
            -age, options.max_clock_skew_secs
        ))
    } else {
        Ok(format!("timestamp {timestamp} is {age} s old"))
    }
}
