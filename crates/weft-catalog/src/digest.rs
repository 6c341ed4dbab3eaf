//! The runtime digest of a capability record, byte-for-byte compatible with CompozyOS.
//!
//! CompozyOS computes `"sha256:" + hex(SHA-256(json.Marshal(payload)))` where `payload` is a
//! struct with the fields `id, summary, outcome, version, context_needed, artifacts_expected,
//! execution_outline, constraints, examples, requirements` in that order (struct order, not
//! alphabetical), every field after `outcome` tagged `omitempty`, `requirements` sorted, and
//! `json.Marshal`'s compact output with its default escaping. This digest is its own thing:
//! it is unrelated to any other hash in weft.
//!
//! # Go string escaping
//!
//! [`push_go_json_string`] reproduces `encoding/json`'s `appendString` with HTML escaping on
//! (the `json.Marshal` default), as it behaves since **Go 1.22** (CompozyOS builds with Go
//! 1.25, whose output this matches):
//!
//! * `"` → `\"` and `\` → `\\`;
//! * `\b` (U+0008), `\f` (U+000C), `\n`, `\r`, `\t` → the two-character escapes `\b`, `\f`,
//!   `\n`, `\r`, `\t`. Go 1.22 changed the first two: before it they were written `\u0008`
//!   and `\u000c`, so digests of strings holding a backspace or form feed differ between
//!   CompozyOS builds older than Go 1.22 and this crate;
//! * every other byte below 0x20 → `\u00XX` with lowercase hex (`\u001b`);
//! * `<`, `>`, `&` → `\u003c`, `\u003e`, `\u0026`;
//! * U+2028 and U+2029 → `\u2028`, `\u2029`;
//! * everything else, DEL (0x7F) and all other non-ASCII included, is written raw as UTF-8.
//!
//! Invalid UTF-8 (which Go would write as `\ufffd`) cannot occur: the loader has already
//! turned it into U+FFFD, which is written raw, exactly as Go does after its own decoding.

use sha2::{Digest as _, Sha256};

use crate::raw::go_trim;
use crate::record::CapabilityRecord;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `value` to `out` as a JSON string literal escaped exactly like Go's
/// `json.Marshal` (Go 1.22 and later; see the module documentation for every rule).
pub fn push_go_json_string(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    let bytes = value.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x0C => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            _ => None,
        };
        if let Some(escape) = escape {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(escape);
            i += 1;
            start = i;
        } else if b < 0x20 {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0x0F)]);
            i += 1;
            start = i;
        } else if b == 0xE2
            && bytes.get(i + 1) == Some(&0x80)
            && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9))
        {
            // U+2028 (E2 80 A8) and U+2029 (E2 80 A9).
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(if bytes.get(i + 2) == Some(&0xA8) {
                b"\\u2028"
            } else {
                b"\\u2029"
            });
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn push_key(out: &mut Vec<u8>, key: &str, first: bool) {
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

fn push_list(out: &mut Vec<u8>, key: &str, values: &[String]) {
    if values.is_empty() {
        return;
    }
    push_key(out, key, false);
    out.push(b'[');
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_go_json_string(out, value);
    }
    out.push(b']');
}

/// The exact bytes CompozyOS hashes for an **already normalized** record.
pub(crate) fn payload_of_normalized(record: &CapabilityRecord) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(b'{');
    push_key(&mut out, "id", true);
    push_go_json_string(&mut out, &record.id);
    push_key(&mut out, "summary", false);
    push_go_json_string(&mut out, &record.summary);
    push_key(&mut out, "outcome", false);
    push_go_json_string(&mut out, &record.outcome);
    if let Some(version) = record.version.as_deref().filter(|v| !v.is_empty()) {
        push_key(&mut out, "version", false);
        push_go_json_string(&mut out, version);
    }
    push_list(&mut out, "context_needed", &record.context_needed);
    push_list(&mut out, "artifacts_expected", &record.artifacts_expected);
    push_list(&mut out, "execution_outline", &record.execution_outline);
    push_list(&mut out, "constraints", &record.constraints);
    push_list(&mut out, "examples", &record.examples);
    if record.requirements.is_sorted() {
        push_list(&mut out, "requirements", &record.requirements);
    } else {
        let mut sorted = record.requirements.clone();
        sorted.sort();
        push_list(&mut out, "requirements", &sorted);
    }
    out.push(b'}');
    out
}

/// `sha256:` + lowercase hex of SHA-256 over `payload`.
pub(crate) fn digest_of_payload(payload: &[u8]) -> String {
    let sum = Sha256::digest(payload);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in sum {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0F)]));
    }
    out
}

/// Normalizes a copy of `record` the way CompozyOS's `CanonicalCapabilityDigest` does:
/// scalars trimmed, blank entries dropped from the five descriptive lists, requirement entries
/// trimmed (blanks and duplicates kept, as there is no validation here) and sorted. The
/// authored `digest` is ignored.
fn normalized_copy(record: &CapabilityRecord) -> CapabilityRecord {
    let list = |values: &[String]| -> Vec<String> {
        values
            .iter()
            .map(|v| go_trim(v))
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut requirements: Vec<String> = record
        .requirements
        .iter()
        .map(|v| go_trim(v).to_owned())
        .collect();
    requirements.sort();
    CapabilityRecord {
        id: go_trim(&record.id).to_owned(),
        summary: go_trim(&record.summary).to_owned(),
        outcome: go_trim(&record.outcome).to_owned(),
        version: record
            .version
            .as_deref()
            .map(go_trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned),
        context_needed: list(&record.context_needed),
        artifacts_expected: list(&record.artifacts_expected),
        execution_outline: list(&record.execution_outline),
        constraints: list(&record.constraints),
        examples: list(&record.examples),
        requirements,
        digest: String::new(),
    }
}

/// The canonical JSON bytes that are hashed for `record`: it is normalized first (see
/// [`canonical_digest`]), then encoded compactly in CompozyOS's field order with Go's
/// escaping. Useful to inspect or reproduce a digest.
pub fn canonical_payload(record: &CapabilityRecord) -> Vec<u8> {
    payload_of_normalized(&normalized_copy(record))
}

/// The runtime digest of `record`, `"sha256:"` + 64 lowercase hex digits, as CompozyOS's
/// `CanonicalCapabilityDigest` computes it.
///
/// The record is normalized first (trimmed scalars, blank descriptive entries dropped,
/// requirements trimmed and sorted) and its `digest` field is ignored, so the result can be
/// compared with a digest received from elsewhere. Records returned by
/// [`crate::load_agent_catalog`] already carry this value in their `digest` field.
pub fn canonical_digest(record: &CapabilityRecord) -> String {
    digest_of_payload(&canonical_payload(record))
}
