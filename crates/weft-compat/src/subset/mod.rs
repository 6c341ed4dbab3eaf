//! The schema inclusion engine: a directional, conservative subset check between two
//! JSON Schema 2020-12 documents that reports what changed, keyword by keyword.
//!
//! Every comparison answers two questions about the pair (old, new): is there a value the
//! old schema accepts and the new one refuses (`old_only`), and is there a value the new one
//! accepts and the old one refuses (`new_only`)? Each answer is [`Side::Empty`] (proven: no
//! such value), [`Side::Witness`] (such a value, described), or [`Side::Unknown`]. The
//! direction of the schema decides which answer matters: inputs need `old_only` empty (every
//! payload accepted before is still accepted), outputs need `new_only` empty (every result
//! the new schema allows satisfied the old one).
//!
//! A schema object is a conjunction of its keywords, so proving every keyword of the
//! including side from the included side proves inclusion; keywords whose meaning depends on
//! their siblings (`additionalProperties`, `items`, `unevaluated*`) are compared as families;
//! [`judge`] turns the two answers into a finding.
//! Modules: [`types`] (the `type` keyword and type sets), [`scalar`] (numbers, strings and
//! `enum`/`const`), [`object`], [`array`], [`combinator`] (`allOf`/`anyOf`/`oneOf`, `$ref`
//! conjuncts and keywords not analysed).

mod array;
mod combinator;
mod judge;
mod object;
mod scalar;
mod types;

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::finding::{Bump, Effect, Finding};
use weft_contract::schema::push_token;

/// Keywords that never change which values a schema accepts.
pub(crate) const ANNOTATIONS: [&str; 12] = [
    "title",
    "description",
    "examples",
    "default",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "$schema",
];

/// How deep the engine follows subschemas and references before giving up.
const MAX_DEPTH: usize = 48;

/// Which inclusion a schema must keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Everything the old schema accepted, the new one accepts (payloads, input chunks).
    Input,
    /// Everything the new schema allows, the old one allowed (results, output chunks).
    Output,
}

/// One answer to "is there a value in one schema and not the other?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Side {
    /// Proven: no such value.
    Empty,
    /// Such a value exists; the text describes it (`` `/age` is 1.5 ``).
    Witness(String),
    /// Not decided; the text says why.
    Unknown(String),
    /// Not computed because the direction does not need it (something did change).
    NotChecked,
}

/// A pair of descriptor pointers: where the compared subschemas are in each descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Loc {
    pub old: String,
    pub new: String,
}

impl Loc {
    /// Both pointers extended by one token.
    pub fn push(&self, token: &str) -> Loc {
        Loc {
            old: child(&self.old, token),
            new: child(&self.new, token),
        }
    }
}

/// `pointer/token`, escaped.
pub(crate) fn child(pointer: &str, token: &str) -> String {
    let mut out = pointer.to_owned();
    push_token(&mut out, token);
    out
}

/// A subschema and where it is, in the old or the new descriptor.
#[derive(Debug, Clone)]
pub(crate) struct Part<'v> {
    pub value: &'v Value,
    pub pointer: String,
    pub new: bool,
}

/// A finding as recorded, with the short detail reused when findings are summarized.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub finding: Finding,
    /// The witness (breaking) or the reason (unknown); empty when compatible.
    pub detail: String,
}

/// The state of one comparison of a pair of root schemas.
pub(crate) struct Ctx<'a> {
    pub dir: Direction,
    /// What a value of this schema is called in reasons ("payload", "result", …).
    pub noun: &'static str,
    pub old_root: &'a Value,
    pub new_root: &'a Value,
    pub old_base: String,
    pub new_base: String,
    pub findings: Vec<Raw>,
    /// Pairs of subschemas being compared, for reference cycles.
    active: HashSet<(usize, String, usize, String, bool)>,
    depth: usize,
    /// JSON pointer of the instance position being compared.
    pub instance: String,
}

/// Compares two root schemas found at `old_base` and `new_base` in their descriptors.
pub(crate) fn compare_roots(
    dir: Direction,
    noun: &'static str,
    old: (&Value, &str),
    new: (&Value, &str),
) -> Vec<Finding> {
    let mut ctx = Ctx {
        dir,
        noun,
        old_root: old.0,
        new_root: new.0,
        old_base: old.1.to_owned(),
        new_base: new.1.to_owned(),
        findings: Vec::new(),
        active: HashSet::new(),
        depth: 0,
        instance: String::new(),
    };
    let loc = Loc {
        old: old.1.to_owned(),
        new: new.1.to_owned(),
    };
    ctx.schema(old.0, new.0, &loc);
    let mut seen = HashSet::new();
    ctx.findings
        .into_iter()
        .map(|raw| raw.finding)
        .filter(|f| seen.insert((f.path.clone(), f.change.clone())))
        .collect()
}

impl<'a> Ctx<'a> {
    /// How the current instance position is named in a witness.
    pub fn at(&self) -> String {
        if self.instance.is_empty() {
            "the value".to_owned()
        } else {
            format!("`{}`", self.instance)
        }
    }

    /// Runs `f` with the instance pointer extended by `token`.
    pub fn within<T>(&mut self, token: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.instance.len();
        push_token(&mut self.instance, token);
        let out = f(self);
        self.instance.truncate(len);
        out
    }

    /// Whether the direction needs the `old_only` answer (else it needs `new_only`).
    pub fn wants_old_only(&self) -> bool {
        self.dir == Direction::Input
    }

    /// The root schema of the new (`true`) or old descriptor.
    pub fn root(&self, new: bool) -> &'a Value {
        if new { self.new_root } else { self.old_root }
    }

    /// Whether every value of `sub` is a value of `sup`, decided aside (no findings kept).
    pub fn subset_side(&mut self, sub: Part<'_>, sup: Part<'_>) -> Side {
        let saved = (
            self.dir,
            self.old_root,
            self.new_root,
            self.old_base.clone(),
            self.new_base.clone(),
        );
        let doc = |new: bool| {
            if new {
                (saved.2, saved.4.clone())
            } else {
                (saved.1, saved.3.clone())
            }
        };
        (self.old_root, self.old_base) = doc(sub.new);
        (self.new_root, self.new_base) = doc(sup.new);
        self.dir = Direction::Input;
        let loc = Loc {
            old: sub.pointer,
            new: sup.pointer,
        };
        let found = self.scratch(|ctx| ctx.schema(sub.value, sup.value, &loc));
        (
            self.dir,
            self.old_root,
            self.new_root,
            self.old_base,
            self.new_base,
        ) = saved;
        match found.iter().max_by_key(|r| r.finding.effect) {
            Some(raw) if raw.finding.effect == Effect::Breaking => {
                Side::Witness(raw.detail.clone())
            }
            Some(raw) if raw.finding.effect == Effect::Unknown => Side::Unknown(raw.detail.clone()),
            _ => Side::Empty,
        }
    }

    /// Compares one pair of subschemas, recording every change.
    pub fn schema(&mut self, old: &Value, new: &Value, loc: &Loc) {
        let Some((old, old_ptr)) = self.deref(self.old_root, old, &loc.old, &self.old_base) else {
            return self.unknown(loc.new.clone(), "reference_unresolved", unresolved());
        };
        let Some((new, new_ptr)) = self.deref(self.new_root, new, &loc.new, &self.new_base) else {
            return self.unknown(loc.new.clone(), "reference_unresolved", unresolved());
        };
        let loc = Loc {
            old: old_ptr,
            new: new_ptr,
        };
        if old == new && !contains_ref(old) {
            return;
        }
        if self.depth >= MAX_DEPTH {
            return self.unknown(
                loc.new.clone(),
                "too_deep",
                format!("the schemas nest or recurse deeper than {MAX_DEPTH} levels; not analysed"),
            );
        }
        let key = (
            std::ptr::from_ref(self.old_root) as usize,
            loc.old.clone(),
            std::ptr::from_ref(self.new_root) as usize,
            loc.new.clone(),
            self.dir == Direction::Input,
        );
        if !self.active.insert(key.clone()) {
            // Already comparing this pair further up: a recursive schema. Assuming
            // inclusion here is sound because every instance is a finite tree.
            return;
        }
        self.depth += 1;
        self.pair(old, new, &loc);
        self.depth -= 1;
        self.active.remove(&key);
    }

    fn pair(&mut self, old: &Value, new: &Value, loc: &Loc) {
        let empty = Map::new();
        let (o, n) = match (old, new) {
            (Value::Bool(false), Value::Bool(false)) => return,
            (Value::Bool(false), _) => {
                let new_only = Side::Witness(format!("{} is any value", self.at()));
                return self.judge(
                    loc.new.clone(),
                    "schema_opened",
                    "the schema was `false` (nothing valid) and now accepts values".into(),
                    Side::Empty,
                    new_only,
                );
            }
            (_, Value::Bool(false)) => {
                let old_only = Side::Witness(format!("{} is any value", self.at()));
                return self.judge(
                    loc.new.clone(),
                    "schema_closed",
                    "the schema is now `false`: nothing is valid".into(),
                    old_only,
                    Side::Empty,
                );
            }
            (o, n) => (
                o.as_object().unwrap_or(&empty),
                n.as_object().unwrap_or(&empty),
            ),
        };
        self.annotations(o, n, loc);
        if strip(o) == strip(n) && !contains_ref(old) {
            return;
        }
        if scalar::finite(o).is_some() || scalar::finite(n).is_some() {
            return self.finite((old, new), (o, n), loc);
        }
        let old_t = types::types(self.old_root, old, 0);
        let new_t = types::types(self.new_root, new, 0);
        self.type_keyword(old_t, new_t, o, n, loc);
        let both = old_t & new_t;
        if both & types::NUMBER != 0 {
            self.numeric(o, n, loc, both & types::NUMBER == types::INTEGER);
        }
        if both & types::STRING != 0 {
            self.string(o, n, loc);
        }
        if both & types::ARRAY != 0 {
            self.array(o, n, loc);
        }
        if both & types::OBJECT != 0 {
            self.object(o, n, loc);
        }
        self.combinators(old, new, o, n, loc);
        self.unanalysed(o, n, loc);
    }

    /// Follows `$ref`s that stand alone (siblings only annotations or `$defs`), returning
    /// the target and its pointer. `None` when a reference does not resolve in the document.
    fn deref<'v>(
        &self,
        root: &'v Value,
        mut schema: &'v Value,
        pointer: &str,
        base: &str,
    ) -> Option<(&'v Value, String)> {
        let mut pointer = pointer.to_owned();
        for _ in 0..MAX_DEPTH {
            let Some(map) = schema.as_object() else {
                break;
            };
            let Some(Value::String(reference)) = map.get("$ref") else {
                break;
            };
            let alone = map
                .keys()
                .all(|k| k == "$ref" || k == "$defs" || ANNOTATIONS.contains(&k.as_str()));
            if !alone {
                break;
            }
            let (target, at) = resolve(root, reference, base)?;
            schema = target;
            pointer = at;
        }
        Some((schema, pointer))
    }

    /// Records documentation-only changes of annotation keywords.
    fn annotations(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        for keyword in ANNOTATIONS {
            let (a, b) = (o.get(keyword), n.get(keyword));
            if a == b {
                continue;
            }
            let verb = match (a, b) {
                (None, _) => "added",
                (_, None) => "removed",
                _ => "changed",
            };
            let path = if b.is_some() {
                child(&loc.new, keyword)
            } else {
                child(&loc.old, keyword)
            };
            self.push(
                path,
                "schema_documentation_changed",
                Effect::Compatible,
                Bump::Patch,
                format!("`{keyword}` {verb}; annotations do not change what is valid"),
                String::new(),
            );
        }
    }
}

/// Resolves a local reference (`#` or `#/json/pointer`) in `root`, returning the target and
/// its descriptor pointer. Remote, anchor and `$id`-relative references are not followed.
pub(crate) fn resolve<'v>(
    root: &'v Value,
    reference: &str,
    base: &str,
) -> Option<(&'v Value, String)> {
    let fragment = reference.strip_prefix('#')?;
    let decoded = percent_decode(fragment)?;
    if !decoded.is_empty() && !decoded.starts_with('/') {
        return None;
    }
    root.pointer(&decoded)
        .map(|target| (target, format!("{base}{decoded}")))
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn unresolved() -> String {
    "a `$ref` does not point inside this schema as a JSON pointer (remote, anchor or \
     `$id`-relative references are not followed); not analysed"
        .to_owned()
}

/// Whether a schema contains a reference anywhere (so equal text need not mean equal meaning).
pub(crate) fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == "$ref" || k == "$dynamicRef" || contains_ref(v)),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}

/// A schema object without its annotation keywords.
pub(crate) fn strip(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A short rendering of a JSON value for reasons (long values are cut).
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}
