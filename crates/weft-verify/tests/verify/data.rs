//! `data.*` rows: weather formats, web search, structured extraction, scraping, prices.

use serde_json::json;

use crate::support::*;

const WEATHER: &str = "data.lookup.weather.{format}";

fn record() -> serde_json::Value {
    json!({"location": "Turin", "date": "2026-06-01", "temperature_c": 21.5, "conditions": "sunny"})
}

#[test]
fn weather_json() {
    let input = json!({"location": "Turin", "date": "2026-06-01"});
    let bindings = [("format", "json")];
    assert_passes(&run(WEATHER, &bindings, input.clone(), record()));
    let mut missing = record();
    missing.as_object_mut().unwrap().remove("temperature_c");
    let report = run(WEATHER, &bindings, input.clone(), missing);
    assert_fails(&report, &["required_fields"]);
    assert!(detail(&report, "required_fields").contains("temperature_c"));
    let mut other_day = record();
    other_day["date"] = json!("2026-06-02T09:00:00Z");
    assert_fails(
        &run(WEATHER, &bindings, input.clone(), other_day),
        &["date_matches_input"],
    );
    let mut bad_date = record();
    bad_date["date"] = json!("June 1st");
    assert_fails(
        &run(WEATHER, &bindings, input.clone(), bad_date),
        &["required_fields", "date_matches_input"],
    );
    assert_fails(
        &run(WEATHER, &bindings, input, json!("sunny")),
        &["valid_format", "required_fields", "date_matches_input"],
    );
}

#[test]
fn weather_geojson() {
    let input = json!({"location": "Turin"});
    let bindings = [("format", "geojson")];
    let feature = json!({
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [7.686, 45.07]},
        "properties": record()
    });
    assert_passes(&run(WEATHER, &bindings, input.clone(), feature.clone()));
    let collection =
        json!({"type": "FeatureCollection", "features": [feature.clone(), feature.clone()]});
    assert_passes(&run(WEATHER, &bindings, input.clone(), collection));
    let empty = json!({"type": "FeatureCollection", "features": []});
    assert_fails(
        &run(WEATHER, &bindings, input.clone(), empty),
        &["valid_format", "required_fields"],
    );
    let mut swapped = feature.clone();
    swapped["geometry"]["coordinates"] = json!([45.07, 187.0]);
    assert_fails(
        &run(WEATHER, &bindings, input.clone(), swapped),
        &["valid_format", "required_fields"],
    );
    let mut line = feature.clone();
    line["geometry"] = json!({"type": "LineString", "coordinates": [[0, 0], [1, 1]]});
    assert_fails(
        &run(WEATHER, &bindings, input.clone(), line),
        &["valid_format", "required_fields"],
    );
    let not_geojson = json!({"type": "Feature", "geometry": {"type": "Point"}});
    assert_fails(
        &run(WEATHER, &bindings, input.clone(), not_geojson),
        &["valid_format", "required_fields"],
    );
    let mut no_conditions = feature;
    no_conditions["properties"]["conditions"] = json!("");
    assert_fails(
        &run(WEATHER, &bindings, input, no_conditions),
        &["required_fields"],
    );
}

#[test]
fn weather_summary_text() {
    let input = json!({"location": "Turin", "date": "2026-06-01"});
    let bindings = [("format", "summary-text")];
    for text in [
        "Sunny in Turin, 21°C.",
        "Turin: 70 ℉ and clear",
        "Around 18 degrees with light rain",
    ] {
        assert_passes(&run(
            WEATHER,
            &bindings,
            input.clone(),
            json!({"text": text}),
        ));
    }
    assert_fails(
        &run(
            WEATHER,
            &bindings,
            input.clone(),
            json!({"text": "Nice weather in Turin."}),
        ),
        &["required_fields"],
    );
    assert_fails(
        &run(WEATHER, &bindings, input, json!({"text": ""})),
        &["valid_format", "required_fields"],
    );
}

#[test]
fn weather_bindings_and_input() {
    let error = try_run(
        &options(),
        WEATHER,
        &[("format", "xml")],
        json!({"location": "x"}),
        record(),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_binding");
    let error = try_run(
        &options(),
        WEATHER,
        &[("format", "json")],
        json!({"location": "x", "date": "tomorrow"}),
        record(),
    )
    .unwrap_err();
    assert!(
        matches!(error, weft_verify::VerifyError::InvalidInput { ref pointer, .. } if pointer == "/date")
    );
}

#[test]
fn web_search() {
    let row = "data.lookup.web-search";
    let result = |url: &str| json!({"url": url, "title": "t", "snippet": "s"});
    let input = json!({"query": "weft", "limit": 2});
    assert_passes(&run(
        row,
        &[],
        input.clone(),
        json!({"results": [result("https://example.com/a"), result("http://example.org/?q=1")]}),
    ));
    assert_passes(&run(row, &[], input.clone(), json!({"results": []})));
    for url in [
        "example.com",
        "ftp://example.com/x",
        "https://",
        "https://exa mple.com",
    ] {
        assert_fails(
            &run(row, &[], input.clone(), json!({"results": [result(url)]})),
            &["urls_well_formed"],
        );
    }
    assert_fails(
        &run(
            row,
            &[],
            input.clone(),
            json!({"results": [result("https://a.com"), result("https://b.com"), result("https://c.com")]}),
        ),
        &["results_within_limit"],
    );
    assert_fails(
        &run(
            row,
            &[],
            input.clone(),
            json!({"results": [{"url": "https://a.com", "title": "t"}]}),
        ),
        &["results_well_formed", "urls_well_formed"],
    );
    assert_fails(
        &run(row, &[], input, json!({"results": "none"})),
        &[
            "output_shape",
            "results_well_formed",
            "urls_well_formed",
            "results_within_limit",
        ],
    );
}

const EXTRACT: &str = "data.extract.from-url";

fn extract_input() -> serde_json::Value {
    json!({
        "url": "https://shop.example.com/p/1",
        "fields": ["title", "price_currency", "price_amount", "availability", "main_image_url", "description_short", "published_at", "brand"]
    })
}

fn extraction() -> serde_json::Value {
    json!({
        "url": "https://shop.example.com/p/1",
        "extracted": {
            "title": "Kettle",
            "price_currency": "EUR",
            "price_amount": 39.9,
            "availability": "in_stock",
            "main_image_url": "https://cdn.example.com/k.jpg",
            "description_short": "A kettle.",
            "published_at": "2026-05-30",
            "brand": null,
            "unrequested_url": "not checked"
        },
        "confidence": 0.9,
        "extracted_at": "2026-06-01T11:59:00Z"
    })
}

#[test]
fn extraction_passes() {
    let report = run(EXTRACT, &[], extract_input(), extraction());
    assert_passes(&report);
    assert_eq!(report.checks.len(), 11);
    // A string amount without separators is numeric too; nulls are allowed.
    let mut output = extraction();
    output["extracted"]["price_amount"] = json!("1299.00");
    output["extracted"]["price_currency"] = json!(null);
    assert_passes(&run(EXTRACT, &[], extract_input(), output));
}

#[test]
fn extraction_fails_each_convention() {
    let cases = [
        (
            "/extracted/price_currency",
            json!("eur"),
            "price_currency_iso_4217",
        ),
        (
            "/extracted/price_currency",
            json!("EURO"),
            "price_currency_iso_4217",
        ),
        ("/extracted/price_amount", json!(-1), "price_amount_valid"),
        (
            "/extracted/price_amount",
            json!("1,299.00"),
            "price_amount_valid",
        ),
        (
            "/extracted/availability",
            json!("available"),
            "availability_valid",
        ),
        (
            "/extracted/main_image_url",
            json!("http://cdn.example.com/k.jpg"),
            "url_fields_https",
        ),
        (
            "/extracted/description_short",
            json!("x".repeat(281)),
            "description_short_length",
        ),
        (
            "/extracted/published_at",
            json!("30/05/2026"),
            "published_at_iso_8601",
        ),
        ("/confidence", json!(1.2), "confidence_in_range"),
        (
            "/extracted_at",
            json!("2026-06-01"),
            "extracted_at_iso_8601",
        ),
        ("/url", json!("https://shop.example.com/p/2"), "url_echoed"),
    ];
    for (pointer, value, check) in cases {
        let mut output = extraction();
        *output.pointer_mut(pointer).unwrap() = value;
        assert_fails(&run(EXTRACT, &[], extract_input(), output), &[check]);
    }
    // A description of exactly 280 characters (not bytes) is fine.
    let mut output = extraction();
    output["extracted"]["description_short"] = json!("é".repeat(280));
    assert_passes(&run(EXTRACT, &[], extract_input(), output));
    let mut output = extraction();
    output["extracted"].as_object_mut().unwrap().remove("brand");
    let report = run(EXTRACT, &[], extract_input(), output);
    assert_fails(&report, &["requested_fields_present"]);
    assert!(detail(&report, "requested_fields_present").contains("brand"));
}

#[test]
fn extraction_input_is_checked() {
    let error = try_run(
        &options(),
        EXTRACT,
        &[],
        json!({"url": "https://a.com", "fields": ["a", 3]}),
        extraction(),
    )
    .unwrap_err();
    assert!(
        matches!(error, weft_verify::VerifyError::InvalidInput { ref pointer, .. } if pointer == "/fields/1")
    );
}

#[test]
fn scrape() {
    let row = "data.scrape.{url}.json";
    let bindings = [("url", "example-com")];
    let input = json!({
        "url": "https://example.com",
        "schema": {"type": "object", "required": ["title"], "properties": {"title": {}, "price": {}}}
    });
    assert_passes(&run(
        row,
        &bindings,
        input.clone(),
        json!({"data": {"title": "x", "price": null}}),
    ));
    let report = run(
        row,
        &bindings,
        input.clone(),
        json!({"data": {"title": "x"}}),
    );
    assert_fails(&report, &["schema_fields_present"]);
    assert!(detail(&report, "schema_fields_present").contains("price"));
    assert_fails(
        &run(row, &bindings, input, json!({"data": []})),
        &["output_shape", "schema_fields_present"],
    );
    assert_passes(&run(
        row,
        &bindings,
        json!({"url": "https://example.com"}),
        json!({"data": {}}),
    ));
}

#[test]
fn stock_price() {
    let row = "data.lookup.stock-price";
    let input = json!({"ticker": "ACME"});
    let quote = |price: f64, currency: &str, timestamp: i64| json!({"ticker": "ACME", "price": price, "currency": currency, "timestamp": timestamp});
    assert_passes(&run(row, &[], input.clone(), quote(12.5, "USD", NOW - 60)));
    // Four days is the default window; one second more fails.
    assert_passes(&run(
        row,
        &[],
        input.clone(),
        quote(12.5, "USD", NOW - 345_600),
    ));
    assert_fails(
        &run(row, &[], input.clone(), quote(12.5, "USD", NOW - 345_601)),
        &["timestamp_recent"],
    );
    assert_fails(
        &run(row, &[], input.clone(), quote(12.5, "USD", NOW + 301)),
        &["timestamp_recent"],
    );
    let report = run(row, &[], input.clone(), quote(12.5, "USD", NOW * 1000));
    assert_fails(&report, &["timestamp_recent"]);
    assert!(detail(&report, "timestamp_recent").contains("milliseconds"));
    assert_fails(
        &run(row, &[], input.clone(), quote(0.0, "USD", NOW)),
        &["price_positive"],
    );
    assert_fails(
        &run(row, &[], input.clone(), quote(1.0, "usd", NOW)),
        &["currency_iso_4217"],
    );
    assert_fails(
        &run(row, &[], json!({"ticker": "OTHER"}), quote(1.0, "USD", NOW)),
        &["ticker_matches_input"],
    );
}

#[test]
fn crypto_price() {
    let row = "data.lookup.crypto-price";
    let quote = json!({"symbol": "BTC", "price": 65000.5, "vs": "usd", "timestamp": NOW});
    assert_passes(&run(
        row,
        &[],
        json!({"symbol": "btc", "vs": "USD"}),
        quote.clone(),
    ));
    assert_passes(&run(row, &[], json!({"symbol": "BTC"}), quote.clone()));
    assert_fails(
        &run(row, &[], json!({"symbol": "ETH"}), quote.clone()),
        &["symbol_matches_input"],
    );
    assert_fails(
        &run(
            row,
            &[],
            json!({"symbol": "BTC", "vs": "EUR"}),
            quote.clone(),
        ),
        &["vs_matches_input"],
    );
    let mut negative = quote;
    negative["price"] = json!(-3);
    assert_fails(
        &run(row, &[], json!({"symbol": "BTC"}), negative),
        &["price_positive"],
    );
}
