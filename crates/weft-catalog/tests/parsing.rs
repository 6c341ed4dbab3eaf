//! Strict decoding: unknown fields, authored digests, trailing JSON, type errors, and the
//! Go decoder behaviours CompozyOS inherits (case-insensitive keys, repeated keys decoded in
//! place, `null`, invalid UTF-8, unpaired surrogates).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Agent, json_record, q, toml_record};
use weft_catalog::{CatalogSource, Position};

fn pos(line: usize, column: usize) -> Option<Position> {
    Some(Position { line, column })
}

#[test]
fn json_unknown_field_in_record() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.json",
        "{\"capabilities\": [\n  {\"id\": \"a\", \"summary\": \"s\", \"outcome\": \"o\", \"owner\": \"me\"}\n]}",
    );
    let err = agent.err();
    assert_eq!(err.code(), "unknown_field");
    assert_eq!(err.field().as_deref(), Some("owner"));
    assert_eq!(err.record(), Some(0));
    assert_eq!(err.position(), pos(2, 56));
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability JSON {}: unknown field \"owner\" in capabilities[0] (line 2, column 56)",
            q(&path)
        )
    );
}

#[test]
fn json_unknown_top_level_field() {
    let agent = Agent::new();
    let path = agent.write("capabilities.json", r#"{"capabilities": [], "title": "x"}"#);
    let err = agent.err();
    assert_eq!(err.code(), "unknown_field");
    assert_eq!(err.record(), None);
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability JSON {}: unknown field \"title\" (line 1, column 31)",
            q(&path)
        )
    );
}

#[test]
fn authored_digest_is_rejected_in_every_layout() {
    let digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let agent = Agent::new();
    agent.write(
        "capabilities.json",
        format!(
            r#"{{"capabilities": [{{"id": "a", "summary": "s", "outcome": "o", "digest": "{digest}"}}]}}"#
        ),
    );
    let err = agent.err();
    assert_eq!(
        (err.code(), err.field().as_deref()),
        ("unknown_field", Some("digest"))
    );

    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        format!(
            "[[capabilities]]\n{}digest = \"{digest}\"\n",
            toml_record("a")
        ),
    );
    let err = agent.err();
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability TOML {}: unknown field \"capabilities.digest\" in capabilities[0] (line 5, column 1)",
            q(&path)
        )
    );

    let agent = Agent::new();
    let path = agent.write(
        "capabilities/a.toml",
        format!("{}digest = \"{digest}\"\n", toml_record("a")),
    );
    assert_eq!(
        agent.err().to_string(),
        format!(
            "decode capability TOML {}: unknown field \"digest\" (line 4, column 1)",
            q(&path)
        )
    );

    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        format!(r#"{{"id": "a", "summary": "s", "outcome": "o", "digest": "{digest}"}}"#),
    );
    assert_eq!(agent.err().code(), "unknown_field");
}

#[test]
fn toml_unknown_keys_first_in_document_order_after_type_checks() {
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        format!(
            "title = \"t\"\n[[capabilities]]\n{}zzz = 1\n[[capabilities]]\n{}aaa = 1\n",
            toml_record("a"),
            toml_record("b")
        ),
    );
    let err = agent.err();
    assert_eq!(err.field().as_deref(), Some("title"));
    assert_eq!(err.record(), None);

    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        format!(
            "[[capabilities]]\n{}zzz = 1\n[[capabilities]]\n{}aaa = 1\n",
            toml_record("a"),
            toml_record("b")
        ),
    );
    let err = agent.err();
    assert_eq!(err.field().as_deref(), Some("capabilities.zzz"));
    assert_eq!(err.record(), Some(0));

    // A type error anywhere wins over an earlier unknown key, as unknown keys are only
    // looked at once the whole document decoded.
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        "[[capabilities]]\nowner = \"me\"\nid = 5\nsummary = \"s\"\noutcome = \"o\"\n",
    );
    let err = agent.err();
    assert_eq!(err.code(), "invalid_toml");
    assert_eq!(err.field().as_deref(), Some("id"));
    assert_eq!(err.position(), pos(3, 6));
}

#[test]
fn toml_type_errors_name_record_and_field() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        format!(
            "[[capabilities]]\n{}requirements = \"x\"\n",
            toml_record("a")
        ),
    );
    let err = agent.err();
    assert_eq!(err.code(), "invalid_toml");
    assert_eq!(err.record(), Some(0));
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability TOML {}: capabilities[0].requirements: incompatible types: TOML value has type string; expected array of strings (line 5, column 16)",
            q(&path)
        )
    );
    let agent = Agent::new();
    agent.write("capabilities.toml", "[capabilities]\nid = \"a\"\n");
    assert_eq!(agent.err().code(), "invalid_toml");
    let agent = Agent::new();
    agent.write("capabilities.toml", "capabilities = [\"a\"]\n");
    assert_eq!(agent.err().code(), "invalid_toml");
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        format!("[[capabilities]]\n{}examples = [1]\n", toml_record("a")),
    );
    assert_eq!(agent.err().field().as_deref(), Some("examples[0]"));
}

#[test]
fn toml_syntax_and_encoding_errors_have_positions() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        "[[capabilities]]\nid = \"a\"\nid = \"b\"\n",
    );
    let err = agent.err();
    assert_eq!(err.code(), "invalid_toml");
    assert_eq!(err.path(), path);
    assert_eq!(err.position().map(|p| p.line), Some(3));

    let agent = Agent::new();
    agent.write("capabilities.toml", b"[[capabilities]]\nid = \"a\xff\"\n");
    let err = agent.err();
    assert_eq!(err.code(), "invalid_toml");
    assert_eq!(err.position(), pos(2, 8));
    assert!(err.to_string().contains("invalid UTF-8"));
}

#[test]
fn toml_accepts_bom_inline_tables_and_empty_documents() {
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        "\u{feff}capabilities = [{id = \"a\", summary = \"s\", outcome = \"o\"}]\n",
    );
    assert_eq!(agent.ok().records[0].id, "a");

    let agent = Agent::new();
    agent.write("capabilities.toml", "# nothing yet\n");
    let catalog = agent.ok();
    assert!(matches!(catalog.source, CatalogSource::TomlFile(_)));
    assert!(catalog.records.is_empty());
}

#[test]
fn trailing_json_is_rejected_whitespace_is_not() {
    let agent = Agent::new();
    let path = agent.write("capabilities.json", "{\"capabilities\": []}\n  {}");
    let err = agent.err();
    assert_eq!(err.code(), "trailing_data");
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability JSON {}: unexpected trailing JSON value (line 2, column 3)",
            q(&path)
        )
    );
    for trailing in ["x", "{", "null", "]"] {
        let agent = Agent::new();
        agent.write(
            "capabilities/a.json",
            format!("{}{trailing}", json_record("a")),
        );
        assert_eq!(agent.err().code(), "trailing_data", "{trailing}");
    }
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        format!("\r\n\t {} \n\r\t ", json_record("a")),
    );
    assert_eq!(agent.ok().records.len(), 1);
}

#[test]
fn semantic_errors_come_before_trailing_data_and_syntax_errors_before_both() {
    let agent = Agent::new();
    agent.write("capabilities.json", r#"{"bogus": 1} trailing"#);
    assert_eq!(agent.err().code(), "unknown_field");

    let agent = Agent::new();
    let path = agent.write("capabilities.json", "{\"bogus\": 1,\n \"capabilities\": [}");
    let err = agent.err();
    assert_eq!(err.code(), "invalid_json");
    assert_eq!(err.path(), path);
    assert_eq!(err.position().map(|p| p.line), Some(2));
}

#[test]
fn json_syntax_errors() {
    for text in ["", "   ", "{\"capabilities\": [", "\u{feff}{}", "{'a': 1}"] {
        let agent = Agent::new();
        agent.write("capabilities.json", text);
        assert_eq!(agent.err().code(), "invalid_json", "{text:?}");
    }
}

#[test]
fn json_type_errors_name_record_and_field() {
    let agent = Agent::new();
    let path = agent.write("capabilities.json", r#"{"capabilities": {}}"#);
    let err = agent.err();
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability JSON {}: capabilities: cannot unmarshal object into array (line 1, column 18)",
            q(&path)
        )
    );

    let agent = Agent::new();
    let path = agent.write(
        "capabilities.json",
        r#"{"capabilities": [{"id": 5, "bogus": 1}]}"#,
    );
    let err = agent.err();
    assert_eq!(
        (err.record(), err.field().as_deref()),
        (Some(0), Some("id"))
    );
    assert_eq!(
        err.to_string(),
        format!(
            "decode capability JSON {}: capabilities[0].id: cannot unmarshal number into string (line 1, column 26)",
            q(&path)
        )
    );

    for text in [
        r#"[]"#,
        r#""capabilities""#,
        r#"{"capabilities": [5]}"#,
        r#"{"capabilities": [{"requirements": "a"}]}"#,
        r#"{"capabilities": [{"requirements": [true]}]}"#,
    ] {
        let agent = Agent::new();
        agent.write("capabilities.json", text);
        assert_eq!(agent.err().code(), "invalid_json", "{text}");
    }
}

#[test]
fn json_null_semantics_follow_go() {
    let agent = Agent::new();
    let path = agent.write("capabilities.json", "null");
    let catalog = agent.ok();
    assert_eq!(catalog.source, CatalogSource::JsonFile(path));
    assert!(catalog.records.is_empty());

    let agent = Agent::new();
    agent.write("capabilities.json", r#"{"capabilities": null}"#);
    assert!(agent.ok().records.is_empty());

    let agent = Agent::new();
    agent.write("capabilities.json", r#"{"capabilities": [null]}"#);
    let err = agent.err();
    assert_eq!(
        (err.code(), err.field().as_deref()),
        ("missing_field", Some("id"))
    );

    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "version": null, "requirements": null, "examples": ["x", null]}"#,
    );
    let record = agent.ok().records.remove(0);
    assert_eq!(record.version, None);
    assert!(record.requirements.is_empty());
    assert_eq!(record.examples, ["x"]);

    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "requirements": ["b", null]}"#,
    );
    assert_eq!(agent.err().field().as_deref(), Some("requirements[1]"));
}

#[test]
fn keys_match_case_insensitively_like_go() {
    let agent = Agent::new();
    agent.write(
        "capabilities.json",
        "{\"Capabilities\": [{\"ID\": \"a\", \"\u{17f}ummary\": \"s\", \"OutCome\": \"o\", \"Requirements\": [\"x\"]}]}",
    );
    let record = agent.ok().records.remove(0);
    assert_eq!((record.id.as_str(), record.summary.as_str()), ("a", "s"));
    assert_eq!(record.requirements, ["x"]);

    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        "[[CAPABILITIES]]\nId = \"a\"\nSUMMARY = \"s\"\noutcome = \"o\"\n",
    );
    assert_eq!(agent.ok().records[0].id, "a");

    // U+0130 does not fold to `i` in Go's simple case folding.
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        "{\"\u{130}d\": \"a\", \"summary\": \"s\", \"outcome\": \"o\"}",
    );
    let err = agent.err();
    assert_eq!(
        (err.code(), err.field().as_deref()),
        ("unknown_field", Some("\u{130}d"))
    );
    let agent = Agent::new();
    agent.write("capabilities/a.json", r#"{"Digest": "x"}"#);
    assert_eq!(agent.err().code(), "unknown_field");
}

#[test]
fn repeated_json_keys_decode_again_in_place() {
    // Scalars: last wins, but null leaves the earlier value.
    let agent = Agent::new();
    agent.write(
        "capabilities/b.json",
        r#"{"id": "a", "id": "b", "summary": "s", "summary": null, "outcome": "o", "ID": "b"}"#,
    );
    let record = agent.ok().records.remove(0);
    assert_eq!((record.id.as_str(), record.summary.as_str()), ("b", "s"));

    // A repeated records array decodes into the records already there.
    let agent = Agent::new();
    agent.write(
        "capabilities.json",
        r#"{"capabilities": [{"id": "a", "summary": "s", "outcome": "o"}], "capabilities": [{"id": "b"}]}"#,
    );
    let records = agent.ok().records;
    assert_eq!(records.len(), 1);
    assert_eq!(
        (
            records[0].id.as_str(),
            records[0].summary.as_str(),
            records[0].outcome.as_str()
        ),
        ("b", "s", "o")
    );

    // Lists reuse spare capacity: `[a,b,c]`, `[x]`, `[p,null,null]` gives `[p,b,c]`.
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["a", "b", "c"], "examples": ["x"], "examples": ["p", null, null]}"#,
    );
    assert_eq!(agent.ok().records[0].examples, ["p", "b", "c"]);

    // An empty array or null drops everything.
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["a", "b"], "examples": [], "examples": [null]}"#,
    );
    assert!(agent.ok().records[0].examples.is_empty());
}

#[test]
fn invalid_utf8_and_unpaired_surrogates_become_replacement_characters() {
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        b"{\"id\": \"a\", \"summary\": \"x\xffy\xe2\x82z\", \"outcome\": \"\\ud800|\\ud83d\\u0041|\\ude00|\\ud83d\\ude00\"}",
    );
    let record = agent.ok().records.remove(0);
    assert_eq!(record.summary, "x\u{FFFD}y\u{FFFD}\u{FFFD}z");
    assert_eq!(record.outcome, "\u{FFFD}|\u{FFFD}A|\u{FFFD}|\u{1F600}");
}

#[test]
fn directory_record_files_hold_bare_records() {
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        format!(r#"{{"capabilities": [{}]}}"#, json_record("a")),
    );
    let err = agent.err();
    assert_eq!(
        (err.code(), err.field().as_deref()),
        ("unknown_field", Some("capabilities"))
    );

    let agent = Agent::new();
    agent.write("capabilities/a.toml", "");
    assert_eq!(agent.err().code(), "missing_field");

    let agent = Agent::new();
    agent.write("capabilities/a.json", "[]");
    assert_eq!(agent.err().code(), "invalid_json");
}
