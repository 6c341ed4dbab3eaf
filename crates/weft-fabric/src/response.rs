//! The answer to a successful unary call, and its JSON encoding.
//!
//! Every unary call ends by encoding one [`CallResponse`], so the encoding is written out
//! by hand ([`CallResponse::write_json`]): the field names are constants, and the strings
//! the node itself produced (ids, versions, the revision) are copied without the
//! byte-by-byte escape scan serde_json gives every string. The bytes are the same as
//! `serde_json::to_vec` of the derived `Serialize` — a test holds the two together.

use serde::Serialize;
use serde_json::Value;

/// A successful call.
#[derive(Debug, Clone, Serialize)]
pub struct CallResponse {
    /// The call id.
    pub call_id: String,
    /// The validated result.
    pub result: Value,
    /// Capability id.
    pub capability_id: String,
    /// Version.
    pub version: String,
    /// The revision the call ran against.
    pub revision: String,
    /// Who answered.
    pub provider_id: String,
    /// Where.
    pub node_id: String,
    /// Wall time from arrival to the validated result.
    pub duration_ms: f64,
    /// The verification report, when the caller asked for one (set by the edge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Value>,
}

impl CallResponse {
    /// Appends this response's JSON to `out`: the bytes `serde_json::to_writer` writes.
    pub fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"call_id\":");
        write_str(out, &self.call_id)?;
        out.extend_from_slice(b",\"result\":");
        serde_json::to_writer(&mut *out, &self.result)?;
        out.extend_from_slice(b",\"capability_id\":");
        write_str(out, &self.capability_id)?;
        out.extend_from_slice(b",\"version\":");
        write_str(out, &self.version)?;
        out.extend_from_slice(b",\"revision\":");
        write_str(out, &self.revision)?;
        out.extend_from_slice(b",\"provider_id\":");
        write_str(out, &self.provider_id)?;
        out.extend_from_slice(b",\"node_id\":");
        write_str(out, &self.node_id)?;
        out.extend_from_slice(b",\"duration_ms\":");
        serde_json::to_writer(&mut *out, &self.duration_ms)?;
        if let Some(verification) = &self.verification {
            out.extend_from_slice(b",\"verification\":");
            serde_json::to_writer(&mut *out, verification)?;
        }
        out.push(b'}');
        Ok(())
    }
}

/// A JSON string: copied as is when nothing in it needs escaping (the common case for
/// ids, versions and revisions), else escaped by serde_json.
fn write_str(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if needs_escape(text.as_bytes()) {
        return serde_json::to_writer(&mut *out, text);
    }
    out.reserve(text.len() + 2);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
    Ok(())
}

/// Whether any byte is a control character, `"` or `\\`. Eight bytes at a time: a byte
/// of a word is below 0x20, or equal to a given byte, exactly when the classic
/// "has a zero byte" test fires on the word (minus 0x20s, or xor the byte repeated).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
    let flagged = |word: [u8; 8]| {
        let word = u64::from_le_bytes(word);
        below(word, 0x20)
            | below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            != 0
    };
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        if flagged(word) {
            return true;
        }
    }
    // The last few bytes, padded with a byte that never needs escaping.
    let rest = words.remainder();
    let mut word = [b'a'; 8];
    word[..rest.len()].copy_from_slice(rest);
    flagged(word)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn response(text: &str, verification: Option<Value>) -> CallResponse {
        CallResponse {
            call_id: text.to_owned(),
            result: json!({"text": text, "n": [1, 2.5, null, true], "nested": {"k\"": "v\n"}}),
            capability_id: "echo".into(),
            version: "1.0.0-rc.1".into(),
            revision: format!("sha256:{}", "ab".repeat(32)),
            provider_id: format!("p-{text}"),
            node_id: "node\u{1}".into(),
            duration_ms: 0.123_456_789,
            verification,
        }
    }

    #[test]
    fn write_json_matches_serde_byte_for_byte() {
        let texts = [
            "",
            "plain",
            "quote \" inside",
            "back\\slash",
            "tab\tand\nnewline",
            "\u{7f} del and \u{1f} unit separator",
            "ünïcødé ✓ and an emoji 🧵",
            "a long string that crosses several sixteen byte blocks before the \"quote\"",
        ];
        for text in texts {
            for verification in [None, Some(json!({"passed": true, "why": text}))] {
                let response = response(text, verification);
                let mut ours = Vec::new();
                response.write_json(&mut ours).unwrap();
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    serde_json::to_string(&response).unwrap(),
                    "for {text:?}"
                );
            }
        }
    }

    #[test]
    fn non_finite_duration_is_encoded_as_serde_does() {
        let mut response = response("x", None);
        response.duration_ms = f64::NAN;
        let mut ours = Vec::new();
        response.write_json(&mut ours).unwrap();
        assert_eq!(ours, serde_json::to_vec(&response).unwrap());
    }

    #[test]
    fn needs_escape_finds_each_kind_at_every_position() {
        for len in 1..40 {
            for position in 0..len {
                for bad in [b'"', b'\\', 0x00, 0x1f] {
                    let mut bytes = vec![b'a'; len];
                    bytes[position] = bad;
                    assert!(needs_escape(&bytes), "len {len} pos {position} byte {bad}");
                }
                for fine in [b' ', 0x21, 0x7f, 0x80, 0xc3, 0xff] {
                    let mut bytes = vec![b'a'; len];
                    bytes[position] = fine;
                    assert!(
                        !needs_escape(&bytes),
                        "len {len} pos {position} byte {fine}"
                    );
                }
            }
            assert!(!needs_escape(&vec![b'a'; len]));
        }
    }
}
