//! `image.*` rows with PNG output: generation, background removal, upscaling.

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::png_image::{self, DecodedPng};
use crate::report::{Check, Checks, Outcome, after};

/// The table's "file size < 10MB" for photorealistic PNGs, in bytes (decimal megabytes).
pub(crate) const MAX_PHOTO_FILE_BYTES: usize = 10_000_000;

/// `image.generate.photorealistic.png`: valid PNG; dimensions match; file size < 10 MB;
/// perceptual hash ≠ blank.
pub(crate) fn photorealistic(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let (width, height) = requested_size(ctx)?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/image_b64", Kind::Str, true),
                ("/width", Kind::Int, true),
                ("/height", Kind::Int, true),
            ],
        ),
    );
    let png = png_image::output_png(ctx, &mut checks);
    checks.add(
        "dimensions_match",
        after(&png, "png_valid", |png| {
            decoded_size(png, width, height)?;
            declared_size(ctx, width, height)
        }),
    );
    checks.add(
        "file_size_under_10mb",
        after(&png, "png_valid", |png| {
            if png.file_bytes < MAX_PHOTO_FILE_BYTES {
                Ok(format!("{} bytes < {MAX_PHOTO_FILE_BYTES}", png.file_bytes))
            } else {
                Err(format!(
                    "{} bytes, not under {MAX_PHOTO_FILE_BYTES}",
                    png.file_bytes
                ))
            }
        }),
    );
    checks.add(
        "perceptual_hash_not_blank",
        after(&png, "png_valid", perceptual_hash_not_blank),
    );
    Ok(checks.finish())
}

/// `image.generate.illustration.png`: valid PNG; not all-black/white (weft: not any single
/// colour); dimensions match the request.
pub(crate) fn illustration_png(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let (width, height) = requested_size(ctx)?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/image_b64", Kind::Str, true)]),
    );
    let png = png_image::output_png(ctx, &mut checks);
    checks.add(
        "dimensions_match",
        after(&png, "png_valid", |png| decoded_size(png, width, height)),
    );
    checks.add("not_blank", after(&png, "png_valid", not_blank));
    Ok(checks.finish())
}

/// `image.edit.background-remove`: valid PNG with alpha channel; mask is binary; both at the
/// input's dimensions.
pub(crate) fn background_remove(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let source = input_png(ctx)?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[
                ("/image_b64", Kind::Str, true),
                ("/mask_b64", Kind::Str, true),
            ],
        ),
    );
    let png = png_image::output_png(ctx, &mut checks);
    checks.add(
        "has_alpha",
        after(&png, "png_valid", |png| {
            if png.has_alpha() {
                Ok("image has an alpha channel".to_owned())
            } else {
                Err("image has no alpha channel (colour type without alpha, no tRNS)".to_owned())
            }
        }),
    );
    let mask = png_image::png_field(output, "/mask_b64", ctx.options);
    checks.add(
        "mask_valid_png",
        mask.as_ref()
            .map(DecodedPng::describe)
            .map_err(Clone::clone),
    );
    checks.add(
        "mask_binary",
        after(&mask, "mask_valid_png", |mask| {
            let white = mask.binary()?;
            Ok(format!(
                "every pixel black or white ({white} white of {})",
                u64::from(mask.width) * u64::from(mask.height)
            ))
        }),
    );
    let dimensions = match (&png, &mask) {
        (Ok(png), Ok(mask)) => decoded_size(png, source.width, source.height)
            .and_then(|_| decoded_size(mask, source.width, source.height))
            .map(|_| {
                format!(
                    "image and mask are {}×{} like the input",
                    source.width, source.height
                )
            }),
        (Err(_), _) => Err(crate::report::not_checked("png_valid")),
        (_, Err(_)) => Err(crate::report::not_checked("mask_valid_png")),
    };
    checks.add("dimensions_match", dimensions);
    Ok(checks.finish())
}

/// `image.upscale.2x`: output dimensions = 2× input.
pub(crate) fn upscale_2x(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    upscale(ctx, 2)
}

/// `image.upscale.4x`: output dimensions = 4× input.
pub(crate) fn upscale_4x(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    upscale(ctx, 4)
}

fn upscale(ctx: &Ctx<'_>, factor: u64) -> Result<Vec<Check>, VerifyError> {
    let source = input_png(ctx)?;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/image_b64", Kind::Str, true)]),
    );
    let png = png_image::output_png(ctx, &mut checks);
    checks.add(
        "dimensions_scaled",
        after(&png, "png_valid", |png| {
            let want = (
                u64::from(source.width) * factor,
                u64::from(source.height) * factor,
            );
            let got = (u64::from(png.width), u64::from(png.height));
            if got == want {
                Ok(format!(
                    "{}×{} = {factor}× the input's {}×{}",
                    got.0, got.1, source.width, source.height
                ))
            } else {
                Err(format!(
                    "{}×{}, expected {}×{} ({factor}× the input's {}×{})",
                    got.0, got.1, want.0, want.1, source.width, source.height
                ))
            }
        }),
    );
    Ok(checks.finish())
}

/// The input's `width` and `height`, which must be positive integers.
pub(crate) fn requested_size(ctx: &Ctx<'_>) -> Result<(u32, u32), VerifyError> {
    let read = |key: &str| -> Result<u32, VerifyError> {
        let value = ctx.input_int(key)?;
        u32::try_from(value)
            .ok()
            .filter(|&value| value > 0)
            .ok_or_else(|| VerifyError::input(&format!("/{key}"), "must be a positive integer"))
    };
    Ok((read("width")?, read("height")?))
}

/// The input image (`/image_b64`), which must be a PNG within the limits.
fn input_png(ctx: &Ctx<'_>) -> Result<DecodedPng, VerifyError> {
    ctx.input_str("image_b64")?;
    png_image::png_field(ctx.input, "/image_b64", ctx.options)
        .map_err(|reason| VerifyError::input("/image_b64", reason))
}

/// The decoded image is `width`×`height`.
pub(crate) fn decoded_size(png: &DecodedPng, width: u32, height: u32) -> Outcome {
    if (png.width, png.height) == (width, height) {
        Ok(format!("decoded {width}×{height} as requested"))
    } else {
        Err(format!(
            "decoded {}×{}, requested {width}×{height}",
            png.width, png.height
        ))
    }
}

/// The output's declared `/width` and `/height` equal the request.
pub(crate) fn declared_size(ctx: &Ctx<'_>, width: u32, height: u32) -> Outcome {
    let declared = (
        fields::integer(ctx.output, "/width")?,
        fields::integer(ctx.output, "/height")?,
    );
    if declared == (i64::from(width), i64::from(height)) {
        Ok(format!(
            "decoded and declared {width}×{height} as requested"
        ))
    } else {
        Err(format!(
            "declared {}×{}, requested {width}×{height}",
            declared.0, declared.1
        ))
    }
}

/// Not a single colour (all black, all white, or any other uniform fill).
pub(crate) fn not_blank(png: &DecodedPng) -> Outcome {
    match png.uniform_colour() {
        None => Ok("pixels differ".to_owned()),
        Some([0, 0, 0, 0]) => Err("every pixel is fully transparent".to_owned()),
        Some([0, 0, 0, _]) => Err("every pixel is black".to_owned()),
        Some([255, 255, 255, _]) => Err("every pixel is white".to_owned()),
        Some([r, g, b, a]) => Err(format!("every pixel is #{r:02x}{g:02x}{b:02x}{a:02x}")),
    }
}

/// The dHash differs from a blank image's.
pub(crate) fn perceptual_hash_not_blank(png: &DecodedPng) -> Outcome {
    let hash = png.perceptual_hash();
    let distance = (hash ^ png_image::blank_hash()).count_ones();
    if distance > 0 {
        Ok(format!(
            "dHash {hash:016x} is {distance} bits from a blank image's"
        ))
    } else {
        Err(format!(
            "dHash {hash:016x} equals a blank image's: no visible structure"
        ))
    }
}
