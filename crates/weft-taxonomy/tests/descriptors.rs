//! Standard descriptors: every row (and every closed combination) passes weft's own
//! descriptor rules, and the schemas accept and refuse what the table says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use weft_contract::{Descriptor, SchemaRole};
use weft_taxonomy::descriptor::{ANNOTATION_ROW, ANNOTATION_VERIFICATION, ANNOTATION_VERSION};
use weft_taxonomy::{Bindings, Resolution, StandardId, TAXONOMY_VERSION, resolve, rows};

fn standard(id: &str) -> StandardId {
    match resolve(id) {
        Resolution::Standard(s) => s,
        other => panic!("{id}: {other:?}"),
    }
}

fn descriptor(id: &str) -> Descriptor {
    standard(id)
        .descriptor()
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// Every combination of the closed sets of each row (open sets take their example).
fn all_ids() -> Vec<String> {
    let mut ids = Vec::new();
    for row in rows() {
        let mut all = vec![Bindings::new()];
        for p in row.placeholders {
            let values = p.set.values().unwrap_or_else(|| vec![p.set.example()]);
            all = all
                .into_iter()
                .flat_map(|b| {
                    values.iter().map(move |v| {
                        let mut b = b.clone();
                        b.insert(p.name.to_owned(), (*v).to_owned());
                        b
                    })
                })
                .collect();
        }
        if let Some((a, b)) = row.distinct {
            all.retain(|x| x[a] != x[b]);
        }
        ids.extend(all.iter().map(|b| row.id_with(b)));
    }
    ids
}

#[test]
fn every_standard_id_is_a_valid_weft_descriptor() {
    let ids = all_ids();
    assert_eq!(ids.len(), 865);
    for id in &ids {
        let d = descriptor(id);
        assert_eq!(d.id().as_str(), id);
        assert_eq!(d.version().to_string(), TAXONOMY_VERSION);
        assert_eq!(d.io_mode().as_str(), "unary");
        assert!(!d.title().contains('{'), "{id}: {}", d.title());
    }
}

#[test]
fn the_description_states_input_output_and_the_verification_rule() {
    for row in rows() {
        let s = standard(&row.example_id());
        let d = s.descriptor().unwrap();
        for part in [row.seed_input, row.seed_output, row.verification, row.notes] {
            assert!(d.description().contains(part), "{}: {part}", row.pattern);
        }
        assert!(d.description().contains(row.pattern));
        assert_eq!(d.annotations()[ANNOTATION_ROW], row.pattern);
        assert_eq!(d.annotations()[ANNOTATION_VERSION], TAXONOMY_VERSION);
        assert_eq!(d.annotations()[ANNOTATION_VERIFICATION], row.verification);
        let canonical = d.canonical_value();
        assert_eq!(canonical["input_schema"], s.input_schema());
        assert_eq!(canonical["output_schema"], s.output_schema());
    }
    let d = descriptor("text.translate.en.it.fluent");
    assert_eq!(d.title(), "Translate English text to Italian (fluent)");
    assert!(
        d.description()
            .contains("src = en (English), tgt = it (Italian), level = fluent"),
        "{}",
        d.description()
    );
    assert_eq!(descriptor("code.review.csharp").title(), "Review C# code");
    assert_eq!(descriptor("text.expand.1.5").title(), "Expand text 1.5×");
}

fn accepts(d: &Descriptor, role: SchemaRole, value: Value) -> bool {
    d.validate(role, &value, 10).is_ok()
}

#[test]
fn inputs_are_closed_and_outputs_open() {
    let d = descriptor("image.generate.photorealistic.png");
    let input = json!({"prompt": "a fox", "width": 512, "height": 512});
    assert!(accepts(&d, SchemaRole::Input, input.clone()));
    assert!(accepts(
        &d,
        SchemaRole::Input,
        json!({"prompt": "a fox", "width": 512, "height": 512, "seed": 7})
    ));
    assert!(!accepts(
        &d,
        SchemaRole::Input,
        json!({"prompt": "a fox", "width": 512, "height": 512, "extra": 1})
    ));
    assert!(!accepts(
        &d,
        SchemaRole::Input,
        json!({"prompt": "a fox", "width": 512})
    ));
    assert!(!accepts(
        &d,
        SchemaRole::Input,
        json!({"prompt": "a fox", "width": 1.5, "height": 2})
    ));
    let output = json!({"image_b64": "iVBORw0KGgo=", "width": 512, "height": 512});
    assert!(accepts(&d, SchemaRole::Output, output));
    assert!(accepts(
        &d,
        SchemaRole::Output,
        json!({"image_b64": "x", "width": 1, "height": 1, "model": "v2"})
    ));
    assert!(!accepts(
        &d,
        SchemaRole::Output,
        json!({"image_b64": "x", "width": 1})
    ));
}

#[test]
fn stated_limits_hold_at_their_boundaries() {
    let d = descriptor("code.execute.sandboxed");
    let run = |extra: Value| {
        let mut v = json!({"code": "print(1)"});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        accepts(&d, SchemaRole::Input, v)
    };
    assert!(run(json!({})));
    assert!(run(
        json!({"timeout_ms": 1, "language": "python", "stdin": ""})
    ));
    assert!(run(json!({"timeout_ms": 30000})));
    assert!(!run(json!({"timeout_ms": 30001})));
    assert!(!run(json!({"timeout_ms": 0})));
    assert!(!run(json!({"language": "javascript"})));
    let out = json!({"stdout": "1\n", "stderr": "", "exit_code": 0, "duration_ms": 12, "truncated": false});
    assert!(accepts(&d, SchemaRole::Output, out));
    assert!(!accepts(
        &d,
        SchemaRole::Output,
        json!({"stdout": "", "stderr": "", "exit_code": 0, "duration_ms": 1, "truncated": "no"})
    ));

    let d = descriptor("data.extract.from-url");
    let extract = |kb: Value, url: &str| {
        let mut v = json!({"url": url, "fields": ["title"]});
        if !kb.is_null() {
            v["max_response_kb"] = kb;
        }
        accepts(&d, SchemaRole::Input, v)
    };
    assert!(extract(Value::Null, "https://example.com/p"));
    assert!(extract(Value::Null, "http://example.com/p"));
    assert!(extract(json!(4096), "https://example.com"));
    assert!(!extract(json!(4097), "https://example.com"));
    assert!(!extract(json!(0), "https://example.com"));
    assert!(!extract(Value::Null, "file:///etc/passwd"));
    assert!(!extract(Value::Null, "ftp://example.com"));
}

#[test]
fn the_linkedin_profile_url_pattern() {
    let d = descriptor("research.linkedin.profile.enrich");
    let url = |u: &str| accepts(&d, SchemaRole::Input, json!({"profile_url": u}));
    assert!(url("https://linkedin.com/in/jane-doe"));
    assert!(url("https://www.linkedin.com/in/jane-doe/"));
    assert!(!url("http://linkedin.com/in/jane-doe"));
    assert!(!url("https://linkedin.com/company/acme"));
    assert!(!url("https://evil.com/linkedin.com/in/jane"));
    assert!(!url("https://wwwxlinkedin.com/in/jane"));
    let profile = json!({"profile": {"url": "https://linkedin.com/in/jane", "name": "Jane",
        "headline": null, "location": "Rome", "current_position": null, "company": null,
        "summary": null, "skills": ["rust"], "source": "proxycurl"}});
    assert!(accepts(&d, SchemaRole::Output, profile.clone()));
    let mut missing = profile;
    missing["profile"].as_object_mut().unwrap().remove("source");
    assert!(!accepts(&d, SchemaRole::Output, missing));
}

#[test]
fn bindings_shape_the_schemas_where_they_change_the_contract() {
    let geo = descriptor("data.lookup.weather.geojson");
    assert!(accepts(
        &geo,
        SchemaRole::Output,
        json!({"type": "FeatureCollection", "features": []})
    ));
    assert!(!accepts(
        &geo,
        SchemaRole::Output,
        json!({"type": "Weather"})
    ));
    // A bare geometry carries no weather record.
    assert!(!accepts(
        &geo,
        SchemaRole::Output,
        json!({"type": "Point", "coordinates": [12.5, 41.9]})
    ));
    let summary = descriptor("data.lookup.weather.summary-text");
    assert!(accepts(
        &summary,
        SchemaRole::Output,
        json!({"text": "Sunny, 21 °C"})
    ));
    assert!(!accepts(
        &summary,
        SchemaRole::Output,
        json!({"summary": "Sunny"})
    ));
    let json_weather = descriptor("data.lookup.weather.json");
    assert!(accepts(
        &json_weather,
        SchemaRole::Output,
        json!({"location": "Rome", "date": "2026-12-01", "temperature_c": 14.5,
               "conditions": "clear", "humidity": 0.6})
    ));
    // The record's fields are what verification checks, so the schema requires them.
    assert!(!accepts(
        &json_weather,
        SchemaRole::Output,
        json!({"anything": 1})
    ));

    let scrape = descriptor("data.scrape.example.com.json");
    let url = |u: &str| accepts(&scrape, SchemaRole::Input, json!({"url": u}));
    assert!(url("https://example.com/"));
    assert!(url("https://example.com"));
    assert!(url("https://www.example.com/a?b=c"));
    assert!(url("http://shop.example.com:8080/x"));
    assert!(!url("https://example.com.evil.net/"));
    assert!(!url("https://notexample.com/"));
    assert!(!url("https://evil.net/?u=example.com"));
    assert!(!url("https://example.com@evil.net/"));

    let code = standard("code.translate.python.rust").descriptor_value();
    assert_eq!(
        code["input_schema"]["properties"]["code"]["description"],
        "Python source code."
    );
    assert_eq!(
        code["output_schema"]["properties"]["code"]["description"],
        "Rust source code."
    );
}
