//! TOML catalog and record files, decoded with the semantics of `BurntSushi/toml` as
//! CompozyOS uses it (`toml.Decode`, then `MetaData.Undecoded()` must be empty).
//!
//! The document is parsed with spans ([`toml::de::DeTable::parse`]) and walked in document
//! order (entries are re-sorted by the span of their key, since the parsed table is kept in
//! key order). Go semantics reproduced here:
//!
//! * keys match fields case-insensitively (`strings.EqualFold`, see
//!   [`crate::raw::go_fold_eq`]);
//! * a value of the wrong type is an error at once; unknown keys are reported only after the
//!   whole document decoded, the first in document order, as a dotted key path
//!   (`capabilities.digest`), like `unknown field %q` over `Undecoded()[0]`.
//!
//! Two keys of one table that differ only in case (`id` and `ID`) are decoded in document
//! order here, so the last wins; in CompozyOS the order is Go's random map order.

use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::{CatalogError, Format, Position};
use crate::raw::{Field, GoSlice, RawRecord, Slot, Text, entry_name, go_fold_eq, position_at};

/// Decodes `capabilities.toml`: a top-level `capabilities` array of tables.
pub(crate) fn decode_catalog(text: &str, path: &Path) -> Result<Vec<RawRecord>, CatalogError> {
    let doc = Doc::new(text, path);
    let table = doc.parse()?;
    let mut unknown = Unknown::default();
    let mut records: GoSlice<RawRecord> = GoSlice::default();
    for (key, value) in in_document_order(table.get_ref()) {
        if go_fold_eq(key.get_ref(), "capabilities") {
            doc.decode_records(key.get_ref(), value, &mut records, &mut unknown)?;
        } else {
            unknown.note(key.span().start, quote_key(key.get_ref()), None);
        }
    }
    doc.finish(unknown, true)?;
    Ok(records.into_vec())
}

/// Decodes one bare record file of `capabilities/` (`index` = its place in sorted order).
pub(crate) fn decode_record(
    text: &str,
    path: &Path,
    index: usize,
) -> Result<RawRecord, CatalogError> {
    let doc = Doc::new(text, path);
    let table = doc.parse()?;
    let mut unknown = Unknown::default();
    let mut record = RawRecord::default();
    let ctx = RecordCtx {
        index,
        in_catalog: false,
        key_prefix: String::new(),
    };
    doc.decode_table_into(&ctx, table.get_ref(), &mut record, &mut unknown)?;
    doc.finish(unknown, false)?;
    Ok(record)
}

struct Doc<'a> {
    text: &'a str,
    path: &'a Path,
}

struct RecordCtx {
    index: usize,
    in_catalog: bool,
    /// Dotted key path of the record's table (`capabilities.`), for unknown-key messages.
    key_prefix: String,
}

/// The first unknown key in document order.
#[derive(Default)]
struct Unknown {
    first: Option<(usize, String, Option<usize>)>,
}

impl Unknown {
    fn note(&mut self, offset: usize, key_path: String, record: Option<usize>) {
        if self
            .first
            .as_ref()
            .is_none_or(|(seen, _, _)| offset < *seen)
        {
            self.first = Some((offset, key_path, record));
        }
    }
}

fn in_document_order<'t, 'i>(
    table: &'t DeTable<'i>,
) -> Vec<(
    &'t Spanned<toml::de::DeString<'i>>,
    &'t Spanned<DeValue<'i>>,
)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// A key as `BurntSushi/toml`'s `Key.String()` shows it: bare when it can be, else quoted.
fn quote_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

fn kind_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "string",
        DeValue::Integer(_) => "integer",
        DeValue::Float(_) => "float",
        DeValue::Boolean(_) => "boolean",
        DeValue::Datetime(_) => "datetime",
        DeValue::Array(_) => "array",
        DeValue::Table(_) => "table",
    }
}

impl<'a> Doc<'a> {
    fn new(text: &'a str, path: &'a Path) -> Self {
        Doc { text, path }
    }

    fn position(&self, offset: usize) -> Position {
        position_at(self.text, offset)
    }

    fn parse(&self) -> Result<Spanned<DeTable<'a>>, CatalogError> {
        DeTable::parse(self.text).map_err(|error| CatalogError::InvalidToml {
            path: self.path.to_path_buf(),
            position: error.span().map(|span| self.position(span.start)),
            record: None,
            field: None,
            message: error.message().trim_end().to_owned(),
        })
    }

    fn finish(&self, unknown: Unknown, in_catalog: bool) -> Result<(), CatalogError> {
        match unknown.first {
            None => Ok(()),
            Some((offset, key_path, record)) => Err(CatalogError::UnknownField {
                path: self.path.to_path_buf(),
                format: Format::Toml,
                position: Some(self.position(offset)),
                record,
                in_catalog,
                field: key_path,
            }),
        }
    }

    fn type_error(
        &self,
        offset: usize,
        ctx: Option<&RecordCtx>,
        field: Option<&str>,
        found: &DeValue<'_>,
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
        if location.is_empty() {
            location.push_str("document");
        }
        CatalogError::InvalidToml {
            path: self.path.to_path_buf(),
            position: Some(self.position(offset)),
            record: ctx.map(|ctx| ctx.index),
            field: field.map(str::to_owned),
            message: format!(
                "{location}: incompatible types: TOML value has type {}; expected {expected}",
                kind_name(found)
            ),
        }
    }

    fn decode_records(
        &self,
        key: &str,
        value: &Spanned<DeValue<'a>>,
        records: &mut GoSlice<RawRecord>,
        unknown: &mut Unknown,
    ) -> Result<(), CatalogError> {
        let DeValue::Array(array) = value.get_ref() else {
            return Err(self.type_error(
                value.span().start,
                None,
                Some("capabilities"),
                value.get_ref(),
                "array of tables",
            ));
        };
        let key_prefix = format!("{}.", quote_key(key));
        records.decode_elements(array.iter(), |index, record, element| {
            let ctx = RecordCtx {
                index,
                in_catalog: true,
                key_prefix: key_prefix.clone(),
            };
            record.offset = Some(element.span().start);
            let DeValue::Table(table) = element.get_ref() else {
                return Err(self.type_error(
                    element.span().start,
                    Some(&ctx),
                    None,
                    element.get_ref(),
                    "table",
                ));
            };
            self.decode_table_into(&ctx, table, record, unknown)
        })
    }

    fn decode_table_into(
        &self,
        ctx: &RecordCtx,
        table: &DeTable<'a>,
        record: &mut RawRecord,
        unknown: &mut Unknown,
    ) -> Result<(), CatalogError> {
        for (key, value) in in_document_order(table) {
            match Field::match_key(key.get_ref()) {
                Some(field) => self.decode_field(ctx, field, value, record)?,
                None => unknown.note(
                    key.span().start,
                    format!("{}{}", ctx.key_prefix, quote_key(key.get_ref())),
                    Some(ctx.index),
                ),
            }
        }
        Ok(())
    }

    fn decode_field(
        &self,
        ctx: &RecordCtx,
        field: Field,
        value: &Spanned<DeValue<'a>>,
        record: &mut RawRecord,
    ) -> Result<(), CatalogError> {
        match record.slot(field) {
            Slot::Text(text) => self.decode_text(ctx, field, None, value, text),
            Slot::List(list) => {
                let DeValue::Array(array) = value.get_ref() else {
                    return Err(self.type_error(
                        value.span().start,
                        Some(ctx),
                        Some(field.name()),
                        value.get_ref(),
                        "array of strings",
                    ));
                };
                list.decode_elements(array.iter(), |index, text, element| {
                    self.decode_text(ctx, field, Some(index), element, text)
                })
            }
        }
    }

    /// Decodes a string into `text`; `index` is set for a list entry (named only on error).
    fn decode_text(
        &self,
        ctx: &RecordCtx,
        field: Field,
        index: Option<usize>,
        value: &Spanned<DeValue<'a>>,
        text: &mut Text,
    ) -> Result<(), CatalogError> {
        match value.get_ref() {
            DeValue::String(s) => {
                text.value = s.to_string();
                text.offset = Some(value.span().start);
                Ok(())
            }
            other => {
                let name = entry_name(field, index);
                Err(self.type_error(value.span().start, Some(ctx), Some(&name), other, "string"))
            }
        }
    }
}
