//! Arrays: `prefixItems` and `items` position by position, `minItems`/`maxItems`,
//! `uniqueItems`.

use serde_json::{Map, Value};

use super::{Ctx, Loc, Side, child};

static TRUE: Value = Value::Bool(true);

/// The subschema for position `index` on one side, and where it is.
fn position<'v>(map: &'v Map<String, Value>, pointer: &str, index: usize) -> (&'v Value, String) {
    let prefix = map.get("prefixItems").and_then(Value::as_array);
    if let Some(schema) = prefix.and_then(|p| p.get(index)) {
        return (
            schema,
            child(&child(pointer, "prefixItems"), &index.to_string()),
        );
    }
    rest(map, pointer)
}

/// The subschema for positions past `prefixItems`.
fn rest<'v>(map: &'v Map<String, Value>, pointer: &str) -> (&'v Value, String) {
    (map.get("items").unwrap_or(&TRUE), child(pointer, "items"))
}

fn prefix_len(map: &Map<String, Value>) -> usize {
    map.get("prefixItems")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

impl Ctx<'_> {
    /// Compares the array keywords of a pair.
    pub(super) fn array(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        let tuple = prefix_len(o).max(prefix_len(n));
        for index in 0..tuple {
            let (a, pa) = position(o, &loc.old, index);
            let (b, pb) = position(n, &loc.new, index);
            let pair = Loc { old: pa, new: pb };
            self.within(&index.to_string(), |ctx| ctx.schema(a, b, &pair));
        }
        let (a, pa) = rest(o, &loc.old);
        let (b, pb) = rest(n, &loc.new);
        let pair = Loc { old: pa, new: pb };
        self.within(&tuple.to_string(), |ctx| ctx.schema(a, b, &pair));
        self.counts(o, n, loc, ("minItems", "maxItems"), "an array of {} items");
        let unique = |m: &Map<String, Value>| m.get("uniqueItems") == Some(&Value::Bool(true));
        let (a, b) = (unique(o), unique(n));
        if a != b {
            let at = self.at();
            let dup = Side::Witness(format!("{at} is an array with two equal items"));
            let (old_only, new_only, change, present) = if b {
                (dup, Side::Empty, "unique_items_added", &loc.new)
            } else {
                (Side::Empty, dup, "unique_items_removed", &loc.old)
            };
            self.judge(
                child(present, "uniqueItems"),
                change,
                format!("`uniqueItems` changed from {a} to {b}"),
                old_only,
                new_only,
            );
        }
    }
}
