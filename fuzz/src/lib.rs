//! Checks shared by the fuzz targets: the invariants a built descriptor must keep.

use serde_json::{Value, json};
use weft_contract::file::{FileEntry, FileProblem};
use weft_contract::revision::canonical_json;
use weft_contract::source::{SourceDocument, SourceFormat};
use weft_contract::{Descriptor, DescriptorRevision, Limits, SchemaRole};

/// Largest number of validation errors asked for when validating sample values.
const MAX_ERRORS: usize = 8;

/// Limits used by every descriptor target: the defaults, as a node runs with.
pub fn limits() -> Limits {
    Limits::default()
}

/// Every invariant of a built descriptor.
///
/// * the revision is the digest of the canonical text, and parses back as a revision;
/// * the canonical text is canonical (canonicalizing its parse gives the same bytes);
/// * it round-trips: parsing the canonical text strictly and building again gives the same
///   descriptor (same revision, same canonical text, same id, version and mode);
/// * every schema the descriptor has compiles again on demand, and validating sample values
///   never panics, agrees with `is_valid`, and reports at most `MAX_ERRORS` errors.
pub fn check_descriptor(descriptor: &Descriptor, source: &Value) {
    let canonical = descriptor.canonical_str();
    let revision = DescriptorRevision::of_canonical_bytes(canonical.as_bytes());
    assert_eq!(
        &revision,
        descriptor.revision(),
        "revision is not the digest"
    );
    assert_eq!(
        DescriptorRevision::parse(descriptor.revision().as_str()).as_ref(),
        Ok(descriptor.revision())
    );

    let reparsed = SourceDocument::parse(canonical, SourceFormat::Json)
        .unwrap_or_else(|e| panic!("canonical text does not parse strictly: {e}\n{canonical}"));
    let again = canonical_json(&reparsed.value).expect("canonical value canonicalizes");
    assert_eq!(
        again,
        canonical.as_bytes(),
        "canonical text is not canonical"
    );
    let rebuilt = Descriptor::from_value(&reparsed.value, &limits())
        .unwrap_or_else(|e| panic!("canonical form does not build: {e:?}\n{canonical}"));
    assert_eq!(
        rebuilt.revision(),
        descriptor.revision(),
        "revision changed"
    );
    assert_eq!(rebuilt.canonical_str(), canonical);
    assert_eq!(rebuilt.id(), descriptor.id());
    assert_eq!(rebuilt.version(), descriptor.version());
    assert_eq!(rebuilt.io_mode(), descriptor.io_mode());
    assert_eq!(descriptor.canonical_value(), reparsed.value);

    let mut samples = vec![
        Value::Null,
        json!({}),
        json!([]),
        json!(0),
        json!(""),
        source.clone(),
    ];
    for role in SchemaRole::ALL {
        let Some(schema) = descriptor.schema(role) else {
            assert!(!descriptor.has_schema(role), "{role:?} schema lost");
            continue;
        };
        for key in ["examples", "default", "const", "enum"] {
            match schema.source().get(key) {
                Some(Value::Array(items)) => samples.extend(items.iter().take(4).cloned()),
                Some(other) => samples.push(other.clone()),
                None => {}
            }
        }
    }
    for role in SchemaRole::ALL {
        let schema = descriptor.schema(role);
        assert_eq!(schema.is_some(), descriptor.has_schema(role));
        for sample in &samples {
            let outcome = descriptor.validate(role, sample, MAX_ERRORS);
            if let Some(schema) = schema {
                assert_eq!(schema.is_valid(sample), outcome.is_ok(), "{role:?}");
            }
            if let Err(errors) = outcome {
                assert!(!errors.errors.is_empty());
                assert!(errors.errors.len() <= MAX_ERRORS);
                let _ = errors.to_string();
            }
        }
    }
}

/// Checks one entry of a descriptor file: a built one keeps every descriptor invariant, a
/// failed one has at least one problem, each with a code and a message.
pub fn check_entry(entry: &FileEntry, document: &SourceDocument) {
    match &entry.result {
        Ok(descriptor) => {
            let source = if entry.pointer.is_empty() {
                document.value.clone()
            } else {
                document
                    .value
                    .pointer(&entry.pointer)
                    .cloned()
                    .unwrap_or_default()
            };
            check_descriptor(descriptor, &source);
        }
        Err(problems) => check_problems(problems),
    }
}

/// A list of problems is never empty, and each has a code, a message and a position.
pub fn check_problems(problems: &[FileProblem]) {
    assert!(!problems.is_empty(), "failure without a problem");
    for problem in problems {
        assert!(!problem.code.is_empty());
        assert!(!problem.message.is_empty());
        assert!(problem.position.line >= 1 && problem.position.column >= 1);
    }
}
