//! TOML documents: converted to JSON values (values with no JSON equivalent refused) with the
//! position of every key.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::{
    Locator, MAX_DOCUMENT_DEPTH, Position, PositionChildren, PositionTree, SourceDocument,
    SourceError, SourceErrorKind,
};

pub(super) fn parse_toml(text: &str) -> Result<SourceDocument, SourceError> {
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
