//! `enum`/`const`, numeric bounds and `multipleOf`, string length, `pattern` and `format`,
//! and the count bounds every container shares (`minItems`, `maxProperties`, …).

use serde_json::{Map, Value};
use weft_contract::{CompiledSchema, Limits};

use super::types::{self, BOOLEAN, NULL};
use super::{Ctx, Loc, Side, child, contains_ref, json_eq, show};

/// The values a schema is limited to by `const` or `enum`, if it is.
pub(crate) fn finite(map: &Map<String, Value>) -> Option<Vec<Value>> {
    match (map.get("const"), map.get("enum")) {
        (Some(value), _) => Some(vec![value.clone()]),
        (None, Some(Value::Array(values))) => Some(values.clone()),
        _ => None,
    }
}

/// Patterns that match every string.
const UNIVERSAL_PATTERNS: [&str; 6] = ["", ".*", "^.*", ".*$", "^", "$"];

/// Whether `value` is valid under `schema`, when that can be decided without references.
fn accepts(schema: &Value, value: &Value) -> Option<bool> {
    if contains_ref(schema) {
        return None;
    }
    CompiledSchema::compile(schema, &Limits::default())
        .ok()
        .map(|compiled| compiled.is_valid(value))
}

impl Ctx<'_> {
    /// Compares a pair where at least one side is a finite set of values: each value of a
    /// finite side is validated against the other side, which decides exactly.
    pub(super) fn finite(
        &mut self,
        (old, new): (&Value, &Value),
        (o, n): (&Map<String, Value>, &Map<String, Value>),
        loc: &Loc,
    ) {
        let (old_values, new_values) = (finite(o), finite(n));
        let old_only = self.values_outside(
            (old, self.old_root),
            old_values.as_deref(),
            new,
            new_values.as_deref(),
        );
        let new_only = self.values_outside(
            (new, self.new_root),
            new_values.as_deref(),
            old,
            old_values.as_deref(),
        );
        if old_only == Side::Empty && new_only == Side::Empty {
            return;
        }
        let keyword = if o.contains_key("const") || n.contains_key("const") {
            "const"
        } else {
            "enum"
        };
        let render = |values: &Option<Vec<Value>>| match values {
            Some(v) => show(&Value::Array(v.clone())),
            None => "unrestricted".to_owned(),
        };
        let change = match (&old_values, &new_values) {
            (None, Some(_)) => format!("{keyword}_added"),
            (Some(_), None) => format!("{keyword}_removed"),
            _ => format!("{keyword}_changed"),
        };
        let path = if n.contains_key(keyword) {
            child(&loc.new, keyword)
        } else {
            child(&loc.old, keyword)
        };
        self.judge(
            path,
            &change,
            format!(
                "allowed values (`{keyword}`) changed from {} to {}",
                render(&old_values),
                render(&new_values)
            ),
            old_only,
            new_only,
        );
    }

    /// Is there a value of `from` (values `from_values` if finite) that `to` refuses?
    fn values_outside(
        &self,
        (from, from_root): (&Value, &Value),
        from_values: Option<&[Value]>,
        to: &Value,
        to_values: Option<&[Value]>,
    ) -> Side {
        let at = self.at();
        let candidates: Vec<Value> = match from_values {
            Some(values) => values.to_vec(),
            None => {
                let from_types = types::types(from_root, from, 0);
                if from_types & !(NULL | BOOLEAN) != 0 {
                    return match to_values {
                        Some(values) => Side::Witness(format!(
                            "{at} is a value outside {}",
                            show(&Value::Array(values.to_vec()))
                        )),
                        None => Side::Empty,
                    };
                }
                let mut all = Vec::new();
                if from_types & NULL != 0 {
                    all.push(Value::Null);
                }
                if from_types & BOOLEAN != 0 {
                    all.extend([Value::Bool(true), Value::Bool(false)]);
                }
                all
            }
        };
        for value in candidates {
            // A value its own schema refuses (other keywords) is no witness.
            if accepts(from, &value) == Some(false) {
                continue;
            }
            let refused = match accepts(to, &value) {
                Some(valid) => !valid,
                None => match to_values {
                    Some(values) if !values.iter().any(|v| json_eq(v, &value)) => true,
                    _ => {
                        return Side::Unknown(
                            "the schema uses references, so its values were not validated".into(),
                        );
                    }
                },
            };
            if refused {
                return Side::Witness(format!("{at} is {}", show(&value)));
            }
        }
        Side::Empty
    }

    /// `minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`, `multipleOf`.
    pub(super) fn numeric(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        loc: &Loc,
        integers: bool,
    ) {
        for (inclusive, exclusive, lower) in [
            ("minimum", "exclusiveMinimum", true),
            ("maximum", "exclusiveMaximum", false),
        ] {
            let a = Bound::of(o, inclusive, exclusive, lower);
            let b = Bound::of(n, inclusive, exclusive, lower);
            if a == b {
                continue;
            }
            let old_only = self.bound_excess(a, b, lower, integers);
            let new_only = self.bound_excess(b, a, lower, integers);
            if old_only == Side::Empty && new_only == Side::Empty {
                continue;
            }
            let keyword = b
                .or(a)
                .map_or(inclusive, |x| x.keyword(inclusive, exclusive));
            let present = if n.contains_key(keyword) {
                &loc.new
            } else {
                &loc.old
            };
            let tighter = old_only != Side::Empty;
            self.judge(
                child(present, keyword),
                &format!(
                    "{}_{}",
                    if lower { "minimum" } else { "maximum" },
                    if tighter { "tightened" } else { "loosened" }
                ),
                format!(
                    "{} bound changed from {} to {}",
                    if lower { "lower" } else { "upper" },
                    Bound::render(a, inclusive, exclusive),
                    Bound::render(b, inclusive, exclusive)
                ),
                old_only,
                new_only,
            );
        }
        let (a, b) = (
            o.get("multipleOf").and_then(Value::as_f64),
            n.get("multipleOf").and_then(Value::as_f64),
        );
        if a != b {
            let at = self.at();
            let divides = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (_, None) => Side::Empty,
                (None, Some(m)) if integers && m == 1.0 => Side::Empty,
                (None, Some(m)) => Side::Witness(format!("{at} is not a multiple of {m}")),
                (Some(x), Some(y)) => {
                    let q = x / y;
                    if (q - q.round()).abs() < 1e-9 {
                        Side::Empty
                    } else {
                        Side::Witness(format!("{at} is {x}"))
                    }
                }
            };
            let present = if b.is_some() { &loc.new } else { &loc.old };
            self.judge(
                child(present, "multipleOf"),
                "multiple_of_changed",
                format!("`multipleOf` changed from {} to {}", opt(a), opt(b)),
                divides(a, b),
                divides(b, a),
            );
        }
    }

    /// Is there a number inside bound `a` and outside bound `b`?
    fn bound_excess(&self, a: Option<Bound>, b: Option<Bound>, lower: bool, ints: bool) -> Side {
        let at = self.at();
        let Some(b) = b else {
            return Side::Empty;
        };
        let witness = |v: f64| Side::Witness(format!("{at} is {}", number(v)));
        if ints {
            let (bi, ai) = (b.integer(lower), a.map(|a| a.integer(lower)));
            return match ai {
                Some(ai) if (lower && ai >= bi) || (!lower && ai <= bi) => Side::Empty,
                Some(ai) => witness(ai),
                None => witness(if lower { bi - 1.0 } else { bi + 1.0 }),
            };
        }
        let step = if lower { -1.0 } else { 1.0 };
        match a {
            None => witness(if b.exclusive { b.value } else { b.value + step }),
            Some(a) => {
                let beyond = if lower {
                    a.value < b.value
                } else {
                    a.value > b.value
                };
                if beyond {
                    witness(if a.exclusive {
                        (a.value + b.value) / 2.0
                    } else {
                        a.value
                    })
                } else if a.value == b.value && b.exclusive && !a.exclusive {
                    witness(a.value)
                } else {
                    Side::Empty
                }
            }
        }
    }

    /// `minLength`, `maxLength`, `pattern`, `format`.
    pub(super) fn string(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        self.counts(
            o,
            n,
            loc,
            ("minLength", "maxLength"),
            "a string of {} characters",
        );
        let pattern = |m: &Map<String, Value>| {
            m.get("pattern")
                .and_then(Value::as_str)
                .filter(|p| !UNIVERSAL_PATTERNS.contains(p))
                .map(str::to_owned)
        };
        let (a, b) = (pattern(o), pattern(n));
        if a != b {
            let at = self.at();
            let side = |x: &Option<String>, y: &Option<String>| match (x, y) {
                (_, None) => Side::Empty,
                (None, Some(p)) => Side::Witness(format!("{at} is a string not matching `{p}`")),
                (Some(p), Some(q)) => Side::Unknown(format!(
                    "`pattern` changed from `{p}` to `{q}`; inclusion between regular languages \
                     is not decided"
                )),
            };
            let present = if b.is_some() { &loc.new } else { &loc.old };
            self.judge(
                child(present, "pattern"),
                "pattern_changed",
                format!("`pattern` changed from {} to {}", quote(&a), quote(&b)),
                side(&a, &b),
                side(&b, &a),
            );
        }
        let format =
            |m: &Map<String, Value>| m.get("format").and_then(Value::as_str).map(str::to_owned);
        let (a, b) = (format(o), format(n));
        if a != b {
            let at = self.at();
            let side = |x: &Option<String>, y: &Option<String>| match (x, y) {
                (_, None) => Side::Empty,
                (_, Some(f)) => {
                    Side::Witness(format!("{at} is a string that is not a valid `{f}`"))
                }
            };
            let present = if b.is_some() { &loc.new } else { &loc.old };
            self.judge(
                child(present, "format"),
                "format_changed",
                format!(
                    "`format` changed from {} to {} (weft's validator treats `format` as an \
                     annotation, but both sides of a call rely on it)",
                    quote(&a),
                    quote(&b)
                ),
                side(&a, &b),
                side(&b, &a),
            );
        }
    }

    /// A pair of count bounds such as (`minItems`, `maxItems`); `unit` has one `{}` for the
    /// count in a witness.
    pub(super) fn counts(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        loc: &Loc,
        (min, max): (&str, &str),
        unit: &str,
    ) {
        let at = self.at();
        let shape = |count: u64| format!("{at} is {}", unit.replace("{}", &count.to_string()));
        let get = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_u64);
        let (a, b) = (get(o, min).unwrap_or(0), get(n, min).unwrap_or(0));
        if a != b {
            let side = |x: u64, y: u64| {
                if y > x {
                    Side::Witness(shape(x))
                } else {
                    Side::Empty
                }
            };
            let present = if n.contains_key(min) {
                &loc.new
            } else {
                &loc.old
            };
            self.judge(
                child(present, min),
                &format!(
                    "{}_{}",
                    snake(min),
                    if b > a { "tightened" } else { "loosened" }
                ),
                format!("`{min}` changed from {a} to {b}"),
                side(a, b),
                side(b, a),
            );
        }
        let (a, b) = (get(o, max), get(n, max));
        if a != b {
            let side = |x: Option<u64>, y: Option<u64>| match (x, y) {
                (_, None) => Side::Empty,
                (Some(x), Some(y)) if x <= y => Side::Empty,
                (_, Some(y)) => Side::Witness(shape(y + 1)),
            };
            let tighter = side(a, b) != Side::Empty;
            let present = if n.contains_key(max) {
                &loc.new
            } else {
                &loc.old
            };
            self.judge(
                child(present, max),
                &format!(
                    "{}_{}",
                    snake(max),
                    if tighter { "tightened" } else { "loosened" }
                ),
                format!("`{max}` changed from {} to {}", opt_u(a), opt_u(b)),
                side(a, b),
                side(b, a),
            );
        }
    }
}

/// One side of a numeric interval.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    value: f64,
    exclusive: bool,
}

impl Bound {
    /// The tighter of `inclusive` and `exclusive` in `map`.
    fn of(
        map: &Map<String, Value>,
        inclusive: &str,
        exclusive: &str,
        lower: bool,
    ) -> Option<Bound> {
        let a = map
            .get(inclusive)
            .and_then(Value::as_f64)
            .map(|value| Bound {
                value,
                exclusive: false,
            });
        let b = map
            .get(exclusive)
            .and_then(Value::as_f64)
            .map(|value| Bound {
                value,
                exclusive: true,
            });
        match (a, b) {
            (Some(a), Some(b)) => {
                let b_tighter = if lower {
                    b.value >= a.value
                } else {
                    b.value <= a.value
                };
                Some(if b_tighter { b } else { a })
            }
            (a, b) => a.or(b),
        }
    }

    /// The smallest (lower) or largest (upper) integer inside the bound.
    fn integer(self, lower: bool) -> f64 {
        match (lower, self.exclusive) {
            (true, false) => self.value.ceil(),
            (true, true) => self.value.floor() + 1.0,
            (false, false) => self.value.floor(),
            (false, true) => self.value.ceil() - 1.0,
        }
    }

    fn keyword<'k>(self, inclusive: &'k str, exclusive: &'k str) -> &'k str {
        if self.exclusive { exclusive } else { inclusive }
    }

    fn render(bound: Option<Bound>, inclusive: &str, exclusive: &str) -> String {
        match bound {
            None => "none".to_owned(),
            Some(b) => format!("`{}` {}", b.keyword(inclusive, exclusive), number(b.value)),
        }
    }
}

/// A number as JSON would print it (no `.0` on integers).
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_owned(), number)
}

fn opt_u(v: Option<u64>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

fn quote(v: &Option<String>) -> String {
    v.as_ref()
        .map_or_else(|| "none".to_owned(), |p| format!("`{p}`"))
}

/// `minLength` → `min_length`.
fn snake(keyword: &str) -> String {
    let mut out = String::new();
    for c in keyword.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
