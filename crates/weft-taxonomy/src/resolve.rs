//! Resolving an id: standard (which row, which bindings), custom, or invalid (and why).

use crate::placeholder::check_slug;
use crate::reason::InvalidReason;
use crate::table::{Bindings, PatternSegment, Row, rows_of};
use crate::{CUSTOM_DOMAIN, DOMAINS, MAX_ID_LEN};

/// What an id is to the taxonomy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A standard capability: one row of the table with its placeholders bound.
    Standard(StandardId),
    /// An out-of-tree capability, `custom.<provider>.<capability>`.
    Custom(CustomId),
    /// Neither, with the reason.
    Invalid(InvalidId),
}

/// A standard id: the row it instantiates and the values bound to its placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandardId {
    /// The id.
    pub id: String,
    /// The row; `row.pattern` is the seed's pattern string.
    pub row: &'static Row,
    /// Placeholder name (no braces) → value; empty for rows without placeholders.
    pub bindings: Bindings,
}

/// A custom id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomId {
    /// The id.
    pub id: String,
    /// The provider (second segment).
    pub provider: String,
    /// The capability (everything after the provider, dots included).
    pub capability: String,
}

/// An id that is neither standard nor custom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidId {
    /// The id as given.
    pub id: String,
    /// Why.
    pub reason: InvalidReason,
}

impl Resolution {
    /// The standard id, if it is one.
    pub fn standard(&self) -> Option<&StandardId> {
        match self {
            Resolution::Standard(s) => Some(s),
            _ => None,
        }
    }

    /// The kind as a word: `standard`, `custom` or `invalid`.
    pub fn kind(&self) -> &'static str {
        match self {
            Resolution::Standard(_) => "standard",
            Resolution::Custom(_) => "custom",
            Resolution::Invalid(_) => "invalid",
        }
    }
}

/// Whether `id` lies in the taxonomy's namespace: its first dot-separated segment is a
/// standard domain or `custom`. Ids outside it (`echo`, `feature:json-mode`) are not
/// taxonomy ids and the publish binding leaves them alone.
pub fn in_namespace(id: &str) -> bool {
    let first = id.split('.').next().unwrap_or_default();
    first == CUSTOM_DOMAIN || DOMAINS.contains(&first)
}

/// Resolves `id`: a standard row with its bindings, a custom id, or the reason it is
/// neither. Pure and total: every string gets an answer.
pub fn resolve(id: &str) -> Resolution {
    let invalid = |reason| {
        Resolution::Invalid(InvalidId {
            id: id.to_owned(),
            reason,
        })
    };
    let segments = match split(id) {
        Ok(segments) => segments,
        Err(reason) => return invalid(reason),
    };
    let domain = segments[0];
    if domain == CUSTOM_DOMAIN {
        if segments.len() < 3 {
            return invalid(InvalidReason::CustomIncomplete);
        }
        if check_slug(segments[1]).is_err() {
            return invalid(InvalidReason::BadProvider {
                provider: segments[1].to_owned(),
            });
        }
        return Resolution::Custom(CustomId {
            id: id.to_owned(),
            provider: segments[1].to_owned(),
            capability: segments[2..].join("."),
        });
    }
    if !DOMAINS.contains(&domain) {
        return invalid(InvalidReason::UnknownDomain {
            domain: domain.to_owned(),
        });
    }
    let Some(&action) = segments.get(1) else {
        return invalid(InvalidReason::MissingAction {
            domain: domain.to_owned(),
        });
    };
    // The domain's actions, each once, in the seed's order (data's lookups are not adjacent).
    let mut actions: Vec<&'static str> = Vec::new();
    for action in rows_of(domain).map(Row::action) {
        if !actions.contains(&action) {
            actions.push(action);
        }
    }
    if actions.is_empty() {
        return invalid(InvalidReason::EmptyDomain {
            domain: domain.to_owned(),
        });
    }
    if !actions.contains(&action) {
        return invalid(InvalidReason::UnknownAction {
            domain: domain.to_owned(),
            action: action.to_owned(),
            actions,
        });
    }
    let candidates: Vec<&'static Row> = rows_of(domain).filter(|r| r.action() == action).collect();
    let mut matched: Option<(&'static Row, Bindings)> = None;
    let mut best: Option<Miss> = None;
    for row in &candidates {
        match match_row(row, &segments) {
            // The most specific row wins (the table has no overlaps; this keeps the answer
            // deterministic should a later version add one).
            Ok(bindings) => {
                if matched
                    .as_ref()
                    .is_none_or(|(m, _)| row.fixed_segments() > m.fixed_segments())
                {
                    matched = Some((row, bindings));
                }
            }
            Err(miss) => note(&mut best, miss),
        }
    }
    if let Some((row, bindings)) = matched {
        return Resolution::Standard(StandardId {
            id: id.to_owned(),
            row,
            bindings,
        });
    }
    let reason = match best {
        Some(Miss {
            at,
            row,
            kind:
                MissKind::Value {
                    placeholder,
                    value,
                    rule,
                },
            ..
        }) => InvalidReason::PlaceholderValue {
            segment: at,
            row: row.pattern,
            placeholder,
            value,
            rule,
        },
        Some(Miss {
            row,
            kind:
                MissKind::Same {
                    first,
                    second,
                    value,
                },
            ..
        }) => InvalidReason::SameValue {
            row: row.pattern,
            first,
            second,
            value,
        },
        _ => InvalidReason::NoMatchingRow {
            id: id.to_owned(),
            domain: domain.to_owned(),
            action: action.to_owned(),
            rows: candidates.iter().map(|r| r.pattern).collect(),
        },
    };
    invalid(reason)
}

/// Splits an id into segments, checking the grammar every taxonomy id obeys.
fn split(id: &str) -> Result<Vec<&str>, InvalidReason> {
    if id.is_empty() {
        return Err(InvalidReason::Empty);
    }
    let len = id.chars().count();
    if len > MAX_ID_LEN {
        return Err(InvalidReason::TooLong { len });
    }
    let segments: Vec<&str> = id.split('.').collect();
    for (segment, text) in segments.iter().enumerate() {
        if text.is_empty() {
            return Err(InvalidReason::EmptySegment { segment });
        }
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(InvalidReason::Uppercase {
                segment,
                text: (*text).to_owned(),
            });
        }
        let allowed =
            |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
        if let Some(found) = text.chars().find(|c| !allowed(*c)) {
            return Err(InvalidReason::BadCharacter {
                segment,
                text: (*text).to_owned(),
                found,
            });
        }
        if text.starts_with(['-', '_']) {
            return Err(InvalidReason::BadSegmentStart {
                segment,
                text: (*text).to_owned(),
            });
        }
    }
    Ok(segments)
}

/// Why one row did not match, and how far it got.
#[derive(Debug)]
struct Miss {
    /// The id segment where matching failed (where the failing value starts).
    at: usize,
    /// How far the row got, for ranking: `at`, or the end of a value that spans segments
    /// (so "`100.5` is out of range" outranks "`100` then a stray `5`").
    depth: usize,
    row: &'static Row,
    kind: MissKind,
}

#[derive(Debug)]
enum MissKind {
    /// A literal segment differs, or the id is longer or shorter than the pattern.
    Shape,
    /// A placeholder value is outside its set.
    Value {
        placeholder: &'static str,
        value: String,
        rule: String,
    },
    /// Two placeholders that must differ are equal.
    Same {
        first: &'static str,
        second: &'static str,
        value: String,
    },
}

/// Keeps the most telling miss: the one that got furthest, and at equal depth a value
/// problem over a shape mismatch.
fn note(best: &mut Option<Miss>, miss: Miss) {
    let rank = |m: &Miss| (m.depth, !matches!(m.kind, MissKind::Shape));
    if best.as_ref().is_none_or(|b| rank(&miss) > rank(b)) {
        *best = Some(miss);
    }
}

fn match_row(row: &'static Row, segments: &[&str]) -> Result<Bindings, Miss> {
    let pattern: Vec<PatternSegment> = row.segments().collect();
    let mut bindings = Bindings::new();
    let mut best = None;
    if !walk(row, &pattern, segments, 0, &mut bindings, &mut best) {
        return Err(best.unwrap_or(Miss {
            at: 0,
            depth: 0,
            row,
            kind: MissKind::Shape,
        }));
    }
    if let Some((first, second)) = row.distinct
        && let (Some(a), Some(b)) = (bindings.get(first), bindings.get(second))
        && a == b
    {
        return Err(Miss {
            at: segments.len(),
            depth: segments.len(),
            row,
            kind: MissKind::Same {
                first,
                second,
                value: a.clone(),
            },
        });
    }
    Ok(bindings)
}

/// Matches `pattern` against `segments` (starting at id segment `at`), binding
/// placeholders; a placeholder whose set spans segments tries every split, longest first.
fn walk(
    row: &'static Row,
    pattern: &[PatternSegment],
    segments: &[&str],
    at: usize,
    bindings: &mut Bindings,
    best: &mut Option<Miss>,
) -> bool {
    let shape = |at| Miss {
        at,
        depth: at,
        row,
        kind: MissKind::Shape,
    };
    let Some((first, rest)) = pattern.split_first() else {
        if segments.is_empty() {
            return true;
        }
        note(best, shape(at));
        return false;
    };
    match first {
        PatternSegment::Fixed(text) => {
            if segments.first() == Some(text) {
                return walk(row, rest, &segments[1..], at + 1, bindings, best);
            }
            note(best, shape(at));
            false
        }
        PatternSegment::Slot(placeholder) => {
            let most = if placeholder.set.spans_segments() {
                segments.len().saturating_sub(rest.len())
            } else {
                segments.len().min(1)
            };
            if most == 0 {
                note(best, shape(at));
                return false;
            }
            for take in (1..=most).rev() {
                let value = segments[..take].join(".");
                match placeholder.set.check(&value) {
                    Ok(()) => {
                        bindings.insert(placeholder.name.to_owned(), value);
                        if walk(row, rest, &segments[take..], at + take, bindings, best) {
                            return true;
                        }
                        bindings.remove(placeholder.name);
                    }
                    Err(rule) => note(
                        best,
                        Miss {
                            at,
                            // The longest reading of a spanning value is the telling one.
                            depth: if take == most { at + take } else { at },
                            row,
                            kind: MissKind::Value {
                                placeholder: placeholder.name,
                                value,
                                rule,
                            },
                        },
                    ),
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::rows;

    /// Sample ids of `row`: its example, and each closed value in each placeholder.
    fn samples(row: &Row) -> Vec<String> {
        let base = row.example_bindings();
        let mut out = vec![row.id_with(&base)];
        for p in row.placeholders {
            for value in p.set.values().unwrap_or_default() {
                let mut b = base.clone();
                b.insert(p.name.to_owned(), value.to_owned());
                out.push(row.id_with(&b));
            }
        }
        out
    }

    #[test]
    fn no_sample_id_matches_two_rows() {
        for row in rows() {
            for id in samples(row) {
                let segments = split(&id).unwrap_or_default();
                let matching: Vec<&str> = rows()
                    .iter()
                    .filter(|r| match_row(r, &segments).is_ok())
                    .map(|r| r.pattern)
                    .collect();
                // A sample whose pair became equal (src = tgt) matches nothing; any other
                // matches its own row only.
                assert!(
                    matching.is_empty() || matching == [row.pattern],
                    "{id} matches {matching:?}"
                );
            }
        }
    }
}
