//! The v0.1 table: every standard capability row of the seed, in the seed's order.
//!
//! A row is identified by its pattern exactly as the seed writes it
//! (`audio.transcribe.{lang}.text`). Each row keeps the seed's input, output and
//! verification columns verbatim (tests compare them with the seed page itself)
//! and builds its JSON Schemas from them; placeholder rows build schemas for a concrete id
//! from its bindings where a binding changes the contract (the weather format, the scraped
//! host).

mod schema;

mod audio;
mod code;
mod data;
mod image;
mod other;
mod text;

pub use code::REVIEW_SEVERITIES;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value;

use crate::placeholder::ValueSet;

/// Placeholder name (without braces) → bound value, as the seed's row pattern names them.
pub type Bindings = BTreeMap<String, String>;

/// One `{name}` of a row pattern and the values it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placeholder {
    /// The name between the braces.
    pub name: &'static str,
    /// What it accepts.
    pub set: ValueSet,
    /// The value example ids use, when the set's own example does not suit the row.
    pub example: Option<&'static str>,
}

/// One row of the standard table.
#[derive(Debug)]
pub struct Row {
    /// The capability pattern exactly as the seed writes it, placeholders in braces.
    pub pattern: &'static str,
    /// A short title; `{name}` is replaced by the binding in a concrete descriptor.
    pub title: &'static str,
    /// The seed's Input column, verbatim (with `\|` unescaped).
    pub seed_input: &'static str,
    /// The seed's Output column, verbatim (with `\|` unescaped).
    pub seed_output: &'static str,
    /// The seed's Verification column, verbatim.
    pub verification: &'static str,
    /// Further normative text the seed gives for the row (sandbox guarantees, field
    /// conventions, …), appended to descriptor descriptions; may be empty.
    pub notes: &'static str,
    /// The placeholders, in pattern order.
    pub placeholders: &'static [Placeholder],
    /// Two placeholders that must differ (`src` and `tgt` of translations).
    pub distinct: Option<(&'static str, &'static str)>,
    input: fn(&Bindings) -> Value,
    output: fn(&Bindings) -> Value,
}

/// Rows are identified by their pattern.
impl PartialEq for Row {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Row {}

/// One segment of a row pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternSegment {
    /// A literal segment.
    Fixed(&'static str),
    /// A placeholder.
    Slot(Placeholder),
}

impl Row {
    /// The domain (first segment).
    pub fn domain(&self) -> &'static str {
        self.pattern.split('.').next().unwrap_or_default()
    }

    /// The action (second segment).
    pub fn action(&self) -> &'static str {
        self.pattern.split('.').nth(1).unwrap_or_default()
    }

    /// The pattern's segments. A `{name}` without a matching placeholder is treated as a
    /// literal (the table tests prove there is none).
    pub fn segments(&self) -> impl Iterator<Item = PatternSegment> + '_ {
        self.pattern.split('.').map(|segment| {
            segment
                .strip_prefix('{')
                .and_then(|s| s.strip_suffix('}'))
                .and_then(|name| self.placeholder(name))
                .map_or(PatternSegment::Fixed(segment), PatternSegment::Slot)
        })
    }

    /// The placeholder called `name`.
    pub fn placeholder(&self, name: &str) -> Option<Placeholder> {
        self.placeholders.iter().copied().find(|p| p.name == name)
    }

    /// Number of literal segments (more is more specific).
    pub fn fixed_segments(&self) -> usize {
        self.segments()
            .filter(|s| matches!(s, PatternSegment::Fixed(_)))
            .count()
    }

    /// The input schema for `bindings` (empty bindings: the row's general schema).
    pub fn input_schema(&self, bindings: &Bindings) -> Value {
        schema::root((self.input)(bindings))
    }

    /// The output schema for `bindings` (empty bindings: the row's general schema).
    pub fn output_schema(&self, bindings: &Bindings) -> Value {
        schema::root((self.output)(bindings))
    }

    /// Example bindings: each placeholder's example value (distinct pairs kept distinct).
    pub fn example_bindings(&self) -> Bindings {
        let mut bindings = Bindings::new();
        for p in self.placeholders {
            let mut value = p.example.unwrap_or(p.set.example()).to_owned();
            if self.distinct.is_some_and(|(_, b)| b == p.name) {
                // The second of a distinct pair takes the set's second value.
                value = p
                    .set
                    .values()
                    .and_then(|v| v.get(1).map(|s| (*s).to_owned()))
                    .unwrap_or(value);
            }
            bindings.insert(p.name.to_owned(), value);
        }
        bindings
    }

    /// The id this row has under `bindings` (placeholders without a binding stay in braces).
    pub fn id_with(&self, bindings: &Bindings) -> String {
        let mut out = String::with_capacity(self.pattern.len());
        for (i, segment) in self.segments().enumerate() {
            if i > 0 {
                out.push('.');
            }
            match segment {
                PatternSegment::Fixed(text) => out.push_str(text),
                PatternSegment::Slot(p) => match bindings.get(p.name) {
                    Some(value) => out.push_str(value),
                    None => {
                        out.push('{');
                        out.push_str(p.name);
                        out.push('}');
                    }
                },
            }
        }
        out
    }

    /// An example concrete id (the pattern itself when it has no placeholders).
    pub fn example_id(&self) -> String {
        self.id_with(&self.example_bindings())
    }
}

static TABLE: LazyLock<Vec<&'static Row>> = LazyLock::new(|| {
    image::ROWS
        .iter()
        .chain(audio::ROWS.iter())
        .chain(text::ROWS.iter())
        .chain(code::ROWS.iter())
        .chain(data::ROWS.iter())
        .chain(other::ROWS.iter())
        .collect()
});

/// Every row, in the seed's order.
pub fn rows() -> &'static [&'static Row] {
    &TABLE
}

/// The row with exactly this pattern.
pub fn row(pattern: &str) -> Option<&'static Row> {
    rows().iter().copied().find(|r| r.pattern == pattern)
}

/// The rows of one domain, in the seed's order.
pub fn rows_of(domain: &str) -> impl Iterator<Item = &'static Row> + '_ {
    rows().iter().copied().filter(move |r| r.domain() == domain)
}
