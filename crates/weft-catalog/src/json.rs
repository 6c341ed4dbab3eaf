//! JSON catalog and record files, decoded with the semantics of Go's `encoding/json` as
//! CompozyOS uses it (`Decoder` + `DisallowUnknownFields`, then a check for a second value).
//!
//! The document is first checked for syntax as a whole (`serde_json` captures the first
//! value as a [`RawValue`], so a syntax error anywhere wins over type errors, as in Go), then
//! walked value by value. Every [`RawValue`] is a slice of the text, so its byte offset (and
//! from it a line and column) is a pointer difference. Go semantics reproduced here:
//!
//! * keys match fields case-insensitively ([`crate::raw::go_fold_eq`]);
//! * **duplicate keys are accepted and decoded again in place** ("last wins" for strings;
//!   arrays decode element-wise into the existing slice, so a repeated `capabilities` key
//!   merges into the records already decoded, exactly as CompozyOS does);
//! * `null` leaves a string untouched and sets a list to nil;
//! * invalid UTF-8 and unpaired surrogate escapes become U+FFFD;
//! * the first semantic error in document order is reported;
//! * anything but whitespace after the first value is an error.

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{CatalogError, Format, Position};
use crate::raw::{
    Field, GoSlice, RawRecord, Slot, Text, entry_name, go_fold_eq, go_lossy_utf8, position_at,
};

/// Where a record sits, for error context.
#[derive(Clone, Copy)]
struct RecordCtx {
    index: usize,
    in_catalog: bool,
}

struct Doc<'a> {
    text: &'a str,
    path: &'a Path,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

impl Kind {
    fn of(raw: &RawValue) -> Kind {
        match raw.get().as_bytes().first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Object => "object",
            Kind::Array => "array",
            Kind::String => "string",
            Kind::Number => "number",
            Kind::Bool => "bool",
            Kind::Null => "null",
        }
    }
}

/// Decodes `capabilities.json`: an object whose `capabilities` key holds the records.
/// A top-level `null` decodes to no records, as in Go.
pub(crate) fn decode_catalog(text: &str, path: &Path) -> Result<Vec<RawRecord>, CatalogError> {
    let doc = Doc { text, path };
    doc.with_first_value(|top| {
        let mut records: GoSlice<RawRecord> = GoSlice::default();
        match Kind::of(top) {
            Kind::Null => {}
            Kind::Object => {
                for (key, value) in doc.entries(top)? {
                    if go_fold_eq(&key, "capabilities") {
                        doc.decode_records(value, &mut records)?;
                    } else {
                        return Err(doc.unknown_field(value, None, key));
                    }
                }
            }
            kind => {
                return Err(doc.type_error(
                    top,
                    None,
                    None,
                    kind,
                    "an object with a \"capabilities\" array",
                ));
            }
        }
        Ok(records.into_vec())
    })
}

/// Decodes one bare record file of `capabilities/` (`index` = its place in sorted order).
pub(crate) fn decode_record(
    text: &str,
    path: &Path,
    index: usize,
) -> Result<RawRecord, CatalogError> {
    let doc = Doc { text, path };
    doc.with_first_value(|top| {
        let mut record = RawRecord::default();
        let ctx = RecordCtx {
            index,
            in_catalog: false,
        };
        doc.decode_record_into(ctx, top, &mut record)?;
        Ok(record)
    })
}

impl<'a> Doc<'a> {
    fn offset(&self, raw: &RawValue) -> usize {
        (raw.get().as_ptr() as usize)
            .saturating_sub(self.text.as_ptr() as usize)
            .min(self.text.len())
    }

    fn position(&self, raw: &RawValue) -> Position {
        position_at(self.text, self.offset(raw))
    }

    /// Syntax-checks and captures the first value, runs `decode` on it, then rejects any
    /// non-whitespace after it (Go's second `Decode` returning anything but `io.EOF`).
    fn with_first_value<T>(
        &self,
        decode: impl FnOnce(&'a RawValue) -> Result<T, CatalogError>,
    ) -> Result<T, CatalogError> {
        let text = self.text;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let top = <&'a RawValue>::deserialize(&mut deserializer)
            .map_err(|error| self.syntax_error(&error))?;
        let out = decode(top)?;
        let end = self.offset(top) + top.get().len();
        let rest = text.as_bytes().get(end..).unwrap_or_default();
        if let Some(skip) = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            return Err(CatalogError::TrailingData {
                path: self.path.to_path_buf(),
                position: Some(position_at(text, end + skip)),
            });
        }
        Ok(out)
    }

    fn syntax_error(&self, error: &serde_json::Error) -> CatalogError {
        let full = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
        let position = (error.line() > 0).then(|| Position {
            line: error.line(),
            column: error.column().max(1),
        });
        CatalogError::InvalidJson {
            path: self.path.to_path_buf(),
            position,
            record: None,
            field: None,
            message,
        }
    }

    fn internal_error(&self, raw: &RawValue, error: &serde_json::Error) -> CatalogError {
        // The document already passed the syntax check, so this is not expected; report it
        // at the value rather than at serde_json's offset inside the sub-slice.
        CatalogError::InvalidJson {
            path: self.path.to_path_buf(),
            position: Some(self.position(raw)),
            record: None,
            field: None,
            message: error.to_string(),
        }
    }

    fn type_error(
        &self,
        raw: &RawValue,
        ctx: Option<RecordCtx>,
        field: Option<&str>,
        found: Kind,
        expected: &str,
    ) -> CatalogError {
        let mut location = String::new();
        if let Some(ctx) = ctx.filter(|ctx| ctx.in_catalog) {
            location.push_str(&format!("capabilities[{}]", ctx.index));
        }
        if let Some(field) = field {
            if !location.is_empty() {
                location.push('.');
            }
            location.push_str(field);
        }
        let message = if location.is_empty() {
            format!("cannot unmarshal {} into {expected}", found.name())
        } else {
            format!(
                "{location}: cannot unmarshal {} into {expected}",
                found.name()
            )
        };
        CatalogError::InvalidJson {
            path: self.path.to_path_buf(),
            position: Some(self.position(raw)),
            record: ctx.map(|ctx| ctx.index),
            field: field.map(str::to_owned),
            message,
        }
    }

    fn unknown_field(&self, value: &RawValue, ctx: Option<RecordCtx>, key: String) -> CatalogError {
        CatalogError::UnknownField {
            path: self.path.to_path_buf(),
            format: Format::Json,
            position: Some(self.position(value)),
            record: ctx.map(|ctx| ctx.index),
            in_catalog: ctx.is_some_and(|ctx| ctx.in_catalog),
            field: key,
        }
    }

    /// The entries of an object in document order, duplicates included.
    fn entries<'t>(&self, raw: &'t RawValue) -> Result<Vec<(String, &'t RawValue)>, CatalogError> {
        serde_json::Deserializer::from_str(raw.get())
            .deserialize_map(EntriesVisitor)
            .map_err(|error| self.internal_error(raw, &error))
    }

    /// The elements of an array.
    fn elements<'t>(&self, raw: &'t RawValue) -> Result<Vec<&'t RawValue>, CatalogError> {
        Vec::<&'t RawValue>::deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
            .map_err(|error| self.internal_error(raw, &error))
    }

    /// The content of a JSON string, with Go's U+FFFD replacements.
    fn string(&self, raw: &RawValue) -> Result<String, CatalogError> {
        serde_json::Deserializer::from_str(raw.get())
            .deserialize_bytes(GoStringVisitor)
            .map_err(|error| self.internal_error(raw, &error))
    }

    fn decode_records(
        &self,
        raw: &RawValue,
        records: &mut GoSlice<RawRecord>,
    ) -> Result<(), CatalogError> {
        match Kind::of(raw) {
            Kind::Null => {
                records.set_nil();
                Ok(())
            }
            Kind::Array => {
                let elements = self.elements(raw)?;
                records.decode_elements(elements, |index, record, element| {
                    let ctx = RecordCtx {
                        index,
                        in_catalog: true,
                    };
                    self.decode_record_into(ctx, element, record)
                })
            }
            kind => Err(self.type_error(raw, None, Some("capabilities"), kind, "array")),
        }
    }

    fn decode_record_into(
        &self,
        ctx: RecordCtx,
        raw: &RawValue,
        record: &mut RawRecord,
    ) -> Result<(), CatalogError> {
        record.offset = Some(self.offset(raw));
        match Kind::of(raw) {
            Kind::Null => Ok(()),
            Kind::Object => {
                for (key, value) in self.entries(raw)? {
                    let Some(field) = Field::match_key(&key) else {
                        return Err(self.unknown_field(value, Some(ctx), key));
                    };
                    self.decode_field(ctx, field, value, record)?;
                }
                Ok(())
            }
            kind => Err(self.type_error(raw, Some(ctx), None, kind, "a capability object")),
        }
    }

    fn decode_field(
        &self,
        ctx: RecordCtx,
        field: Field,
        raw: &RawValue,
        record: &mut RawRecord,
    ) -> Result<(), CatalogError> {
        match record.slot(field) {
            Slot::Text(text) => self.decode_text(ctx, field, None, raw, text),
            Slot::List(list) => match Kind::of(raw) {
                Kind::Null => {
                    list.set_nil();
                    Ok(())
                }
                Kind::Array => {
                    let elements = self.elements(raw)?;
                    list.decode_elements(elements, |index, text, element| {
                        self.decode_text(ctx, field, Some(index), element, text)
                    })
                }
                kind => Err(self.type_error(
                    raw,
                    Some(ctx),
                    Some(field.name()),
                    kind,
                    "array of strings",
                )),
            },
        }
    }

    /// Decodes a string into `text`; `index` is set for a list entry (named only on error).
    fn decode_text(
        &self,
        ctx: RecordCtx,
        field: Field,
        index: Option<usize>,
        raw: &RawValue,
        text: &mut Text,
    ) -> Result<(), CatalogError> {
        match Kind::of(raw) {
            Kind::Null => Ok(()),
            Kind::String => {
                text.value = self.string(raw)?;
                text.offset = Some(self.offset(raw));
                Ok(())
            }
            kind => {
                let name = entry_name(field, index);
                Err(self.type_error(raw, Some(ctx), Some(&name), kind, "string"))
            }
        }
    }
}

/// Collects `(key, raw value)` pairs of one object in order, keeping duplicates.
struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key_seed(GoStringSeed)? {
            let value: &'de RawValue = map.next_value()?;
            entries.push((key, value));
        }
        Ok(entries)
    }
}

/// Reads a JSON string through `deserialize_bytes`, which lets unpaired surrogate escapes
/// through (as WTF-8) instead of failing, then applies Go's U+FFFD replacement.
struct GoStringSeed;

impl<'de> DeserializeSeed<'de> for GoStringSeed {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_bytes(GoStringVisitor)
    }
}

struct GoStringVisitor;

impl Visitor<'_> for GoStringVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<String, E> {
        Ok(go_lossy_utf8(v, true).into_owned())
    }
}
