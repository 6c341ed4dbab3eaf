//! Code rows.

use serde_json::{Value, json};

use super::schema::{
    array, boolean, closed, described, integer, one_of, open, opt, req, string, with,
};
use super::{Bindings, Placeholder, Row};
use crate::placeholder::ValueSet;

/// The severities of a `code.review` finding: the seed says "enum" without listing it, so
/// weft fixes the usual security scale and the SARIF levels (`weft-verify` checks the same).
pub const REVIEW_SEVERITIES: [&str; 8] = [
    "critical", "high", "medium", "low", "info", "error", "warning", "note",
];

const LANGUAGE: Placeholder = Placeholder {
    name: "language",
    set: ValueSet::ProgrammingLanguage,
    example: None,
};

/// `code.execute.sandboxed`: default of `timeout_ms`.
pub const SANDBOX_DEFAULT_TIMEOUT_MS: u64 = 5000;
/// `code.execute.sandboxed`: largest `timeout_ms`.
pub const SANDBOX_MAX_TIMEOUT_MS: u64 = 30000;
/// `code.execute.sandboxed`: the runtimes of v0.1.
pub const SANDBOX_LANGUAGES: [&str; 1] = ["python"];

/// A string of source code, described with the bound language when there is one.
fn source(bindings: &Bindings, placeholder: &str) -> Value {
    match bindings.get(placeholder) {
        Some(code) => {
            let name = ValueSet::ProgrammingLanguage
                .display_name(code)
                .unwrap_or(code);
            described(string(), &format!("{name} source code."))
        }
        None => described(string(), &format!("Source code in `{{{placeholder}}}`.")),
    }
}

/// `code.*`, in the seed's order.
pub(super) static ROWS: [Row; 6] = [
    Row {
        pattern: "code.generate.{language}.script",
        title: "Generate a {language} script",
        seed_input: "{ task: string, context?: string }",
        seed_output: "{ code: string, deps?: string[] }",
        verification: "non-empty; parses as valid `language`",
        notes: "",
        placeholders: &[LANGUAGE],
        distinct: None,
        input: |_| closed(vec![req("task", string()), opt("context", string())]),
        output: |b| {
            open(vec![
                req("code", source(b, "language")),
                opt("deps", array(string())),
            ])
        },
    },
    Row {
        pattern: "code.generate.{language}.function",
        title: "Generate a {language} function",
        seed_input: "{ signature: string, behavior: string }",
        seed_output: "{ code: string }",
        verification: "parses; matches signature",
        notes: "",
        placeholders: &[LANGUAGE],
        distinct: None,
        input: |_| closed(vec![req("signature", string()), req("behavior", string())]),
        output: |b| open(vec![req("code", source(b, "language"))]),
    },
    Row {
        pattern: "code.review.{language}",
        title: "Review {language} code",
        seed_input: "{ code: string }",
        seed_output: "{ findings: [{ severity: enum, line: int, message: string }] }",
        verification: "valid JSON; findings array (can be empty)",
        notes: "The seed types `severity` as an enum without listing its values; weft fixes \
                it to the usual security scale plus SARIF levels: critical, high, medium, \
                low, info, error, warning, note.",
        placeholders: &[LANGUAGE],
        distinct: None,
        input: |b| closed(vec![req("code", source(b, "language"))]),
        output: |_| {
            open(vec![req(
                "findings",
                array(open(vec![
                    req(
                        "severity",
                        json!({"type": "string", "enum": REVIEW_SEVERITIES}),
                    ),
                    req("line", integer()),
                    req("message", string()),
                ])),
            )])
        },
    },
    Row {
        pattern: "code.test.{language}",
        title: "Write tests for {language} code",
        seed_input: "{ code: string, test_framework: string }",
        seed_output: "{ tests: string }",
        verification: "parses; references symbols from input code",
        notes: "",
        placeholders: &[LANGUAGE],
        distinct: None,
        input: |b| {
            closed(vec![
                req("code", source(b, "language")),
                req("test_framework", string()),
            ])
        },
        output: |b| open(vec![req("tests", source(b, "language"))]),
    },
    Row {
        pattern: "code.translate.{src}.{tgt}",
        title: "Translate {src} code to {tgt}",
        seed_input: "{ code: string }",
        seed_output: "{ code: string }",
        verification: "parses as `tgt` language",
        notes: "",
        placeholders: &[
            Placeholder {
                name: "src",
                set: ValueSet::ProgrammingLanguage,
                example: None,
            },
            Placeholder {
                name: "tgt",
                set: ValueSet::ProgrammingLanguage,
                example: None,
            },
        ],
        distinct: Some(("src", "tgt")),
        input: |b| closed(vec![req("code", source(b, "src"))]),
        output: |b| open(vec![req("code", source(b, "tgt"))]),
    },
    Row {
        pattern: "code.execute.sandboxed",
        title: "Execute code in a sandbox",
        seed_input: "{ code: string, language?: enum, stdin?: string, timeout_ms?: int }",
        seed_output: "{ stdout: string, stderr: string, exit_code: int, duration_ms: int, \
                      truncated: bool }",
        verification: "stdout/stderr are strings; `exit_code` is int; `duration_ms` ≤ \
                       effective timeout (with grace); not malformed",
        notes: "`language` is `python` only in v0.1 (Pyodide WASM); sellers advertise the \
                runtime and reject mismatches. The sandbox guarantees no host filesystem \
                access and no outbound network by default, bounded stdout/stderr capture \
                (truncated beyond the seller's cap, with `truncated: true`), an enforced \
                wall-clock timeout (`timeout_ms`, default 5000, max 30000) and a \
                deterministic exit code: 0 on clean termination, 1 on an uncaught \
                exception, 124 on timeout.",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                req("code", string()),
                opt("language", one_of(&SANDBOX_LANGUAGES)),
                opt("stdin", string()),
                opt(
                    "timeout_ms",
                    with(
                        with(
                            with(integer(), "minimum", json!(1)),
                            "maximum",
                            json!(SANDBOX_MAX_TIMEOUT_MS),
                        ),
                        "default",
                        json!(SANDBOX_DEFAULT_TIMEOUT_MS),
                    ),
                ),
            ])
        },
        output: |_| {
            open(vec![
                req("stdout", string()),
                req("stderr", string()),
                req("exit_code", integer()),
                req("duration_ms", integer()),
                req("truncated", boolean()),
            ])
        },
    },
];
