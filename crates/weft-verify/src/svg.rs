//! `image.generate.illustration.svg`: valid SVG that parses and has at least one path.
//!
//! The document is parsed with `roxmltree` (a conforming XML parser with entity-expansion
//! limits); its root must be an `<svg>` element (in the SVG namespace, or unqualified).
//! A `<path>` counts when its `d` attribute is non-empty and parses completely with
//! `svgtypes`' path parser.

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks, after};

const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

/// What a parsed SVG holds.
struct SvgSummary {
    /// `<path>` elements, valid or not.
    paths: usize,
    /// `<path>` elements with a non-empty `d` that parses.
    drawable_paths: usize,
    /// The first path problem, for details.
    first_problem: Option<String>,
}

/// `image.generate.illustration.svg`.
pub(crate) fn illustration_svg(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let max_paths = match ctx.input_opt_int("max_paths")? {
        Some(limit) if limit < 1 => {
            return Err(VerifyError::input("/max_paths", "must be at least 1"));
        }
        Some(limit) => Some(usize::try_from(limit).unwrap_or(usize::MAX)),
        None => None,
    };
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(ctx.output, &[("/svg", Kind::Str, true)]),
    );
    let parsed =
        fields::string(ctx.output, "/svg").and_then(|text| parse(text, ctx.options.max_svg_bytes));
    checks.add(
        "svg_parses",
        parsed
            .as_ref()
            .map(|summary| format!("well-formed <svg> with {} <path> elements", summary.paths))
            .map_err(Clone::clone),
    );
    checks.add(
        "has_path",
        after(&parsed, "svg_parses", |summary| {
            if summary.drawable_paths > 0 {
                Ok(format!(
                    "{} path(s) with valid path data",
                    summary.drawable_paths
                ))
            } else {
                Err(summary
                    .first_problem
                    .clone()
                    .unwrap_or_else(|| "no <path> element".to_owned()))
            }
        }),
    );
    checks.add(
        "max_paths",
        after(&parsed, "svg_parses", |summary| match max_paths {
            None => Ok("no max_paths requested".to_owned()),
            Some(limit) if summary.paths <= limit => {
                Ok(format!("{} path(s) ≤ max_paths {limit}", summary.paths))
            }
            Some(limit) => Err(format!("{} paths > max_paths {limit}", summary.paths)),
        }),
    );
    Ok(checks.finish())
}

fn parse(text: &str, max_bytes: usize) -> Result<SvgSummary, String> {
    if text.len() > max_bytes {
        return Err(format!(
            "SVG is {} bytes, over the limit of {max_bytes}",
            text.len()
        ));
    }
    let document = roxmltree::Document::parse(text)
        .map_err(|error| format!("not well-formed XML: {error}"))?;
    let root = document.root_element();
    let namespace = root.tag_name().namespace();
    if root.tag_name().name() != "svg" || namespace.is_some_and(|ns| ns != SVG_NAMESPACE) {
        return Err(format!(
            "root element is <{}>{}, expected <svg>",
            root.tag_name().name(),
            namespace
                .map(|ns| format!(" in namespace {ns}"))
                .unwrap_or_default()
        ));
    }
    let mut summary = SvgSummary {
        paths: 0,
        drawable_paths: 0,
        first_problem: None,
    };
    let paths = root.descendants().filter(|node| {
        node.is_element()
            && node.tag_name().name() == "path"
            && node
                .tag_name()
                .namespace()
                .is_none_or(|ns| ns == SVG_NAMESPACE)
    });
    for path in paths {
        summary.paths += 1;
        let position = document.text_pos_at(path.range().start);
        match path_data(path.attribute("d")) {
            Ok(()) => summary.drawable_paths += 1,
            Err(problem) => {
                summary
                    .first_problem
                    .get_or_insert_with(|| format!("<path> at {position}: {problem}"));
            }
        }
    }
    Ok(summary)
}

/// `d` is present, non-empty, and every segment parses.
fn path_data(d: Option<&str>) -> Result<(), String> {
    let d = d.ok_or_else(|| "no `d` attribute".to_owned())?;
    if d.trim().is_empty() {
        return Err("empty `d` attribute".to_owned());
    }
    let mut segments = 0usize;
    for segment in svgtypes::PathParser::from(d) {
        segment.map_err(|error| format!("path data does not parse: {error}"))?;
        segments += 1;
    }
    if segments == 0 {
        return Err("path data has no segment".to_owned());
    }
    Ok(())
}
