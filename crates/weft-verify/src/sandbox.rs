//! `code.execute.sandboxed`: the result of running code in the seller's sandbox.
//!
//! The effective timeout is the input's `timeout_ms` (default 5000, at most 30000 in v0.1).
//! `duration_ms` may exceed it by at most [`crate::VerifyOptions::sandbox_grace_ms`]; an exit
//! code of 124 (timeout) must come with a duration of at least timeout − grace.

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks};

/// The v0.1 default `timeout_ms`.
pub(crate) const DEFAULT_TIMEOUT_MS: i64 = 5_000;
/// The v0.1 maximum `timeout_ms`.
pub(crate) const MAX_TIMEOUT_MS: i64 = 30_000;
/// Exit codes v0.1 allows: clean exit, uncaught exception, timeout.
pub(crate) const EXIT_CODES: [i64; 3] = [0, 1, 124];
/// The timeout exit code.
const TIMEOUT_EXIT: i64 = 124;

/// `code.execute.sandboxed`.
pub(crate) fn execute(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("code")?;
    ctx.input_opt_str("stdin")?;
    if let Some(language) = ctx.input_opt_str("language")?
        && language != "python"
    {
        return Err(VerifyError::input(
            "/language",
            format!("`{language}` is not a v0.1 sandbox language (only python)"),
        ));
    }
    let timeout = ctx
        .input_opt_int("timeout_ms")?
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    if !(1..=MAX_TIMEOUT_MS).contains(&timeout) {
        return Err(VerifyError::input(
            "/timeout_ms",
            format!("must be between 1 and {MAX_TIMEOUT_MS}"),
        ));
    }
    let grace = i64::try_from(ctx.options.sandbox_grace_ms).unwrap_or(i64::MAX);
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/stdout", Kind::Str, true),
                ("/stderr", Kind::Str, true),
                ("/exit_code", Kind::Int, true),
                ("/duration_ms", Kind::Int, true),
                ("/truncated", Kind::Bool, true),
            ],
        ),
    );
    for stream in ["stdout", "stderr"] {
        checks.add(
            &format!("{stream}_is_string"),
            fields::string(output, &format!("/{stream}"))
                .map(|text| format!("{} bytes", text.len())),
        );
    }
    let exit_code = fields::integer(output, "/exit_code");
    checks.add(
        "exit_code_valid",
        exit_code.clone().and_then(|code| {
            if EXIT_CODES.contains(&code) {
                Ok(format!("exit code {code}"))
            } else {
                Err(format!("exit code {code} is not 0, 1 or 124"))
            }
        }),
    );
    let duration = fields::integer(output, "/duration_ms");
    let limit = timeout.saturating_add(grace);
    checks.add(
        "duration_within_timeout",
        duration.clone().and_then(|duration| {
            if duration < 0 {
                Err(format!("duration_ms {duration} is negative"))
            } else if duration <= limit {
                Ok(format!(
                    "{duration} ms ≤ timeout {timeout} ms + grace {grace} ms"
                ))
            } else {
                Err(format!(
                    "{duration} ms > timeout {timeout} ms + grace {grace} ms"
                ))
            }
        }),
    );
    let earliest_timeout = timeout.saturating_sub(grace);
    checks.add(
        "timeout_exit_consistent",
        match (exit_code, duration) {
            (Ok(TIMEOUT_EXIT), Ok(duration)) if duration >= earliest_timeout => Ok(format!(
                "exit 124 after {duration} ms, near the {timeout} ms timeout"
            )),
            (Ok(TIMEOUT_EXIT), Ok(duration)) => Err(format!(
                "exit 124 (timeout) after only {duration} ms; the timeout is {timeout} ms (grace {grace} ms)"
            )),
            (Ok(code), Ok(_)) => Ok(format!("exit {code} is not a timeout")),
            (Err(problem), _) | (_, Err(problem)) => Err(format!("not checked: {problem}")),
        },
    );
    checks.add(
        "truncated_is_bool",
        fields::boolean(output, "/truncated").map(|truncated| format!("truncated = {truncated}")),
    );
    Ok(checks.finish())
}
