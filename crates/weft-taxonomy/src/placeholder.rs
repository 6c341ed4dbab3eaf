//! Placeholder value sets: what may stand for `{lang}`, `{model}`, `{factor}`, … in an id.
//!
//! Closed sets list every value the seed allows. Open sets (`{voice}`, `{model}`, the text
//! `{taxonomy}`, `{factor}`, `{url}`) have a written rule instead, checked by
//! [`ValueSet::check`]. Two sets may span several dot-separated segments, because their
//! natural spelling contains dots: `{factor}` (`1.5`) and `{url}` (`example.com`).

/// ISO 639-1 codes the seed lists for `{lang}` (and `{src}`/`{tgt}` of audio and text
/// translation), with their English names.
pub const ISO_639_1: [(&str, &str); 11] = [
    ("en", "English"),
    ("it", "Italian"),
    ("es", "Spanish"),
    ("de", "German"),
    ("fr", "French"),
    ("pt", "Portuguese"),
    ("ja", "Japanese"),
    ("zh", "Chinese"),
    ("ko", "Korean"),
    ("ru", "Russian"),
    ("ar", "Arabic"),
];

/// Programming languages the seed lists for `{language}` (and `{src}`/`{tgt}` of
/// `code.translate`), with their display names.
pub const PROGRAMMING_LANGUAGES: [(&str, &str); 11] = [
    ("python", "Python"),
    ("javascript", "JavaScript"),
    ("typescript", "TypeScript"),
    ("go", "Go"),
    ("rust", "Rust"),
    ("java", "Java"),
    ("ruby", "Ruby"),
    ("php", "PHP"),
    ("csharp", "C#"),
    ("swift", "Swift"),
    ("kotlin", "Kotlin"),
];

/// `{level}` of `text.translate`.
pub const TRANSLATION_LEVELS: [&str; 5] = ["literal", "fluent", "business", "casual", "technical"];
/// `{op}` of `compute.statistics`.
pub const STATISTICS_OPS: [&str; 5] = ["mean", "median", "stddev", "variance", "percentile-95"];
/// `{format}` of `data.lookup.weather`.
pub const WEATHER_FORMATS: [&str; 3] = ["geojson", "json", "summary-text"];
/// `{taxonomy}` of `classify.image` (closed: its verifier checks labels against the set).
pub const IMAGE_TAXONOMIES: [&str; 3] = ["imagenet-1k", "coco-categories", "safe-content"];
/// The embedding models the seed names as common values of `{model}` (the set is open).
pub const COMMON_EMBEDDING_MODELS: [&str; 4] = [
    "text-embedding-3-small",
    "text-embedding-3-large",
    "clip-vit-l-14",
    "siglip-base",
];
/// Values of the text `{taxonomy}` that are rows of their own (`classify.text.sentiment`,
/// `classify.text.toxicity`), so that no id matches two rows.
pub const RESERVED_TEXT_TAXONOMIES: [&str; 2] = ["sentiment", "toxicity"];

/// Longest open slug (`{voice}`, `{model}`, text `{taxonomy}`), in characters.
pub const MAX_SLUG_LEN: usize = 64;
/// Smallest `{factor}` is strictly above this.
pub const MIN_FACTOR_EXCLUSIVE: f64 = 1.0;
/// Largest `{factor}`, inclusive.
pub const MAX_FACTOR: f64 = 100.0;
/// Most digits after the decimal point in a `{factor}`.
pub const MAX_FACTOR_FRACTION_DIGITS: usize = 3;
/// Top-level labels a `{url}` host may not end in: names that never leave the machine or
/// the local network.
pub const LOCAL_TOP_LABELS: [&str; 3] = ["localhost", "local", "internal"];

/// The set of values one placeholder accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueSet {
    /// One of [`ISO_639_1`].
    Iso639_1,
    /// One of [`PROGRAMMING_LANGUAGES`].
    ProgrammingLanguage,
    /// One of [`TRANSLATION_LEVELS`].
    TranslationLevel,
    /// One of [`STATISTICS_OPS`].
    StatisticsOp,
    /// One of [`WEATHER_FORMATS`].
    WeatherFormat,
    /// One of [`IMAGE_TAXONOMIES`].
    ImageTaxonomy,
    /// An open slug naming a provider-defined label set, except [`RESERVED_TEXT_TAXONOMIES`].
    TextTaxonomy,
    /// An open slug naming a voice.
    Voice,
    /// An open slug naming an embedding model.
    EmbeddingModel,
    /// A decimal number above 1 and at most 100, written canonically (`2`, `1.5`).
    ExpansionFactor,
    /// A public DNS host name (`example.com`, `shop.example.co.uk`).
    Host,
}

impl ValueSet {
    /// A stable name for the set (`iso-639-1`, `slug`, `factor`, …), used in the API.
    pub fn name(self) -> &'static str {
        match self {
            ValueSet::Iso639_1 => "iso-639-1",
            ValueSet::ProgrammingLanguage => "programming-language",
            ValueSet::TranslationLevel => "translation-level",
            ValueSet::StatisticsOp => "statistics-op",
            ValueSet::WeatherFormat => "weather-format",
            ValueSet::ImageTaxonomy => "image-taxonomy",
            ValueSet::TextTaxonomy => "text-taxonomy",
            ValueSet::Voice => "voice",
            ValueSet::EmbeddingModel => "embedding-model",
            ValueSet::ExpansionFactor => "expansion-factor",
            ValueSet::Host => "host",
        }
    }

    /// Every value, for a closed set; `None` for an open one.
    pub fn values(self) -> Option<Vec<&'static str>> {
        match self {
            ValueSet::Iso639_1 => Some(ISO_639_1.iter().map(|(code, _)| *code).collect()),
            ValueSet::ProgrammingLanguage => Some(
                PROGRAMMING_LANGUAGES
                    .iter()
                    .map(|(code, _)| *code)
                    .collect(),
            ),
            ValueSet::TranslationLevel => Some(TRANSLATION_LEVELS.to_vec()),
            ValueSet::StatisticsOp => Some(STATISTICS_OPS.to_vec()),
            ValueSet::WeatherFormat => Some(WEATHER_FORMATS.to_vec()),
            ValueSet::ImageTaxonomy => Some(IMAGE_TAXONOMIES.to_vec()),
            ValueSet::TextTaxonomy
            | ValueSet::Voice
            | ValueSet::EmbeddingModel
            | ValueSet::ExpansionFactor
            | ValueSet::Host => None,
        }
    }

    /// Whether the set lists its values.
    pub fn is_closed(self) -> bool {
        self.values().is_some()
    }

    /// Values the seed names for an open set (none are required); empty for closed sets.
    pub fn known(self) -> &'static [&'static str] {
        match self {
            ValueSet::EmbeddingModel => &COMMON_EMBEDDING_MODELS,
            _ => &[],
        }
    }

    /// A value of the set, used for example ids.
    pub fn example(self) -> &'static str {
        match self {
            ValueSet::Iso639_1 => "en",
            ValueSet::ProgrammingLanguage => "python",
            ValueSet::TranslationLevel => "fluent",
            ValueSet::StatisticsOp => "mean",
            ValueSet::WeatherFormat => "json",
            ValueSet::ImageTaxonomy => "imagenet-1k",
            ValueSet::TextTaxonomy => "topic",
            ValueSet::Voice => "alloy",
            ValueSet::EmbeddingModel => "text-embedding-3-small",
            ValueSet::ExpansionFactor => "2",
            ValueSet::Host => "example.com",
        }
    }

    /// Whether one value may span several dot-separated segments of an id.
    pub fn spans_segments(self) -> bool {
        matches!(self, ValueSet::ExpansionFactor | ValueSet::Host)
    }

    /// The rule, in one sentence, as the API and `weft taxonomy list` show it.
    pub fn rule(self) -> String {
        match self {
            ValueSet::Iso639_1 => format!(
                "an ISO 639-1 code, one of {}",
                ISO_639_1.map(|(c, _)| c).join(", ")
            ),
            ValueSet::ProgrammingLanguage => format!(
                "a programming language, one of {}",
                PROGRAMMING_LANGUAGES.map(|(c, _)| c).join(", ")
            ),
            ValueSet::TranslationLevel => format!("one of {}", TRANSLATION_LEVELS.join(", ")),
            ValueSet::StatisticsOp => format!("one of {}", STATISTICS_OPS.join(", ")),
            ValueSet::WeatherFormat => format!("one of {}", WEATHER_FORMATS.join(", ")),
            ValueSet::ImageTaxonomy => format!("one of {}", IMAGE_TAXONOMIES.join(", ")),
            ValueSet::TextTaxonomy => format!(
                "a provider-defined label set named by a slug ({}), except {} (rows of their own)",
                slug_rule(),
                RESERVED_TEXT_TAXONOMIES.join(" and ")
            ),
            ValueSet::Voice => {
                format!("a provider-defined voice named by a slug ({})", slug_rule())
            }
            ValueSet::EmbeddingModel => format!(
                "a provider-defined model named by a slug ({}); common: {}",
                slug_rule(),
                COMMON_EMBEDDING_MODELS.join(", ")
            ),
            ValueSet::ExpansionFactor => format!(
                "a decimal number above {MIN_FACTOR_EXCLUSIVE} and at most {MAX_FACTOR}, written \
                 canonically with at most {MAX_FACTOR_FRACTION_DIGITS} fraction digits: no \
                 leading zeros, no trailing fraction zeros (2, 1.5, 2.25; not 2.0 or 02)"
            ),
            ValueSet::Host => format!(
                "a public DNS host name: two or more dot-separated labels of a-z, 0-9 and '-' \
                 (1-63 characters, not starting or ending with '-'); the last label is not \
                 numeric (no IP addresses) and not {} (ids cannot hold ':' or '/', so the id \
                 names the site and the input's url names the page)",
                LOCAL_TOP_LABELS.join(", ")
            ),
        }
    }

    /// The display name of a closed-set value (`English`, `C#`), if it has one.
    pub fn display_name(self, value: &str) -> Option<&'static str> {
        let table: &[(&str, &str)] = match self {
            ValueSet::Iso639_1 => &ISO_639_1,
            ValueSet::ProgrammingLanguage => &PROGRAMMING_LANGUAGES,
            _ => return None,
        };
        table
            .iter()
            .find(|(code, _)| *code == value)
            .map(|(_, name)| *name)
    }

    /// Checks `value` against the set; the error says why it is not a member.
    pub fn check(self, value: &str) -> Result<(), String> {
        if let Some(values) = self.values() {
            return if values.contains(&value) {
                Ok(())
            } else {
                Err(self.rule())
            };
        }
        match self {
            ValueSet::TextTaxonomy => {
                check_slug(value)?;
                if RESERVED_TEXT_TAXONOMIES.contains(&value) {
                    return Err(format!(
                        "`{value}` is not a label set: classify.text.{value} is a row of its own"
                    ));
                }
                Ok(())
            }
            ValueSet::Voice | ValueSet::EmbeddingModel => check_slug(value),
            ValueSet::ExpansionFactor => check_factor(value),
            ValueSet::Host => check_host(value),
            _ => Err(self.rule()),
        }
    }
}

fn slug_rule() -> String {
    format!("1-{MAX_SLUG_LEN} characters of a-z, 0-9 and single '-' between them")
}

/// Open slugs: kebab-case, one segment.
pub(crate) fn check_slug(value: &str) -> Result<(), String> {
    let bad = value.is_empty()
        || value.len() > MAX_SLUG_LEN
        || value.starts_with('-')
        || value.ends_with('-')
        || value.contains("--")
        || !value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if bad {
        Err(format!("`{value}` is not a slug: {}", slug_rule()))
    } else {
        Ok(())
    }
}

fn check_factor(value: &str) -> Result<(), String> {
    let rule = || ValueSet::ExpansionFactor.rule();
    let (whole, fraction) = match value.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (value, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
        return Err(format!("`{value}` is not a decimal number: {}", rule()));
    }
    if whole.len() > 1 && whole.starts_with('0') {
        return Err(format!("`{value}` has a leading zero: {}", rule()));
    }
    if let Some(f) = fraction {
        if f.ends_with('0') {
            return Err(format!(
                "`{value}` has a trailing fraction zero (each factor has one spelling): {}",
                rule()
            ));
        }
        if f.len() > MAX_FACTOR_FRACTION_DIGITS {
            return Err(format!(
                "`{value}` has more than {MAX_FACTOR_FRACTION_DIGITS} fraction digits: {}",
                rule()
            ));
        }
    }
    // At most 3 + 1 + 3 digits reach here once the range holds; long digit strings parse to
    // large values (or infinity) and fail the range check.
    let number: f64 = value
        .parse()
        .map_err(|_| format!("`{value}` is not a decimal number: {}", rule()))?;
    if number <= MIN_FACTOR_EXCLUSIVE || number > MAX_FACTOR {
        return Err(format!("`{value}` is out of range: {}", rule()));
    }
    Ok(())
}

fn check_host(value: &str) -> Result<(), String> {
    let rule = || ValueSet::Host.rule();
    let labels: Vec<&str> = value.split('.').collect();
    if labels.len() < 2 {
        return Err(format!(
            "`{value}` is not a public host name (one label): {}",
            rule()
        ));
    }
    for label in &labels {
        let ok = (1..=63).contains(&label.len())
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok {
            return Err(format!(
                "`{value}`: label `{label}` is not a host label: {}",
                rule()
            ));
        }
    }
    let top = labels.last().copied().unwrap_or_default();
    if top.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "`{value}` looks like an IP address, not a host name: {}",
            rule()
        ));
    }
    if LOCAL_TOP_LABELS.contains(&top) {
        return Err(format!("`{value}` is not a public host: {}", rule()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_boundaries() {
        for ok in ["1.001", "1.5", "2", "2.25", "99.999", "100", "10"] {
            assert_eq!(ValueSet::ExpansionFactor.check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "1", "0", "0.5", "1.0", "2.0", "2.50", "02", "100.001", "101", "1.2345", "", ".5",
            "5.", "1e2", "-2", "inf", "nan", "1.5.2",
        ] {
            assert!(ValueSet::ExpansionFactor.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn host_boundaries() {
        let label63 = "a".repeat(63);
        let label64 = "a".repeat(64);
        for ok in [
            "example.com".to_owned(),
            "shop.example.co.uk".to_owned(),
            "a-b.c0".to_owned(),
            format!("{label63}.com"),
        ] {
            assert_eq!(ValueSet::Host.check(&ok), Ok(()), "{ok}");
        }
        for bad in [
            "localhost".to_owned(),
            "example".to_owned(),
            "10.0.0.1".to_owned(),
            "printer.local".to_owned(),
            "metadata.internal".to_owned(),
            "a.localhost".to_owned(),
            "-a.com".to_owned(),
            "a-.com".to_owned(),
            "a..com".to_owned(),
            "a_b.com".to_owned(),
            format!("{label64}.com"),
        ] {
            assert!(ValueSet::Host.check(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slug_boundaries() {
        let at = "a".repeat(MAX_SLUG_LEN);
        let over = "a".repeat(MAX_SLUG_LEN + 1);
        assert_eq!(ValueSet::Voice.check(&at), Ok(()));
        assert!(ValueSet::Voice.check(&over).is_err());
        for bad in ["", "-a", "a-", "a--b", "a_b", "a.b"] {
            assert!(ValueSet::EmbeddingModel.check(bad).is_err(), "{bad}");
        }
        for reserved in RESERVED_TEXT_TAXONOMIES {
            assert!(ValueSet::TextTaxonomy.check(reserved).is_err());
            assert_eq!(ValueSet::Voice.check(reserved), Ok(()));
        }
    }

    #[test]
    fn closed_sets_accept_exactly_their_values() {
        for set in [
            ValueSet::Iso639_1,
            ValueSet::ProgrammingLanguage,
            ValueSet::TranslationLevel,
            ValueSet::StatisticsOp,
            ValueSet::WeatherFormat,
            ValueSet::ImageTaxonomy,
        ] {
            let values = set.values().unwrap_or_default();
            for v in &values {
                assert_eq!(set.check(v), Ok(()));
                assert!(set.check(&v.to_uppercase()).is_err());
                assert!(set.check(&format!("{v}x")).is_err());
            }
            assert!(values.contains(&set.example()));
        }
        assert!(ValueSet::Iso639_1.check("xx").is_err());
        assert!(ValueSet::Iso639_1.check("eng").is_err());
        assert_eq!(
            ValueSet::ProgrammingLanguage.display_name("csharp"),
            Some("C#")
        );
    }
}
