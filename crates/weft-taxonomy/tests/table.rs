//! The table against the seed: the Swarmwage taxonomy v0.1 page (seed 004, which lives
//! beside the project, not in it) is parsed here, and every row, column, value set and
//! schema of the crate is compared with it.
//!
//! The page is found through `WEFT_TAXONOMY_SEED` (its path; `.ci/run` sets it) or, failing
//! that, as `../shared/seeds/004_*.txt` beside the repository. Without it the tests that read
//! it say so on stderr and skip, like the JSON Schema conformance test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use serde_json::{Value, json};
use weft_taxonomy::placeholder::{
    COMMON_EMBEDDING_MODELS, IMAGE_TAXONOMIES, ISO_639_1, PROGRAMMING_LANGUAGES, STATISTICS_OPS,
    TRANSLATION_LEVELS, WEATHER_FORMATS,
};
use weft_taxonomy::table::PatternSegment;
use weft_taxonomy::{Bindings, DOMAINS, rows, rows_of};

const SEED_VAR: &str = "WEFT_TAXONOMY_SEED";

/// The seed page's text, when it can be found.
fn seed() -> Option<&'static str> {
    static SEED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let path = std::env::var_os(SEED_VAR)
            .map(std::path::PathBuf::from)
            .or_else(|| {
                let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../shared/seeds");
                std::fs::read_dir(seeds)
                    .ok()?
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .find(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("004_"))
                    })
            });
        match path {
            Some(path) => Some(
                std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{SEED_VAR}: {}: {e}", path.display())),
            ),
            None => {
                eprintln!(
                    "note: seed 004 not found (set {SEED_VAR} or put ../shared beside the repository); skipping"
                );
                None
            }
        }
    })
    .as_deref()
}

/// One table row of the seed: the four cells, `\|` unescaped, capability without backticks.
struct SeedRow {
    pattern: String,
    input: String,
    output: String,
    verification: String,
}

/// Splits a markdown table line on unescaped `|`.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cell).trim().to_owned()),
            _ => cell.push(c),
        }
    }
    out
}

fn seed_rows(seed: &str) -> Vec<SeedRow> {
    let section = seed
        .split("## v0.1 standard capabilities")
        .nth(1)
        .unwrap()
        .split("## Custom capabilities")
        .next()
        .unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let c = cells(line);
            assert_eq!(c.len(), 4, "{line}");
            SeedRow {
                pattern: c[0].trim_matches('`').to_owned(),
                input: c[1].trim_matches('`').to_owned(),
                output: c[2].trim_matches('`').to_owned(),
                verification: c[3].clone(),
            }
        })
        .collect()
}

#[test]
fn the_table_has_every_seed_row_in_order_with_its_columns_verbatim() {
    let Some(text) = seed() else { return };
    let seed = seed_rows(text);
    assert_eq!(seed.len(), 40, "the v0.1 seed table has 40 rows");
    assert_eq!(rows().len(), seed.len());
    for (row, seed) in rows().iter().zip(&seed) {
        assert_eq!(row.pattern, seed.pattern);
        assert_eq!(row.seed_input, seed.input, "{}", row.pattern);
        assert_eq!(row.seed_output, seed.output, "{}", row.pattern);
        assert_eq!(row.verification, seed.verification, "{}", row.pattern);
    }
    let patterns: BTreeSet<&str> = rows().iter().map(|r| r.pattern).collect();
    assert_eq!(patterns.len(), rows().len(), "patterns are unique");
}

#[test]
fn rows_per_domain() {
    let Some(text) = seed() else { return };
    let expected = [
        ("image", 6),
        ("audio", 4),
        ("text", 7),
        ("code", 6),
        ("data", 6),
        ("chart", 1),
        ("compute", 3),
        ("exec", 0),
        ("embed", 2),
        ("classify", 4),
        ("research", 1),
    ];
    for (domain, count) in expected {
        assert!(DOMAINS.contains(&domain));
        assert_eq!(rows_of(domain).count(), count, "{domain}");
    }
    assert_eq!(expected.len(), DOMAINS.len());
    // The seed's naming section lists every domain but research, which has a row.
    let listed = text
        .split("- `domain` —")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    for domain in DOMAINS.iter().filter(|d| **d != "research") {
        assert!(listed.contains(&format!("`{domain}`")), "{domain}");
    }
    for row in rows() {
        assert!(DOMAINS.contains(&row.domain()), "{}", row.pattern);
    }
}

#[test]
fn every_brace_in_a_pattern_is_a_declared_placeholder() {
    for row in rows() {
        let in_pattern: Vec<&str> = row
            .pattern
            .split('.')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect();
        let declared: Vec<&str> = row.placeholders.iter().map(|p| p.name).collect();
        assert_eq!(in_pattern, declared, "{}", row.pattern);
        let slots = row
            .segments()
            .filter(|s| matches!(s, PatternSegment::Slot(_)))
            .count();
        assert_eq!(slots, declared.len(), "{}", row.pattern);
        if let Some((a, b)) = row.distinct {
            assert!(declared.contains(&a) && declared.contains(&b));
        }
        for p in row.placeholders {
            let example = p.example.unwrap_or(p.set.example());
            assert_eq!(p.set.check(example), Ok(()), "{}: {example}", row.pattern);
        }
        // Placeholder names of the title are declared too.
        for part in row.title.split('{').skip(1) {
            let name = part.split('}').next().unwrap();
            assert!(declared.contains(&name), "{}: {{{name}}}", row.pattern);
        }
    }
}

/// The backticked values of the first seed line containing `needle`.
fn listed_values(seed: &str, needle: &str) -> Vec<String> {
    let line = seed
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}"));
    let after = line.split_once(needle).unwrap().1;
    after
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|v| v.trim_matches(['{', '}', '"']).to_owned())
        .collect()
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn closed_value_sets_are_the_seeds() {
    let Some(text) = seed() else { return };
    assert_eq!(
        listed_values(text, "placeholders use ISO 639-1 codes"),
        strings(&ISO_639_1.map(|(c, _)| c))
    );
    let languages = listed_values(text, "`{language}` ∈");
    assert_eq!(
        languages[0]
            .split(", ")
            .map(str::to_owned)
            .collect::<Vec<_>>(),
        strings(&PROGRAMMING_LANGUAGES.map(|(c, _)| c))
    );
    let set = |needle: &str| -> Vec<String> {
        listed_values(text, needle)[0]
            .split(", ")
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(set("`{level}` ∈"), strings(&TRANSLATION_LEVELS));
    assert_eq!(set("`{op}` ∈"), strings(&STATISTICS_OPS));
    assert_eq!(set("`{format}` ∈"), strings(&WEATHER_FORMATS));
    assert_eq!(
        listed_values(text, "`{taxonomy}` for general image classification"),
        strings(&IMAGE_TAXONOMIES)
    );
    assert_eq!(
        listed_values(text, "`{model}` is provider-defined"),
        strings(&COMMON_EMBEDDING_MODELS)
    );
}

/// The seed's column notation, parsed.
#[derive(Debug)]
enum Shape {
    Object(Vec<(String, bool, Shape)>),
    Array(Box<Shape>),
    Scalar(String),
    Union(Vec<String>),
    Untyped,
}

/// Splits `text` on commas outside brackets.
fn top_level(text: &str) -> Vec<String> {
    let (mut depth, mut parts, mut current) = (0i32, Vec::new(), String::new());
    for c in text.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current).trim().to_owned());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        parts.push(current.trim().to_owned());
    }
    parts
}

fn parse(text: &str) -> Shape {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        return Shape::Object(
            top_level(inner)
                .into_iter()
                .map(|field| match field.split_once(':') {
                    Some((name, ty)) => {
                        let optional = name.trim().ends_with('?');
                        let name = name.trim().trim_end_matches('?').to_owned();
                        (name, optional, parse(ty))
                    }
                    None => (field.trim().to_owned(), false, Shape::Untyped),
                })
                .collect(),
        );
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return Shape::Array(Box::new(parse(inner)));
    }
    if let Some(item) = text.strip_suffix("[]") {
        return Shape::Array(Box::new(parse(item)));
    }
    if text.contains('|') {
        return Shape::Union(text.split('|').map(|t| t.trim().to_owned()).collect());
    }
    // `string (https://…)`: a type with a constraint in parentheses.
    Shape::Scalar(text.split(" (").next().unwrap().to_owned())
}

fn json_type(seed: &str) -> &'static str {
    match seed {
        "string" => "string",
        "int" => "integer",
        "number" => "number",
        "bool" | "boolean" => "boolean",
        "object" => "object",
        other => panic!("unknown seed type {other}"),
    }
}

fn agree(shape: &Shape, schema: &Value, at: &str) {
    match shape {
        Shape::Object(fields) => {
            assert_eq!(schema["type"], "object", "{at}");
            let properties = schema["properties"].as_object().unwrap();
            let names: BTreeSet<&str> = fields.iter().map(|(n, _, _)| n.as_str()).collect();
            let declared: BTreeSet<&str> = properties.keys().map(String::as_str).collect();
            assert_eq!(names, declared, "{at}: properties");
            let required: BTreeSet<&str> = fields
                .iter()
                .filter(|(_, optional, _)| !optional)
                .map(|(n, _, _)| n.as_str())
                .collect();
            let declared_required: BTreeSet<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
                .unwrap_or_default();
            assert_eq!(required, declared_required, "{at}: required");
            for (name, _, field) in fields {
                agree(field, &properties[name], &format!("{at}/{name}"));
            }
        }
        Shape::Array(items) => {
            assert_eq!(schema["type"], "array", "{at}");
            agree(items, &schema["items"], &format!("{at}[]"));
        }
        Shape::Scalar(ty) if ty == "enum" => {
            // An enum lists its values, or says the seed does not.
            let lists = schema["enum"].is_array();
            let says = schema["description"]
                .as_str()
                .is_some_and(|d| d.contains("enum"));
            assert!(lists || says, "{at}: {schema}");
        }
        Shape::Scalar(ty) => assert_eq!(schema["type"], json_type(ty), "{at}"),
        Shape::Union(types) => {
            let expected: Vec<Value> = types.iter().map(|t| json!(json_type(t))).collect();
            assert_eq!(schema["type"], Value::Array(expected), "{at}");
        }
        Shape::Untyped => {}
    }
}

#[test]
fn schemas_follow_the_seed_columns() {
    let none = Bindings::new();
    for row in rows() {
        let input = row.input_schema(&none);
        agree(
            &parse(row.seed_input),
            &input,
            &format!("{} input", row.pattern),
        );
        assert_eq!(input["additionalProperties"], false, "inputs are closed");
        let output = row.output_schema(&none);
        if row.seed_output.starts_with('{') {
            agree(
                &parse(row.seed_output),
                &output,
                &format!("{} output", row.pattern),
            );
        } else {
            assert_eq!(row.seed_output, "(format-specific)");
            assert_eq!(output["type"], "object");
        }
        assert!(
            output.get("additionalProperties").is_none(),
            "outputs are open"
        );
        for schema in [&input, &output] {
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
        }
    }
}

#[test]
fn the_prose_constraints_are_in_the_input_schemas() {
    let Some(text) = seed() else { return };
    let none = Bindings::new();
    let input = |pattern: &str| weft_taxonomy::row(pattern).unwrap().input_schema(&none);
    let sandbox = input("code.execute.sandboxed");
    assert_eq!(
        sandbox["properties"]["timeout_ms"],
        json!({"type": "integer", "minimum": 1, "maximum": 30000, "default": 5000})
    );
    assert_eq!(sandbox["properties"]["language"]["enum"], json!(["python"]));
    let extract = input("data.extract.from-url");
    let kb = &extract["properties"]["max_response_kb"];
    assert_eq!(
        (&kb["maximum"], &kb["default"]),
        (&json!(4096), &json!(512))
    );
    assert_eq!(extract["properties"]["url"]["pattern"], "^https?://");
    let chart = input("chart.generate.from-data");
    assert_eq!(
        chart["properties"]["chart_type"]["enum"],
        json!(
            listed_values(text, "`chart_type` ∈")[0]
                .split(", ")
                .collect::<Vec<_>>()
        )
    );
    assert_eq!(
        chart["properties"]["theme"]["enum"],
        json!(
            listed_values(text, "`theme` ∈")[0]
                .split(", ")
                .collect::<Vec<_>>()
        )
    );
    let sentiment = weft_taxonomy::row("classify.text.sentiment")
        .unwrap()
        .output_schema(&none);
    assert_eq!(
        sentiment["properties"]["sentiment"]["enum"],
        json!(["positive", "negative", "neutral"])
    );
}
