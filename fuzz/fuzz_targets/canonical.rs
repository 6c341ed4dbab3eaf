//! Arbitrary JSON value → RFC 8785 canonical JSON → revision.
//!
//! The input is JSON text when it parses (so the seeds are readable), otherwise a value is
//! built from the bytes with `arbitrary`. Checks: canonicalization never panics; the
//! canonical text is UTF-8 JSON that parses back to the same value (numbers compared as
//! f64, since `1.0` and `1` are one number in JCS); re-canonicalizing it gives the same bytes
//! and so the same revision (idempotence); key order never matters.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value};
use weft_contract::DescriptorRevision;
use weft_contract::revision::canonical_json;

fuzz_target!(|data: &[u8]| {
    let value = match serde_json::from_slice::<Value>(data) {
        Ok(value) => value,
        Err(_) => match arbitrary_value(&mut Unstructured::new(data), 0) {
            Ok(value) => value,
            Err(_) => return,
        },
    };
    let Ok(first) = canonical_json(&value) else {
        return;
    };
    let text = std::str::from_utf8(&first).expect("canonical JSON is UTF-8");
    let reparsed: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("canonical text does not parse: {e}\n{text}"));
    assert!(
        same_value(&value, &reparsed),
        "value changed:\n{value}\n{text}"
    );
    let second = canonical_json(&reparsed).expect("canonical value canonicalizes again");
    assert_eq!(first, second, "canonicalization is not idempotent");
    assert_eq!(
        DescriptorRevision::of_canonical_bytes(&first),
        DescriptorRevision::of_canonical_bytes(&second)
    );
    if let Value::Object(map) = &value {
        // Same members in reverse insertion order: same canonical bytes.
        let reversed: Map<String, Value> = map
            .iter()
            .rev()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let third = canonical_json(&Value::Object(reversed)).expect("reordered canonicalizes");
        assert_eq!(first, third, "key order changed the canonical form");
    }
});

/// Structural equality, numbers compared by their f64 value (what JCS writes).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// A JSON value from raw bytes, nesting at most 32 levels.
fn arbitrary_value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let choice = if depth >= 32 {
        u.int_in_range(0..=5)?
    } else {
        u.int_in_range(0..=7)?
    };
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(Number::from(u.arbitrary::<i64>()?)),
        3 => Value::Number(Number::from(u.arbitrary::<u64>()?)),
        4 => Number::from_f64(u.arbitrary::<f64>()?).map_or(Value::Null, Value::Number),
        5 => Value::String(u.arbitrary()?),
        6 => {
            let mut items = Vec::new();
            u.arbitrary_loop(Some(0), Some(16), |u| {
                items.push(arbitrary_value(u, depth + 1)?);
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            Value::Array(items)
        }
        _ => {
            let mut map = Map::new();
            u.arbitrary_loop(Some(0), Some(16), |u| {
                let key: String = u.arbitrary()?;
                map.insert(key, arbitrary_value(u, depth + 1)?);
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            Value::Object(map)
        }
    })
}
