//! Decoded but not yet validated records, and the small Go-compatibility helpers the
//! decoders and the validator share.
//!
//! CompozyOS decodes into Go structs with `encoding/json` and `BurntSushi/toml`. Both decode
//! *in place*: a repeated JSON key decodes again into the field it already filled, a `null`
//! leaves a string untouched, and an array decodes element by element into the slice already
//! there (reusing its spare capacity). [`GoSlice`] and [`RawRecord`] model exactly that state
//! so a document with repeated keys loads to the same records as in CompozyOS.

use std::borrow::Cow;

use crate::error::Position;

/// A string field (or list entry) as decoded, with the byte offset of the value that last set
/// it (`None` while it still holds Go's zero value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Text {
    pub(crate) value: String,
    pub(crate) offset: Option<usize>,
}

/// A Go slice: `backing.len()` plays the capacity and `len` the length, so the elements
/// between them keep the stale values Go would expose again when a later array grows into
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoSlice<T> {
    backing: Vec<T>,
    len: usize,
}

impl<T> Default for GoSlice<T> {
    fn default() -> Self {
        GoSlice {
            backing: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Default> GoSlice<T> {
    /// JSON `null` on a slice: Go sets it to nil, dropping the backing array.
    pub(crate) fn set_nil(&mut self) {
        self.backing.clear();
        self.len = 0;
    }

    /// Decodes an array into the slice the way `encoding/json` does: element `i` decodes into
    /// the existing element `i` when there is one (within length or spare capacity), a new
    /// zero element otherwise; the slice is then truncated to the array's length, and an
    /// empty array leaves a fresh empty slice. `BurntSushi/toml` reuses elements likewise.
    pub(crate) fn decode_elements<X, E>(
        &mut self,
        elements: impl IntoIterator<Item = X>,
        mut decode: impl FnMut(usize, &mut T, X) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut count = 0;
        for element in elements {
            if count >= self.backing.len() {
                self.backing.push(T::default());
            }
            if count >= self.len {
                self.len = count + 1;
            }
            if let Some(slot) = self.backing.get_mut(count) {
                decode(count, slot, element)?;
            }
            count += 1;
        }
        if count < self.len {
            self.len = count;
        }
        if count == 0 {
            self.set_nil();
        }
        Ok(())
    }

    /// The visible elements.
    pub(crate) fn as_slice(&self) -> &[T] {
        self.backing.get(..self.len).unwrap_or(&[])
    }

    /// The visible elements, owned.
    pub(crate) fn into_vec(mut self) -> Vec<T> {
        self.backing.truncate(self.len);
        self.backing
    }
}

/// The ten authored fields of a capability record, in canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Id,
    Summary,
    Outcome,
    Version,
    ContextNeeded,
    ArtifactsExpected,
    ExecutionOutline,
    Constraints,
    Examples,
    Requirements,
}

impl Field {
    const ALL: [Field; 10] = [
        Field::Id,
        Field::Summary,
        Field::Outcome,
        Field::Version,
        Field::ContextNeeded,
        Field::ArtifactsExpected,
        Field::ExecutionOutline,
        Field::Constraints,
        Field::Examples,
        Field::Requirements,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Summary => "summary",
            Field::Outcome => "outcome",
            Field::Version => "version",
            Field::ContextNeeded => "context_needed",
            Field::ArtifactsExpected => "artifacts_expected",
            Field::ExecutionOutline => "execution_outline",
            Field::Constraints => "constraints",
            Field::Examples => "examples",
            Field::Requirements => "requirements",
        }
    }

    /// The field an authored key selects, matched like Go's decoders do (see
    /// [`go_fold_eq`]); `digest` and anything else is unknown.
    pub(crate) fn match_key(key: &str) -> Option<Field> {
        Field::ALL
            .iter()
            .copied()
            .find(|field| field.name() == key)
            .or_else(|| {
                Field::ALL
                    .iter()
                    .copied()
                    .find(|field| go_fold_eq(key, field.name()))
            })
    }
}

/// `field` or `field[index]`, for error messages.
pub(crate) fn entry_name(field: Field, index: Option<usize>) -> String {
    match index {
        Some(index) => format!("{}[{index}]", field.name()),
        None => field.name().to_owned(),
    }
}

/// Mutable access to one field of a [`RawRecord`].
pub(crate) enum Slot<'a> {
    Text(&'a mut Text),
    List(&'a mut GoSlice<Text>),
}

/// One record as decoded, before trimming and validation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawRecord {
    /// Byte offset of the record's value (`None` for a TOML file that is the record).
    pub(crate) offset: Option<usize>,
    pub(crate) id: Text,
    pub(crate) summary: Text,
    pub(crate) outcome: Text,
    pub(crate) version: Text,
    pub(crate) context_needed: GoSlice<Text>,
    pub(crate) artifacts_expected: GoSlice<Text>,
    pub(crate) execution_outline: GoSlice<Text>,
    pub(crate) constraints: GoSlice<Text>,
    pub(crate) examples: GoSlice<Text>,
    pub(crate) requirements: GoSlice<Text>,
}

impl RawRecord {
    pub(crate) fn slot(&mut self, field: Field) -> Slot<'_> {
        match field {
            Field::Id => Slot::Text(&mut self.id),
            Field::Summary => Slot::Text(&mut self.summary),
            Field::Outcome => Slot::Text(&mut self.outcome),
            Field::Version => Slot::Text(&mut self.version),
            Field::ContextNeeded => Slot::List(&mut self.context_needed),
            Field::ArtifactsExpected => Slot::List(&mut self.artifacts_expected),
            Field::ExecutionOutline => Slot::List(&mut self.execution_outline),
            Field::Constraints => Slot::List(&mut self.constraints),
            Field::Examples => Slot::List(&mut self.examples),
            Field::Requirements => Slot::List(&mut self.requirements),
        }
    }
}

/// Whether an authored key selects the field `name` (ASCII lowercase letters and `_`).
///
/// Both `encoding/json` (exact match first, then `foldName`, i.e. Unicode simple case
/// folding) and `BurntSushi/toml` (`strings.EqualFold`) match keys case-insensitively. Against
/// an ASCII name that means ASCII case folding plus the only two non-ASCII runes whose fold
/// orbit contains an ASCII letter: U+212A KELVIN SIGN (folds with `k`) and U+017F LATIN SMALL
/// LETTER LONG S (folds with `s`). So `"ID"` and `"ſummary"` are fields, `"İd"` is not.
pub(crate) fn go_fold_eq(key: &str, name: &str) -> bool {
    let mut expected = name.bytes();
    for c in key.chars() {
        let Some(want) = expected.next() else {
            return false;
        };
        let folds = match c {
            '\u{212A}' => want == b'k',
            '\u{017F}' => want == b's',
            c if c.is_ascii() => c.to_ascii_lowercase() as u32 == u32::from(want),
            _ => false,
        };
        if !folds {
            return false;
        }
    }
    expected.next().is_none()
}

/// Go's `unicode.IsSpace`, the set `strings.TrimSpace` trims: the Unicode `White_Space`
/// property (tab, LF, VT, FF, CR, space, NEL, NBSP, OGHAM SPACE MARK, U+2000–U+200A, LINE
/// SEPARATOR, PARAGRAPH SEPARATOR, NARROW NBSP, MEDIUM MATHEMATICAL SPACE, IDEOGRAPHIC SPACE).
pub(crate) fn is_go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0B}'
            | '\u{0C}'
            | '\r'
            | ' '
            | '\u{85}'
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Go's `strings.TrimSpace`.
pub(crate) fn go_trim(s: &str) -> &str {
    s.trim_matches(is_go_space)
}

/// Converts bytes to text the way Go turns invalid UTF-8 into U+FFFD: every byte that does
/// not start a valid sequence becomes one U+FFFD (Go's `utf8.DecodeRune` consumes a single
/// byte on error, unlike `String::from_utf8_lossy`). With `surrogates_as_one`, a WTF-8 encoded
/// surrogate (`ED A0..BF 80..BF`, which is how `serde_json` hands over an unpaired `\uD800`
/// escape) becomes a single U+FFFD, as Go's decoder replaces an unpaired surrogate escape.
pub(crate) fn go_lossy_utf8(bytes: &[u8], surrogates_as_one: bool) -> Cow<'_, str> {
    let mut rest = match std::str::from_utf8(bytes) {
        Ok(text) => return Cow::Borrowed(text),
        Err(_) => bytes,
    };
    let mut out = String::with_capacity(bytes.len() + 8);
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                return Cow::Owned(out);
            }
            Err(error) => {
                let (valid, bad) = rest.split_at(error.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push('\u{FFFD}');
                let skip = match bad {
                    [0xED, b1, b2, ..]
                        if surrogates_as_one
                            && (0xA0..=0xBF).contains(b1)
                            && (0x80..=0xBF).contains(b2) =>
                    {
                        3
                    }
                    _ => 1,
                };
                rest = bad.get(skip..).unwrap_or_default();
            }
        }
    }
}

/// The 1-based line and byte column of `offset` in `text`.
pub(crate) fn position_at(text: &str, offset: usize) -> Position {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    let before = bytes.get(..offset).unwrap_or_default();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    Position {
        line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
        column: offset - line_start + 1,
    }
}

/// [`position_at`] for many offsets of one text: the line starts are found once, then each
/// offset costs a binary search instead of a scan from the start of the text.
#[derive(Debug)]
pub(crate) struct LineIndex {
    /// Identifies the text indexed: its address and length.
    key: (usize, usize),
    /// Byte offset where each line starts (the first is 0).
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            key: (text.as_ptr() as usize, text.len()),
            starts,
        }
    }

    /// Whether this index was built for `text` (the same string, not an equal one).
    pub(crate) fn indexes(&self, text: &str) -> bool {
        self.key == (text.as_ptr() as usize, text.len())
    }

    /// The same as [`position_at`] on the indexed text.
    pub(crate) fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.key.1);
        // Lines before or at `offset`: at least the first, which starts at 0.
        let line = self.starts.partition_point(|start| *start <= offset).max(1);
        let line_start = self.starts.get(line - 1).copied().unwrap_or(0);
        Position {
            line,
            column: offset - line_start + 1,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn fold_matches_go_rules() {
        assert!(go_fold_eq("id", "id"));
        assert!(go_fold_eq("ID", "id"));
        assert!(go_fold_eq("Context_Needed", "context_needed"));
        assert!(go_fold_eq("\u{017F}ummary", "summary"));
        assert!(go_fold_eq("\u{212A}", "k"));
        assert!(!go_fold_eq("\u{0130}d", "id"));
        assert!(!go_fold_eq("\u{0131}d", "id"));
        assert!(!go_fold_eq("ids", "id"));
        assert!(!go_fold_eq("i", "id"));
        assert!(!go_fold_eq("context-needed", "context_needed"));
        assert_eq!(Field::match_key("Requirements"), Some(Field::Requirements));
        assert_eq!(Field::match_key("digest"), None);
    }

    #[test]
    fn lossy_matches_go_replacement() {
        assert_eq!(
            go_lossy_utf8(b"a\xffb\xe2\x82c", false),
            "a\u{FFFD}b\u{FFFD}\u{FFFD}c"
        );
        assert_eq!(
            go_lossy_utf8(b"\xed\xa0\x80", false),
            "\u{FFFD}\u{FFFD}\u{FFFD}"
        );
        assert_eq!(go_lossy_utf8(b"\xed\xa0\x80x", true), "\u{FFFD}x");
        assert!(matches!(
            go_lossy_utf8(b"plain", true),
            Cow::Borrowed("plain")
        ));
    }

    #[test]
    fn go_slice_reuses_capacity_like_go() {
        let mut slice: GoSlice<String> = GoSlice::default();
        let assign = |s: &mut GoSlice<String>, items: &[Option<&str>]| {
            s.decode_elements(items.iter(), |_, slot, item| {
                if let Some(v) = item {
                    *slot = (*v).to_owned();
                }
                Ok::<(), ()>(())
            })
            .unwrap();
        };
        assign(&mut slice, &[Some("a"), Some("b"), Some("c")]);
        assign(&mut slice, &[Some("x")]);
        assert_eq!(slice.as_slice(), ["x"]);
        assign(&mut slice, &[Some("p"), None, None]);
        assert_eq!(slice.as_slice(), ["p", "b", "c"]);
        assign(&mut slice, &[]);
        assert!(slice.as_slice().is_empty());
        assign(&mut slice, &[None]);
        assert_eq!(slice.as_slice(), [""]);
    }

    #[test]
    fn trim_and_positions() {
        assert_eq!(go_trim("\u{3000} a b\u{85}\u{2028}"), "a b");
        assert_eq!(go_trim("\u{200B}a"), "\u{200B}a");
        assert_eq!(position_at("ab\ncd", 4), Position { line: 2, column: 2 });
        assert_eq!(position_at("ab", 0), Position { line: 1, column: 1 });
    }

    #[test]
    fn line_index_agrees_with_position_at() {
        for text in ["", "\n", "ab", "a\nb\n\ncd", "é\nü€x\n"] {
            let index = LineIndex::new(text);
            assert!(index.indexes(text));
            for offset in 0..=text.len() + 2 {
                assert_eq!(
                    index.position(offset),
                    position_at(text, offset),
                    "{text:?} at {offset}"
                );
            }
        }
    }
}
