//! Property test: generated schema pairs and instances. Whenever the checker calls a change
//! compatible, every generated instance the including direction requires is checked with
//! weft's own validator: for inputs, valid under OLD ⇒ valid under NEW; for outputs, valid
//! under NEW ⇒ valid under OLD. The checker must also never panic.
//!
//! `WEFT_COMPAT_CASES` sets the number of schema pairs (default 2,000).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};
use weft_compat::{Direction, Effect, compare_schemas};
use weft_contract::{CompiledSchema, Limits};

/// Scalar keywords and the values each may take.
fn scalar_keywords() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "type",
            vec![
                json!("integer"),
                json!("number"),
                json!("string"),
                json!("boolean"),
                json!(["string", "null"]),
                json!(["integer", "null"]),
            ],
        ),
        ("minimum", vec![json!(0), json!(1), json!(3)]),
        ("maximum", vec![json!(1), json!(3), json!(5)]),
        ("exclusiveMinimum", vec![json!(0), json!(1)]),
        ("exclusiveMaximum", vec![json!(3), json!(6)]),
        ("multipleOf", vec![json!(1), json!(2), json!(0.5)]),
        ("minLength", vec![json!(0), json!(1), json!(2)]),
        ("maxLength", vec![json!(1), json!(2), json!(5)]),
        ("pattern", vec![json!("^a"), json!("^[ab]*$"), json!("b")]),
        ("format", vec![json!("email"), json!("date")]),
        (
            "enum",
            vec![
                json!([1, 2]),
                json!(["a", "b"]),
                json!([1, "a", null]),
                json!([0.5, 1]),
            ],
        ),
        ("const", vec![json!(1), json!("a")]),
    ]
}

/// A keyword map pair: each keyword is absent or one of its values on each side; a side
/// keeps the other's choice most of the time, so most pairs differ in a few keywords.
fn keyword_pair(
    options: Vec<(&'static str, Vec<Value>)>,
) -> BoxedStrategy<(Map<String, Value>, Map<String, Value>)> {
    let per_keyword: Vec<BoxedStrategy<(Option<Value>, Option<Value>)>> = options
        .into_iter()
        .map(|(_, values)| {
            let one = prop::option::weighted(0.25, prop::sample::select(values));
            (one.clone(), one, prop::bool::weighted(0.75))
                .prop_map(|(a, b, same)| if same { (a.clone(), a) } else { (a, b) })
                .boxed()
        })
        .collect();
    let names: Vec<&'static str> = scalar_keywords().iter().map(|k| k.0).collect();
    per_keyword
        .prop_map(move |choices| {
            let (mut old, mut new) = (Map::new(), Map::new());
            for (name, (a, b)) in names.iter().zip(choices) {
                if let Some(a) = a {
                    old.insert((*name).to_owned(), a);
                }
                if let Some(b) = b {
                    new.insert((*name).to_owned(), b);
                }
            }
            (old, new)
        })
        .boxed()
}

fn either<T: Clone + std::fmt::Debug + 'static>(values: Vec<T>) -> BoxedStrategy<(T, T)> {
    let one = prop::sample::select(values);
    (one.clone(), one, prop::bool::weighted(0.7))
        .prop_map(|(a, b, same)| if same { (a.clone(), a) } else { (a, b) })
        .boxed()
}

type Pair = (Value, Value);

fn schema_pair() -> BoxedStrategy<Pair> {
    let leaf = keyword_pair(scalar_keywords())
        .prop_map(|(a, b)| (Value::Object(a), Value::Object(b)))
        .boxed();
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            3 => object_pair(inner.clone()),
            1 => array_pair(inner.clone()),
            1 => union_pair(inner),
        ]
    })
    .boxed()
}

fn object_pair(inner: BoxedStrategy<Pair>) -> BoxedStrategy<Pair> {
    let property = (inner, either(vec![true, false]), either(vec![false, true]));
    let model = either(vec![
        None,
        Some(("additionalProperties", json!(false))),
        Some(("additionalProperties", json!({"type": "integer"}))),
        Some(("unevaluatedProperties", json!(false))),
    ]);
    (
        prop::collection::vec(property, 3),
        model,
        either(vec![true, false]),
    )
        .prop_map(|(props, (model_a, model_b), (typed_a, typed_b))| {
            let mut sides = [json!({}), json!({})];
            for (i, side) in sides.iter_mut().enumerate() {
                let (model, typed) = if i == 0 {
                    (model_a.clone(), typed_a)
                } else {
                    (model_b.clone(), typed_b)
                };
                if typed {
                    side["type"] = json!("object");
                }
                side["properties"] = json!({});
                side["required"] = json!([]);
                if let Some((k, v)) = model {
                    side[k] = v;
                }
            }
            for ((name, ((a, b), (pa, pb), (ra, rb))), _) in
                ["a", "b", "c"].iter().zip(props).zip(0..)
            {
                for (side, present, required, schema) in
                    [(0, pa, ra, a.clone()), (1, pb, rb, b.clone())]
                {
                    if present {
                        sides[side]["properties"][*name] = schema;
                    }
                    if required {
                        sides[side]["required"]
                            .as_array_mut()
                            .unwrap()
                            .push(json!(name));
                    }
                }
            }
            let [a, b] = sides;
            (a, b)
        })
        .boxed()
}

fn array_pair(inner: BoxedStrategy<Pair>) -> BoxedStrategy<Pair> {
    let counts = keyword_pair(vec![
        ("minItems", vec![json!(0), json!(1), json!(2)]),
        ("maxItems", vec![json!(1), json!(2), json!(3)]),
        ("uniqueItems", vec![json!(true), json!(false)]),
    ]);
    (
        inner.clone(),
        inner,
        either(vec![0usize, 1, 2]),
        either(vec![false, true]),
        counts,
    )
        .prop_map(
            |((ia, ib), (pa, pb), (na, nb), (closed_a, closed_b), (ca, cb))| {
                let build = |items: Value,
                             prefix: Value,
                             n: usize,
                             closed: bool,
                             counts: Map<String, Value>| {
                    let mut s = json!({"type": "array"});
                    if n > 0 {
                        s["prefixItems"] = Value::Array(vec![prefix; n]);
                    }
                    s["items"] = if closed { json!(false) } else { items };
                    for (k, v) in counts {
                        s[k] = v;
                    }
                    s
                };
                (
                    build(ia, pa, na, closed_a, ca),
                    build(ib, pb, nb, closed_b, cb),
                )
            },
        )
        .boxed()
}

fn union_pair(inner: BoxedStrategy<Pair>) -> BoxedStrategy<Pair> {
    let branch = (inner, either(vec![true, false]));
    (
        either(vec!["anyOf", "oneOf", "allOf"]),
        prop::collection::vec(branch, 1..4),
    )
        .prop_map(|((ka, kb), branches)| {
            let mut a = Vec::new();
            let mut b = Vec::new();
            for (i, ((x, y), (pa, pb))) in branches.into_iter().enumerate() {
                if pa || i == 0 {
                    a.push(x);
                }
                if pb || i == 0 {
                    b.push(y);
                }
            }
            (json!({ka: a}), json!({kb: b}))
        })
        .boxed()
}

/// Sometimes moves the pair behind a `$ref` into `$defs`.
fn root_pair() -> BoxedStrategy<Pair> {
    (schema_pair(), 0..3u8)
        .prop_map(|((a, b), wrap)| match wrap {
            0 => (
                json!({"$defs": {"d": a}, "$ref": "#/$defs/d"}),
                json!({"$defs": {"d": b}, "$ref": "#/$defs/d"}),
            ),
            1 => (
                json!({"$defs": {"d": a}, "properties": {"r": {"$ref": "#/$defs/d"}}}),
                json!({"$defs": {"d": b}, "properties": {"r": {"$ref": "#/$defs/d"}}}),
            ),
            _ => (a, b),
        })
        .boxed()
}

fn instance() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..7).prop_map(|n| json!(n)),
        prop::sample::select(vec![0.5, 1.5, -1.5, 2.5]).prop_map(|f| json!(f)),
        prop::sample::select(vec!["", "a", "ab", "b", "ba", "aaa", "x@y", "1"])
            .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 20, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "c", "d", "r"]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
    .boxed()
}

static CASES: AtomicUsize = AtomicUsize::new(0);
static COMPATIBLE: AtomicUsize = AtomicUsize::new(0);
static CHECKED: AtomicUsize = AtomicUsize::new(0);
static CHANGED: AtomicUsize = AtomicUsize::new(0);

fn verify(old: &Value, new: &Value, instances: &[Value]) -> Result<(), TestCaseError> {
    let limits = Limits::default();
    let (Ok(old_c), Ok(new_c)) = (
        CompiledSchema::compile(old, &limits),
        CompiledSchema::compile(new, &limits),
    ) else {
        return Ok(());
    };
    CASES.fetch_add(1, Ordering::Relaxed);
    for dir in [Direction::Input, Direction::Output] {
        let findings = compare_schemas(old, new, dir);
        if findings.iter().any(|f| f.effect != Effect::Compatible) {
            continue;
        }
        COMPATIBLE.fetch_add(1, Ordering::Relaxed);
        if !findings.is_empty() {
            CHANGED.fetch_add(1, Ordering::Relaxed);
        }
        let (sub, sup) = match dir {
            Direction::Input => (&old_c, &new_c),
            Direction::Output => (&new_c, &old_c),
        };
        for value in instances {
            if sub.is_valid(value) {
                CHECKED.fetch_add(1, Ordering::Relaxed);
                prop_assert!(
                    sup.is_valid(value),
                    "{dir:?} called compatible, but {value} breaks it\nold: {old}\nnew: {new}\nfindings: {findings:#?}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn compatible_verdicts_hold_on_sampled_instances() {
    let cases = std::env::var("WEFT_COMPAT_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let strategy = (root_pair(), prop::collection::vec(instance(), 64));
    let result = runner.run(&strategy, |((old, new), instances)| {
        verify(&old, &new, &instances)
    });
    eprintln!(
        "weft-compat property: {} schema pairs compiled, {} compatible verdicts ({} on changed \
         schemas), {} instance checks",
        CASES.load(Ordering::Relaxed),
        COMPATIBLE.load(Ordering::Relaxed),
        CHANGED.load(Ordering::Relaxed),
        CHECKED.load(Ordering::Relaxed)
    );
    if let Err(error) = result {
        panic!("{error}");
    }
}
