//! Bytes → strict JSON source → `Descriptor::from_value` → revision → validation.
//!
//! Also runs the same text through `read_descriptor_file` (JSON), which may hold a list.
//! Never panics; every built descriptor keeps the invariants of `check_descriptor`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_contract::Descriptor;
use weft_contract::file::read_descriptor_file;
use weft_contract::source::{SourceDocument, SourceFormat};
use weft_fuzz::{check_descriptor, check_entry, check_problems, limits};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = limits();
    let document = match SourceDocument::parse(text, SourceFormat::Json) {
        Ok(document) => document,
        Err(error) => {
            assert!(!error.kind.code().is_empty());
            let _ = error.to_string();
            assert!(read_descriptor_file(text, SourceFormat::Json, &limits).is_err());
            return;
        }
    };
    match Descriptor::from_value(&document.value, &limits) {
        Ok(descriptor) => check_descriptor(&descriptor, &document.value),
        Err(errors) => {
            assert!(errors.iter().next().is_some(), "failure without an error");
            for error in errors.iter() {
                assert!(!error.code().is_empty());
                let _ = error.to_string();
                let _ = document.position_of(&error.pointer);
            }
        }
    }
    match read_descriptor_file(text, SourceFormat::Json, &limits) {
        Ok(entries) => {
            assert!(!entries.is_empty());
            for entry in &entries {
                check_entry(entry, &document);
            }
        }
        Err(problems) => check_problems(&problems),
    }
});
