//! Standard formats the table names: ISO 4217 currency codes, ISO 8601 timestamps, `https://`
//! URLs and ISO 639-1 language codes — each checked with the field's crate.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// An ISO 4217 alphabetic code: exactly three uppercase letters naming an active currency
/// (`iso_currency`'s table). `usd` and `US$` fail.
pub(crate) fn iso_4217(code: &str) -> Result<(), String> {
    let shaped = code.len() == 3 && code.bytes().all(|byte| byte.is_ascii_uppercase());
    if shaped && iso_currency::Currency::from_code(code).is_some() {
        Ok(())
    } else {
        Err(format!("`{code}` is not an ISO 4217 currency code"))
    }
}

/// An ISO 8601 date-time, in the forms weft accepts: RFC 3339 (`2026-05-01T12:00:00Z`,
/// `2026-05-01T12:00:00.250+02:00`, lowercase `t`/`z`) or a local date-time without offset
/// (`2026-05-01T12:00:00`, optional fraction). Week dates, ordinal dates, the basic format
/// without separators and bare dates are refused.
pub(crate) fn iso_8601_datetime(text: &str) -> Result<(), String> {
    let rfc3339 = DateTime::parse_from_rfc3339(text).is_ok() && !text.contains(' ');
    let local = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").is_ok();
    if rfc3339 || local {
        Ok(())
    } else {
        Err(format!(
            "`{text}` is not an ISO 8601 date-time (expected e.g. 2026-05-01T12:00:00Z)"
        ))
    }
}

/// An ISO 8601 calendar date (`2026-05-01`) or any date-time [`iso_8601_datetime`] accepts.
pub(crate) fn iso_8601_date_or_datetime(text: &str) -> Result<(), String> {
    if NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() && text.len() == 10 {
        return Ok(());
    }
    iso_8601_datetime(text).map_err(|_| {
        format!("`{text}` is not an ISO 8601 date (2026-05-01) or date-time (2026-05-01T12:00:00Z)")
    })
}

/// A syntactically valid absolute `https://` URL with a host, and no surrounding whitespace.
pub(crate) fn https_url(text: &str) -> Result<(), String> {
    web_url(text, &["https"])
}

/// A syntactically valid absolute URL with one of `schemes` and a host.
pub(crate) fn web_url(text: &str, schemes: &[&str]) -> Result<(), String> {
    if text.trim() != text || text.is_empty() {
        return Err(format!("`{text}` has surrounding whitespace or is empty"));
    }
    let url = url::Url::parse(text).map_err(|error| format!("`{text}` is not a URL: {error}"))?;
    if !schemes.contains(&url.scheme()) {
        return Err(format!(
            "`{text}` has scheme `{}`, expected {}",
            url.scheme(),
            schemes.join(" or ")
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{text}` has no host"));
    }
    Ok(())
}

/// An ISO 639-1 code: two lowercase ASCII letters naming a language in ISO 639-1.
pub(crate) fn iso_639_1(code: &str) -> Result<(), String> {
    let shaped = code.len() == 2 && code.bytes().all(|byte| byte.is_ascii_lowercase());
    if shaped && isolang::Language::from_639_1(code).is_some() {
        Ok(())
    } else {
        Err(format!(
            "`{code}` is not a lowercase ISO 639-1 language code"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currencies() {
        assert!(iso_4217("EUR").is_ok());
        assert!(iso_4217("eur").is_err());
        assert!(iso_4217("EURO").is_err());
        assert!(iso_4217("XYZ").is_err());
    }

    #[test]
    fn timestamps() {
        for good in [
            "2026-05-01T12:00:00Z",
            "2026-05-01T12:00:00.250+02:00",
            "2026-05-01T12:00:00",
            "2026-05-01T12:00:00.5",
        ] {
            assert!(iso_8601_datetime(good).is_ok(), "{good}");
        }
        for bad in [
            "2026-05-01",
            "2026-05-01 12:00:00Z",
            "20260501T120000Z",
            "2026-13-01T00:00:00Z",
            "yesterday",
        ] {
            assert!(iso_8601_datetime(bad).is_err(), "{bad}");
        }
        assert!(iso_8601_date_or_datetime("2026-05-01").is_ok());
        assert!(iso_8601_date_or_datetime("2026-5-1").is_err());
    }

    #[test]
    fn urls() {
        assert!(https_url("https://example.com/a?b=c").is_ok());
        assert!(https_url("http://example.com").is_err());
        assert!(https_url("https://").is_err());
        assert!(https_url(" https://example.com").is_err());
        assert!(https_url("example.com").is_err());
        assert!(web_url("http://example.com", &["http", "https"]).is_ok());
    }

    #[test]
    fn languages() {
        assert!(iso_639_1("it").is_ok());
        assert!(iso_639_1("IT").is_err());
        assert!(iso_639_1("ita").is_err());
        assert!(iso_639_1("qq").is_err());
    }
}
