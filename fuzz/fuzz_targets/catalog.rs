//! Bytes → `weft-catalog`'s strict decoding, normalization, validation and digests.
//!
//! The first byte picks the layout and format (low two bits): `capabilities.json`,
//! `capabilities.toml`, or a `capabilities/` directory of `.json` or `.toml` record files.
//! For a directory the rest is split at NUL bytes into up to four files named `a`, `b`,
//! `c`, `d` (so a record whose id is its file's basename can pass). Checks: never panics;
//! a loaded record is normalized (trimmed id, sorted unique requirements) and its digest is
//! `canonical_digest` of itself; loading is deterministic; an error has a code and a message.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use weft_catalog::error::Format;
use weft_catalog::{
    AgentCatalog, CatalogError, canonical_digest, parse_catalog_file, parse_record_files,
};

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

fn load(selector: u8, body: &[u8]) -> Result<AgentCatalog, CatalogError> {
    let agent = Path::new("/agent");
    match selector & 3 {
        0 => parse_catalog_file(&agent.join("capabilities.json"), body, Format::Json),
        1 => parse_catalog_file(&agent.join("capabilities.toml"), body, Format::Toml),
        mode => {
            let extension = if mode == 2 { "json" } else { "toml" };
            let names: Vec<String> = NAMES.iter().map(|n| format!("{n}.{extension}")).collect();
            let files: Vec<(&str, &[u8])> = names
                .iter()
                .map(String::as_str)
                .zip(body.split(|b| *b == 0))
                .collect();
            parse_record_files(&agent.join("capabilities"), &files)
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let outcome = load(selector, body);
    match &outcome {
        Ok(catalog) => {
            for record in &catalog.records {
                assert_eq!(record.digest, canonical_digest(record), "digest drifted");
                assert!(record.digest.starts_with("sha256:"));
                assert!(!record.id.is_empty());
                let mut sorted = record.requirements.clone();
                sorted.sort();
                sorted.dedup();
                assert_eq!(sorted, record.requirements, "requirements not normalized");
                assert!(serde_json::to_string(record).is_ok());
            }
            let mut ids: Vec<&str> = catalog.ids().collect();
            let count = ids.len();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), count, "duplicate ids loaded");
        }
        Err(error) => {
            assert!(!error.code().is_empty());
            assert!(!error.to_string().is_empty());
            let _ = (
                error.position(),
                error.record(),
                error.field(),
                error.path(),
            );
        }
    }
    let again = load(selector, body);
    match (&outcome, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "loading is not deterministic"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("loading is not deterministic"),
    }
});
