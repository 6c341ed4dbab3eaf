//! The hand-written compatibility matrix: the content-model combinations schema registries
//! get wrong, then one case per rule in `docs/compatibility.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use weft_compat::{Bump, Direction, Effect, Finding, allowed, compare, compare_schemas};
use weft_contract::{CapabilityVersion, Descriptor, Limits};

use Direction::{Input, Output};
use Effect::{Breaking, Compatible, Unknown};

/// The worst effect (compatible when nothing changed) and the findings.
fn check(dir: Direction, old: Value, new: Value) -> (Effect, Vec<Finding>) {
    let findings = compare_schemas(&old, &new, dir);
    let worst = findings
        .iter()
        .map(|f| f.effect)
        .max()
        .unwrap_or(Compatible);
    (worst, findings)
}

/// Asserts the worst effect and that a finding with that effect mentions every word.
#[track_caller]
fn expect(dir: Direction, old: Value, new: Value, effect: Effect, words: &[&str]) -> Vec<Finding> {
    let (worst, findings) = check(dir, old.clone(), new.clone());
    assert_eq!(worst, effect, "{dir:?} {old} -> {new}: {findings:#?}");
    if !words.is_empty() {
        assert!(
            findings
                .iter()
                .any(|f| f.effect == effect && words.iter().all(|w| f.reason.contains(w))),
            "{dir:?} {old} -> {new}: no {effect:?} finding mentions {words:?}: {findings:#?}"
        );
    }
    findings
}

fn bump(findings: &[Finding]) -> Bump {
    findings.iter().map(|f| f.bump).max().unwrap_or(Bump::None)
}

/// An object with a required string `a`, optionally `p: integer`, under a content model.
fn object(model: &str, with_p: bool, p_required: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"]
    });
    match model {
        "open" => {}
        "closed" => schema["additionalProperties"] = json!(false),
        "typed" => schema["additionalProperties"] = json!({"type": "string"}),
        "unevaluated" => schema["unevaluatedProperties"] = json!(false),
        _ => unreachable!(),
    }
    if with_p {
        schema["properties"]["p"] = json!({"type": "integer"});
        if p_required {
            schema["required"] = json!(["a", "p"]);
        }
    }
    schema
}

/// Content model × add/remove × required/optional × input/output: 32 cases.
#[test]
fn content_model_matrix() {
    // (model, add?, required?, input effect, output effect)
    let table = [
        ("open", true, false, Breaking, Compatible),
        ("open", true, true, Breaking, Compatible),
        ("open", false, false, Compatible, Breaking),
        ("open", false, true, Compatible, Breaking),
        ("closed", true, false, Compatible, Breaking),
        ("closed", true, true, Breaking, Breaking),
        ("closed", false, false, Breaking, Compatible),
        ("closed", false, true, Breaking, Breaking),
        ("typed", true, false, Breaking, Breaking),
        ("typed", true, true, Breaking, Breaking),
        ("typed", false, false, Breaking, Breaking),
        ("typed", false, true, Breaking, Breaking),
        ("unevaluated", true, false, Compatible, Breaking),
        ("unevaluated", true, true, Breaking, Breaking),
        ("unevaluated", false, false, Breaking, Compatible),
        ("unevaluated", false, true, Breaking, Breaking),
    ];
    let mut cases = 0;
    for (model, add, required, input, output) in table {
        let (without, with) = (object(model, false, false), object(model, true, required));
        let (old, new) = if add {
            (without, with)
        } else {
            (with, without)
        };
        for (dir, effect) in [(Input, input), (Output, output)] {
            let findings = expect(dir, old.clone(), new.clone(), effect, &["`p`"]);
            let keyword = match model {
                "unevaluated" => "unevaluatedProperties",
                "open" => "open",
                _ => "additionalProperties",
            };
            // A required property added to an input, or removed from an output, breaks
            // through `required` whatever the model.
            let through_required = required && effect == Breaking && (add == (dir == Input));
            let keyword = if through_required {
                "`required`"
            } else {
                keyword
            };
            assert!(
                findings
                    .iter()
                    .any(|f| f.effect == effect && f.reason.contains(keyword)),
                "{model} add={add} required={required} {dir:?}: no reason names {keyword}: {findings:#?}"
            );
            if effect == Compatible {
                assert_eq!(bump(&findings), Bump::Minor, "{findings:#?}");
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 32);
}

#[test]
fn property_paths_point_into_the_schema() {
    let findings = expect(
        Input,
        object("open", false, false),
        object("open", true, false),
        Breaking,
        &[],
    );
    assert!(
        findings
            .iter()
            .any(|f| f.path == "/properties/p" && f.change == "property_added")
    );
}

#[test]
fn integer_is_a_subset_of_number() {
    let (int, num) = (json!({"type": "integer"}), json!({"type": "number"}));
    let f = expect(Input, int.clone(), num.clone(), Compatible, &["`type`"]);
    assert_eq!(bump(&f), Bump::Minor);
    expect(
        Output,
        int.clone(),
        num.clone(),
        Breaking,
        &["`type`", "1.5"],
    );
    let f = expect(
        Input,
        num.clone(),
        int.clone(),
        Breaking,
        &["`type`", "1.5", "number", "integer"],
    );
    assert_eq!(f[0].path, "/type");
    assert_eq!(f[0].change, "type_narrowed");
    expect(Output, num, int, Compatible, &[]);
}

#[test]
fn type_changed_between_unrelated_types() {
    expect(
        Input,
        json!({"type": "string"}),
        json!({"type": "boolean"}),
        Breaking,
        &["`type`"],
    );
    expect(
        Output,
        json!({"type": "string"}),
        json!({"type": "boolean"}),
        Breaking,
        &["true"],
    );
}

#[test]
fn nested_property_type_change_names_the_instance_path() {
    let old = json!({"properties": {"age": {"type": "number"}}});
    let new = json!({"properties": {"age": {"type": "integer"}}});
    let f = expect(
        Input,
        old,
        new,
        Breaking,
        &["`/age` is 1.5", "was accepted and is now refused"],
    );
    assert_eq!(f[0].path, "/properties/age/type");
}

#[test]
fn required_added_and_removed() {
    let old = json!({"properties": {"a": {}, "b": {}}, "required": ["a"]});
    let new = json!({"properties": {"a": {}, "b": {}}, "required": ["a", "b"]});
    expect(
        Input,
        old.clone(),
        new.clone(),
        Breaking,
        &["`required`", "no property `b`"],
    );
    expect(
        Output,
        old.clone(),
        new.clone(),
        Compatible,
        &["`required`"],
    );
    expect(Input, new.clone(), old.clone(), Compatible, &["`required`"]);
    expect(
        Output,
        new,
        old,
        Breaking,
        &["`required`", "no property `b`"],
    );
}

#[test]
fn closing_and_opening_the_content_model() {
    let open = json!({"type": "object", "properties": {"a": {}}});
    let closed = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
    let f = expect(
        Input,
        open.clone(),
        closed.clone(),
        Breaking,
        &["closed", "additionalProperties"],
    );
    assert!(f.iter().any(|f| f.change == "content_model_closed"));
    expect(
        Output,
        open.clone(),
        closed.clone(),
        Compatible,
        &["closed"],
    );
    expect(Input, closed.clone(), open.clone(), Compatible, &["open"]);
    expect(Output, closed, open, Breaking, &["open"]);
    let uneval_closed = json!({"type": "object", "unevaluatedProperties": false});
    let uneval_open = json!({"type": "object", "unevaluatedProperties": true});
    expect(
        Input,
        uneval_closed.clone(),
        uneval_open.clone(),
        Compatible,
        &["unevaluatedProperties"],
    );
    expect(
        Output,
        uneval_closed,
        uneval_open,
        Breaking,
        &["unevaluatedProperties"],
    );
}

#[test]
fn unevaluated_properties_beside_applicators_is_unknown() {
    let old = json!({"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false});
    let new =
        json!({"allOf": [{"properties": {"a": {}, "b": {}}}], "unevaluatedProperties": false});
    expect(
        Output,
        old.clone(),
        new.clone(),
        Unknown,
        &["unevaluatedProperties"],
    );
    expect(Input, old, new, Unknown, &["unevaluatedProperties"]);
}

#[test]
fn enum_and_const() {
    let ab = json!({"enum": ["a", "b"]});
    let abc = json!({"enum": ["a", "b", "c"]});
    expect(Input, ab.clone(), abc.clone(), Compatible, &["`enum`"]);
    expect(
        Output,
        ab.clone(),
        abc.clone(),
        Breaking,
        &["`enum`", "\"c\""],
    );
    expect(
        Input,
        abc.clone(),
        ab.clone(),
        Breaking,
        &["\"c\"", "was accepted and is now refused"],
    );
    expect(
        Input,
        json!({"const": 1}),
        json!({"const": 2}),
        Breaking,
        &["`const`", "is 1"],
    );
    expect(
        Output,
        json!({"const": 1}),
        json!({"const": 2}),
        Breaking,
        &["`const`", "is 2"],
    );
    expect(
        Input,
        json!({"type": "string"}),
        ab.clone(),
        Breaking,
        &["`enum`"],
    );
    expect(
        Output,
        json!({"type": "string"}),
        ab.clone(),
        Compatible,
        &["`enum`"],
    );
    // Numbers compare by value.
    assert!(
        check(Input, json!({"enum": [1]}), json!({"enum": [1.0]}))
            .1
            .is_empty()
    );
}

#[test]
fn numeric_bounds() {
    let old = json!({"type": "number", "minimum": 0, "maximum": 10});
    let raised = json!({"type": "number", "minimum": 5, "maximum": 10});
    let f = expect(
        Input,
        old.clone(),
        raised.clone(),
        Breaking,
        &["`minimum`", "is 0"],
    );
    assert_eq!(f[0].path, "/minimum");
    expect(Output, old.clone(), raised, Compatible, &["`minimum`"]);
    let wider = json!({"type": "number", "minimum": 0, "maximum": 20});
    expect(
        Input,
        old.clone(),
        wider.clone(),
        Compatible,
        &["`maximum`"],
    );
    expect(
        Output,
        old.clone(),
        wider,
        Breaking,
        &["`maximum`", "is 20"],
    );
    let exclusive = json!({"type": "number", "exclusiveMinimum": 0, "maximum": 10});
    expect(
        Input,
        old,
        exclusive,
        Breaking,
        &["`exclusiveMinimum`", "is 0"],
    );
    // For integers, exclusiveMinimum 0 is minimum 1.
    let a = json!({"type": "integer", "exclusiveMinimum": 0});
    let b = json!({"type": "integer", "minimum": 1});
    assert!(check(Input, a.clone(), b.clone()).1.is_empty());
    assert!(check(Output, a, b).1.is_empty());
}

#[test]
fn multiple_of() {
    let m2 = json!({"type": "integer", "multipleOf": 2});
    let m4 = json!({"type": "integer", "multipleOf": 4});
    expect(Input, m4.clone(), m2.clone(), Compatible, &["`multipleOf`"]);
    expect(Input, m2, m4, Breaking, &["`multipleOf`", "is 2"]);
}

#[test]
fn string_length_bounds() {
    let old = json!({"type": "string", "maxLength": 10});
    let new = json!({"type": "string", "minLength": 1, "maxLength": 5});
    let f = expect(
        Input,
        old.clone(),
        new.clone(),
        Breaking,
        &["`maxLength`", "6 characters"],
    );
    assert!(
        f.iter()
            .any(|f| f.change == "min_length_tightened" && f.reason.contains("0 characters"))
    );
    expect(
        Output,
        old.clone(),
        new.clone(),
        Compatible,
        &["`maxLength`"],
    );
    expect(Input, new, old, Compatible, &["`minLength`"]);
}

#[test]
fn array_length_bounds() {
    let old = json!({"type": "array", "minItems": 1});
    let new = json!({"type": "array", "minItems": 2, "maxItems": 3});
    expect(
        Input,
        old.clone(),
        new.clone(),
        Breaking,
        &["`maxItems`", "4 items"],
    );
    expect(
        Output,
        old.clone(),
        new.clone(),
        Compatible,
        &["`minItems`"],
    );
    expect(Output, new, old, Breaking, &["`minItems`", "1 items"]);
}

#[test]
fn patterns() {
    let none = json!({"type": "string"});
    let digits = json!({"type": "string", "pattern": "^[0-9]+$"});
    let letters = json!({"type": "string", "pattern": "^[a-z]+$"});
    expect(
        Input,
        none.clone(),
        digits.clone(),
        Breaking,
        &["`pattern`", "not matching"],
    );
    expect(
        Output,
        none.clone(),
        digits.clone(),
        Compatible,
        &["`pattern`"],
    );
    expect(Input, digits.clone(), none, Compatible, &["`pattern`"]);
    expect(Input, digits, letters, Unknown, &["`pattern`", "regular"]);
}

#[test]
fn format() {
    let plain = json!({"type": "string"});
    let email = json!({"type": "string", "format": "email"});
    expect(
        Input,
        plain.clone(),
        email.clone(),
        Breaking,
        &["`format`", "`email`"],
    );
    expect(
        Input,
        email.clone(),
        plain.clone(),
        Compatible,
        &["`format`"],
    );
    expect(Output, email, plain, Breaking, &["`format`"]);
}

#[test]
fn items_and_prefix_items() {
    let ints = json!({"type": "array", "items": {"type": "integer"}});
    let nums = json!({"type": "array", "items": {"type": "number"}});
    let f = expect(
        Input,
        nums.clone(),
        ints.clone(),
        Breaking,
        &["`/0` is 1.5"],
    );
    assert_eq!(f[0].path, "/items/type");
    expect(Input, ints, nums, Compatible, &["`type`"]);
    let pair = json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false});
    let triple = json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}], "items": false});
    expect(Input, pair.clone(), triple.clone(), Compatible, &[]);
    expect(Output, pair.clone(), triple.clone(), Breaking, &["`/2`"]);
    let retyped = json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "string"}], "items": false});
    let f = expect(Input, pair, retyped, Breaking, &["`/1` is 1"]);
    assert_eq!(f[0].path, "/prefixItems/1/type");
}

#[test]
fn unique_items() {
    let plain = json!({"type": "array"});
    let unique = json!({"type": "array", "uniqueItems": true});
    expect(
        Input,
        plain.clone(),
        unique.clone(),
        Breaking,
        &["`uniqueItems`"],
    );
    expect(Output, plain, unique, Compatible, &["`uniqueItems`"]);
}

#[test]
fn one_of_any_of_all_of_branches() {
    let one = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
    let more = json!({"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]});
    let f = expect(Input, one.clone(), more.clone(), Compatible, &["`oneOf`"]);
    assert!(
        f.iter()
            .any(|f| f.change == "one_of_branch_added" && f.path == "/oneOf/2")
    );
    expect(Output, one.clone(), more.clone(), Breaking, &["`oneOf`"]);
    let any = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
    let fewer = json!({"anyOf": [{"type": "string"}]});
    expect(Input, any.clone(), fewer.clone(), Breaking, &["`anyOf`"]);
    expect(Output, any, fewer, Compatible, &["`anyOf`"]);
    let base = json!({"type": "integer", "allOf": [{"minimum": 0}]});
    let more_all = json!({"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 9}]});
    expect(
        Input,
        base.clone(),
        more_all.clone(),
        Breaking,
        &["`allOf`", "is 10"],
    );
    expect(Output, base, more_all, Compatible, &["`allOf`"]);
    // Overlapping oneOf branches: adding one may make a value match two.
    let overlap = json!({"oneOf": [{"type": "number"}, {"minimum": 5}]});
    let overlap2 = json!({"oneOf": [{"type": "number"}, {"minimum": 5}, {"type": "integer"}]});
    expect(Input, overlap, overlap2, Unknown, &["`oneOf`"]);
}

#[test]
fn refs_are_followed_and_cycles_end() {
    let old = json!({
        "$defs": {"age": {"type": "number"}},
        "properties": {"age": {"$ref": "#/$defs/age"}}
    });
    let new = json!({
        "$defs": {"age": {"type": "integer"}},
        "properties": {"age": {"$ref": "#/$defs/age"}}
    });
    let f = expect(Input, old, new, Breaking, &["`/age` is 1.5"]);
    assert_eq!(f[0].path, "/$defs/age/type");
    let tree = |leaf: &str| {
        json!({
            "$defs": {"node": {"type": "object", "properties": {
                "value": {"type": leaf},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }}},
            "$ref": "#/$defs/node"
        })
    };
    expect(Input, tree("integer"), tree("number"), Compatible, &[]);
    expect(
        Input,
        tree("number"),
        tree("integer"),
        Breaking,
        &["`/value` is 1.5"],
    );
    // Anchor references are not followed: unknown, never compatible.
    let anchored = json!({"$defs": {"a": {"$anchor": "x", "type": "string"}}, "$ref": "#x"});
    expect(
        Input,
        anchored,
        json!({"type": "string"}),
        Unknown,
        &["`$ref`"],
    );
}

#[test]
fn nullable_style_unions() {
    let nullable = json!({"type": ["string", "null"]});
    let plain = json!({"type": "string"});
    expect(Input, nullable.clone(), plain.clone(), Breaking, &["null"]);
    expect(Output, nullable.clone(), plain.clone(), Compatible, &[]);
    expect(Output, plain.clone(), nullable, Breaking, &["null"]);
    let union = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    expect(Input, plain.clone(), union.clone(), Compatible, &[]);
    expect(Output, plain.clone(), union.clone(), Breaking, &["null"]);
    expect(Input, union.clone(), plain.clone(), Breaking, &["null"]);
    expect(Output, union, plain, Compatible, &[]);
}

#[test]
fn unanalysed_keywords_are_unknown() {
    let old = json!({"not": {"type": "string"}});
    let new = json!({"not": {"type": "number"}});
    expect(Input, old.clone(), new.clone(), Unknown, &["`not`"]);
    expect(Output, old, new, Unknown, &["`not`"]);
    let a = json!({"patternProperties": {"^x": {}}});
    let b = json!({"patternProperties": {"^y": {}}});
    expect(Input, a, b, Unknown, &["patternProperties"]);
}

#[test]
fn schema_annotations_are_documentation() {
    let old = json!({"type": "string", "description": "a name"});
    let new = json!({"type": "string", "description": "the name", "examples": ["x"]});
    let f = expect(Input, old, new, Compatible, &["`description`"]);
    assert_eq!(bump(&f), Bump::Patch);
    assert!(f.iter().all(Finding::is_documentation));
}

fn descriptor(patch: Value) -> Descriptor {
    let mut base = json!({
        "id": "demo", "version": "1.0.0", "title": "Demo", "description": "A demo.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "output_schema": {"type": "object", "properties": {"text": {"type": "string"}}}
    });
    for (k, v) in patch.as_object().unwrap() {
        if v.is_null() {
            base.as_object_mut().unwrap().remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    Descriptor::from_value(&base, &Limits::default()).unwrap()
}

#[test]
fn descriptor_documentation_is_patch() {
    let old = descriptor(json!({}));
    let new =
        descriptor(json!({"title": "Demo!", "description": "Better.", "annotations": {"k": "v"}}));
    let report = compare(&old, &new);
    assert_eq!(report.required_bump, Bump::Patch, "{report:#?}");
    let paths: Vec<&str> = report.findings.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["/title", "/description", "/annotations/k"]);
    assert_eq!(compare(&old, &old).required_bump, Bump::None);
    assert!(compare(&old, &old).findings.is_empty());
}

#[test]
fn io_mode_and_chunk_schemas() {
    let old = descriptor(json!({}));
    let new = descriptor(
        json!({"io_mode": "server_streaming", "output_chunk_schema": {"type": "object"}}),
    );
    let report = compare(&old, &new);
    assert_eq!(report.required_bump, Bump::Major);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.path == "/io_mode" && f.effect == Breaking)
    );
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.change == "chunk_schema_added")
    );
    let chunks = |schema: Value| {
        descriptor(json!({"io_mode": "server_streaming", "output_chunk_schema": schema}))
    };
    let report = compare(
        &chunks(json!({"type": "number"})),
        &chunks(json!({"type": "integer"})),
    );
    assert_eq!(report.required_bump, Bump::Minor, "{report:#?}");
    assert_eq!(report.findings[0].path, "/output_chunk_schema/type");
    assert!(report.findings[0].reason.contains("output chunk"));
}

#[test]
fn output_schema_presence() {
    let without = descriptor(json!({"output_schema": null}));
    let with = descriptor(json!({}));
    assert_eq!(compare(&without, &with).required_bump, Bump::Minor);
    let report = compare(&with, &without);
    assert_eq!(report.required_bump, Bump::Major, "{report:#?}");
}

#[test]
fn version_policy() {
    let v = |s: &str| CapabilityVersion::parse(s).unwrap();
    let old = descriptor(json!({}));
    let minor = descriptor(json!({"input_schema": {"type": "object"}}));
    let report = compare(&old, &minor);
    assert_eq!(report.required_bump, Bump::Minor, "{report:#?}");
    assert!(allowed(&v("1.0.0"), &v("1.1.0"), &report));
    assert!(allowed(&v("1.0.0"), &v("2.0.0"), &report));
    assert!(!allowed(&v("1.0.0"), &v("1.0.1"), &report));
    assert!(!allowed(&v("1.1.0"), &v("1.0.0"), &report));
    let breaking = compare(&minor, &old);
    assert!(!allowed(&v("1.0.0"), &v("1.9.0"), &breaking));
    assert!(allowed(&v("1.0.0"), &v("2.0.0"), &breaking));
    // Before 1.0, a minor step is the major one.
    assert!(allowed(&v("0.1.0"), &v("0.2.0"), &breaking));
    assert!(!allowed(&v("0.1.0"), &v("0.1.1"), &breaking));
    let same = compare(&old, &old);
    assert!(allowed(&v("1.0.0"), &v("1.0.0"), &same));
}
