//! Strict JSON and TOML documents that remember where each value came from.
//!
//! A [`SourceDocument`] is a `serde_json::Value` plus a map from JSON pointer to the line and
//! column where that value (or, in TOML, its key) starts, so that rules checked on the value
//! can be reported as `path:line:col`. Parsing is strict: duplicate keys, trailing data and
//! nesting beyond [`MAX_DOCUMENT_DEPTH`] are errors with a position. TOML values with no JSON
//! equivalent (dates and times, NaN, infinities) are errors too.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use thiserror::Error;

/// Deepest nesting of objects/arrays accepted in a document (serde_json's own recursion cap).
pub const MAX_DOCUMENT_DEPTH: usize = 128;

/// How deep positions are recorded; deeper values report their nearest recorded ancestor.
/// Bounds the re-scanning the JSON indexer does (each level re-reads its slice once).
const MAX_INDEXED_DEPTH: usize = 24;

/// The text format of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceFormat {
    /// JSON (RFC 8259).
    Json,
    /// TOML 1.1.
    Toml,
}

impl SourceFormat {
    /// The format for a file extension (`json` or `toml`, case-insensitive).
    pub fn from_extension(extension: &str) -> Option<Self> {
        if extension.eq_ignore_ascii_case("json") {
            Some(SourceFormat::Json)
        } else if extension.eq_ignore_ascii_case("toml") {
            Some(SourceFormat::Toml)
        } else {
            None
        }
    }
}

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Position {
    /// Line number, starting at 1.
    pub line: usize,
    /// Column number, starting at 1, in characters.
    pub column: usize,
}

impl Position {
    /// The start of a document.
    pub const START: Position = Position { line: 1, column: 1 };

    /// The position of byte `offset` in `text` (clamped to the text).
    pub fn of_offset(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Why a document could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{position}: {kind}")]
pub struct SourceError {
    /// Where the problem was found.
    pub position: Position,
    /// What the problem is.
    pub kind: SourceErrorKind,
}

/// The kinds of document-level problems.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SourceErrorKind {
    /// The text is not valid JSON.
    #[error("{0}")]
    InvalidJson(String),
    /// The text is not valid TOML.
    #[error("{0}")]
    InvalidToml(String),
    /// An object has the same key twice.
    #[error("duplicate key {0:?}")]
    DuplicateKey(String),
    /// Something follows the top-level value.
    #[error("trailing data after the document")]
    TrailingData,
    /// Objects and arrays nest deeper than [`MAX_DOCUMENT_DEPTH`] (or, in TOML, than the
    /// TOML parser's own, lower, cap).
    #[error("document nests too deeply (JSON limit {MAX_DOCUMENT_DEPTH} levels)")]
    TooDeep,
    /// A TOML value with no JSON equivalent.
    #[error("{0} has no JSON equivalent")]
    NotJson(&'static str),
}

impl SourceErrorKind {
    /// The stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            SourceErrorKind::InvalidJson(_) => "invalid_json",
            SourceErrorKind::InvalidToml(_) => "invalid_toml",
            SourceErrorKind::DuplicateKey(_) => "duplicate_key",
            SourceErrorKind::TrailingData => "trailing_data",
            SourceErrorKind::TooDeep => "too_deep",
            SourceErrorKind::NotJson(_) => "not_json",
        }
    }
}

/// A parsed document and the positions of its values.
#[derive(Debug, Clone)]
pub struct SourceDocument {
    /// The document as JSON.
    pub value: Value,
    positions: PositionTree,
}

/// The recorded positions, shaped like the document: each key and array item is stored
/// once, so memory stays proportional to the text (a map from full JSON pointers would
/// repeat every ancestor's key in every descendant's entry).
#[derive(Debug, Clone)]
struct PositionTree {
    position: Position,
    children: PositionChildren,
}

#[derive(Debug, Clone)]
enum PositionChildren {
    None,
    Members(HashMap<String, PositionTree>),
    Items(Vec<PositionTree>),
}

impl PositionTree {
    fn child(&self, token: &str) -> Option<&PositionTree> {
        match &self.children {
            PositionChildren::None => None,
            PositionChildren::Members(members) => members.get(token),
            PositionChildren::Items(items) => items.get(token.parse::<usize>().ok()?),
        }
    }
}

/// Decodes one RFC 6901 reference token (`~1` is `/`, `~0` is `~`).
fn unescape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if !token.contains('~') {
        return std::borrow::Cow::Borrowed(token);
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('~', Some('1')) => {
                out.push('/');
                chars.next();
            }
            ('~', Some('0')) => {
                out.push('~');
                chars.next();
            }
            (c, _) => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Turns byte offsets of one text into [`Position`]s in O(log n) each, in any order.
///
/// [`Position::of_offset`] rescans the text from its start, which is fine once but
/// quadratic when every value of a large document is located.
struct Locator<'t> {
    text: &'t str,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    /// Characters before each multiple of [`Locator::BLOCK`] bytes.
    chars_before_block: Vec<usize>,
}

impl<'t> Locator<'t> {
    const BLOCK: usize = 64;

    fn new(text: &'t str) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut chars_before_block = Vec::with_capacity(bytes.len() / Self::BLOCK + 1);
        let mut count = 0;
        for block in bytes.chunks(Self::BLOCK) {
            chars_before_block.push(count);
            count += block.iter().filter(|b| !is_continuation(**b)).count();
        }
        chars_before_block.push(count);
        Locator {
            text,
            line_starts,
            chars_before_block,
        }
    }

    /// Characters in `text[..offset]` (`offset` on a character boundary).
    fn chars_before(&self, offset: usize) -> usize {
        let block = offset / Self::BLOCK;
        let start = block * Self::BLOCK;
        let head = self.chars_before_block.get(block).copied().unwrap_or(0);
        let tail = self.text.as_bytes().get(start..offset).unwrap_or_default();
        head + tail.iter().filter(|b| !is_continuation(**b)).count()
    }

    /// The same as [`Position::of_offset`] on this text.
    fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        // The last line starting at or before `offset`; line 1 starts at 0, so it exists.
        let line = self.line_starts.partition_point(|start| *start <= offset);
        let line_start = self
            .line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        Position {
            line: line.max(1),
            column: self.chars_before(offset) - self.chars_before(line_start) + 1,
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

impl SourceDocument {
    /// Parses `text` strictly in `format`.
    pub fn parse(text: &str, format: SourceFormat) -> Result<Self, SourceError> {
        match format {
            SourceFormat::Json => parse_json(text),
            SourceFormat::Toml => parse_toml(text),
        }
    }

    /// Where the value at `pointer` starts, or its nearest recorded ancestor.
    pub fn position_of(&self, pointer: &str) -> Position {
        let Some(tokens) = pointer.strip_prefix('/') else {
            return if pointer.is_empty() {
                self.positions.position
            } else {
                Position::START
            };
        };
        let mut node = &self.positions;
        for token in tokens.split('/') {
            match node.child(&unescape_token(token)) {
                Some(child) => node = child,
                None => break,
            }
        }
        node.position
    }
}

// ---------------------------------------------------------------- JSON

fn parse_json(text: &str) -> Result<SourceDocument, SourceError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue
        .deserialize(&mut deserializer)
        .map_err(|e| json_error(text, &e))?;
    deserializer.end().map_err(|e| SourceError {
        position: serde_position(text, &e),
        kind: SourceErrorKind::TrailingData,
    })?;
    // The text was just parsed successfully, so indexing cannot fail; if it somehow did,
    // errors would only lose precision (positions fall back to the start).
    let positions = match serde_json::from_str::<&RawValue>(text) {
        Ok(root) => index_json(&Locator::new(text), text, root, 0),
        Err(_) => PositionTree {
            position: Position::START,
            children: PositionChildren::None,
        },
    };
    Ok(SourceDocument { value, positions })
}

fn serde_position(text: &str, error: &serde_json::Error) -> Position {
    if error.line() == 0 {
        return Position::of_offset(text, text.len());
    }
    Position {
        line: error.line(),
        column: error.column().max(1),
    }
}

const DUPLICATE_KEY_PREFIX: &str = "duplicate key ";

fn json_error(text: &str, error: &serde_json::Error) -> SourceError {
    let position = serde_position(text, error);
    // serde_json reports custom and structural errors as strings; the two we raise or
    // care about are recognised by their fixed wording.
    let message = error.to_string();
    let bare = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(head, _)| head);
    let kind = if let Some(key) = bare.strip_prefix(DUPLICATE_KEY_PREFIX) {
        SourceErrorKind::DuplicateKey(key.trim_matches('"').to_owned())
    } else if bare.starts_with("recursion limit exceeded") {
        SourceErrorKind::TooDeep
    } else {
        SourceErrorKind::InvalidJson(bare.to_owned())
    };
    SourceError { position, kind }
}

/// Builds a `Value`, refusing duplicate object keys (serde_json keeps the last silently).
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE_KEY_PREFIX}{key:?}")));
            }
            let value = access.next_value_seed(StrictValue)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

/// The members of one JSON object, each value still unparsed.
struct RawMembers<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawMembers<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for MembersVisitor<'a> {
            type Value = RawMembers<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    members.push((key, access.next_value::<&'a RawValue>()?));
                }
                Ok(RawMembers(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor(std::marker::PhantomData))
    }
}

fn index_json(locator: &Locator<'_>, text: &str, raw: &RawValue, depth: usize) -> PositionTree {
    let slice = raw.get();
    // `slice` borrows from `text`, so its offset is the distance between the two pointers.
    let offset = (slice.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let position = locator.position(offset);
    let children = if depth >= MAX_INDEXED_DEPTH {
        PositionChildren::None
    } else {
        match slice.as_bytes().first() {
            Some(b'{') => match serde_json::from_str::<RawMembers>(slice) {
                Ok(RawMembers(members)) => PositionChildren::Members(
                    members
                        .into_iter()
                        .map(|(key, child)| (key, index_json(locator, text, child, depth + 1)))
                        .collect(),
                ),
                Err(_) => PositionChildren::None,
            },
            Some(b'[') => match serde_json::from_str::<Vec<&RawValue>>(slice) {
                Ok(items) => PositionChildren::Items(
                    items
                        .into_iter()
                        .map(|child| index_json(locator, text, child, depth + 1))
                        .collect(),
                ),
                Err(_) => PositionChildren::None,
            },
            _ => PositionChildren::None,
        }
    };
    PositionTree { position, children }
}

// ---------------------------------------------------------------- TOML

fn parse_toml(text: &str) -> Result<SourceDocument, SourceError> {
    let table = toml::de::DeTable::parse(text).map_err(|e| {
        let message = e.message().trim();
        // The TOML parser has its own nesting cap and reports it only in words.
        let kind = if message.contains("max recursion depth") {
            SourceErrorKind::TooDeep
        } else {
            SourceErrorKind::InvalidToml(message.to_owned())
        };
        SourceError {
            position: Position::of_offset(text, e.span().map_or(0, |s| s.start)),
            kind,
        }
    })?;
    let mut converter = TomlConverter {
        locator: Locator::new(text),
    };
    let (value, children) = converter.table(table.get_ref(), 1)?;
    let positions = PositionTree {
        position: Position::START,
        children,
    };
    Ok(SourceDocument { value, positions })
}

struct TomlConverter<'t> {
    locator: Locator<'t>,
}

impl TomlConverter<'_> {
    fn table(
        &mut self,
        table: &toml::de::DeTable<'_>,
        depth: usize,
    ) -> Result<(Value, PositionChildren), SourceError> {
        let mut map = Map::new();
        let mut members = HashMap::with_capacity(table.len());
        for (key, value) in table {
            let (converted, children) = self.value(value, depth)?;
            members.insert(
                key.get_ref().to_string(),
                PositionTree {
                    position: self.locator.position(key.span().start),
                    children,
                },
            );
            map.insert(key.get_ref().to_string(), converted);
        }
        Ok((Value::Object(map), PositionChildren::Members(members)))
    }

    fn value(
        &mut self,
        value: &toml::Spanned<toml::de::DeValue<'_>>,
        depth: usize,
    ) -> Result<(Value, PositionChildren), SourceError> {
        use toml::de::DeValue;
        let start = value.span().start;
        let fail = |locator: &Locator<'_>, kind| SourceError {
            position: locator.position(start),
            kind,
        };
        let scalar = |value| Ok((value, PositionChildren::None));
        match value.get_ref() {
            DeValue::String(s) => scalar(Value::String(s.to_string())),
            DeValue::Boolean(b) => scalar(Value::Bool(*b)),
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => scalar(Value::Number(n.into())),
                Err(_) => Err(fail(
                    &self.locator,
                    SourceErrorKind::InvalidToml("integer out of range".into()),
                )),
            },
            DeValue::Float(f) => match f.as_str().parse::<f64>().ok().and_then(Number::from_f64) {
                Some(n) => scalar(Value::Number(n)),
                None => Err(fail(
                    &self.locator,
                    SourceErrorKind::NotJson("a non-finite float"),
                )),
            },
            DeValue::Datetime(_) => Err(fail(
                &self.locator,
                SourceErrorKind::NotJson("a TOML date-time"),
            )),
            DeValue::Array(items) => {
                if depth >= MAX_DOCUMENT_DEPTH {
                    return Err(fail(&self.locator, SourceErrorKind::TooDeep));
                }
                let mut out = Vec::with_capacity(items.len());
                let mut trees = Vec::with_capacity(items.len());
                for item in items.iter() {
                    let (converted, children) = self.value(item, depth + 1)?;
                    trees.push(PositionTree {
                        position: self.locator.position(item.span().start),
                        children,
                    });
                    out.push(converted);
                }
                Ok((Value::Array(out), PositionChildren::Items(trees)))
            }
            DeValue::Table(table) => {
                if depth >= MAX_DOCUMENT_DEPTH {
                    return Err(fail(&self.locator, SourceErrorKind::TooDeep));
                }
                self.table(table, depth + 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locator_agrees_with_of_offset_everywhere() {
        let long_line = format!("{}é\n", "ab€".repeat(40));
        for text in [
            "",
            "\n",
            "a",
            "é\nü\n\nx",
            "\u{1F600}\n\u{1F600}ab",
            long_line.as_str(),
        ] {
            let locator = Locator::new(text);
            for offset in 0..=text.len() + 2 {
                assert_eq!(
                    locator.position(offset),
                    Position::of_offset(text, offset),
                    "{text:?} at {offset}"
                );
            }
        }
    }
}
