//! `data.*` rows: weather lookups, web search, structured extraction, scraping, market prices.

pub(crate) mod extract;
pub(crate) mod lookup;
pub(crate) mod weather;

use serde_json::Value;

/// The nesting depth of a JSON value, measured without recursion, stopping once `limit` is
/// exceeded (returns `limit + 1` then).
pub(crate) fn depth(value: &Value, limit: usize) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        if deepest > limit {
            return limit + 1;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, level + 1))),
            Value::Object(members) => stack.extend(members.values().map(|item| (item, level + 1))),
            _ => {}
        }
    }
    deepest
}
