//! Descriptor revisions: `sha256:` + lowercase hex of SHA-256 over RFC 8785 canonical JSON.
//!
//! The canonical form is produced by `serde_json_canonicalizer` (a maintained RFC 8785
//! implementation), so the digest is reproducible in any language with a JCS library: key
//! order and whitespace never matter, numbers are written in ECMAScript shortest form (`1.0`
//! and `1` are the same number), and strings are escaped minimally.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;
use sha2::{Digest, Sha256};
use thiserror::Error;

/// Prefix of every revision string.
pub const REVISION_PREFIX: &str = "sha256:";

/// The content revision of a descriptor.
///
/// Invariant: `sha256:` followed by exactly 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DescriptorRevision(String);

/// Why a string is not a [`DescriptorRevision`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{text:?} is not a revision: expected \"sha256:\" followed by 64 lowercase hex digits")]
pub struct RevisionParseError {
    /// The rejected text.
    pub text: String,
}

/// Why a value could not be canonicalized.
#[derive(Debug, Error)]
#[error("value cannot be written as RFC 8785 canonical JSON: {0}")]
pub struct CanonicalizeError(String);

/// Writes `value` as RFC 8785 canonical JSON bytes.
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, CanonicalizeError> {
    serde_json_canonicalizer::to_vec(value).map_err(|e| CanonicalizeError(e.to_string()))
}

impl DescriptorRevision {
    /// The revision of already-canonical JSON bytes.
    pub fn of_canonical_bytes(canonical: &[u8]) -> Self {
        let digest = Sha256::digest(canonical);
        let mut text = String::with_capacity(REVISION_PREFIX.len() + 64);
        text.push_str(REVISION_PREFIX);
        for byte in digest {
            text.push(hex_digit(byte >> 4));
            text.push(hex_digit(byte & 0x0f));
        }
        Self(text)
    }

    /// Parses a revision string, such as a caller's pin.
    pub fn parse(text: &str) -> Result<Self, RevisionParseError> {
        let well_formed = text.strip_prefix(REVISION_PREFIX).is_some_and(|hex| {
            hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        if well_formed {
            Ok(Self(text.to_owned()))
        } else {
            Err(RevisionParseError {
                text: text.to_owned(),
            })
        }
    }

    /// The revision as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn hex_digit(nibble: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(nibble & 0x0f)])
}

impl fmt::Display for DescriptorRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for DescriptorRevision {
    type Err = RevisionParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_empty_object_matches_sha256_of_braces() {
        // sha256("{}"), computed independently with `printf '{}' | sha256sum`.
        let rev = DescriptorRevision::of_canonical_bytes(b"{}");
        assert_eq!(
            rev.as_str(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        assert_eq!(DescriptorRevision::parse(rev.as_str()), Ok(rev));
    }

    #[test]
    fn parse_rejects_malformed_revisions() {
        for bad in [
            "",
            "sha256:",
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
            "sha256:44136FA355B3678A1146AD16F7E8649E94FB4FC21FE77E8310C060F61CAAFF8A",
            "sha256:44136fa355b3678a",
            "md5:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
        ] {
            assert!(DescriptorRevision::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn canonical_form_ignores_key_order_and_number_spelling() {
        let a: Value = serde_json::from_str(r#"{"b": 1.0, "a": [1e2, "x"]}"#).unwrap_or_default();
        let b: Value = serde_json::from_str(r#"{"a":[100,"x"],"b":1}"#).unwrap_or_default();
        let ca = canonical_json(&a).unwrap_or_default();
        assert_eq!(ca, canonical_json(&b).unwrap_or_default());
        assert_eq!(ca, br#"{"a":[100,"x"],"b":1}"#);
    }
}
