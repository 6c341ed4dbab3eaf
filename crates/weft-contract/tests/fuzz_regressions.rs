//! Regressions found while fuzzing the descriptor parsers (see `docs/fuzzing.md`).
//!
//! Positions used to be kept as a map from full JSON pointer to position, each computed by
//! rescanning the text from its start: locating every value of a document was quadratic in
//! its size (a 400 KB array of zeros took 50 s), and every value's entry repeated all its
//! ancestors' keys (one 200 KB key above 100 000 items took 8 GB). Both stay under the 8 MiB
//! document limit, so anyone allowed to publish could stall or exhaust a node.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use weft_contract::Limits;
use weft_contract::file::read_descriptor_file;
use weft_contract::source::{Position, SourceDocument, SourceFormat};

/// Far above what linear work needs even in a debug build, far below the quadratic cost.
const BUDGET: Duration = Duration::from_secs(60);

fn zeros(count: usize) -> String {
    vec!["0"; count].join(",")
}

#[test]
fn a_large_flat_json_array_is_located_in_linear_time() {
    let count = 400_000;
    let text = format!("{{\"id\": \"x\",\n\"annotations\": [{}]}}", zeros(count));
    let started = Instant::now();
    let document = SourceDocument::parse(&text, SourceFormat::Json).unwrap();
    assert!(started.elapsed() < BUDGET, "took {:?}", started.elapsed());
    // Item N sits at column 17 + 2N of line 2.
    let last = count - 1;
    assert_eq!(
        document.position_of(&format!("/annotations/{last}")),
        Position {
            line: 2,
            column: 17 + 2 * last
        }
    );
    // A pointer past the recorded values falls back to its nearest ancestor.
    assert_eq!(
        document.position_of(&format!("/annotations/{count}")),
        Position {
            line: 2,
            column: 16
        }
    );
    let entries = read_descriptor_file(&text, SourceFormat::Json, &Limits::default()).unwrap();
    assert!(entries[0].result.is_err());
    assert!(started.elapsed() < BUDGET, "took {:?}", started.elapsed());
}

#[test]
fn a_long_key_above_many_values_is_stored_once() {
    let key = "k".repeat(200_000);
    let text = format!("{{\"{key}\": [{}]}}", zeros(100_000));
    let started = Instant::now();
    let document = SourceDocument::parse(&text, SourceFormat::Json).unwrap();
    assert!(started.elapsed() < BUDGET, "took {:?}", started.elapsed());
    assert_eq!(
        document.position_of(&format!("/{key}/99999")),
        Position {
            line: 1,
            column: 200_007 + 2 * 99_999
        }
    );
}

#[test]
fn a_large_toml_array_is_located_in_linear_time() {
    let count = 200_000;
    let text = format!("id = \"x\"\n[annotations]\nlist = [{}]\n", zeros(count));
    let started = Instant::now();
    let document = SourceDocument::parse(&text, SourceFormat::Toml).unwrap();
    assert!(started.elapsed() < BUDGET, "took {:?}", started.elapsed());
    assert_eq!(
        document.position_of(&format!("/annotations/list/{}", count - 1)),
        Position {
            line: 3,
            column: 9 + 2 * (count - 1)
        }
    );
    assert_eq!(
        document.position_of("/annotations/list"),
        Position { line: 3, column: 1 }
    );
}

#[test]
fn positions_count_characters_and_decode_pointer_escapes() {
    let text = "{\"é/~\": {\"ü\": [1, \"ß\", {\"x\": 2}]}}";
    let document = SourceDocument::parse(text, SourceFormat::Json).unwrap();
    assert_eq!(
        document.position_of("/é~1~0"),
        Position { line: 1, column: 9 }
    );
    assert_eq!(
        document.position_of("/é~1~0/ü/2/x"),
        Position {
            line: 1,
            column: 30
        }
    );
    // Unknown tokens stop at the deepest known ancestor; non-pointers are the start.
    assert_eq!(
        document.position_of("/é~1~0/nope/1"),
        Position { line: 1, column: 9 }
    );
    assert_eq!(document.position_of("nope"), Position::START);
    for pointer in ["", "/é~1~0/ü", "/é~1~0/ü/1"] {
        let position = document.position_of(pointer);
        let expected = match pointer {
            "" => Position::START,
            "/é~1~0/ü" => Position::of_offset(text, text.find('[').unwrap()),
            _ => Position::of_offset(text, text.find("\"ß").unwrap()),
        };
        assert_eq!(position, expected, "{pointer}");
    }
}
