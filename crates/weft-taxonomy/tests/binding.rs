//! The publish binding: standard ids must honour the standard contract; ids in the
//! namespace that are not taxonomy ids are refused (enforced) or warned about (advisory).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use weft_compat::Effect;
use weft_contract::{Descriptor, Limits};
use weft_taxonomy::{Binding, BindingError, BindingMode, Resolution, bind, resolve};

const ID: &str = "image.generate.photorealistic.png";

fn build(value: &Value) -> Descriptor {
    Descriptor::from_value(value, &Limits::default()).unwrap()
}

/// A seller's own descriptor for `ID`: its own version, title and wording.
fn seller(input: Value, output: Option<Value>) -> Value {
    let mut d = json!({
        "id": ID, "version": "2.3.0", "title": "Fox Photo",
        "description": "Photorealistic images by Fox Labs.",
        "input_schema": input,
    });
    if let Some(output) = output {
        d["output_schema"] = output;
    }
    d
}

fn standard_input() -> Value {
    json!({"type": "object", "properties": {
        "prompt": {"type": "string"}, "width": {"type": "integer"},
        "height": {"type": "integer"}, "seed": {"type": "integer"}},
        "required": ["prompt", "width", "height"], "additionalProperties": false})
}

fn standard_output() -> Value {
    json!({"type": "object", "properties": {
        "image_b64": {"type": "string"}, "width": {"type": "integer"},
        "height": {"type": "integer"}},
        "required": ["image_b64", "width", "height"]})
}

fn mismatch(value: &Value) -> Vec<weft_compat::Finding> {
    match bind(&build(value), BindingMode::Advisory) {
        Err(BindingError::SchemaMismatch { id, row, findings }) => {
            assert_eq!((id.as_str(), row), (ID, ID));
            assert!(!findings.is_empty());
            assert!(findings.iter().all(|f| f.effect != Effect::Compatible));
            findings
        }
        other => panic!("expected a schema mismatch, got {other:?}"),
    }
}

#[test]
fn the_standard_descriptor_itself_conforms() {
    let Resolution::Standard(s) = resolve(ID) else {
        panic!()
    };
    let d = s.descriptor().unwrap();
    assert!(matches!(
        bind(&d, BindingMode::Enforced),
        Ok(Binding::Standard(ref b)) if b.row.pattern == ID
    ));
}

#[test]
fn a_compatible_seller_descriptor_is_accepted() {
    // Same contract, different wording and version.
    let same = seller(standard_input(), Some(standard_output()));
    assert!(matches!(
        bind(&build(&same), BindingMode::Enforced),
        Ok(Binding::Standard(_))
    ));
    // Accepts more (open input, an extra optional field, widened numbers), promises more
    // (a closed output with an extra required field, a narrower width).
    let mut wider = standard_input();
    wider["properties"]["width"] = json!({"type": "number"});
    wider["properties"]["style"] = json!({"type": "string"});
    wider
        .as_object_mut()
        .unwrap()
        .remove("additionalProperties");
    let mut narrower = standard_output();
    narrower["properties"]["width"] = json!({"type": "integer", "minimum": 1});
    narrower["properties"]["seed_used"] = json!({"type": "integer"});
    narrower["required"] = json!(["image_b64", "width", "height", "seed_used"]);
    narrower["additionalProperties"] = json!(false);
    let ok = seller(wider, Some(narrower));
    assert!(matches!(
        bind(&build(&ok), BindingMode::Enforced),
        Ok(Binding::Standard(_))
    ));
}

#[test]
fn a_too_narrow_input_is_refused_with_its_findings() {
    let mut narrow = standard_input();
    narrow["properties"]["width"] = json!({"type": "integer", "maximum": 1024});
    let findings = mismatch(&seller(narrow, Some(standard_output())));
    assert!(
        findings
            .iter()
            .any(|f| f.path == "/input_schema/properties/width/maximum"),
        "{findings:?}"
    );
    // Dropping the optional `seed` from a closed input refuses payloads with a seed.
    let mut no_seed = standard_input();
    no_seed["properties"]
        .as_object_mut()
        .unwrap()
        .remove("seed");
    let findings = mismatch(&seller(no_seed, Some(standard_output())));
    assert!(
        findings[0].path.starts_with("/input_schema"),
        "{findings:?}"
    );
    // Requiring a field the standard does not send.
    let mut extra_required = standard_input();
    extra_required["properties"]["api_key"] = json!({"type": "string"});
    extra_required["required"] = json!(["prompt", "width", "height", "api_key"]);
    mismatch(&seller(extra_required, Some(standard_output())));
}

#[test]
fn a_missing_required_output_field_is_refused() {
    let mut output = standard_output();
    output["required"] = json!(["image_b64", "width"]);
    let findings = mismatch(&seller(standard_input(), Some(output)));
    assert!(
        findings
            .iter()
            .any(|f| f.path.starts_with("/output_schema")),
        "{findings:?}"
    );
    // An incompatible type for a required field.
    let mut output = standard_output();
    output["properties"]["width"] = json!({"type": "string"});
    mismatch(&seller(standard_input(), Some(output)));
    // No output schema promises nothing.
    let findings = mismatch(&seller(standard_input(), None));
    assert!(
        findings[0].path.starts_with("/output_schema"),
        "{findings:?}"
    );
}

#[test]
fn the_io_mode_must_be_unary() {
    let mut streaming = seller(standard_input(), Some(standard_output()));
    streaming["io_mode"] = json!("server_streaming");
    streaming["output_chunk_schema"] = json!({"type": "object"});
    let findings = mismatch(&streaming);
    assert!(
        findings.iter().any(|f| f.change == "io_mode_changed"),
        "{findings:?}"
    );
}

#[test]
fn non_standard_ids_in_the_namespace_follow_the_mode() {
    let plain = |id: &str| {
        build(
            &json!({"id": id, "version": "1.0.0", "title": "T", "description": "D",
                      "input_schema": {"type": "object"}}),
        )
    };
    for (id, code) in [
        ("image.generate.cartoon.png", "no_matching_row"),
        ("image.resize", "unknown_action"),
        ("exec.shell", "empty_domain"),
        ("text.translate.en.en.fluent", "same_value"),
        ("custom.acme", "custom_incomplete"),
        ("image", "missing_action"),
    ] {
        match bind(&plain(id), BindingMode::Enforced) {
            Err(BindingError::NonStandard(invalid)) => {
                assert_eq!((invalid.id.as_str(), invalid.reason.code()), (id, code));
            }
            other => panic!("{id}: {other:?}"),
        }
        match bind(&plain(id), BindingMode::Advisory) {
            Ok(binding @ Binding::NonStandard(_)) => {
                assert_eq!(binding.warning().unwrap().reason.code(), code);
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    // Outside the namespace, and custom ids, are never checked.
    for mode in BindingMode::ALL {
        assert_eq!(bind(&plain("echo"), mode).unwrap(), Binding::Outside);
        assert_eq!(bind(&plain("imagery.x"), mode).unwrap(), Binding::Outside);
        assert_eq!(
            bind(&plain("feature:json-mode"), mode).unwrap(),
            Binding::Outside
        );
        assert!(matches!(
            bind(&plain("custom.acme.ocr"), mode),
            Ok(Binding::Custom(c)) if c.provider == "acme"
        ));
    }
}

#[test]
fn modes_parse_and_default_to_advisory() {
    assert_eq!(BindingMode::default(), BindingMode::Advisory);
    for mode in BindingMode::ALL {
        assert_eq!(BindingMode::parse(mode.as_str()), Some(mode));
    }
    assert_eq!(BindingMode::parse("strict"), None);
}
