//! Objects: `properties`, `required`, `additionalProperties`, `unevaluatedProperties`,
//! `patternProperties`, `minProperties`/`maxProperties`.
//!
//! A property name is governed, on each side, by exactly one of: its `properties` entry,
//! the `patternProperties` it matches, or the content model (`additionalProperties`, or
//! `unevaluatedProperties` when no applicator can evaluate properties). Every name declared
//! on either side is compared under what governs it on each side, so adding `p` to an open
//! model compares "anything" with `p`'s schema, and adding it to a closed one compares
//! "nothing" with it. Undeclared names are compared through the two content models.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use weft_contract::{CompiledSchema, Limits};

use super::{Ctx, Loc, Side, child, contains_ref, strip};

static TRUE: Value = Value::Bool(true);

/// Keywords that evaluate properties in place, which `unevaluatedProperties` depends on.
const APPLICATORS: [&str; 9] = [
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// What governs a property name on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Governed {
    Declared,
    Pattern,
    Model,
}

/// The schema a name is validated with on one side, where it is, and why.
struct Slot<'v> {
    value: &'v Value,
    pointer: String,
    by: Governed,
}

/// The content model of an object: the subschema for undeclared names.
struct Model<'v> {
    value: &'v Value,
    pointer: String,
    keyword: &'static str,
}

impl Model<'_> {
    fn describe(&self) -> String {
        match self.value {
            Value::Bool(true) => "open (any undeclared property allowed)".to_owned(),
            Value::Object(m) if m.is_empty() => {
                format!("open (`{}: {{}}`)", self.keyword)
            }
            Value::Bool(false) => format!("closed (`{}: false`)", self.keyword),
            _ => format!("constrained by `{}`", self.keyword),
        }
    }

    fn closed(&self) -> bool {
        self.value == &Value::Bool(false)
    }
}

fn model<'v>(map: &'v Map<String, Value>, pointer: &str) -> Model<'v> {
    if let Some(value) = map.get("additionalProperties") {
        return Model {
            value,
            pointer: child(pointer, "additionalProperties"),
            keyword: "additionalProperties",
        };
    }
    match map.get("unevaluatedProperties") {
        Some(value) if !has_applicators(map) => Model {
            value,
            pointer: child(pointer, "unevaluatedProperties"),
            keyword: "unevaluatedProperties",
        },
        _ => Model {
            value: &TRUE,
            pointer: child(pointer, "additionalProperties"),
            keyword: "additionalProperties",
        },
    }
}

fn has_applicators(map: &Map<String, Value>) -> bool {
    APPLICATORS.iter().any(|k| map.contains_key(*k))
}

fn properties(map: &Map<String, Value>) -> Option<&Map<String, Value>> {
    map.get("properties").and_then(Value::as_object)
}

fn required(map: &Map<String, Value>) -> BTreeSet<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether `name` matches `pattern`, decided by weft's own validator (the same regex
/// engine the fabric uses). `None` when the pattern does not compile.
fn matches(pattern: &str, name: &str) -> Option<bool> {
    let schema = serde_json::json!({ "pattern": pattern });
    CompiledSchema::compile(&schema, &Limits::default())
        .ok()
        .map(|compiled| compiled.is_valid(&Value::String(name.to_owned())))
}

impl Ctx<'_> {
    /// Compares the object keywords of a pair.
    pub(super) fn object(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        for (map, pointer) in [(o, &loc.old), (n, &loc.new)] {
            if map.contains_key("unevaluatedProperties")
                && has_applicators(map)
                && strip(o) != strip(n)
            {
                return self.unknown(
                    child(pointer, "unevaluatedProperties"),
                    "unevaluated_properties_not_analysed",
                    "`unevaluatedProperties` next to applicators (`allOf`, `$ref`, …) depends on \
                     what every branch evaluates; a changed schema of this shape is not analysed"
                        .into(),
                );
            }
        }
        self.patterns(o, n, loc);
        let empty = Map::new();
        let (op, np) = (
            properties(o).unwrap_or(&empty),
            properties(n).unwrap_or(&empty),
        );
        let names: BTreeSet<&String> = op.keys().chain(np.keys()).collect();
        for name in names {
            let a = self.slot(o, &loc.old, name);
            let b = self.slot(n, &loc.new, name);
            self.within(name, |ctx| ctx.property(name, a, b, (o, n), loc));
        }
        self.required(o, n, loc);
        let (a, b) = (model(o, &loc.old), model(n, &loc.new));
        if a.value != b.value || contains_ref(a.value) || contains_ref(b.value) {
            let pair = Loc {
                old: a.pointer.clone(),
                new: b.pointer.clone(),
            };
            let found = self.within("(undeclared property)", |ctx| {
                ctx.scratch(|ctx| ctx.schema(a.value, b.value, &pair))
            });
            let change = match (a.closed(), b.closed()) {
                (false, true) => "content_model_closed",
                (true, false) => "content_model_opened",
                _ => "additional_properties_changed",
            };
            let path = if n.contains_key(b.keyword) {
                b.pointer.clone()
            } else {
                a.pointer.clone()
            };
            self.summarize(
                path,
                change,
                format!(
                    "the content model for undeclared properties changed from {} to {}",
                    a.describe(),
                    b.describe()
                ),
                found,
            );
        }
        self.counts(
            o,
            n,
            loc,
            ("minProperties", "maxProperties"),
            "an object with {} properties",
        );
    }

    fn slot<'v>(&mut self, map: &'v Map<String, Value>, pointer: &str, name: &str) -> Slot<'v> {
        let props = child(pointer, "properties");
        if let Some(value) = properties(map).and_then(|p| p.get(name)) {
            return Slot {
                value,
                pointer: child(&props, name),
                by: Governed::Declared,
            };
        }
        if let Some(patterns) = map.get("patternProperties").and_then(Value::as_object) {
            for pattern in patterns.keys() {
                if matches(pattern, name) != Some(false) {
                    // Equal pattern sets on both sides are compared pattern by pattern
                    // (`patterns`), so a name they govern carries that conjunct on both sides.
                    return Slot {
                        value: &TRUE,
                        pointer: child(&child(pointer, "patternProperties"), pattern),
                        by: Governed::Pattern,
                    };
                }
            }
        }
        let m = model(map, pointer);
        Slot {
            value: m.value,
            pointer: m.pointer,
            by: Governed::Model,
        }
    }

    fn property(
        &mut self,
        name: &str,
        a: Slot<'_>,
        b: Slot<'_>,
        (o, n): (&Map<String, Value>, &Map<String, Value>),
        loc: &Loc,
    ) {
        let pair = Loc {
            old: a.pointer.clone(),
            new: b.pointer.clone(),
        };
        if a.by == Governed::Declared && b.by == Governed::Declared {
            return self.schema(a.value, b.value, &pair);
        }
        let found = self.scratch(|ctx| ctx.schema(a.value, b.value, &pair));
        let before = |slot: &Slot<'_>, map, pointer| match slot.by {
            Governed::Pattern => "a `patternProperties` entry".to_owned(),
            _ => format!("the content model, {}", model(map, pointer).describe()),
        };
        if b.by == Governed::Declared {
            let summary = format!(
                "property `{name}` added; before, it fell under {}",
                before(&a, o, &loc.old)
            );
            self.summarize(b.pointer, "property_added", summary, found);
        } else {
            let summary = format!(
                "property `{name}` removed; now it falls under {}",
                before(&b, n, &loc.new)
            );
            self.summarize(a.pointer, "property_removed", summary, found);
        }
    }

    fn required(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        let (a, b) = (required(o), required(n));
        let at = self.at();
        let path = |map: &Map<String, Value>, pointer: &str| {
            map.contains_key("required")
                .then(|| child(pointer, "required"))
        };
        let added_path = path(n, &loc.new).unwrap_or_else(|| child(&loc.new, "required"));
        let removed_path = path(n, &loc.new).unwrap_or_else(|| child(&loc.old, "required"));
        for name in b.difference(&a) {
            self.judge(
                added_path.clone(),
                "required_added",
                format!("property `{name}` became `required`"),
                Side::Witness(format!("{at} has no property `{name}`")),
                Side::Empty,
            );
        }
        for name in a.difference(&b) {
            self.judge(
                removed_path.clone(),
                "required_removed",
                format!("property `{name}` is no longer `required`"),
                Side::Empty,
                Side::Witness(format!("{at} has no property `{name}`")),
            );
        }
    }

    /// Pattern schemas with the same pattern on both sides are compared; a pattern added or
    /// removed changes which names the content model governs and is not analysed.
    fn patterns(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        let empty = Map::new();
        let get = |m: &'_ Map<String, Value>| -> Option<Map<String, Value>> {
            m.get("patternProperties")
                .and_then(Value::as_object)
                .cloned()
        };
        let (a, b) = (
            get(o).unwrap_or_else(|| empty.clone()),
            get(n).unwrap_or(empty),
        );
        if a.is_empty() && b.is_empty() {
            return;
        }
        let keys_a: BTreeSet<&String> = a.keys().collect();
        let keys_b: BTreeSet<&String> = b.keys().collect();
        if keys_a != keys_b {
            let path = child(&loc.new, "patternProperties");
            return self.unknown(
                path,
                "pattern_properties_changed",
                "the set of `patternProperties` patterns changed; which names each pattern \
                 governs depends on regular-language overlap, which is not decided"
                    .into(),
            );
        }
        let base = loc.push("patternProperties");
        for pattern in keys_a {
            if let (Some(x), Some(y)) = (a.get(pattern), b.get(pattern)) {
                let pair = base.push(pattern);
                self.within(&format!("(name matching {pattern})"), |ctx| {
                    ctx.schema(x, y, &pair)
                });
            }
        }
    }
}
