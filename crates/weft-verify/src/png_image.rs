//! PNG decoding under explicit limits, and what verifiers measure on the pixels: blankness,
//! the perceptual hash, alpha, binary masks.
//!
//! Decoding uses the `png` crate with `EXPAND` (palette and low bit depths expanded, `tRNS`
//! turned into an alpha channel). The header is read first: a PNG declaring more than
//! [`VerifyOptions::max_image_pixels`] is refused before any pixel buffer is allocated, and
//! the decoder's own allocations are capped by `png::Limits`. The whole stream is read to
//! `IEND`, so truncated files and bad checksums fail.
//!
//! The perceptual hash is the standard difference hash (dHash, Krawetz): luminance
//! (ITU-R BT.601 weights) averaged over a 9×8 grid of equal areas, one bit per horizontally
//! adjacent pair, set when the left cell is darker than the right — 64 bits. It is computed
//! here over the decoded pixels rather than with `image_hasher`, which would add the `image`
//! crate's colour management (`moxcms`, `pxfm`) and `rustdct`/`rustfft` — about a quarter of
//! this crate's clean build — for these thirty lines.

use std::io::Cursor;

use base64::Engine as _;
use serde_json::Value;

use crate::ctx::Ctx;
use crate::fields;
use crate::options::VerifyOptions;
use crate::report::Checks;

/// A fully decoded PNG.
pub(crate) struct DecodedPng {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Size of the encoded file in bytes.
    pub file_bytes: usize,
    /// Samples after `EXPAND`: 8-bit, or 16-bit big-endian.
    samples: Vec<u8>,
    /// Channels per pixel after `EXPAND` (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA).
    channels: usize,
    /// Whether samples are 16-bit.
    sixteen_bit: bool,
}

/// Decodes the base64 text of a field, refusing text over `max_bytes` before decoding.
pub(crate) fn decode_base64(text: &str, max_bytes: usize) -> Result<Vec<u8>, String> {
    if text.len() > max_bytes {
        return Err(format!(
            "base64 text is {} bytes, over the limit of {max_bytes}",
            text.len()
        ));
    }
    if text.is_empty() {
        return Err("base64 text is empty".to_owned());
    }
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|error| format!("not valid base64: {error}"))
}

/// Reads the base64 string at `pointer` of `value` and decodes it as a PNG.
pub(crate) fn png_field(
    value: &Value,
    pointer: &str,
    options: &VerifyOptions,
) -> Result<DecodedPng, String> {
    let text = fields::string(value, pointer)?;
    let bytes =
        decode_base64(text, options.max_base64_bytes).map_err(|e| format!("{pointer}: {e}"))?;
    decode(&bytes, options).map_err(|e| format!("{pointer}: {e}"))
}

/// Decodes the base64 PNG at `/image_b64` of the output and reports it as the `png_valid`
/// check; later checks run [`crate::report::after`] it.
pub(crate) fn output_png(ctx: &Ctx<'_>, checks: &mut Checks) -> Result<DecodedPng, String> {
    let png = png_field(ctx.output, "/image_b64", ctx.options);
    checks.add(
        "png_valid",
        png.as_ref().map(DecodedPng::describe).map_err(Clone::clone),
    );
    png
}

/// Decodes PNG bytes within the limits of `options`.
pub(crate) fn decode(bytes: &[u8], options: &VerifyOptions) -> Result<DecodedPng, String> {
    // Eight bytes per pixel is the widest expanded format (16-bit RGBA).
    let budget = usize::try_from(options.max_image_pixels.saturating_mul(8)).unwrap_or(usize::MAX);
    let mut decoder =
        png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: budget });
    decoder.set_transformations(png::Transformations::EXPAND);
    let header = decoder
        .read_header_info()
        .map_err(|error| format!("not a valid PNG: {error}"))?;
    let (width, height) = header.size();
    let pixels = u64::from(width) * u64::from(height);
    if pixels > options.max_image_pixels {
        return Err(format!(
            "PNG declares {width}×{height} = {pixels} pixels, over the limit of {}",
            options.max_image_pixels
        ));
    }
    let mut reader = decoder
        .read_info()
        .map_err(|error| format!("not a valid PNG: {error}"))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "PNG image buffer size overflows".to_owned())?;
    let mut samples = vec![0; size];
    let frame = reader
        .next_frame(&mut samples)
        .map_err(|error| format!("PNG image data does not decode: {error}"))?;
    samples.truncate(frame.buffer_size());
    reader.finish().map_err(|error| {
        format!("PNG stream is incomplete or corrupt after the image data: {error}")
    })?;
    let (color, depth) = reader.output_color_type();
    Ok(DecodedPng {
        width,
        height,
        file_bytes: bytes.len(),
        samples,
        channels: color.samples(),
        sixteen_bit: depth == png::BitDepth::Sixteen,
    })
}

impl DecodedPng {
    /// Whether pixels carry alpha: an alpha channel, or `tRNS` transparency.
    pub(crate) fn has_alpha(&self) -> bool {
        self.channels == 2 || self.channels == 4
    }

    /// `width×height, N bytes` for details.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{}×{} PNG, {} bytes{}",
            self.width,
            self.height,
            self.file_bytes,
            if self.has_alpha() { ", with alpha" } else { "" }
        )
    }

    /// Each pixel as 8-bit RGBA (16-bit samples keep their high byte). Fully transparent
    /// pixels become `[0, 0, 0, 0]`: their colour is invisible.
    fn rgba_pixels(&self) -> impl Iterator<Item = [u8; 4]> + '_ {
        let stride = self.channels * if self.sixteen_bit { 2 } else { 1 };
        let step = if self.sixteen_bit { 2 } else { 1 };
        self.samples.chunks_exact(stride).map(move |pixel| {
            let sample = |channel: usize| pixel.get(channel * step).copied().unwrap_or(0);
            let rgba = match self.channels {
                1 => [sample(0), sample(0), sample(0), 255],
                2 => [sample(0), sample(0), sample(0), sample(1)],
                3 => [sample(0), sample(1), sample(2), 255],
                _ => [sample(0), sample(1), sample(2), sample(3)],
            };
            if rgba[3] == 0 { [0; 4] } else { rgba }
        })
    }

    /// The one colour every pixel has, if the image is uniform.
    pub(crate) fn uniform_colour(&self) -> Option<[u8; 4]> {
        let mut pixels = self.rgba_pixels();
        let first = pixels.next()?;
        pixels.all(|pixel| pixel == first).then_some(first)
    }

    /// The 64-bit difference hash (dHash) of the image.
    pub(crate) fn perceptual_hash(&self) -> u64 {
        let luminance: Vec<f64> = self
            .rgba_pixels()
            .map(|[r, g, b, a]| {
                // Composited over black: a transparent pixel is as dark as its opacity.
                let opacity = f64::from(a) / 255.0;
                (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)) * opacity
            })
            .collect();
        difference_hash(&luminance, self.width as usize, self.height as usize)
    }

    /// Every sample is 0 or the bit depth's maximum, and a pixel's colour channels agree:
    /// each pixel is black or white (alpha, if any, also 0 or maximum).
    pub(crate) fn binary(&self) -> Result<usize, String> {
        let max: u16 = if self.sixteen_bit { u16::MAX } else { 255 };
        let stride = self.channels * if self.sixteen_bit { 2 } else { 1 };
        let colour_channels = if self.channels >= 3 { 3 } else { 1 };
        let mut white = 0;
        for (index, pixel) in self.samples.chunks_exact(stride).enumerate() {
            let values: Vec<u16> = if self.sixteen_bit {
                pixel
                    .chunks_exact(2)
                    .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
                    .collect()
            } else {
                pixel.iter().map(|&byte| u16::from(byte)).collect()
            };
            let colour = &values[..colour_channels.min(values.len())];
            let binary = values.iter().all(|&value| value == 0 || value == max);
            let agree = colour.windows(2).all(|pair| pair[0] == pair[1]);
            if !binary || !agree {
                let width = self.width.max(1) as usize;
                return Err(format!(
                    "pixel ({}, {}) has samples {values:?}; a binary mask has only 0 and {max}",
                    index % width,
                    index / width
                ));
            }
            if colour.first() == Some(&max) {
                white += 1;
            }
        }
        Ok(white)
    }
}

/// Columns and rows of the dHash grid: 9 × 8 cells give 8 × 8 comparisons.
const HASH_COLUMNS: usize = 9;
const HASH_ROWS: usize = 8;

/// dHash of a `width`×`height` luminance image: cell (i, j) averages the pixels of the
/// `i`-th of 9 equal column bands and `j`-th of 8 equal row bands (at least one pixel each);
/// bit `8j + i` is set when cell (i, j) is darker than cell (i + 1, j).
pub(crate) fn difference_hash(luminance: &[f64], width: usize, height: usize) -> u64 {
    let band = |index: usize, cells: usize, size: usize| {
        let start = (index * size / cells).min(size.saturating_sub(1));
        let end = ((index + 1) * size / cells).max(start + 1).min(size.max(1));
        start..end
    };
    let mut grid = [[0.0f64; HASH_COLUMNS]; HASH_ROWS];
    for (row, cells) in grid.iter_mut().enumerate() {
        let rows = band(row, HASH_ROWS, height);
        for (column, cell) in cells.iter_mut().enumerate() {
            let columns = band(column, HASH_COLUMNS, width);
            let mut total = 0.0;
            let mut count = 0usize;
            for y in rows.clone() {
                for x in columns.clone() {
                    total += luminance.get(y * width + x).copied().unwrap_or(0.0);
                    count += 1;
                }
            }
            *cell = total / count.max(1) as f64;
        }
    }
    let mut hash = 0u64;
    for (row, cells) in grid.iter().enumerate() {
        for column in 0..HASH_COLUMNS - 1 {
            if cells[column] < cells[column + 1] {
                hash |= 1 << (row * (HASH_COLUMNS - 1) + column);
            }
        }
    }
    hash
}

/// The dHash of a blank image: every uniform image, of any size and colour, has this hash.
pub(crate) fn blank_hash() -> u64 {
    difference_hash(&[128.0; 64 * 64], 64, 64)
}

#[cfg(test)]
mod tests {
    use super::{blank_hash, difference_hash};

    #[test]
    fn uniform_images_of_any_size_hash_blank() {
        assert_eq!(blank_hash(), 0);
        for (width, height) in [(1, 1), (3, 2), (9, 8), (100, 7)] {
            let flat = vec![77.0; width * height];
            assert_eq!(difference_hash(&flat, width, height), blank_hash());
        }
    }

    #[test]
    fn brightening_rows_set_every_bit() {
        let (width, height) = (90, 16);
        let ramp: Vec<f64> = (0..height)
            .flat_map(|_| (0..width).map(|x| x as f64))
            .collect();
        assert_eq!(difference_hash(&ramp, width, height), u64::MAX);
    }

    #[test]
    fn one_bright_cell_sets_one_bit() {
        // A bright column band in the second of nine cells: only the first comparison of each
        // row is "darker than the right".
        let (width, height) = (9, 8);
        let image: Vec<f64> = (0..width * height)
            .map(|index| if index % width == 1 { 255.0 } else { 0.0 })
            .collect();
        let hash = difference_hash(&image, width, height);
        assert_eq!(hash.count_ones(), 8);
        assert_eq!(hash & 0xff, 1);
    }
}
