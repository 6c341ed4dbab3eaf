//! Small shared helpers: time, hashing, randomness, cursors, keys.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::error::RegistryError;

/// Now, as RFC 3339 with milliseconds.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Now, in seconds since the Unix epoch.
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The 32 bytes a lowercase or uppercase hex SHA-256 spells, or `None`.
pub fn sha256_from_hex(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut digest = [0; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(digest)
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = sha256(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

/// `n` bytes from the operating system's CSPRNG.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], RegistryError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| RegistryError::Invalid(format!("no randomness available: {e}")))?;
    Ok(bytes)
}

/// Encodes a sort key as an opaque cursor.
pub fn encode_cursor(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(key.as_bytes())
}

/// Decodes a cursor made by [`encode_cursor`].
pub fn decode_cursor(cursor: &str) -> Result<String, RegistryError> {
    URL_SAFE_NO_PAD
        .decode(cursor.as_bytes())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| {
            RegistryError::Invalid(format!("cursor {cursor:?} is not one this server issued"))
        })
}

/// Base64url without padding, for token secrets.
pub fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `tenant/rest`: the tenant prefix of every tenant-scoped key.
pub fn tenant_key(tenant: &str, rest: &str) -> String {
    format!("{tenant}/{rest}")
}

/// The key of event `sequence` of `tenant` (zero-padded so keys sort numerically).
pub fn event_key(tenant: &str, sequence: u64) -> String {
    format!("{tenant}/{sequence:020}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn hex_digest_round_trips_and_rejects_what_is_not_one() {
        let hex = sha256_hex(b"weft");
        assert_eq!(sha256_from_hex(&hex), Some(sha256(b"weft")));
        assert_eq!(sha256_from_hex(&hex.to_uppercase()), Some(sha256(b"weft")));
        assert_eq!(sha256_from_hex(&hex[..62]), None);
        assert_eq!(sha256_from_hex(&format!("{hex}00")), None);
        assert_eq!(sha256_from_hex(&format!("{}zz", &hex[..62])), None);
        assert_eq!(sha256_from_hex(&"é".repeat(32)), None);
    }
}
