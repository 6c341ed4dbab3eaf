//! Contract-core costs, each measured against a baseline in the same run:
//!
//! - `revision/*`: computing a revision (RFC 8785 canonicalization + SHA-256) versus plain
//!   SHA-256 over the same canonical bytes, reported as throughput of canonical JSON.
//! - `validate/*`: validating a realistic payload through weft's path
//!   (`Descriptor::validate`) versus calling the raw `jsonschema` validator directly.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use weft_contract::revision::canonical_json;
use weft_contract::{Descriptor, DescriptorRevision, Limits, SchemaRole};

/// An order-placement capability: nested objects, arrays, enums, patterns and formats.
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
            "items": {
                "type": "array", "minItems": 1, "maxItems": 100,
                "items": {"$ref": "#/$defs/item"}
            },
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

fn descriptor() -> Descriptor {
    let value = json!({
        "id": "shop.order.place",
        "version": "2.3.1",
        "title": "Place an order",
        "description": "Place an order for one customer. ".repeat(40),
        "input_schema": order_schema(),
        "output_schema": {"type": "object", "required": ["order_id"], "properties": {"order_id": {"type": "string"}}},
        "annotations": {"latency": "interactive", "owner": "checkout"}
    });
    Descriptor::from_value(&value, &Limits::default()).unwrap()
}

fn revision(c: &mut Criterion) {
    let d = descriptor();
    let value = d.canonical_value();
    let bytes = d.canonical_json();
    let mut group = c.benchmark_group("revision");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("weft_canonicalize_and_sha256", |b| {
        b.iter(|| {
            let canonical = canonical_json(black_box(&value)).unwrap();
            DescriptorRevision::of_canonical_bytes(&canonical)
        })
    });
    group.bench_function("baseline_sha256_only", |b| {
        b.iter(|| Sha256::digest(black_box(&bytes)))
    });
    group.finish();
}

fn validate(c: &mut Criterion) {
    let d = descriptor();
    let payload = order_payload();
    // The raw validator configured as weft configures it (same draft, same regex engine), so
    // the ratio isolates weft's own overhead.
    let raw = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&order_schema())
        .unwrap();
    assert!(d.validate(SchemaRole::Input, &payload, 100).is_ok());
    assert!(raw.validate(&payload).is_ok());
    let mut group = c.benchmark_group("validate");
    group.bench_function("weft_descriptor_validate", |b| {
        b.iter(|| d.validate(SchemaRole::Input, black_box(&payload), 100))
    });
    group.bench_function("baseline_raw_is_valid", |b| {
        b.iter(|| raw.is_valid(black_box(&payload)))
    });
    group.bench_function("baseline_raw_validate", |b| {
        b.iter(|| raw.validate(black_box(&payload)).is_ok())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = revision, validate
}
criterion_main!(benches);
