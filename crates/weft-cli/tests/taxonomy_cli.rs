//! `weft taxonomy list|show|check`, run as the real binary (offline: no node), and
//! `weft publish` meeting the taxonomy binding of a real node.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_remote;

use common_remote::{Node, run};
use serde_json::{Value, json};

#[test]
fn list_prints_every_row_and_the_placeholders() {
    let out = run(&["taxonomy", "list"], &[]);
    let stdout = out.ok();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("ROW") && lines[0].contains("EXAMPLE"),
        "{stdout}"
    );
    let rows: Vec<&str> = lines[1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows.len(), 40, "{stdout}");
    assert_eq!(rows[0], "image.generate.photorealistic.png");
    assert_eq!(rows[39], "research.linkedin.profile.enrich");
    assert!(
        stdout.contains("audio.transcribe.{lang}.text  "),
        "{stdout}"
    );
    assert!(stdout.contains("audio.transcribe.en.text"), "{stdout}");
    assert!(
        stdout.contains("{lang} {src} {tgt}: an ISO 639-1 code"),
        "{stdout}"
    );
    assert!(
        stdout.contains("{factor}: a decimal number above 1"),
        "{stdout}"
    );

    let code = run(&["taxonomy", "list", "--domain", "code"], &[]);
    let rows: Vec<&str> = code
        .ok()
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 6, "{code:#?}");
    assert!(
        code.stdout
            .contains("{src} and {tgt} differ in code.translate.{src}.{tgt}")
    );

    let exec = run(&["taxonomy", "list", "--domain", "exec"], &[]);
    assert_eq!(exec.ok(), "");
    assert!(
        exec.stderr
            .contains("the exec domain has no standard capabilities")
    );

    let bad = run(&["taxonomy", "list", "--domain", "video"], &[]);
    assert_eq!(bad.code, 2, "{bad:#?}");
    assert!(
        bad.stderr.contains("\"video\" is not a standard domain"),
        "{bad:#?}"
    );
}

#[test]
fn list_json_is_the_api_document_with_every_row() {
    let doc = run(&["taxonomy", "list", "--json"], &[]).json();
    assert_eq!(doc["taxonomy_version"], "0.1.0");
    assert_eq!(
        (&doc["hasMore"], &doc["nextCursor"]),
        (&json!(false), &Value::Null)
    );
    assert_eq!(doc["rows"].as_array().unwrap().len(), 40);
    let node = Node::start();
    // Every page of the API, merged, is the same document.
    let mut rows = Vec::new();
    let mut cursor = String::new();
    loop {
        let url = format!("{}/v1/taxonomy?limit=9&cursor={cursor}", node.url);
        let body: Value = ureq::get(&url)
            .header("authorization", &format!("Bearer {}", node.admin))
            .call()
            .unwrap()
            .into_body()
            .read_json()
            .unwrap();
        rows.extend(body["rows"].as_array().unwrap().iter().cloned());
        match body["nextCursor"].as_str() {
            Some(c) => cursor = c.to_owned(),
            None => break,
        }
    }
    assert_eq!(Value::Array(rows), doc["rows"]);
    let audio = run(&["taxonomy", "list", "--domain", "audio", "--json"], &[]).json();
    assert_eq!(audio["rows"].as_array().unwrap().len(), 4);
}

#[test]
fn show_prints_the_standard_descriptor() {
    let out = run(&["taxonomy", "show", "audio.transcribe.it.text"], &[]);
    let descriptor: Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(descriptor["id"], "audio.transcribe.it.text");
    assert_eq!(descriptor["version"], "0.1.0");
    assert_eq!(descriptor["title"], "Transcribe Italian speech to text");
    assert!(
        descriptor["description"]
            .as_str()
            .unwrap()
            .contains("Verification: non-empty; language detected = `lang`.")
    );
    assert_eq!(descriptor["io_mode"], "unary");

    let entry = run(
        &["taxonomy", "show", "--json", "audio.transcribe.it.text"],
        &[],
    )
    .json();
    assert_eq!(entry["descriptor"], descriptor);
    assert_eq!(
        entry["classification"],
        json!({"kind": "standard", "row": "audio.transcribe.{lang}.text", "bindings": {"lang": "it"}})
    );

    let custom = run(&["taxonomy", "show", "custom.acme.ocr"], &[]);
    assert_eq!(
        (custom.code, custom.stdout.as_str()),
        (1, ""),
        "{custom:#?}"
    );
    assert!(
        custom
            .stderr
            .contains("custom.acme.ocr is a custom capability")
    );
    let custom = run(&["taxonomy", "show", "--json", "custom.acme.ocr"], &[]).json();
    assert_eq!(custom["classification"]["kind"], "custom");
    assert!(custom.get("descriptor").is_none());

    let invalid = run(&["taxonomy", "show", "text.translate.en.en.fluent"], &[]);
    assert_eq!(
        (invalid.code, invalid.stdout.as_str()),
        (1, ""),
        "{invalid:#?}"
    );
    assert!(
        invalid
            .stderr
            .starts_with("weft: text.translate.en.en.fluent: same_value: "),
        "{invalid:#?}"
    );
}

#[test]
fn check_says_standard_custom_or_invalid_and_exits_1_on_invalid() {
    let ok = run(
        &[
            "taxonomy",
            "check",
            "text.translate.en.it.fluent",
            "custom.acme.ocr",
            "text.expand.1.5",
        ],
        &[],
    );
    let lines: Vec<&str> = ok.ok().lines().collect();
    assert_eq!(
        lines,
        [
            "text.translate.en.it.fluent  standard  text.translate.{src}.{tgt}.{level}  level=fluent src=en tgt=it",
            "custom.acme.ocr  custom  provider=acme capability=ocr",
            "text.expand.1.5  standard  text.expand.{factor}  factor=1.5",
        ]
    );
    let bad = run(
        &[
            "taxonomy",
            "check",
            "code.execute.sandboxed",
            "image.generate.cartoon.png",
        ],
        &[],
    );
    assert_eq!(bad.code, 1, "{bad:#?}");
    assert!(
        bad.stdout
            .contains("code.execute.sandboxed  standard  code.execute.sandboxed\n")
    );
    assert!(
        bad.stdout.contains(
            "image.generate.cartoon.png  invalid  no_matching_row: `image.generate.cartoon.png` \
             matches no row of image.generate"
        ),
        "{bad:#?}"
    );
    let json = run(
        &["taxonomy", "check", "--json", "Echo", "custom.acme.x"],
        &[],
    );
    assert_eq!(json.code, 1);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc[0]["id"], "Echo");
    assert_eq!(doc[0]["classification"]["kind"], "invalid");
    assert_eq!(doc[0]["classification"]["reason"]["code"], "uppercase");
    assert_eq!(doc[0]["classification"]["reason"]["segment"], 0);
    assert_eq!(
        doc[1]["classification"],
        json!({"kind": "custom", "provider": "acme", "capability": "x"})
    );
    let none = run(&["taxonomy", "check"], &[]);
    assert_eq!(none.code, 2, "{none:#?}");
}

#[test]
fn publish_meets_the_binding_shown_descriptors_publish_and_warnings_print() {
    let node = Node::start_with(&["--taxonomy", "advisory"]);
    // `weft taxonomy show` output publishes as is.
    let shown = run(&["taxonomy", "show", "classify.text.sentiment"], &[]);
    let file = node.file("sentiment.json", shown.ok());
    let published = node.weft(&["publish", &file, "--provider", "p1"]);
    assert!(
        published
            .ok()
            .starts_with("classify.text.sentiment@0.1.0  sha256:"),
        "{published:#?}"
    );
    assert!(!published.stderr.contains("warning"), "{published:#?}");

    // A non-standard id in a standard domain: published, with a warning.
    let odd = node.file(
        "odd.json",
        &json!({"id": "text.summarize.tiny", "version": "1.0.0", "title": "Tiny",
                "description": "Very short summaries.", "input_schema": {"type": "object"}})
        .to_string(),
    );
    let warned = node.weft(&["publish", &odd, "--provider", "p2"]);
    warned.ok();
    assert!(
        warned.stderr.contains(&format!(
            "weft: warning: {odd}: descriptor 0: no_matching_row: `text.summarize.tiny` matches \
             no row of text.summarize"
        )),
        "{warned:#?}"
    );

    // A standard id whose output drops a required field: refused, every problem printed.
    let mut narrowed: Value = serde_json::from_str(&shown.stdout).unwrap();
    narrowed["output_schema"]["required"] = json!(["sentiment"]);
    narrowed["version"] = json!("1.0.0");
    let bad = node.file("bad.json", &narrowed.to_string());
    let refused = node.weft(&["publish", &bad, "--provider", "p3"]);
    refused.api_error("taxonomy_mismatch");
    assert!(
        refused.stderr.contains(&format!(
            "{bad}: descriptor 0: /descriptors/0/output_schema"
        )),
        "{refused:#?}"
    );
}
