//! JSON documents: strict parsing (duplicate keys, depth, trailing data) and the position of
//! every value, indexed from the raw text.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::{
    Locator, MAX_INDEXED_DEPTH, Position, PositionChildren, PositionTree, SourceDocument,
    SourceError, SourceErrorKind,
};

pub(super) fn parse_json(text: &str) -> Result<SourceDocument, SourceError> {
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
