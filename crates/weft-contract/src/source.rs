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

use crate::schema::push_token;

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
    positions: HashMap<String, Position>,
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
        let mut current = pointer;
        loop {
            if let Some(position) = self.positions.get(current) {
                return *position;
            }
            match current.rfind('/') {
                Some(cut) => current = &current[..cut],
                None => return Position::START,
            }
        }
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
    let mut positions = HashMap::new();
    // The text was just parsed successfully, so indexing cannot fail; if it somehow did,
    // errors would only lose precision (positions fall back to an ancestor).
    if let Ok(root) = serde_json::from_str::<&RawValue>(text) {
        index_json(text, root, &mut String::new(), 0, &mut positions);
    }
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

fn index_json(
    text: &str,
    raw: &RawValue,
    pointer: &mut String,
    depth: usize,
    positions: &mut HashMap<String, Position>,
) {
    let slice = raw.get();
    // `slice` borrows from `text`, so its offset is the distance between the two pointers.
    let offset = (slice.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    positions.insert(pointer.clone(), Position::of_offset(text, offset));
    if depth >= MAX_INDEXED_DEPTH {
        return;
    }
    match slice.as_bytes().first() {
        Some(b'{') => {
            if let Ok(RawMembers(members)) = serde_json::from_str::<RawMembers>(slice) {
                for (key, child) in members {
                    let len = pointer.len();
                    push_token(pointer, &key);
                    index_json(text, child, pointer, depth + 1, positions);
                    pointer.truncate(len);
                }
            }
        }
        Some(b'[') => {
            if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(slice) {
                for (index, child) in items.into_iter().enumerate() {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    index_json(text, child, pointer, depth + 1, positions);
                    pointer.truncate(len);
                }
            }
        }
        _ => {}
    }
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
    let mut positions = HashMap::new();
    positions.insert(String::new(), Position::START);
    let mut converter = TomlConverter {
        text,
        positions: &mut positions,
        pointer: String::new(),
    };
    let value = converter.table(table.get_ref(), 1)?;
    Ok(SourceDocument { value, positions })
}

struct TomlConverter<'t, 'p> {
    text: &'t str,
    positions: &'p mut HashMap<String, Position>,
    pointer: String,
}

impl TomlConverter<'_, '_> {
    fn table(&mut self, table: &toml::de::DeTable<'_>, depth: usize) -> Result<Value, SourceError> {
        let mut map = Map::new();
        for (key, value) in table {
            let len = self.pointer.len();
            push_token(&mut self.pointer, key.get_ref());
            self.positions.insert(
                self.pointer.clone(),
                Position::of_offset(self.text, key.span().start),
            );
            let converted = self.value(value, depth)?;
            self.pointer.truncate(len);
            map.insert(key.get_ref().to_string(), converted);
        }
        Ok(Value::Object(map))
    }

    fn value(
        &mut self,
        value: &toml::Spanned<toml::de::DeValue<'_>>,
        depth: usize,
    ) -> Result<Value, SourceError> {
        use toml::de::DeValue;
        let position = Position::of_offset(self.text, value.span().start);
        let fail = |kind| SourceError { position, kind };
        Ok(match value.get_ref() {
            DeValue::String(s) => Value::String(s.to_string()),
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(|n| Value::Number(n.into()))
                .map_err(|_| fail(SourceErrorKind::InvalidToml("integer out of range".into())))?,
            DeValue::Float(f) => f
                .as_str()
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| fail(SourceErrorKind::NotJson("a non-finite float")))?,
            DeValue::Datetime(_) => return Err(fail(SourceErrorKind::NotJson("a TOML date-time"))),
            DeValue::Array(items) => {
                if depth >= MAX_DOCUMENT_DEPTH {
                    return Err(fail(SourceErrorKind::TooDeep));
                }
                let mut out = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    let len = self.pointer.len();
                    self.pointer.push('/');
                    self.pointer.push_str(&index.to_string());
                    self.positions.insert(
                        self.pointer.clone(),
                        Position::of_offset(self.text, item.span().start),
                    );
                    out.push(self.value(item, depth + 1)?);
                    self.pointer.truncate(len);
                }
                Value::Array(out)
            }
            DeValue::Table(table) => {
                if depth >= MAX_DOCUMENT_DEPTH {
                    return Err(fail(SourceErrorKind::TooDeep));
                }
                self.table(table, depth + 1)?
            }
        })
    }
}
