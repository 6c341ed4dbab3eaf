//! Parsing source code with tree-sitter, one grammar crate per language, and reading what the
//! syntax tree defines and references.
//!
//! A parse "is valid" when the tree has no `ERROR` and no `MISSING` node; the first one in
//! document order is reported as `line:column` (1-based). Without the `code-parsers` feature
//! every parse fails with a detail saying the verifier was built without parsers.

use std::collections::BTreeSet;

/// What one parse of a source text found.
pub(crate) struct Syntax {
    /// Where the first `ERROR` or `MISSING` node is, and what it is.
    pub first_error: Option<String>,
    /// Names of every definition (functions, methods, classes, types…), at any depth.
    pub definitions: BTreeSet<String>,
    /// Names of definitions not nested in another definition: the code's top-level symbols.
    pub top_level: BTreeSet<String>,
    /// Text of every identifier-like leaf.
    pub identifiers: BTreeSet<String>,
}

/// Node kinds that define a named symbol (`name` field), across the eleven grammars.
#[cfg(feature = "code-parsers")]
const DEFINITION_KINDS: &[&str] = &[
    "function_definition",
    "function_declaration",
    "generator_function_declaration",
    "function_signature",
    "function_item",
    "function_signature_item",
    "method_declaration",
    "method_definition",
    "method",
    "singleton_method",
    "local_function_statement",
    "constructor_declaration",
    "protocol_function_declaration",
    "class_definition",
    "class_declaration",
    "abstract_class_declaration",
    "class",
    "module",
    "struct_item",
    "enum_item",
    "trait_item",
    "type_item",
    "union_item",
    "const_item",
    "static_item",
    "mod_item",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "struct_declaration",
    "trait_declaration",
    "protocol_declaration",
    "object_declaration",
    "type_alias_declaration",
    "type_spec",
    "variable_declarator",
];

/// Parses `code` as `language` (one of [`crate::values::CODE_LANGUAGES`]).
#[cfg(feature = "code-parsers")]
pub(crate) fn analyse(language: &str, code: &str) -> Result<Syntax, String> {
    let grammar: tree_sitter::Language = match language {
        "python" => tree_sitter_python::LANGUAGE.into(),
        "javascript" => tree_sitter_javascript::LANGUAGE.into(),
        "typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "rust" => tree_sitter_rust::LANGUAGE.into(),
        "java" => tree_sitter_java::LANGUAGE.into(),
        "ruby" => tree_sitter_ruby::LANGUAGE.into(),
        // With an opening tag the file is PHP embedded in text; without one it is parsed as
        // bare PHP, so prose is not accepted as "HTML around no PHP".
        "php" if code.trim_start().starts_with("<?") => tree_sitter_php::LANGUAGE_PHP.into(),
        "php" => tree_sitter_php::LANGUAGE_PHP_ONLY.into(),
        "csharp" => tree_sitter_c_sharp::LANGUAGE.into(),
        "swift" => tree_sitter_swift::LANGUAGE.into(),
        "kotlin" => tree_sitter_kotlin_ng::LANGUAGE.into(),
        other => return Err(format!("no parser for language `{other}`")),
    };
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&grammar)
        .map_err(|error| format!("{language} grammar does not load: {error}"))?;
    let tree = parser
        .parse(code, None)
        .ok_or_else(|| format!("the {language} parser gave no tree"))?;
    let mut syntax = walk(&tree, code.as_bytes());
    // A grammar can stop early without an error node (tree-sitter-kotlin-ng leaves
    // "Sure! Here is…" after `Sure` outside every node): text no top-level node covers is
    // no code.
    let root = tree.root_node();
    let end = (0..root.child_count())
        .filter_map(|index| root.child(index))
        .map(|child| child.end_byte())
        .max()
        .unwrap_or(0);
    if syntax.first_error.is_none() && end < code.trim_end().len() {
        let before = code.get(..end).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        let snippet: String = code
            .get(end..)
            .unwrap_or_default()
            .chars()
            .take(40)
            .collect();
        syntax.first_error = Some(format!(
            "the parser stopped at {line}:{column}, before `{}`",
            snippet.trim()
        ));
    }
    Ok(syntax)
}

/// Without parsers compiled in, nothing can be parsed.
#[cfg(not(feature = "code-parsers"))]
pub(crate) fn analyse(language: &str, _code: &str) -> Result<Syntax, String> {
    Err(format!(
        "cannot parse {language}: weft-verify was built without the `code-parsers` feature"
    ))
}

/// Visits every node once, iteratively (no recursion on hostile nesting).
#[cfg(feature = "code-parsers")]
fn walk(tree: &tree_sitter::Tree, source: &[u8]) -> Syntax {
    let mut syntax = Syntax {
        first_error: None,
        definitions: BTreeSet::new(),
        top_level: BTreeSet::new(),
        identifiers: BTreeSet::new(),
    };
    let text = |node: tree_sitter::Node<'_>| node.utf8_text(source).unwrap_or_default().to_owned();
    let mut cursor = tree.walk();
    // For each node on the current path: is it a definition?
    let mut definition_path: Vec<bool> = Vec::new();
    loop {
        let node = cursor.node();
        if syntax.first_error.is_none() && (node.is_error() || node.is_missing()) {
            let position = node.start_position();
            let at = format!("{}:{}", position.row + 1, position.column + 1);
            syntax.first_error = Some(if node.is_missing() {
                format!("missing `{}` at {at}", node.kind())
            } else {
                let snippet: String = text(node).chars().take(40).collect();
                format!("syntax error at {at} near `{snippet}`")
            });
        }
        // A definition names something (Python's root is a `module` without a name).
        let name = (node.is_named() && DEFINITION_KINDS.contains(&node.kind()))
            .then(|| node.child_by_field_name("name"))
            .flatten();
        let is_definition = name.is_some();
        if let Some(name) = name {
            let name = text(name);
            if !definition_path.contains(&true) {
                syntax.top_level.insert(name.clone());
            }
            syntax.definitions.insert(name);
        }
        let kind = node.kind();
        if node.is_named()
            && node.child_count() == 0
            && kind != "package_identifier"
            && (kind.ends_with("identifier") || kind == "constant" || kind == "name")
        {
            syntax.identifiers.insert(text(node));
        }
        if cursor.goto_first_child() {
            definition_path.push(is_definition);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                if syntax.first_error.is_none() && tree.root_node().has_error() {
                    syntax.first_error = Some(hidden_error(tree.root_node(), source));
                }
                return syntax;
            }
            definition_path.pop();
        }
    }
}

/// Where an error is when no visible node is `ERROR` or `MISSING` (a grammar can insert a
/// missing hidden token under a visible node): the deepest, first node that contains an error.
#[cfg(feature = "code-parsers")]
fn hidden_error(root: tree_sitter::Node<'_>, source: &[u8]) -> String {
    let mut node = root;
    loop {
        let mut cursor = node.walk();
        let next = node.children(&mut cursor).find(|child| child.has_error());
        match next {
            Some(child) => node = child,
            None => break,
        }
    }
    let position = node.start_position();
    let snippet: String = node
        .utf8_text(source)
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect();
    format!(
        "syntax error at {}:{} in `{}` near `{snippet}`",
        position.row + 1,
        position.column + 1,
        node.kind()
    )
}
