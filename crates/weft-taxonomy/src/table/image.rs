//! Image rows.

use super::Row;
use super::schema::{base64, closed, integer, open, opt, req, string};

const PNG: Option<&str> = Some("image/png");

/// `image.*`, in the seed's order.
pub(super) static ROWS: [Row; 6] = [
    Row {
        pattern: "image.generate.photorealistic.png",
        title: "Generate a photorealistic PNG image",
        seed_input: "{ prompt: string, width: int, height: int, seed?: int }",
        seed_output: "{ image_b64: string, width: int, height: int }",
        verification: "valid PNG; dimensions match; file size < 10MB; perceptual hash ≠ blank",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                req("prompt", string()),
                req("width", integer()),
                req("height", integer()),
                opt("seed", integer()),
            ])
        },
        output: |_| {
            open(vec![
                req("image_b64", base64(PNG)),
                req("width", integer()),
                req("height", integer()),
            ])
        },
    },
    Row {
        pattern: "image.generate.illustration.png",
        title: "Generate an illustration as a PNG image",
        seed_input: "{ prompt: string, style?: string, width: int, height: int }",
        seed_output: "{ image_b64: string }",
        verification: "valid PNG; not all-black/white",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                req("prompt", string()),
                opt("style", string()),
                req("width", integer()),
                req("height", integer()),
            ])
        },
        output: |_| open(vec![req("image_b64", base64(PNG))]),
    },
    Row {
        pattern: "image.generate.illustration.svg",
        title: "Generate an illustration as an SVG image",
        seed_input: "{ prompt: string, max_paths?: int }",
        seed_output: "{ svg: string }",
        verification: "valid SVG; parses; has at least 1 path",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("prompt", string()), opt("max_paths", integer())]),
        output: |_| {
            open(vec![req(
                "svg",
                super::schema::with(string(), "contentMediaType", "image/svg+xml".into()),
            )])
        },
    },
    Row {
        pattern: "image.edit.background-remove",
        title: "Remove the background of an image",
        seed_input: "{ image_b64: string }",
        seed_output: "{ image_b64: string, mask_b64: string }",
        verification: "valid PNG with alpha channel; mask is binary",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("image_b64", base64(None))]),
        output: |_| {
            open(vec![
                req("image_b64", base64(PNG)),
                req("mask_b64", base64(PNG)),
            ])
        },
    },
    Row {
        pattern: "image.upscale.2x",
        title: "Upscale an image 2×",
        seed_input: "{ image_b64: string }",
        seed_output: "{ image_b64: string }",
        verification: "output dimensions = 2× input",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("image_b64", base64(None))]),
        output: |_| open(vec![req("image_b64", base64(None))]),
    },
    Row {
        pattern: "image.upscale.4x",
        title: "Upscale an image 4×",
        seed_input: "{ image_b64: string }",
        seed_output: "{ image_b64: string }",
        verification: "output dimensions = 4× input",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("image_b64", base64(None))]),
        output: |_| open(vec![req("image_b64", base64(None))]),
    },
];
