//! Builders for test outputs (PNGs, MP3s) and assertions on reports.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use serde_json::Value;
use weft_verify::{VerificationReport, VerifyError, VerifyOptions};

/// Runs `verify` with default options (and a fixed clock).
pub fn run(
    row: &str,
    bindings: &[(&str, &str)],
    input: Value,
    output: Value,
) -> VerificationReport {
    run_with(&options(), row, bindings, input, output)
}

/// Runs `verify` with `options`, panicking on a `VerifyError`.
pub fn run_with(
    options: &VerifyOptions,
    row: &str,
    bindings: &[(&str, &str)],
    input: Value,
    output: Value,
) -> VerificationReport {
    try_run(options, row, bindings, input, output)
        .unwrap_or_else(|error| panic!("{row}: verification error {error:?}"))
}

/// Runs `verify` and returns its result.
pub fn try_run(
    options: &VerifyOptions,
    row: &str,
    bindings: &[(&str, &str)],
    input: Value,
    output: Value,
) -> Result<VerificationReport, VerifyError> {
    let bindings: BTreeMap<String, String> = bindings
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    weft_verify::verify(row, &bindings, &input, &output, options)
}

/// Default options with the clock fixed at [`NOW`].
pub fn options() -> VerifyOptions {
    VerifyOptions {
        now_unix_secs: Some(NOW),
        ..VerifyOptions::default()
    }
}

/// The fixed clock of the tests: 2026-06-01T12:00:00Z.
pub const NOW: i64 = 1_780_315_200;

/// Asserts every check passed.
#[track_caller]
pub fn assert_passes(report: &VerificationReport) {
    assert!(
        report.passed && report.checks.iter().all(|check| check.passed),
        "expected a pass: {}",
        serde_json::to_string_pretty(report).unwrap()
    );
}

/// Asserts the report failed and exactly the checks `failing` failed.
#[track_caller]
pub fn assert_fails(report: &VerificationReport, failing: &[&str]) {
    let failed: BTreeSet<&str> = report.failures().map(|check| check.name.as_str()).collect();
    let want: BTreeSet<&str> = failing.iter().copied().collect();
    assert!(
        !report.passed && failed == want,
        "expected exactly {want:?} to fail, got {failed:?}: {}",
        serde_json::to_string_pretty(report).unwrap()
    );
}

/// The detail of check `name`.
#[track_caller]
pub fn detail<'a>(report: &'a VerificationReport, name: &str) -> &'a str {
    &report
        .check(name)
        .unwrap_or_else(|| panic!("no check {name} in {report:?}"))
        .detail
}

/// Standard base64.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Encodes a PNG with the `png` crate.
pub fn png(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(color);
        encoder.set_depth(depth);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(data).unwrap();
    }
    out
}

/// An 8-bit RGB PNG with a diagonal gradient: visibly not blank.
pub fn gradient_png(width: u32, height: u32) -> Vec<u8> {
    let mut data = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let value = (
                (x * 255 / width.max(1)) as u8,
                (y * 255 / height.max(1)) as u8,
            );
            data.extend_from_slice(&[value.0, value.1, 128]);
        }
    }
    png(
        width,
        height,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &data,
    )
}

/// An 8-bit RGBA PNG with a gradient and an opaque/transparent split.
pub fn gradient_rgba_png(width: u32, height: u32) -> Vec<u8> {
    let mut data = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let alpha = if x < width / 2 { 255 } else { 0 };
            data.extend_from_slice(&[(x * 7) as u8, (y * 5) as u8, 90, alpha]);
        }
    }
    png(
        width,
        height,
        png::ColorType::Rgba,
        png::BitDepth::Eight,
        &data,
    )
}

/// An 8-bit RGB PNG of one colour.
pub fn uniform_png(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    let data: Vec<u8> = (0..width * height).flat_map(|_| rgb).collect();
    png(
        width,
        height,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &data,
    )
}

/// An 8-bit grayscale mask: left half white, right half black, optionally one gray pixel.
pub fn mask_png(width: u32, height: u32, gray_pixel: bool) -> Vec<u8> {
    let mut data: Vec<u8> = (0..height)
        .flat_map(|_| (0..width).map(move |x| if x < width / 2 { 255 } else { 0 }))
        .collect();
    if gray_pixel {
        data[0] = 128;
    }
    png(
        width,
        height,
        png::ColorType::Grayscale,
        png::BitDepth::Eight,
        &data,
    )
}

/// The CRC-32 of PNG chunks (ISO 3309), for hand-made headers.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG whose IHDR claims `width`×`height` (with a correct CRC) followed by a tiny IDAT.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = gradient_png(2, 2);
    // Signature (8), IHDR length (4), "IHDR" (4), then width and height.
    bytes[16..20].copy_from_slice(&width.to_be_bytes());
    bytes[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

/// Silent MPEG-1 Layer III frames: 128 kbit/s, 48 kHz, mono, no CRC. Each frame is 384 bytes
/// and 1152 samples (24 ms): a 4-byte header, zeroed side information (no main data, so every
/// granule decodes to silence) and zero padding.
pub fn mp3_silence(frames: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(frames * 384);
    for _ in 0..frames {
        out.extend_from_slice(&[0xFF, 0xFB, 0x94, 0xC0]);
        out.extend(std::iter::repeat_n(0u8, 380));
    }
    out
}
