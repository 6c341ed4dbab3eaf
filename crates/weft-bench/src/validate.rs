//! `weft bench validate`: what weft's validation path costs over the validator it wraps.
//!
//! In process, no node: each case times `weft_contract::Descriptor::validate` against the raw
//! `jsonschema` validator built exactly as `weft_contract::CompiledSchema::compile` builds
//! it (draft 2020-12, the refusing retriever, the linear-time `regex` engine). Each run
//! interleaves [`ROUNDS`] rounds — weft then raw, raw then weft, alternately — of batches
//! sized to take `--seconds ÷ (2 × ROUNDS)`; a run's figures are the medians of its rounds,
//! and the reported figures the medians across runs.
//!
//! Cases:
//! - `order-valid`: a valid 20-item order against a nested schema (refs, patterns, enums,
//!   formats); raw baseline `is_valid` — the cheapest raw answer;
//! - `order-invalid`: the same order with three errors; both sides collect every error with
//!   its instance pointer, schema path and message (weft caps at 100);
//! - `echo-small`: `{"text": …}` against a one-property schema — weft's fixed overhead;
//! - `revision`: computing a descriptor's revision from its JSON value (RFC 8785
//!   canonicalization, then SHA-256) against SHA-256 alone over the same canonical bytes —
//!   what canonical form costs on top of the digest.
//!
//! Row keys: `case, weft_ns, raw_ns, ratio` (ratio = weft ÷ raw, the median of the per-round
//! ratios), plus `runs`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use weft_contract::revision::canonical_json;
use weft_contract::schema::DenyRemote;
use weft_contract::{Descriptor, DescriptorRevision, Limits, SchemaRole, ValidationFailure};

use crate::report::{Column, Report, row};
use crate::{BenchError, BenchOptions, median};

/// Interleaved rounds per run.
pub const ROUNDS: usize = 15;

/// The columns of the human table.
pub const COLUMNS: [Column; 4] = [
    ("case", "case"),
    ("weft_ns", "weft ns"),
    ("raw_ns", "raw ns"),
    ("ratio", "weft ÷ raw"),
];

/// An order-placement input schema: nested objects, arrays, `$ref`, enums, patterns, formats.
fn order_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["customer", "items", "currency"],
        "additionalProperties": false,
        "properties": {
            "customer": {
                "type": "object",
                "required": ["id", "email"],
                "properties": {
                    "id": {"type": "string", "pattern": "^cus_[A-Za-z0-9]{8,32}$"},
                    "email": {"type": "string", "format": "email", "maxLength": 254},
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "tier": {"enum": ["free", "pro", "enterprise"]}
                },
                "additionalProperties": false
            },
            "items": {"type": "array", "minItems": 1, "maxItems": 100, "items": {"$ref": "#/$defs/item"}},
            "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "notes": {"type": ["string", "null"], "maxLength": 2000},
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 20}
        },
        "$defs": {
            "item": {
                "type": "object",
                "required": ["sku", "quantity", "unit_price"],
                "additionalProperties": false,
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z0-9-]{4,20}$"},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "unit_price": {"type": "number", "exclusiveMinimum": 0},
                    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
                }
            }
        }
    })
}

fn order_payload() -> Value {
    let items: Vec<Value> = (0..20)
        .map(|i| {
            json!({"sku": format!("SKU-{i:04}"), "quantity": i + 1, "unit_price": 9.99 + f64::from(i),
                   "tags": ["a", "b", format!("t{i}")]})
        })
        .collect();
    json!({
        "customer": {"id": "cus_ABCdef123456", "email": "ada@example.com", "name": "Ada", "tier": "pro"},
        "items": items,
        "currency": "EUR",
        "notes": "leave at the door",
        "metadata": {"channel": "web", "campaign": "winter"}
    })
}

/// The order with three errors: a bad currency, a zero quantity, a malformed SKU.
fn invalid_order_payload() -> Value {
    let mut payload = order_payload();
    payload["currency"] = json!("euro");
    payload["items"][3]["quantity"] = json!(0);
    payload["items"][7]["sku"] = json!("bad sku");
    payload
}

fn echo_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}},
           "required": ["text"], "additionalProperties": false})
}

fn descriptor(id: &str, input: Value) -> Result<Descriptor, BenchError> {
    let value = json!({
        "id": id, "version": "1.0.0", "title": "Bench",
        "description": "A capability whose input is validated by the bench.",
        "input_schema": input,
        "output_schema": {"type": "object"},
    });
    Descriptor::from_value(&value, &Limits::default())
        .map_err(|e| BenchError::Setup(format!("descriptor {id}: {e}")))
}

/// The raw validator, built as `CompiledSchema::compile` builds weft's.
fn raw_validator(schema: &Value) -> Result<jsonschema::Validator, BenchError> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_retriever(DenyRemote)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
        .map_err(|e| BenchError::Setup(format!("raw validator: {e}")))
}

/// The raw validator collecting what weft reports for an invalid value.
fn raw_errors(raw: &jsonschema::Validator, value: &Value) -> Vec<ValidationFailure> {
    raw.iter_errors(value)
        .take(100)
        .map(|error| ValidationFailure {
            instance_pointer: error.instance_path().as_str().to_owned(),
            schema_path: error.schema_path().as_str().to_owned(),
            message: error.to_string(),
        })
        .collect()
}

type Check<'a> = Box<dyn Fn() -> usize + 'a>;

/// One case: two closures answering the same question, each returning a number (so the
/// optimizer cannot drop the work) that must agree between them.
struct Case<'a> {
    name: &'static str,
    weft: Check<'a>,
    raw: Check<'a>,
}

/// Nanoseconds per call of `f` over `iterations` calls.
fn time_batch(f: &dyn Fn() -> usize, iterations: u64) -> f64 {
    let started = Instant::now();
    for _ in 0..iterations {
        black_box(f());
    }
    started.elapsed().as_nanos() as f64 / iterations as f64
}

/// Calls of `f` that take about `batch`.
fn calibrate(f: &dyn Fn() -> usize, batch: Duration) -> u64 {
    let started = Instant::now();
    let mut calls = 0u64;
    while started.elapsed() < Duration::from_millis(5) {
        black_box(f());
        calls += 1;
    }
    let per_call = started.elapsed().as_secs_f64() / calls.max(1) as f64;
    ((batch.as_secs_f64() / per_call) as u64).max(1)
}

/// One run of one case: the medians of its interleaved rounds (weft ns, raw ns, ratio).
fn run_case(case: &Case<'_>, batch: Duration) -> (f64, f64, f64) {
    let weft_calls = calibrate(&case.weft, batch);
    let raw_calls = calibrate(&case.raw, batch);
    let (mut weft, mut raw, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (w, r) = if round % 2 == 0 {
            let w = time_batch(&case.weft, weft_calls);
            (w, time_batch(&case.raw, raw_calls))
        } else {
            let r = time_batch(&case.raw, raw_calls);
            (time_batch(&case.weft, weft_calls), r)
        };
        weft.push(w);
        raw.push(r);
        ratios.push(w / r.max(f64::MIN_POSITIVE));
    }
    (median(&mut weft), median(&mut raw), median(&mut ratios))
}

/// Runs the scenario (see the module documentation).
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let order = descriptor("bench.order.place", order_schema())?;
    let echo = descriptor("bench.echo", echo_schema())?;
    let order_raw = raw_validator(&order_schema())?;
    let echo_raw = raw_validator(&echo_schema())?;
    let valid = order_payload();
    let invalid = invalid_order_payload();
    let small = json!({"text": "hello weft"});
    let order_value = order.canonical_value();
    let order_bytes = order.canonical_json();
    // Both sides answer with the digest's last hex digit (+1, so never zero): they agree
    // only if they hashed the same bytes.
    let last_digit = |text: &str| text.bytes().last().map_or(0, |b| usize::from(b) + 1);
    let cases = [
        Case {
            name: "order-valid",
            weft: Box::new(|| usize::from(order.validate(SchemaRole::Input, &valid, 100).is_ok())),
            raw: Box::new(|| usize::from(order_raw.is_valid(&valid))),
        },
        Case {
            name: "order-invalid",
            weft: Box::new(|| {
                order
                    .validate(SchemaRole::Input, &invalid, 100)
                    .err()
                    .map_or(0, |e| e.errors.len())
            }),
            raw: Box::new(|| raw_errors(&order_raw, &invalid).len()),
        },
        Case {
            name: "echo-small",
            weft: Box::new(|| usize::from(echo.validate(SchemaRole::Input, &small, 100).is_ok())),
            raw: Box::new(|| usize::from(echo_raw.is_valid(&small))),
        },
        Case {
            name: "revision",
            weft: Box::new(|| {
                canonical_json(&order_value).map_or(0, |bytes| {
                    last_digit(DescriptorRevision::of_canonical_bytes(&bytes).as_str())
                })
            }),
            raw: Box::new(|| {
                let digest = Sha256::digest(&order_bytes);
                let low = digest.last().map_or(0, |b| b & 0x0f);
                last_digit(&format!("{low:x}"))
            }),
        },
    ];
    for case in &cases {
        let (w, r) = ((case.weft)(), (case.raw)());
        if w != r || w == 0 {
            return Err(BenchError::Setup(format!(
                "{}: weft and the raw validator disagree ({w} vs {r})",
                case.name
            )));
        }
    }
    let runs = options.runs.max(1);
    let batch = options.measure / (2 * ROUNDS as u32);
    let mut rows = Vec::new();
    for case in &cases {
        let warm = options.warm_up / 2;
        let started = Instant::now();
        while started.elapsed() < warm {
            black_box((case.weft)());
            black_box((case.raw)());
        }
        let (mut weft, mut raw, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..runs {
            let (w, r, ratio) = run_case(case, batch);
            eprintln!(
                "validate run {}: {:<13} weft {w:>8.0} ns  raw {r:>8.0} ns  ratio {ratio:.3}",
                run + 1,
                case.name
            );
            weft.push(w);
            raw.push(r);
            ratios.push(ratio);
        }
        let mut row = row(
            "validate",
            &[
                ("weft_ns", median(&mut weft)),
                ("raw_ns", median(&mut raw)),
                ("ratio", median(&mut ratios)),
                ("runs", runs as f64),
            ],
        );
        row.insert("case".into(), Value::from(case.name));
        rows.push(row);
    }
    Ok(Report {
        title: format!(
            "validate: Descriptor::validate vs the raw jsonschema validator configured identically, and a revision vs SHA-256 alone, in process \
             (median of {runs} run(s) of {ROUNDS} interleaved rounds, {} s per case per run)",
            options.measure.as_secs_f64()
        ),
        columns: COLUMNS.to_vec(),
        rows,
    })
}
