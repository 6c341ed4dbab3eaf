//! Aligned text tables for people: a bold header, columns two spaces apart.

use std::io::Write;

use anstyle::Style;

/// A table being filled.
#[derive(Debug)]
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new(header: &[&'static str]) -> Table {
        Table {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells print empty, extra cells are dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the table on stdout (styles stripped when it is not a terminal).
    pub fn print(&self) -> std::io::Result<()> {
        let mut out = anstream::stdout().lock();
        self.write(&mut out)
    }

    /// Writes the table to `out`.
    pub fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let bold = Style::new().bold();
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        let line = |out: &mut dyn Write, cells: &[String], style: Style| {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = cells.get(i).map_or("", String::as_str);
                if i + 1 == columns {
                    text.push_str(cell);
                } else {
                    let pad = width - cell.chars().count().min(*width);
                    text.push_str(cell);
                    text.push_str(&" ".repeat(pad + 2));
                }
            }
            writeln!(out, "{style}{}{style:#}", text.trim_end())
        };
        line(out, &header, bold)?;
        for row in &self.rows {
            line(out, row, Style::new())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let mut table = Table::new(&["ID", "MODE", "TITLE"]);
        table.row(vec!["echo@1.0.0".into(), "unary".into(), "Echo".into()]);
        table.row(vec!["a@1.0.0".into(), "bidirectional".into(), "A".into()]);
        let mut out = Vec::new();
        table
            .write(&mut anstream::StripStream::new(&mut out))
            .unwrap_or_default();
        let text = String::from_utf8(out).unwrap_or_default();
        assert_eq!(
            text,
            "ID          MODE           TITLE\n\
             echo@1.0.0  unary          Echo\n\
             a@1.0.0     bidirectional  A\n"
        );
    }
}
