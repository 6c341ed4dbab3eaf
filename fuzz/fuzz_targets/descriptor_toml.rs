//! Bytes → TOML descriptor file (`read_descriptor_file` with `SourceFormat::Toml`).
//!
//! Never panics; every built descriptor keeps the invariants of `check_descriptor`, which
//! include re-parsing its canonical JSON text and getting the same revision.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_contract::file::read_descriptor_file;
use weft_contract::source::{SourceDocument, SourceFormat};
use weft_fuzz::{check_entry, check_problems, limits};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = limits();
    let parsed = SourceDocument::parse(text, SourceFormat::Toml);
    match read_descriptor_file(text, SourceFormat::Toml, &limits) {
        Ok(entries) => {
            let document = parsed.expect("a file that reads parses");
            assert!(!entries.is_empty());
            for entry in &entries {
                check_entry(entry, &document);
            }
        }
        Err(problems) => check_problems(&problems),
    }
});
