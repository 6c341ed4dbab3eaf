//! Capability identifiers: the `id` half of `id@version`.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Longest accepted capability id, in characters (all accepted characters are ASCII).
pub const MAX_ID_LEN: usize = 128;

/// A validated capability id.
///
/// Invariant: matches `^[a-z0-9][a-z0-9._:-]*$` and is at most [`MAX_ID_LEN`] characters.
/// The id doubles as a node's discovery tag, so it is opaque to the fabric beyond this grammar.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CapabilityId(String);

/// Why a string is not a [`CapabilityId`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IdError {
    /// The id is the empty string.
    #[error("capability id must not be empty")]
    Empty,
    /// The id is longer than [`MAX_ID_LEN`].
    #[error("capability id is {len} characters long; the limit is {MAX_ID_LEN}")]
    TooLong {
        /// Length of the rejected id, in characters.
        len: usize,
    },
    /// The first character is not a lowercase ASCII letter or digit.
    #[error("capability id must start with a lowercase letter or digit, found {found:?}")]
    BadStart {
        /// The offending first character.
        found: char,
    },
    /// A later character is outside `[a-z0-9._:-]`.
    #[error(
        "capability id may only contain lowercase letters, digits, '.', '_', ':' and '-'; found {found:?} at character {index}"
    )]
    BadCharacter {
        /// The offending character.
        found: char,
        /// Its zero-based character index.
        index: usize,
    },
}

impl CapabilityId {
    /// Validates `raw` against the id grammar.
    pub fn parse(raw: &str) -> Result<Self, IdError> {
        let mut chars = raw.chars();
        let first = chars.next().ok_or(IdError::Empty)?;
        let len = raw.chars().count();
        if len > MAX_ID_LEN {
            return Err(IdError::TooLong { len });
        }
        if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
            return Err(IdError::BadStart { found: first });
        }
        for (offset, c) in chars.enumerate() {
            let allowed =
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | ':' | '-');
            if !allowed {
                return Err(IdError::BadCharacter {
                    found: c,
                    index: offset + 1,
                });
            }
        }
        Ok(Self(raw.to_owned()))
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CapabilityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for CapabilityId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl AsRef<str> for CapabilityId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_documented_examples() {
        for ok in [
            "echo",
            "stt.realtime",
            "embeddings:bge-m3",
            "feature:tool-use",
            "image.generate.photorealistic.png",
            "0day",
            "a_b",
        ] {
            assert!(CapabilityId::parse(ok).is_ok(), "{ok} should be accepted");
        }
    }

    #[test]
    fn rejects_each_bad_form_with_its_reason() {
        assert_eq!(CapabilityId::parse(""), Err(IdError::Empty));
        assert_eq!(
            CapabilityId::parse("Has Space"),
            Err(IdError::BadStart { found: 'H' })
        );
        assert_eq!(
            CapabilityId::parse("has space"),
            Err(IdError::BadCharacter {
                found: ' ',
                index: 3
            })
        );
        assert_eq!(
            CapabilityId::parse("UPPER"),
            Err(IdError::BadStart { found: 'U' })
        );
        assert_eq!(
            CapabilityId::parse("-leading"),
            Err(IdError::BadStart { found: '-' })
        );
        assert_eq!(
            CapabilityId::parse("\tab"),
            Err(IdError::BadStart { found: '\t' })
        );
        assert_eq!(
            CapabilityId::parse("a\tb"),
            Err(IdError::BadCharacter {
                found: '\t',
                index: 1
            })
        );
        assert_eq!(
            CapabilityId::parse("écho"),
            Err(IdError::BadStart { found: 'é' })
        );
    }

    #[test]
    fn length_limit_is_inclusive_at_128() {
        let at_limit = "a".repeat(MAX_ID_LEN);
        assert!(CapabilityId::parse(&at_limit).is_ok());
        let over = "a".repeat(MAX_ID_LEN + 1);
        assert_eq!(
            CapabilityId::parse(&over),
            Err(IdError::TooLong {
                len: MAX_ID_LEN + 1
            })
        );
    }
}
