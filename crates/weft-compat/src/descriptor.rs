//! Descriptor-level fields: id, documentation, annotations, `io_mode`, and which schema is
//! checked in which direction.

use serde_json::Value;
use weft_contract::{Descriptor, SchemaRole};

use crate::finding::{Bump, Effect, Finding};
use crate::subset::{self, Direction};

/// The direction and the name of a value for each schema role.
fn role_rules(role: SchemaRole) -> (Direction, &'static str) {
    match role {
        SchemaRole::Input => (Direction::Input, "payload"),
        SchemaRole::InputChunk => (Direction::Input, "input chunk"),
        SchemaRole::Output => (Direction::Output, "result"),
        SchemaRole::OutputChunk => (Direction::Output, "output chunk"),
    }
}

/// Compares two root schemas in one direction; findings point into the schema (`""` is
/// its root). For inputs, `Direction::Input`; for outputs, `Direction::Output`.
pub fn compare_schemas(old: &Value, new: &Value, direction: Direction) -> Vec<Finding> {
    let noun = match direction {
        Direction::Input => "payload",
        Direction::Output => "result",
    };
    subset::compare_roots(direction, noun, (old, ""), (new, ""))
}

fn documentation(path: String, change: &str, reason: String) -> Finding {
    Finding {
        path,
        change: change.to_owned(),
        effect: Effect::Compatible,
        reason,
        bump: Bump::Patch,
    }
}

fn breaking(path: &str, change: &str, reason: String) -> Finding {
    Finding {
        path: path.to_owned(),
        change: change.to_owned(),
        effect: Effect::Breaking,
        reason,
        bump: Bump::Major,
    }
}

/// Every change between two descriptors, in descriptor field order.
pub(crate) fn findings(old: &Descriptor, new: &Descriptor) -> Vec<Finding> {
    let mut out = Vec::new();
    if old.revision() == new.revision() {
        return out;
    }
    if old.id() != new.id() {
        out.push(breaking(
            "/id",
            "id_changed",
            format!(
                "the id changed from `{}` to `{}`: callers of the old id find nothing",
                old.id(),
                new.id()
            ),
        ));
    }
    if old.title() != new.title() {
        out.push(documentation(
            "/title".into(),
            "title_changed",
            "`title` changed; documentation only".into(),
        ));
    }
    if old.description() != new.description() {
        out.push(documentation(
            "/description".into(),
            "description_changed",
            "`description` changed; documentation only".into(),
        ));
    }
    if old.io_mode() != new.io_mode() {
        out.push(breaking(
            "/io_mode",
            "io_mode_changed",
            format!(
                "`io_mode` changed from {} to {}: callers and providers of the old mode exchange \
                 a different sequence of messages",
                old.io_mode(),
                new.io_mode()
            ),
        ));
    }
    let (old_value, new_value) = (old.canonical_value(), new.canonical_value());
    for role in SchemaRole::ALL {
        schema_role(role, &old_value, &new_value, &mut out);
    }
    annotations(old, new, &mut out);
    out
}

fn schema_role(role: SchemaRole, old: &Value, new: &Value, out: &mut Vec<Finding>) {
    let field = role.field();
    let base = format!("/{field}");
    let (direction, noun) = role_rules(role);
    let chunks = matches!(role, SchemaRole::InputChunk | SchemaRole::OutputChunk);
    let any = Value::Bool(true);
    match (old.get(field), new.get(field)) {
        (None, None) => {}
        // Chunk schemas exist exactly when the I/O mode has that direction, so their
        // presence changing is part of an `io_mode` change.
        (None, Some(_)) if chunks => out.push(breaking(
            &base,
            "chunk_schema_added",
            format!("`{field}` added: the capability now streams {noun}s it did not stream before"),
        )),
        (Some(_), None) if chunks => out.push(breaking(
            &base,
            "chunk_schema_removed",
            format!("`{field}` removed: the capability no longer streams {noun}s"),
        )),
        // An absent output schema allows any result: it compares as `true`.
        (a, b) => {
            let (a, b) = (a.unwrap_or(&any), b.unwrap_or(&any));
            out.extend(subset::compare_roots(
                direction,
                noun,
                (a, &base),
                (b, &base),
            ));
            let any_finding = out.iter().any(|f| f.path.starts_with(&base));
            if a != b && !any_finding {
                out.push(documentation(
                    base,
                    "schema_rewritten",
                    format!(
                        "`{field}` was rewritten without changing which {noun}s are valid \
                         (for example unused `$defs`)"
                    ),
                ));
            }
        }
    }
}

fn annotations(old: &Descriptor, new: &Descriptor, out: &mut Vec<Finding>) {
    let (a, b) = (old.annotations(), new.annotations());
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let verb = match (a.get(key), b.get(key)) {
            (x, y) if x == y => continue,
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        };
        let mut path = "/annotations".to_owned();
        weft_contract::schema::push_token(&mut path, key);
        out.push(documentation(
            path,
            &format!("annotation_{verb}"),
            format!("annotation `{key}` {verb}; annotations are never interpreted by the fabric"),
        ));
    }
}
