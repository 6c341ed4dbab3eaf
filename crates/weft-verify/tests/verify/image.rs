//! `image.*` and `chart.*` rows: PNG decoding, dimensions, size, blankness, perceptual hash,
//! alpha, masks, upscaling, SVG.

use serde_json::json;

use crate::support::*;

const PHOTO: &str = "image.generate.photorealistic.png";

#[test]
fn photorealistic_passes_with_a_real_png_of_the_requested_size() {
    let image = gradient_png(64, 48);
    let report = run(
        PHOTO,
        &[],
        json!({"prompt": "a harbour", "width": 64, "height": 48}),
        json!({"image_b64": b64(&image), "width": 64, "height": 48}),
    );
    assert_passes(&report);
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "output_shape",
            "png_valid",
            "dimensions_match",
            "file_size_under_10mb",
            "perceptual_hash_not_blank"
        ]
    );
}

#[test]
fn photorealistic_fails_each_check() {
    let input = json!({"prompt": "p", "width": 64, "height": 48});
    // Decoded size differs from the request.
    let report = run(
        PHOTO,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_png(32, 48)), "width": 64, "height": 48}),
    );
    assert_fails(&report, &["dimensions_match"]);
    assert!(detail(&report, "dimensions_match").contains("decoded 32×48"));
    // Declared size differs from the request.
    let report = run(
        PHOTO,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_png(64, 48)), "width": 64, "height": 40}),
    );
    assert_fails(&report, &["dimensions_match"]);
    // A uniform image has a blank perceptual hash.
    let report = run(
        PHOTO,
        &[],
        input.clone(),
        json!({"image_b64": b64(&uniform_png(64, 48, [30, 90, 200])), "width": 64, "height": 48}),
    );
    assert_fails(&report, &["perceptual_hash_not_blank"]);
    // Not a PNG: the dependent checks say why they did not run, the size field is missing.
    let report = run(
        PHOTO,
        &[],
        input,
        json!({"image_b64": b64(b"GIF89a not a png"), "width": 64}),
    );
    assert_fails(
        &report,
        &[
            "output_shape",
            "png_valid",
            "dimensions_match",
            "file_size_under_10mb",
            "perceptual_hash_not_blank",
        ],
    );
    assert_eq!(
        detail(&report, "file_size_under_10mb"),
        "not checked: `png_valid` failed"
    );
}

#[test]
fn photorealistic_file_size_must_be_under_ten_megabytes() {
    // A PNG of incompressible noise just over 10 MB (10 000 000 bytes is not "< 10MB").
    let side = 1900u32;
    let mut state = 0x2545_F491_u32;
    let data: Vec<u8> = (0..side * side * 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect();
    let image = png(side, side, png::ColorType::Rgb, png::BitDepth::Eight, &data);
    assert!(
        image.len() >= 10_000_000,
        "fixture is {} bytes",
        image.len()
    );
    let report = run(
        PHOTO,
        &[],
        json!({"prompt": "noise", "width": side, "height": side}),
        json!({"image_b64": b64(&image), "width": side, "height": side}),
    );
    assert_fails(&report, &["file_size_under_10mb"]);
}

#[test]
fn illustration_png_fails_all_black_all_white_and_uniform() {
    let input = json!({"prompt": "p", "width": 16, "height": 16});
    let ok = run(
        "image.generate.illustration.png",
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_png(16, 16))}),
    );
    assert_passes(&ok);
    for (rgb, words) in [
        ([0, 0, 0], "black"),
        ([255, 255, 255], "white"),
        ([200, 10, 10], "#c80a0aff"),
    ] {
        let report = run(
            "image.generate.illustration.png",
            &[],
            input.clone(),
            json!({"image_b64": b64(&uniform_png(16, 16, rgb))}),
        );
        assert_fails(&report, &["not_blank"]);
        assert!(detail(&report, "not_blank").contains(words));
    }
    let report = run(
        "image.generate.illustration.png",
        &[],
        input,
        json!({"image_b64": b64(&gradient_png(8, 16))}),
    );
    assert_fails(&report, &["dimensions_match"]);
}

#[test]
fn palette_and_sixteen_bit_pngs_decode() {
    let mut palette = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut palette, 4, 1);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_palette(vec![0, 0, 0, 255, 0, 0]);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0, 1, 0, 1]).unwrap();
    }
    let sixteen: Vec<u8> = (0..4u16).flat_map(|v| (v * 20000).to_be_bytes()).collect();
    let sixteen = png(
        4,
        1,
        png::ColorType::Grayscale,
        png::BitDepth::Sixteen,
        &sixteen,
    );
    for image in [palette, sixteen] {
        let report = run(
            "image.generate.illustration.png",
            &[],
            json!({"prompt": "p", "width": 4, "height": 1}),
            json!({"image_b64": b64(&image)}),
        );
        assert_passes(&report);
    }
}

#[test]
fn background_remove_needs_alpha_and_a_binary_mask_of_the_same_size() {
    let input = json!({"image_b64": b64(&gradient_png(10, 6))});
    let row = "image.edit.background-remove";
    let ok = run(
        row,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_rgba_png(10, 6)), "mask_b64": b64(&mask_png(10, 6, false))}),
    );
    assert_passes(&ok);
    // An RGB image has no alpha.
    let report = run(
        row,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_png(10, 6)), "mask_b64": b64(&mask_png(10, 6, false))}),
    );
    assert_fails(&report, &["has_alpha"]);
    // One gray pixel makes the mask non-binary; the detail names it.
    let report = run(
        row,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_rgba_png(10, 6)), "mask_b64": b64(&mask_png(10, 6, true))}),
    );
    assert_fails(&report, &["mask_binary"]);
    assert!(detail(&report, "mask_binary").contains("pixel (0, 0)"));
    // A mask of another size.
    let report = run(
        row,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_rgba_png(10, 6)), "mask_b64": b64(&mask_png(5, 3, false))}),
    );
    assert_fails(&report, &["dimensions_match"]);
    // A mask that is no PNG.
    let report = run(
        row,
        &[],
        input.clone(),
        json!({"image_b64": b64(&gradient_rgba_png(10, 6)), "mask_b64": "!!"}),
    );
    assert_fails(
        &report,
        &["mask_valid_png", "mask_binary", "dimensions_match"],
    );
    // An image that is no PNG.
    let report = run(
        row,
        &[],
        input,
        json!({"image_b64": b64(b"nope"), "mask_b64": b64(&mask_png(10, 6, false))}),
    );
    assert_fails(&report, &["png_valid", "has_alpha", "dimensions_match"]);
}

#[test]
fn a_colour_mask_is_binary_only_when_its_channels_agree() {
    let input = json!({"image_b64": b64(&gradient_png(2, 1))});
    let image = b64(&gradient_rgba_png(2, 1));
    let white_black = png(
        2,
        1,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &[255, 255, 255, 0, 0, 0],
    );
    let red = png(
        2,
        1,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &[255, 0, 0, 0, 0, 0],
    );
    let ok = run(
        "image.edit.background-remove",
        &[],
        input.clone(),
        json!({"image_b64": image, "mask_b64": b64(&white_black)}),
    );
    assert_passes(&ok);
    let report = run(
        "image.edit.background-remove",
        &[],
        input,
        json!({"image_b64": image, "mask_b64": b64(&red)}),
    );
    assert_fails(&report, &["mask_binary"]);
}

#[test]
fn upscale_checks_the_factor_on_both_axes() {
    let input = json!({"image_b64": b64(&gradient_png(5, 3))});
    for (row, factor) in [("image.upscale.2x", 2), ("image.upscale.4x", 4)] {
        let ok = run(
            row,
            &[],
            input.clone(),
            json!({"image_b64": b64(&gradient_png(5 * factor, 3 * factor))}),
        );
        assert_passes(&ok);
        let report = run(
            row,
            &[],
            input.clone(),
            json!({"image_b64": b64(&gradient_png(5 * factor, 3 * factor + 1))}),
        );
        assert_fails(&report, &["dimensions_scaled"]);
    }
    let report = run("image.upscale.2x", &[], input, json!({"image_b64": 7}));
    assert_fails(&report, &["output_shape", "png_valid", "dimensions_scaled"]);
}

#[test]
fn upscale_input_must_be_a_png() {
    let error = try_run(
        &options(),
        "image.upscale.2x",
        &[],
        json!({"image_b64": b64(b"not png")}),
        json!({"image_b64": b64(&gradient_png(2, 2))}),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_input");
    assert!(
        matches!(error, weft_verify::VerifyError::InvalidInput { ref pointer, .. } if pointer == "/image_b64")
    );
}

const SVG_ROW: &str = "image.generate.illustration.svg";

#[test]
fn svg_needs_a_path_with_parseable_data() {
    let good = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><path d="M0 0 L10 10 Z"/><path d="M1 1 h2 v2"/></svg>"#;
    assert_passes(&run(
        SVG_ROW,
        &[],
        json!({"prompt": "p"}),
        json!({"svg": good}),
    ));
    assert_passes(&run(
        SVG_ROW,
        &[],
        json!({"prompt": "p", "max_paths": 2}),
        json!({"svg": good}),
    ));
    let report = run(
        SVG_ROW,
        &[],
        json!({"prompt": "p", "max_paths": 1}),
        json!({"svg": good}),
    );
    assert_fails(&report, &["max_paths"]);
    let no_path = r#"<svg xmlns="http://www.w3.org/2000/svg"><rect width="3" height="3"/></svg>"#;
    assert_fails(
        &run(
            SVG_ROW,
            &[],
            json!({"prompt": "p"}),
            json!({"svg": no_path}),
        ),
        &["has_path"],
    );
    let empty_d = r#"<svg xmlns="http://www.w3.org/2000/svg"><path d="  "/></svg>"#;
    let report = run(
        SVG_ROW,
        &[],
        json!({"prompt": "p"}),
        json!({"svg": empty_d}),
    );
    assert_fails(&report, &["has_path"]);
    assert!(detail(&report, "has_path").contains("empty `d`"));
    let bad_d = r#"<svg xmlns="http://www.w3.org/2000/svg"><path d="M 0 0 L banana"/></svg>"#;
    let report = run(SVG_ROW, &[], json!({"prompt": "p"}), json!({"svg": bad_d}));
    assert_fails(&report, &["has_path"]);
    assert!(detail(&report, "has_path").contains("1:"));
    let not_xml = "<svg><path d='M0 0'></svg>";
    assert_fails(
        &run(
            SVG_ROW,
            &[],
            json!({"prompt": "p"}),
            json!({"svg": not_xml}),
        ),
        &["svg_parses", "has_path", "max_paths"],
    );
    let html = r#"<html><path d="M0 0 L1 1"/></html>"#;
    assert_fails(
        &run(SVG_ROW, &[], json!({"prompt": "p"}), json!({"svg": html})),
        &["svg_parses", "has_path", "max_paths"],
    );
}

#[test]
fn chart_passes_and_fails_each_check() {
    let input = json!({
        "data": [{"x": "a", "y": 1}, {"x": 2, "y": 3.5}],
        "chart_type": "bar", "width": 40, "height": 30
    });
    let good = json!({"image_b64": b64(&gradient_png(40, 30)), "width": 40, "height": 30, "chart_type": "bar"});
    assert_passes(&run("chart.generate.from-data", &[], input.clone(), good));
    let blank = json!({"image_b64": b64(&uniform_png(40, 30, [255, 255, 255])), "width": 40, "height": 30, "chart_type": "line"});
    assert_fails(
        &run("chart.generate.from-data", &[], input.clone(), blank),
        &["not_blank", "chart_type_matches"],
    );
    let small = json!({"image_b64": b64(&gradient_png(20, 30)), "width": 40, "height": 30, "chart_type": "bar"});
    assert_fails(
        &run("chart.generate.from-data", &[], input, small),
        &["dimensions_match"],
    );
    let empty = json!({"data": [], "chart_type": "pie", "width": 40, "height": 30});
    let report = run(
        "chart.generate.from-data",
        &[],
        empty,
        json!({"image_b64": b64(&gradient_png(40, 30)), "width": 40, "height": 30, "chart_type": "pie"}),
    );
    assert_fails(&report, &["data_nonempty"]);
}

#[test]
fn chart_input_is_checked() {
    let error = try_run(
        &options(),
        "chart.generate.from-data",
        &[],
        json!({"data": [{"x": "a", "y": "1"}], "chart_type": "bar", "width": 4, "height": 4}),
        json!({}),
    )
    .unwrap_err();
    assert!(
        matches!(error, weft_verify::VerifyError::InvalidInput { ref pointer, .. } if pointer == "/data/0/y")
    );
    let error = try_run(
        &options(),
        "chart.generate.from-data",
        &[],
        json!({"data": [], "chart_type": "radar", "width": 4, "height": 4}),
        json!({}),
    )
    .unwrap_err();
    assert!(
        matches!(error, weft_verify::VerifyError::InvalidInput { ref pointer, .. } if pointer == "/chart_type")
    );
}
