//! Data rows.

use serde_json::{Value, json};

use super::schema::{
    any_object, array, closed, described, integer, number, open, opt, req, string, with,
};
use super::{Bindings, Placeholder, Row};
use crate::placeholder::ValueSet;

/// `data.extract.from-url`: default of `max_response_kb`.
pub const EXTRACT_DEFAULT_MAX_RESPONSE_KB: u64 = 512;
/// `data.extract.from-url`: largest `max_response_kb`.
pub const EXTRACT_MAX_RESPONSE_KB: u64 = 4096;

/// The GeoJSON `type` of a `geojson` weather result: a Feature whose properties are the
/// weather record, or a collection of them (what `weft-verify` checks).
pub const GEOJSON_TYPES: [&str; 2] = ["Feature", "FeatureCollection"];

/// The weather record the seed's "contains required fields" leaves open; weft defines it
/// (docs/verification.md), and `weft-verify` checks the same fields.
fn weather_record() -> Value {
    open(vec![
        req("location", string()),
        req("date", string()),
        req("temperature_c", number()),
        req("conditions", string()),
    ])
}

/// An http(s) URL (the seed: "http(s) URL to fetch").
pub(crate) const HTTP_URL_PATTERN: &str = "^https?://";

/// The weather result for a bound `{format}`; any object when unbound.
fn weather_output(bindings: &Bindings) -> Value {
    match bindings.get("format").map(String::as_str) {
        Some("geojson") => described(
            open(vec![req(
                "type",
                json!({"type": "string", "enum": GEOJSON_TYPES}),
            )]),
            "A GeoJSON Feature (RFC 7946) with a Point geometry whose properties are the \
             weather record (location, date, temperature_c, conditions), or a non-empty \
             FeatureCollection of them.",
        ),
        Some("summary-text") => described(
            open(vec![req("text", string())]),
            "The summary as text (a weft result is always a JSON object).",
        ),
        Some("json") => described(
            weather_record(),
            "The weather record: location, date (ISO 8601), temperature_c, conditions.",
        ),
        _ => described(
            any_object(),
            "Format-specific: a GeoJSON Feature of the weather record for geojson, the record \
             itself for json, {text} for summary-text.",
        ),
    }
}

/// The page to scrape: on the id's host (or a subdomain of it) when `{url}` is bound.
fn scrape_url(bindings: &Bindings) -> Value {
    match bindings.get("url") {
        Some(host) => {
            let escaped = host.replace('.', "\\.");
            described(
                with(
                    string(),
                    "pattern",
                    json!(format!("^https?://([a-z0-9-]+\\.)*{escaped}([:/?#]|$)")),
                ),
                &format!("An http(s) URL on {host} or one of its subdomains."),
            )
        }
        None => described(
            with(string(), "pattern", json!(HTTP_URL_PATTERN)),
            "An http(s) URL on the id's host.",
        ),
    }
}

/// `data.*`, in the seed's order.
pub(super) static ROWS: [Row; 6] = [
    Row {
        pattern: "data.lookup.weather.{format}",
        title: "Look up the weather as {format}",
        seed_input: "{ location: string, date?: string }",
        seed_output: "(format-specific)",
        verification: "valid in declared format; contains required fields",
        notes: "",
        placeholders: &[Placeholder {
            name: "format",
            set: ValueSet::WeatherFormat,
            example: None,
        }],
        distinct: None,
        input: |_| closed(vec![req("location", string()), opt("date", string())]),
        output: weather_output,
    },
    Row {
        pattern: "data.lookup.web-search",
        title: "Search the web",
        seed_input: "{ query: string, limit?: int }",
        seed_output: "{ results: [{ url: string, title: string, snippet: string }] }",
        verification: "valid JSON; results array; URLs well-formed",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("query", string()), opt("limit", integer())]),
        output: |_| {
            open(vec![req(
                "results",
                array(open(vec![
                    req("url", string()),
                    req("title", string()),
                    req("snippet", string()),
                ])),
            )])
        },
    },
    Row {
        pattern: "data.extract.from-url",
        title: "Extract structured fields from a web page",
        seed_input: "{ url: string, fields: string[], max_response_kb?: int }",
        seed_output: "{ url: string, extracted: object, confidence: number, extracted_at: \
                      string }",
        verification: "all requested `fields` present in `extracted`; ISO 4217 currency code \
                       where applicable; valid `https://` for URL fields; `confidence` ∈ [0, \
                       1]; `extracted_at` parses as ISO 8601",
        notes: "Sellers fetch the page and return a typed record (stable, schema-bound \
                output, not a summary); they SHOULD reject file://, data:, internal IPs and \
                localhost, MUST honour `max_response_kb` (default 512, max 4096) and answer \
                415 when the page exceeds it. Every requested field is a key of `extracted` \
                (null when not found). Field conventions: `price_currency` a 3-letter ISO \
                4217 code; `price_amount` numeric, ≥ 0, no thousands separator; \
                `availability` one of in_stock, out_of_stock, unknown; `*_url` fields valid \
                https:// URLs; `description_short` ≤ 280 characters; `published_at` and \
                `extracted_at` ISO 8601.",
        placeholders: &[],
        distinct: None,
        input: |_| {
            closed(vec![
                req(
                    "url",
                    described(
                        with(string(), "pattern", json!(HTTP_URL_PATTERN)),
                        "The http(s) URL to fetch.",
                    ),
                ),
                req(
                    "fields",
                    described(
                        array(string()),
                        "Field names to extract (title, price_currency, price_amount, \
                         availability, brand, main_image_url, description_short, \
                         published_at, author, …).",
                    ),
                ),
                opt(
                    "max_response_kb",
                    described(
                        with(
                            with(
                                with(integer(), "minimum", json!(1)),
                                "maximum",
                                json!(EXTRACT_MAX_RESPONSE_KB),
                            ),
                            "default",
                            json!(EXTRACT_DEFAULT_MAX_RESPONSE_KB),
                        ),
                        "Cap on the fetched page, in KB.",
                    ),
                ),
            ])
        },
        output: |_| {
            open(vec![
                req("url", described(string(), "Echo of the input URL.")),
                req(
                    "extracted",
                    described(any_object(), "The requested fields as keys."),
                ),
                req(
                    "confidence",
                    described(number(), "Self-assessed confidence, 0 to 1."),
                ),
                req(
                    "extracted_at",
                    described(string(), "When the page was read (ISO 8601)."),
                ),
            ])
        },
    },
    Row {
        pattern: "data.scrape.{url}.json",
        title: "Scrape {url} into JSON",
        seed_input: "{ url: string, schema?: object }",
        seed_output: "{ data: object }",
        verification: "valid JSON; fields specified by schema present",
        notes: "",
        placeholders: &[Placeholder {
            name: "url",
            set: ValueSet::Host,
            example: None,
        }],
        distinct: None,
        input: |b| closed(vec![req("url", scrape_url(b)), opt("schema", any_object())]),
        output: |_| open(vec![req("data", any_object())]),
    },
    Row {
        pattern: "data.lookup.stock-price",
        title: "Look up a stock price",
        seed_input: "{ ticker: string }",
        seed_output: "{ ticker: string, price: number, currency: string, timestamp: int }",
        verification: "valid JSON; price > 0; timestamp recent",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("ticker", string())]),
        output: |_| {
            open(vec![
                req("ticker", string()),
                req("price", number()),
                req("currency", string()),
                req("timestamp", integer()),
            ])
        },
    },
    Row {
        pattern: "data.lookup.crypto-price",
        title: "Look up a cryptocurrency price",
        seed_input: "{ symbol: string, vs?: string }",
        seed_output: "{ symbol: string, price: number, vs: string, timestamp: int }",
        verification: "valid JSON; price > 0",
        notes: "",
        placeholders: &[],
        distinct: None,
        input: |_| closed(vec![req("symbol", string()), opt("vs", string())]),
        output: |_| {
            open(vec![
                req("symbol", string()),
                req("price", number()),
                req("vs", string()),
                req("timestamp", integer()),
            ])
        },
    },
];
