//! `weft call` on streaming capabilities against a real `weft serve --builtins` child: the
//! frames as NDJSON on stdout, stdin as the caller's chunks, failed terminals and guard
//! failures as error lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_remote;

use common_remote::Node;
use serde_json::json;

#[test]
fn server_streaming_prints_every_frame_as_one_ndjson_line() {
    let node = Node::start_with(&["--builtins"]);
    let run = node.weft_stdin(
        &node.admin,
        &["call", "count@1.0.0", "--input", r#"{"to":3}"#],
        None,
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.kinds(),
        ["started", "chunk", "chunk", "chunk", "completed"],
        "{run:#?}"
    );
    let frames = run.frames();
    for (i, frame) in frames.iter().enumerate() {
        assert_eq!(frame["sequence"], json!(i), "{run:#?}");
        assert_eq!(frame["direction"], "provider_to_caller");
    }
    assert_eq!(frames[4]["payload"], json!({"count": 3}));
    // Compact: one line per frame, no indentation.
    assert_eq!(run.stdout.lines().count(), 5);
    assert!(!run.stdout.contains("\n "), "{run:#?}");
    assert!(
        run.stderr.starts_with("weft: pinned count@1.0.0 at "),
        "{run:#?}"
    );
}

#[test]
fn client_streaming_sends_stdin_lines_as_chunks_until_eof() {
    let node = Node::start_with(&["--builtins"]);
    let run = node.weft_stdin(
        &node.admin,
        &["call", "sum@1.0.0"],
        Some("{\"value\":1}\n\n{\"value\":2.5}\n"),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.kinds(), ["started", "completed"], "{run:#?}");
    let last = run.frames().pop().unwrap();
    assert_eq!(last["payload"], json!({"sum": 3.5, "count": 2}), "{run:#?}");
}

#[test]
fn bidirectional_answers_each_stdin_chunk() {
    let node = Node::start_with(&["--builtins"]);
    let run = node.weft_stdin(
        &node.admin,
        &["call", "upper@1.0.0"],
        Some("{\"text\":\"ab\"}\n{\"text\":\"cd\"}\n"),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.kinds(),
        ["started", "chunk", "chunk", "completed"],
        "{run:#?}"
    );
    let frames = run.frames();
    assert_eq!(frames[1]["payload"], json!({"text": "AB"}));
    assert_eq!(frames[2]["payload"], json!({"text": "CD"}));
    assert_eq!(frames[3]["payload"], json!({"chunks": 2}));
}

#[test]
fn an_invalid_chunk_fails_the_call() {
    let node = Node::start_with(&["--builtins"]);
    let run = node.weft_stdin(
        &node.admin,
        &["call", "sum@1.0.0"],
        Some("{\"value\":\"x\"}\n"),
    );
    assert_eq!(run.code, 1, "{run:#?}");
    let last = run.frames().pop().unwrap();
    assert_eq!(last["kind"], "failed", "{run:#?}");
    assert_eq!(last["error"]["code"], "invalid_frame", "{run:#?}");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("weft: invalid_frame: ")),
        "{run:#?}"
    );
}

#[test]
fn invalid_json_on_stdin_cancels_the_call() {
    let node = Node::start_with(&["--builtins"]);
    let run = node.weft_stdin(
        &node.admin,
        &["call", "sum@1.0.0"],
        Some("{\"value\":1}\nnot json\n"),
    );
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("weft: invalid_json: line 2: ")),
        "{run:#?}"
    );
    // Whatever the node said ends with one cancelled terminal.
    assert_eq!(
        run.kinds().last().map(String::as_str),
        Some("cancelled"),
        "{run:#?}"
    );
}

#[test]
fn a_stale_revision_on_a_stream_is_a_revision_mismatch() {
    let node = Node::start_with(&["--builtins"]);
    let stale = "sha256:3333333333333333333333333333333333333333333333333333333333333333";
    let run = node.weft_stdin(
        &node.admin,
        &[
            "call",
            "count@1.0.0",
            "--revision",
            stale,
            "--input",
            r#"{"to":1}"#,
        ],
        None,
    );
    assert_eq!(run.code, 1, "{run:#?}");
    assert_eq!(run.stdout, "", "{run:#?}");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("weft: revision_mismatch: ")),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains("the current revision is sha256:"),
        "{run:#?}"
    );
}
