//! `weft check` and `weft digest`, run as the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/descriptors")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn check_lists_every_descriptor_of_a_folder() {
    let out = weft(&["check", examples().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let ids: Vec<&str> = stdout
        .lines()
        .map(|l| l.split("  ").next().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["echo@1.0.0", "count@1.0.0", "sum@1.0.0", "upper@1.0.0"]
    );
    for line in stdout.lines() {
        let revision = line.split("  ").nth(1).unwrap();
        assert!(
            revision.starts_with("sha256:") && revision.len() == 71,
            "{line}"
        );
    }
    // Piped output carries no color codes.
    assert!(!stdout.contains('\u{1b}'));
}

#[test]
fn check_reports_problems_with_positions_and_fails() {
    let dir = scratch("bad");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\n  \"id\": \"Echo\",\n  \"version\": \"1.0\",\n  \"title\": \"t\",\n  \"description\": \"d\",\n  \"input_schema\": {}\n}\n",
    )
    .unwrap();
    let out = weft(&["check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with(&format!("{}:2:9: invalid_id: ", bad.display())),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(&format!("{}:3:14: invalid_version: ", bad.display())),
        "{}",
        lines[1]
    );
    assert!(!stderr.contains('\u{1b}'));
}

#[test]
fn check_json_has_the_documented_shape() {
    let dir = scratch("json");
    std::fs::write(dir.join("broken.toml"), "id = \"x\"\nid = \"y\"\n").unwrap();
    let echo = examples().join("echo.json");
    let out = weft(&[
        "check",
        "--json",
        echo.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["descriptors"][0]["qualified_id"], "echo@1.0.0");
    assert_eq!(doc["descriptors"][0]["path"], echo.display().to_string());
    assert!(
        doc["descriptors"][0]["revision"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let error = &doc["errors"][0];
    assert_eq!(error["code"], "invalid_toml");
    assert_eq!(error["line"], 2);
    assert!(error["column"].is_u64());
    assert!(error["path"].as_str().unwrap().ends_with("broken.toml"));
    assert!(error["message"].as_str().unwrap().contains("duplicate"));

    let ok = weft(&["check", "--json", echo.to_str().unwrap()]);
    assert!(ok.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["errors"], serde_json::json!([]));
}

#[test]
fn folders_skip_hidden_and_foreign_files() {
    let dir = scratch("walk");
    std::fs::copy(examples().join("echo.json"), dir.join("echo.json")).unwrap();
    std::fs::write(dir.join(".hidden.json"), "not json").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a descriptor").unwrap();
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::copy(
        examples().join("streaming.toml"),
        dir.join("nested/streaming.toml"),
    )
    .unwrap();
    let out = weft(&["check", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 4);
}

#[test]
fn missing_and_empty_inputs_fail() {
    let out = weft(&["check", "/definitely/not/here.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("io_error"));
    let empty = scratch("empty");
    let out = weft(&["check", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no_input"));
    let out = weft(&["check"]);
    assert_eq!(out.status.code(), Some(2), "usage errors exit 2");
}

#[test]
fn invalid_utf8_is_reported_with_its_place() {
    let dir = scratch("utf8");
    let path = dir.join("bin.json");
    std::fs::write(&path, b"{\n  \"id\": \"e\xffcho\"\n}").unwrap();
    let out = weft(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("{}:2:11: invalid_utf8:", path.display())),
        "{stderr}"
    );
}

#[test]
fn digest_prints_one_revision_per_descriptor() {
    let file = examples().join("streaming.toml");
    let out = weft(&["digest", file.to_str().unwrap()]);
    assert!(out.status.success());
    let digests = text(&out.stdout);
    assert_eq!(digests.lines().count(), 3);
    // The same revisions check prints.
    let check = text(&weft(&["check", file.to_str().unwrap()]).stdout);
    let from_check: Vec<&str> = check
        .lines()
        .map(|l| l.split("  ").nth(1).unwrap())
        .collect();
    assert_eq!(digests.lines().collect::<Vec<_>>(), from_check);
    let out = weft(&["digest", "/no/such/file.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn limits_can_be_set_per_run() {
    let echo = examples().join("echo.json");
    let size = std::fs::metadata(&echo).unwrap().len();
    let at = weft(&[
        "check",
        "--max-file-bytes",
        &size.to_string(),
        echo.to_str().unwrap(),
    ]);
    assert!(at.status.success(), "{}", text(&at.stderr));
    let under = weft(&[
        "check",
        "--max-file-bytes",
        &(size - 1).to_string(),
        echo.to_str().unwrap(),
    ]);
    assert_eq!(under.status.code(), Some(1));
    assert!(text(&under.stderr).contains("document_too_large"));
    let shallow = weft(&["check", "--max-schema-depth", "2", echo.to_str().unwrap()]);
    assert_eq!(shallow.status.code(), Some(1));
    assert!(text(&shallow.stderr).contains("schema_too_deep"));
    let small = weft(&[
        "check",
        "--max-descriptor-bytes",
        "100",
        echo.to_str().unwrap(),
    ]);
    assert!(text(&small.stderr).contains("descriptor_too_large"));
}
