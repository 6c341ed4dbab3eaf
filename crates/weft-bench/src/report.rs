//! Printing results: a markdown table for people, JSON lines for machines.

use serde_json::Value;

use crate::Row;

/// One column: the row key and its heading.
pub type Column = (&'static str, &'static str);

fn cell(value: Option<&Value>) -> String {
    match value {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 || f.abs() >= 100.0 => format!("{f:.0}"),
            Some(f) => format!("{f:.2}"),
            None => n.to_string(),
        },
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// What a scenario measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// One line saying what was measured and how.
    pub title: String,
    /// The columns of the human table.
    pub columns: Vec<Column>,
    /// One JSON object per measured row.
    pub rows: Vec<Row>,
}

impl Report {
    /// The title and the table, for people.
    pub fn human(&self) -> String {
        format!("{}\n{}", self.title, table(&self.columns, &self.rows))
    }

    /// One compact JSON object per row, one per line, for machines.
    pub fn json_lines(&self) -> String {
        self.rows
            .iter()
            .map(|r| format!("{}\n", serde_json::Value::Object(r.clone())))
            .collect()
    }
}

/// `rows` as a markdown table with `columns`.
pub fn table(columns: &[Column], rows: &[Row]) -> String {
    let mut out = String::new();
    out.push('|');
    for (_, heading) in columns {
        out.push_str(&format!(" {heading} |"));
    }
    out.push_str("\n|");
    for _ in columns {
        out.push_str("---:|");
    }
    out.push('\n');
    for row in rows {
        out.push('|');
        for (key, _) in columns {
            out.push_str(&format!(" {} |", cell(row.get(*key))));
        }
        out.push('\n');
    }
    out
}

/// A row from `(key, value)` pairs; floats are rounded to two decimals.
pub fn row(scenario: &str, pairs: &[(&str, f64)]) -> Row {
    let mut row = Row::new();
    row.insert("scenario".into(), Value::from(scenario));
    for (key, value) in pairs {
        let rounded = (value * 100.0).round() / 100.0;
        let number = if rounded.fract() == 0.0 && rounded.abs() < 9.0e15 {
            Value::from(rounded as i64)
        } else {
            Value::from(rounded)
        };
        row.insert((*key).to_owned(), number);
    }
    row
}
