//! `code.*` rows (except `code.execute.sandboxed`, in `sandbox`): generation, review, tests,
//! translation — parsed with a real parser per language.

mod signature;
mod syntax;

use serde_json::Value;

use crate::ctx::{Ctx, as_integer};
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::options::VerifyOptions;
use crate::report::{Check, Checks, Outcome, after};
use crate::values::{CODE_LANGUAGES, one_of};

use syntax::Syntax;

/// Severities a `code.review` finding may carry: the taxonomy's set (the seed says "enum"
/// without listing it).
pub(crate) const SEVERITIES: [&str; 8] = weft_taxonomy::table::REVIEW_SEVERITIES;

/// `code.generate.{language}.script`: non-empty; parses as valid `language`.
pub(crate) fn generate_script(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let language = one_of(ctx, "language", &CODE_LANGUAGES)?;
    ctx.input_str("task")?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            ctx.output,
            &[("/code", Kind::Str, true), ("/deps", Kind::StrArr, false)],
        ),
    );
    checks.add("code_nonempty", fields::nonempty_text(ctx.output, "/code"));
    let parsed = parse_field(ctx.output, "/code", language, ctx.options);
    checks.add("code_parses", parses(&parsed, language));
    Ok(checks.finish())
}

/// `code.generate.{language}.function`: parses; matches signature (the function the signature
/// names is defined in the code's syntax tree).
pub(crate) fn generate_function(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let language = one_of(ctx, "language", &CODE_LANGUAGES)?;
    let signature_text = ctx.input_str("signature")?;
    ctx.input_str("behavior")?;
    let name = signature::function_name(signature_text).ok_or_else(|| {
        VerifyError::input(
            "/signature",
            "no function name can be found in the signature",
        )
    })?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/code", Kind::Str, true)]),
    );
    let parsed = parse_field(ctx.output, "/code", language, ctx.options);
    checks.add("code_parses", parses(&parsed, language));
    checks.add(
        "matches_signature",
        after(&parsed, "code_parses", |syntax| {
            if syntax.definitions.contains(&name) {
                Ok(format!("`{name}` is defined"))
            } else {
                Err(format!(
                    "`{name}` from the signature is not defined; the code defines {}",
                    listing(&syntax.definitions)
                ))
            }
        }),
    );
    Ok(checks.finish())
}

/// `code.review.{language}`: findings array (can be empty), each with a severity from
/// [`SEVERITIES`], an integer line within the input code and a message.
pub(crate) fn review(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    one_of(ctx, "language", &CODE_LANGUAGES)?;
    let code = ctx.input_str("code")?;
    let lines = i64::try_from(code.lines().count().max(1)).unwrap_or(i64::MAX);
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/findings", Kind::Arr, true)]),
    );
    let findings = fields::array(ctx.output, "/findings").and_then(|items| {
        items
            .iter()
            .enumerate()
            .map(|(index, finding)| finding_line(index, finding))
            .collect::<Result<Vec<i64>, String>>()
    });
    checks.add(
        "findings_well_formed",
        findings
            .as_ref()
            .map(|list| {
                format!(
                    "{} findings, each with severity, line and message",
                    list.len()
                )
            })
            .map_err(Clone::clone),
    );
    checks.add(
        "finding_lines_in_code",
        after(&findings, "findings_well_formed", |list| {
            match list.iter().position(|&line| line > lines) {
                Some(index) => Err(format!(
                    "/findings/{index}/line is {}, the input code has {lines} lines",
                    list[index]
                )),
                None => Ok(format!("every line within the input's {lines} lines")),
            }
        }),
    );
    Ok(checks.finish())
}

/// A finding's line, once its fields are checked.
fn finding_line(index: usize, finding: &Value) -> Result<i64, String> {
    let at = |key: &str| format!("/findings/{index}/{key}");
    let severity = finding.get("severity").and_then(Value::as_str);
    if !severity.is_some_and(|severity| SEVERITIES.contains(&severity)) {
        return Err(format!(
            "{} must be one of {}",
            at("severity"),
            SEVERITIES.join(", ")
        ));
    }
    if !finding.get("message").is_some_and(Value::is_string) {
        return Err(format!("{} is not a string", at("message")));
    }
    match finding.get("line").and_then(as_integer) {
        Some(line) if line >= 1 => Ok(line),
        _ => Err(format!("{} is not an integer ≥ 1", at("line"))),
    }
}

/// `code.test.{language}`: the tests parse; they reference at least one top-level symbol
/// defined in the input code.
pub(crate) fn test(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let language = one_of(ctx, "language", &CODE_LANGUAGES)?;
    let code = ctx.input_str("code")?;
    ctx.input_str("test_framework")?;
    within_limit(code, ctx.options).map_err(|reason| VerifyError::input("/code", reason))?;
    // The input may have syntax errors (its symbols are still read); no parser at all is a
    // failed check, not a malformed question.
    let input = syntax::analyse(language, code);
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/tests", Kind::Str, true)]),
    );
    let parsed = parse_field(ctx.output, "/tests", language, ctx.options);
    checks.add("tests_parse", parses(&parsed, language));
    checks.add(
        "references_input_symbols",
        after(&parsed, "tests_parse", |tests| {
            let input = input
                .as_ref()
                .map_err(|reason| format!("input code: {reason}"))?;
            if input.top_level.is_empty() {
                return Err("the input code defines no top-level symbol to reference".to_owned());
            }
            let referenced: Vec<&String> =
                input.top_level.intersection(&tests.identifiers).collect();
            if referenced.is_empty() {
                Err(format!(
                    "the tests reference none of the input's symbols {}",
                    listing(&input.top_level)
                ))
            } else {
                Ok(format!(
                    "references {}",
                    referenced
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }),
    );
    Ok(checks.finish())
}

/// `code.translate.{src}.{tgt}`: parses as the `tgt` language.
pub(crate) fn translate(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    one_of(ctx, "src", &CODE_LANGUAGES)?;
    let target = one_of(ctx, "tgt", &CODE_LANGUAGES)?;
    ctx.input_str("code")?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/code", Kind::Str, true)]),
    );
    let parsed = parse_field(ctx.output, "/code", target, ctx.options);
    checks.add("code_parses", parses(&parsed, target));
    Ok(checks.finish())
}

fn within_limit(code: &str, options: &VerifyOptions) -> Result<(), String> {
    if code.len() > options.max_code_bytes {
        Err(format!(
            "code is {} bytes, over the limit of {}",
            code.len(),
            options.max_code_bytes
        ))
    } else {
        Ok(())
    }
}

/// Parses the string at `pointer`: `Ok` only for non-blank code with no syntax error.
fn parse_field(
    output: &Value,
    pointer: &str,
    language: &str,
    options: &VerifyOptions,
) -> Result<Syntax, String> {
    let code = fields::string(output, pointer)?;
    if code.trim().is_empty() {
        return Err(format!("{pointer} is empty: nothing to parse"));
    }
    within_limit(code, options)?;
    let syntax = syntax::analyse(language, code)?;
    match &syntax.first_error {
        Some(error) => Err(format!("does not parse as {language}: {error}")),
        None => Ok(syntax),
    }
}

fn parses(parsed: &Result<Syntax, String>, language: &str) -> Outcome {
    parsed
        .as_ref()
        .map(|syntax| {
            format!(
                "parses as {language}; defines {}",
                listing(&syntax.definitions)
            )
        })
        .map_err(Clone::clone)
}

fn listing(names: &std::collections::BTreeSet<String>) -> String {
    if names.is_empty() {
        return "nothing".to_owned();
    }
    let shown: Vec<String> = names
        .iter()
        .take(12)
        .map(|name| format!("`{name}`"))
        .collect();
    let more = names.len().saturating_sub(12);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}
