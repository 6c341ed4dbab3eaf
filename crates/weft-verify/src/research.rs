//! `research.linkedin.profile.enrich`: `profile` is an object; `profile.url` and
//! `profile.name` are non-empty strings; `profile.source` names a known provenance.

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks};

/// Provenance sources weft accepts for `research.*` outputs (the seed lists apify,
/// phantombuster, proxycurl and "..."): upstream LinkedIn data providers, plus `linkedin` for
/// the official API. Extend with [`crate::VerifyOptions::extra_research_sources`].
pub(crate) const KNOWN_SOURCES: [&str; 7] = [
    "apify",
    "phantombuster",
    "proxycurl",
    "brightdata",
    "coresignal",
    "peopledatalabs",
    "linkedin",
];

/// `research.linkedin.profile.enrich`.
pub(crate) fn linkedin_profile_enrich(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("profile_url")?;
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(output, &[("/profile", Kind::Obj, true)]),
    );
    checks.add(
        "profile_is_object",
        fields::field(output, "/profile").and_then(|profile| {
            if profile.is_object() {
                Ok("profile is an object".to_owned())
            } else {
                Err(format!(
                    "/profile: {}",
                    crate::ctx::expected("an object", profile)
                ))
            }
        }),
    );
    checks.add(
        "profile_url_nonempty",
        fields::nonempty_text(output, "/profile/url"),
    );
    checks.add(
        "profile_name_nonempty",
        fields::nonempty_text(output, "/profile/name"),
    );
    checks.add(
        "source_known",
        fields::string(output, "/profile/source").and_then(|source| {
            let known = KNOWN_SOURCES
                .iter()
                .any(|known| known.eq_ignore_ascii_case(source))
                || ctx
                    .options
                    .extra_research_sources
                    .iter()
                    .any(|extra| extra.eq_ignore_ascii_case(source));
            if known {
                Ok(format!("source `{source}`"))
            } else {
                Err(format!(
                    "source `{source}` is not a known provenance ({})",
                    KNOWN_SOURCES.join(", ")
                ))
            }
        }),
    );
    Ok(checks.finish())
}
