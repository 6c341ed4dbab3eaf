//! Strict JSON and TOML documents that remember where each value came from.
//!
//! A [`SourceDocument`] is a `serde_json::Value` plus a map from JSON pointer to the line and
//! column where that value (or, in TOML, its key) starts, so that rules checked on the value
//! can be reported as `path:line:col`. Parsing is strict: duplicate keys, trailing data and
//! nesting beyond [`MAX_DOCUMENT_DEPTH`] are errors with a position. TOML values with no JSON
//! equivalent (dates and times, NaN, infinities) are errors too.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;
use thiserror::Error;

mod json_source;
mod toml_source;

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
            SourceFormat::Json => json_source::parse_json(text),
            SourceFormat::Toml => toml_source::parse_toml(text),
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
