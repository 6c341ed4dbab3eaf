//! `weft serve`: the standard capability taxonomy over real HTTP — `GET /v1/taxonomy`,
//! `GET /v1/taxonomy/{id}` — and the publish binding in both modes (docs/taxonomy.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Node, Resp, assert_error, descriptor, serve_expecting_exit, tempdir};
use serde_json::{Value, json};

const PHOTO: &str = "image.generate.photorealistic.png";

fn patterns(body: &Value) -> Vec<String> {
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pattern"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_rows_are_listed_in_pages_and_by_domain() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();

    let first = node.get("/v1/taxonomy", &admin);
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body["taxonomy_version"], "0.1.0");
    assert_eq!(first.body["spec"], "swarmwage/v0.1");
    assert_eq!(first.body["domains"].as_array().unwrap().len(), 11);
    assert_eq!(patterns(&first.body).len(), 25);
    assert_eq!(first.body["hasMore"], true);
    let cursor = first.body["nextCursor"].as_str().unwrap();
    let second = node.get(&format!("/v1/taxonomy?cursor={cursor}"), &admin);
    assert_eq!(second.status, 200, "{}", second.text);
    assert_eq!(second.body["hasMore"], false);
    assert_eq!(second.body["nextCursor"], Value::Null);
    let mut all = patterns(&first.body);
    all.extend(patterns(&second.body));
    let expected: Vec<String> = weft_taxonomy::rows()
        .iter()
        .map(|r| r.pattern.to_owned())
        .collect();
    assert_eq!(all, expected, "every row once, in the seed's order");

    // Small pages walk the same rows.
    let mut walked = Vec::new();
    let mut path = "/v1/taxonomy?limit=7".to_owned();
    loop {
        let page = node.get(&path, &admin);
        assert_eq!(page.status, 200, "{}", page.text);
        walked.extend(patterns(&page.body));
        match page.body["nextCursor"].as_str() {
            Some(c) => path = format!("/v1/taxonomy?limit=7&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(walked, expected);

    let code = node.get("/v1/taxonomy?domain=code&limit=100", &admin);
    assert_eq!(code.status, 200);
    assert_eq!(patterns(&code.body).len(), 6);
    assert!(patterns(&code.body).iter().all(|p| p.starts_with("code.")));
    let exec = node.get("/v1/taxonomy?domain=exec", &admin);
    assert_eq!((exec.status, exec.body["rows"].clone()), (200, json!([])));
    assert_eq!(exec.body["hasMore"], false);

    let transcribe = &first.body["rows"][7];
    assert_eq!(transcribe["pattern"], "audio.transcribe.{lang}.text");
    assert_eq!(transcribe["domain"], "audio");
    assert_eq!(transcribe["action"], "transcribe");
    assert_eq!(transcribe["example_id"], "audio.transcribe.en.text");
    assert_eq!(
        transcribe["verification"],
        "non-empty; language detected = `lang`"
    );
    let lang = &transcribe["placeholders"][0];
    assert_eq!(
        (&lang["name"], &lang["set"], &lang["kind"]),
        (&json!("lang"), &json!("iso-639-1"), &json!("closed"))
    );
    assert_eq!(lang["values"].as_array().unwrap().len(), 11);
    assert_eq!(transcribe["input_schema"]["required"], json!(["audio_url"]));

    for bad in [
        "/v1/taxonomy?domain=video",
        "/v1/taxonomy?domain=custom",
        "/v1/taxonomy?limit=0",
        "/v1/taxonomy?limit=101",
        "/v1/taxonomy?cursor=zz",
        "/v1/taxonomy?cursor=6e6f7065",
        "/v1/taxonomy?q=image",
    ] {
        assert_error(&node.get(bad, &admin), 400, "invalid_request");
    }
    // A cursor from another domain's listing does not resume this one.
    let other = node.get(&format!("/v1/taxonomy?domain=code&cursor={cursor}"), &admin);
    assert_error(&other, 400, "invalid_request");

    // Read scope, like every read route.
    assert_error(
        &node.call("GET", "/v1/taxonomy", None, None, &[]),
        401,
        "unauthorized",
    );
    let caller = node.token(&admin, None, &["capabilities:call"]);
    assert_error(&node.get("/v1/taxonomy", &caller), 403, "forbidden");
    assert_error(
        &node.get("/v1/taxonomy/text.rewrite.formal", &caller),
        403,
        "forbidden",
    );
    let reader = node.token(&admin, None, &["capabilities:read"]);
    assert_eq!(
        node.get("/v1/taxonomy/text.rewrite.formal", &reader).status,
        200
    );
}

fn reason(r: &Resp) -> &Value {
    &r.body["error"]["details"]["reason"]
}

#[test]
fn one_id_is_standard_custom_malformed_or_not_in_the_taxonomy() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();

    let r = node.get("/v1/taxonomy/text.translate.en.it.fluent", &admin);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["id"], "text.translate.en.it.fluent");
    assert_eq!(r.body["taxonomy_version"], "0.1.0");
    assert_eq!(
        r.body["classification"],
        json!({"kind": "standard", "row": "text.translate.{src}.{tgt}.{level}",
               "bindings": {"src": "en", "tgt": "it", "level": "fluent"}})
    );
    assert_eq!(
        r.body["verification"],
        "non-empty; length 0.3×–3× of input; language detected = `tgt`"
    );
    let d = &r.body["descriptor"];
    assert_eq!((&d["id"], &d["version"]), (&r.body["id"], &json!("0.1.0")));
    assert_eq!(d["title"], "Translate English text to Italian (fluent)");
    assert_eq!(
        d["annotations"]["taxonomy.row"],
        "text.translate.{src}.{tgt}.{level}"
    );

    let r = node.get("/v1/taxonomy/custom.acme.handwriting-ocr", &admin);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"id": "custom.acme.handwriting-ocr", "taxonomy_version": "0.1.0",
               "classification": {"kind": "custom", "provider": "acme",
                                  "capability": "handwriting-ocr"}})
    );

    for (id, code, segment) in [
        ("Image.generate.photorealistic.png", "uppercase", json!(0)),
        ("image..png", "empty_segment", json!(1)),
        ("image.generate:x", "bad_character", json!(1)),
        ("custom.acme", "custom_incomplete", Value::Null),
        ("image", "missing_action", json!(0)),
    ] {
        let r = node.get(&format!("/v1/taxonomy/{id}"), &admin);
        assert_error(&r, 400, "invalid_request");
        assert_eq!(r.body["error"]["details"]["id"], id);
        assert_eq!(reason(&r)["code"], code, "{id}");
        assert_eq!(reason(&r)["malformed"], true, "{id}");
        assert_eq!(
            reason(&r).get("segment").cloned().unwrap_or(Value::Null),
            segment
        );
    }
    let long = format!("custom.acme.{}", "a".repeat(117));
    let r = node.get(&format!("/v1/taxonomy/{long}"), &admin);
    assert_error(&r, 400, "invalid_request");
    assert_eq!(reason(&r)["code"], "too_long");

    for (id, code) in [
        ("image.generate.cartoon.png", "no_matching_row"),
        ("audio.transcribe.xx.text", "placeholder_value"),
        ("text.translate.en.en.fluent", "same_value"),
        ("image.resize.png", "unknown_action"),
        ("exec.run", "empty_domain"),
        ("echo", "unknown_domain"),
    ] {
        let r = node.get(&format!("/v1/taxonomy/{id}"), &admin);
        assert_error(&r, 404, "not_found");
        assert_eq!(reason(&r)["code"], code, "{id}");
        assert_eq!(reason(&r)["malformed"], false, "{id}");
        assert!(r.body["error"]["message"].as_str().unwrap().contains(id));
    }
    let r = node.get("/v1/taxonomy/audio.transcribe.xx.text", &admin);
    assert_eq!(reason(&r)["segment"], 2);
    assert!(
        reason(&r)["message"]
            .as_str()
            .unwrap()
            .contains("must use custom.<provider>.<capability>")
    );
}

/// A seller's descriptor for `PHOTO`: its own version and wording, the standard contract.
fn seller() -> Value {
    json!({
        "id": PHOTO, "version": "3.1.0", "title": "Fox Photo",
        "description": "Photorealistic PNGs by Fox Labs.",
        "input_schema": {"type": "object", "properties": {
            "prompt": {"type": "string"}, "width": {"type": "integer"},
            "height": {"type": "integer"}, "seed": {"type": "integer"},
            "negative_prompt": {"type": "string"}},
            "required": ["prompt", "width", "height"]},
        "output_schema": {"type": "object", "properties": {
            "image_b64": {"type": "string"}, "width": {"type": "integer"},
            "height": {"type": "integer"}, "model": {"type": "string"}},
            "required": ["image_b64", "width", "height", "model"]}
    })
}

fn problems(r: &Resp) -> &Vec<Value> {
    r.body["error"]["details"]["problems"].as_array().unwrap()
}

#[test]
fn publishing_a_standard_id_must_honour_the_standard_contract() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();

    // The standard descriptor itself, as the API serves it.
    let standard = node.get(&format!("/v1/taxonomy/{PHOTO}"), &admin).body["descriptor"].clone();
    let r = node.register(&admin, "std", "n1", &[standard]);
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.body.get("warnings").is_none(), "{}", r.text);

    // A seller's compatible descriptor: accepts more, promises more.
    let r = node.register(&admin, "fox", "n1", &[seller()]);
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(node.pin(&admin, PHOTO, "3.1.0").len(), 71);

    // Too narrow an input: a width bound the standard does not have.
    let mut narrow = seller();
    narrow["input_schema"]["properties"]["width"]["maximum"] = json!(2048);
    let r = node.register(&admin, "narrow", "n1", &[narrow]);
    assert_error(&r, 422, "taxonomy_mismatch");
    let p = &problems(&r)[0];
    assert_eq!(
        p["pointer"],
        "/descriptors/0/input_schema/properties/width/maximum"
    );
    assert_eq!(
        (&p["index"], &p["id"], &p["row"]),
        (&json!(0), &json!(PHOTO), &json!(PHOTO))
    );
    assert_eq!(p["effect"], "breaking");
    assert!(p["code"].as_str().is_some_and(|c| !c.is_empty()));
    assert!(p["message"].as_str().unwrap().contains("2048"), "{p}");
    assert_error(&node.get("/v1/providers/narrow", &admin), 404, "not_found");

    // A required output field the seller does not promise.
    let mut missing = seller();
    missing["output_schema"]["required"] = json!(["image_b64", "width"]);
    let r = node.register(&admin, "missing", "n1", &[missing]);
    assert_error(&r, 422, "taxonomy_mismatch");
    assert!(
        problems(&r).iter().all(|p| p["pointer"]
            .as_str()
            .unwrap()
            .starts_with("/descriptors/0/output_schema")),
        "{}",
        r.text
    );
    // No output schema at all promises nothing.
    let mut none = seller();
    none.as_object_mut().unwrap().remove("output_schema");
    assert_error(
        &node.register(&admin, "none", "n1", &[none]),
        422,
        "taxonomy_mismatch",
    );

    // One bad descriptor refuses the whole set, and names its index.
    let mut bad = seller();
    bad["output_schema"]["properties"]["width"] = json!({"type": "number"});
    let r = node.register(
        &admin,
        "batch",
        "n1",
        &[descriptor("echo", "1.0.0", "Echo"), bad],
    );
    assert_error(&r, 422, "taxonomy_mismatch");
    assert!(problems(&r).iter().all(|p| p["index"] == 1), "{}", r.text);
    assert_error(&node.get("/v1/providers/batch", &admin), 404, "not_found");

    // Contract rules come first: an invalid descriptor is invalid_descriptor.
    let mut broken = seller();
    broken["version"] = json!("1.0");
    assert_error(
        &node.register(&admin, "broken", "n1", &[broken]),
        422,
        "invalid_descriptor",
    );
}

fn plain(id: &str) -> Value {
    descriptor(id, "1.0.0", "Plain")
}

#[test]
fn advisory_mode_accepts_non_standard_ids_with_a_warning() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let r = node.register(
        &admin,
        "mixed",
        "n1",
        &[
            plain("echo"),
            plain("image.generate.cartoon.png"),
            plain("custom.acme.ocr"),
            plain("exec.shell"),
        ],
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let warnings = r.body["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{}", r.text);
    assert_eq!(
        (
            &warnings[0]["index"],
            &warnings[0]["id"],
            &warnings[0]["pointer"],
            &warnings[0]["code"]
        ),
        (
            &json!(1),
            &json!("image.generate.cartoon.png"),
            &json!("/descriptors/1/id"),
            &json!("no_matching_row")
        )
    );
    assert!(
        warnings[0]["message"]
            .as_str()
            .unwrap()
            .contains("must use custom.")
    );
    assert_eq!(
        (&warnings[1]["index"], &warnings[1]["code"]),
        (&json!(3), &json!("empty_domain"))
    );
    // Everything was published.
    let provider = node.get("/v1/providers/mixed", &admin);
    assert_eq!(provider.body["descriptors"].as_array().unwrap().len(), 4);
    // Schema problems of a standard id are refused in advisory mode too.
    let mut narrow = seller();
    narrow["input_schema"]["required"] = json!(["prompt", "width", "height", "seed"]);
    assert_error(
        &node.register(&admin, "narrow", "n1", &[narrow]),
        422,
        "taxonomy_mismatch",
    );
}

#[test]
fn enforced_mode_refuses_non_standard_ids_in_the_namespace() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--taxonomy", "enforced"]);
    let admin = node.admin();
    let r = node.register(
        &admin,
        "mixed",
        "n1",
        &[
            plain("echo"),
            plain("image.generate.cartoon.png"),
            plain("custom.acme"),
        ],
    );
    assert_error(&r, 422, "taxonomy_mismatch");
    let found: Vec<(Value, Value, Value)> = problems(&r)
        .iter()
        .map(|p| (p["index"].clone(), p["pointer"].clone(), p["code"].clone()))
        .collect();
    assert_eq!(
        found,
        [
            (
                json!(1),
                json!("/descriptors/1/id"),
                json!("no_matching_row")
            ),
            (
                json!(2),
                json!("/descriptors/2/id"),
                json!("custom_incomplete")
            ),
        ]
    );
    assert_error(&node.get("/v1/providers/mixed", &admin), 404, "not_found");
    let ok = node.register(
        &admin,
        "fine",
        "n1",
        &[plain("echo"), plain("custom.acme.ocr"), seller()],
    );
    assert_eq!(ok.status, 201, "{}", ok.text);
    assert!(ok.body.get("warnings").is_none());
}

#[test]
fn the_mode_is_a_checked_setting() {
    let dir = tempdir();
    let (status, stderr) = serve_expecting_exit(&dir.path().join("a"), &["--taxonomy", "strict"]);
    assert!(!status.success());
    assert!(
        stderr.contains("invalid taxonomy mode \"strict\""),
        "{stderr}"
    );
    let config = dir.path().join("weft.toml");
    std::fs::write(&config, "taxonomy = \"strict\"\n").unwrap();
    let (status, stderr) = serve_expecting_exit(
        &dir.path().join("b"),
        &["--config", config.to_str().unwrap()],
    );
    assert!(!status.success());
    assert!(stderr.contains("1:12"), "{stderr}");
    // The config file sets it too; the flag wins over the file.
    std::fs::write(&config, "taxonomy = \"enforced\"\n").unwrap();
    let node = Node::start(
        &dir.path().join("c"),
        &["--config", config.to_str().unwrap()],
    );
    let admin = node.admin();
    assert_error(
        &node.register(&admin, "p", "n1", &[plain("image.resize")]),
        422,
        "taxonomy_mismatch",
    );
    drop(node);
    let node = Node::start(
        &dir.path().join("d"),
        &[
            "--config",
            config.to_str().unwrap(),
            "--taxonomy",
            "advisory",
        ],
    );
    let admin = node.admin();
    let r = node.register(&admin, "p", "n1", &[plain("image.resize")]);
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["warnings"][0]["code"], "unknown_action");
}

/// A managed child that announces `descriptors` and answers pings (protocol 1).
const ANNOUNCER: &str = r#"
import json, sys
json.loads(sys.stdin.readline())
print(json.dumps({"type": "ready", "protocol": 1, "descriptors": json.loads(sys.argv[1])}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "ping":
        print(json.dumps({"type": "pong", "id": message["id"]}), flush=True)
"#;

#[test]
fn managed_children_meet_the_same_binding() {
    let dir = tempdir();
    let script = dir.path().join("announcer.py");
    std::fs::write(&script, ANNOUNCER).unwrap();
    let mut off_standard = descriptor("text.rewrite.casual", "1.0.0", "Casual");
    off_standard["output_schema"] = json!({"type": "object"});
    let entry = |id: &str, descriptors: &[Value]| {
        let command = json!([
            "python3",
            script.to_str().unwrap(),
            Value::Array(descriptors.to_vec()).to_string()
        ]);
        format!("[[managed]]\nid = \"{id}\"\ncommand = {command}\n")
    };
    let config = dir.path().join("weft.toml");
    std::fs::write(
        &config,
        format!(
            "taxonomy = \"enforced\"\n{}{}{}",
            entry("good", &[plain("custom.acme.ocr")]),
            entry("off", &[off_standard]),
            entry("odd", &[plain("image.resize")]),
        ),
    )
    .unwrap();
    let node = Node::start(
        &dir.path().join("data"),
        &["--config", config.to_str().unwrap()],
    );
    let admin = node.admin();
    assert_eq!(node.pin(&admin, "custom.acme.ocr", "1.0.0").len(), 71);
    let refused = |provider: &str| {
        harness::poll(std::time::Duration::from_secs(15), || {
            let log = node.stderr();
            log.lines()
                .any(|l| l.contains("managed provider not registered") && l.contains(provider))
                .then_some(())
        })
        .is_some()
    };
    assert!(refused("off"), "{}", node.stderr());
    assert!(refused("odd"), "{}", node.stderr());
    assert!(
        node.stderr().contains("taxonomy_mismatch"),
        "{}",
        node.stderr()
    );
    assert_error(&node.get("/v1/providers/off", &admin), 404, "not_found");
    assert_error(&node.get("/v1/providers/odd", &admin), 404, "not_found");
}
