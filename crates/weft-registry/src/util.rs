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

/// Lowercase hex SHA-256 (on every authenticated request, so no per-byte formatting).
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
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
