//! `allOf` (with a `$ref` beside other keywords as one more conjunct), `anyOf`, `oneOf`,
//! and every keyword the checker does not analyse.
//!
//! Branches are paired first by equal text, then in order; a paired branch is compared in
//! place, an added or removed one is checked for inclusion against the other side aside.
//! `oneOf` is compared like `anyOf` only when the branches of both sides have pairwise
//! disjoint type sets (so at most one branch can match any value); otherwise a change is
//! `unknown`, because a value may come to match two branches.

use serde_json::{Map, Value};

use super::types::{self, ALL};
use super::{ANNOTATIONS, Ctx, Loc, Part, Side, child, contains_ref, resolve, strip};

/// Keywords some family of this engine compares.
const ANALYSED: [&str; 30] = [
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "unevaluatedProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$defs",
    "definitions",
];

type Branches<'v> = Vec<(&'v Value, String)>;

fn branches<'v>(map: &'v Map<String, Value>, keyword: &str, pointer: &str) -> Option<Branches<'v>> {
    let list = map.get(keyword)?.as_array()?;
    let base = child(pointer, keyword);
    Some(
        list.iter()
            .enumerate()
            .map(|(i, b)| (b, child(&base, &i.to_string())))
            .collect(),
    )
}

/// Pairs equal branches, then the rest in order: (pairs, removed old, added new).
fn pair_up(a: &Branches<'_>, b: &Branches<'_>) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let mut used = vec![false; b.len()];
    let mut pairs = Vec::new();
    let mut left = Vec::new();
    for (i, (x, _)) in a.iter().enumerate() {
        match (0..b.len()).find(|&j| !used[j] && b[j].0 == *x) {
            Some(j) => {
                used[j] = true;
                pairs.push((i, j));
            }
            None => left.push(i),
        }
    }
    let mut free = (0..b.len())
        .filter(|&j| !used[j])
        .collect::<Vec<_>>()
        .into_iter();
    let mut removed = Vec::new();
    for i in left {
        match free.next() {
            Some(j) => pairs.push((i, j)),
            None => removed.push(i),
        }
    }
    (pairs, removed, free.collect())
}

fn overlap() -> String {
    "`oneOf` branches that can match the same value: a value may match two branches (or \
     none), which is not decided"
        .to_owned()
}

impl Ctx<'_> {
    /// Compares `allOf`, `anyOf`, `oneOf` and a `$ref` with sibling keywords.
    pub(super) fn combinators(
        &mut self,
        old: &Value,
        new: &Value,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        loc: &Loc,
    ) {
        let whole = (
            Part {
                value: old,
                pointer: loc.old.clone(),
                new: false,
            },
            Part {
                value: new,
                pointer: loc.new.clone(),
                new: true,
            },
        );
        let (Some(a), Some(b)) = (
            self.conjuncts(o, &loc.old, false),
            self.conjuncts(n, &loc.new, true),
        ) else {
            return self.unknown(loc.new.clone(), "reference_unresolved", super::unresolved());
        };
        let a: Branches<'_> = a.iter().map(|(v, p)| (v, p.clone())).collect();
        let b: Branches<'_> = b.iter().map(|(v, p)| (v, p.clone())).collect();
        let (pairs, removed, added) = pair_up(&a, &b);
        for (i, j) in pairs {
            let pair = Loc {
                old: a[i].1.clone(),
                new: b[j].1.clone(),
            };
            self.schema(a[i].0, b[j].0, &pair);
        }
        for j in added {
            let old_only = if self.wants_old_only() {
                self.subset_side(
                    whole.0.clone(),
                    Part {
                        value: b[j].0,
                        pointer: b[j].1.clone(),
                        new: true,
                    },
                )
            } else {
                Side::NotChecked
            };
            self.judge(
                b[j].1.clone(),
                "all_of_branch_added",
                "an `allOf` branch (or `$ref`) was added: every value must now also match it"
                    .into(),
                old_only,
                Side::Empty,
            );
        }
        for i in removed {
            let new_only = if self.wants_old_only() {
                Side::NotChecked
            } else {
                self.subset_side(
                    whole.1.clone(),
                    Part {
                        value: a[i].0,
                        pointer: a[i].1.clone(),
                        new: false,
                    },
                )
            };
            self.judge(
                a[i].1.clone(),
                "all_of_branch_removed",
                "an `allOf` branch (or `$ref`) was removed: values no longer have to match it"
                    .into(),
                Side::Empty,
                new_only,
            );
        }
        for keyword in ["anyOf", "oneOf"] {
            self.union(keyword, &whole, (o, n), loc);
        }
    }

    /// The conjuncts of a schema: its `allOf` branches and a `$ref` that has siblings.
    /// `None` when that reference does not resolve.
    fn conjuncts(
        &self,
        map: &Map<String, Value>,
        pointer: &str,
        new: bool,
    ) -> Option<Vec<(Value, String)>> {
        let mut list: Vec<(Value, String)> = branches(map, "allOf", pointer)
            .unwrap_or_default()
            .into_iter()
            .map(|(v, p)| (v.clone(), p))
            .collect();
        if let Some(Value::String(reference)) = map.get("$ref") {
            let base = if new {
                self.new_base.as_str()
            } else {
                self.old_base.as_str()
            };
            let (target, at) = resolve(self.root(new), reference, base)?;
            list.push((target.clone(), at));
        }
        Some(list)
    }

    fn union(
        &mut self,
        keyword: &str,
        whole: &(Part<'_>, Part<'_>),
        (o, n): (&Map<String, Value>, &Map<String, Value>),
        loc: &Loc,
    ) {
        let (a, b) = (
            branches(o, keyword, &loc.old),
            branches(n, keyword, &loc.new),
        );
        let wants_old = self.wants_old_only();
        let snake = if keyword == "anyOf" {
            "any_of"
        } else {
            "one_of"
        };
        match (a, b) {
            (None, None) => {}
            (None, Some(b)) => {
                let old_only = if !wants_old {
                    Side::NotChecked
                } else if keyword == "oneOf" && !self.disjoint(&b, true) {
                    Side::Unknown(overlap())
                } else {
                    self.covered(&whole.0, &b, true)
                };
                self.judge(
                    child(&loc.new, keyword),
                    &format!("{snake}_added"),
                    format!(
                        "`{keyword}` added: every value must now match one of its {} branches",
                        b.len()
                    ),
                    old_only,
                    Side::Empty,
                );
            }
            (Some(a), None) => {
                let new_only = if wants_old {
                    Side::NotChecked
                } else if keyword == "oneOf" && !self.disjoint(&a, false) {
                    Side::Unknown(overlap())
                } else {
                    self.covered(&whole.1, &a, false)
                };
                self.judge(
                    child(&loc.old, keyword),
                    &format!("{snake}_removed"),
                    format!("`{keyword}` removed: values no longer have to match one of its {} branches", a.len()),
                    Side::Empty,
                    new_only,
                );
            }
            (Some(a), Some(b)) => {
                if keyword == "oneOf" && !(self.disjoint(&a, false) && self.disjoint(&b, true)) {
                    if a.iter().map(|x| x.0).ne(b.iter().map(|x| x.0))
                        || a.iter().any(|x| contains_ref(x.0))
                    {
                        self.unknown(child(&loc.new, keyword), "one_of_changed", overlap());
                    }
                    return;
                }
                let (pairs, removed, added) = pair_up(&a, &b);
                for (i, j) in pairs {
                    let pair = Loc {
                        old: a[i].1.clone(),
                        new: b[j].1.clone(),
                    };
                    self.schema(a[i].0, b[j].0, &pair);
                }
                for j in added {
                    let part = Part {
                        value: b[j].0,
                        pointer: b[j].1.clone(),
                        new: true,
                    };
                    let new_only = if wants_old {
                        Side::NotChecked
                    } else {
                        self.covered(&part, &a, false)
                    };
                    self.judge(
                        b[j].1.clone(),
                        &format!("{snake}_branch_added"),
                        format!("a `{keyword}` branch was added"),
                        Side::Empty,
                        new_only,
                    );
                }
                for i in removed {
                    let part = Part {
                        value: a[i].0,
                        pointer: a[i].1.clone(),
                        new: false,
                    };
                    let old_only = if wants_old {
                        self.covered(&part, &b, true)
                    } else {
                        Side::NotChecked
                    };
                    self.judge(
                        a[i].1.clone(),
                        &format!("{snake}_branch_removed"),
                        format!("a `{keyword}` branch was removed"),
                        old_only,
                        Side::Empty,
                    );
                }
            }
        }
    }

    /// Is every value of `sub` in one of `branches` (from the new side when `new`)?
    fn covered(&mut self, sub: &Part<'_>, branches: &Branches<'_>, new: bool) -> Side {
        let sub_types = types::types(self.root(sub.new), sub.value, 0);
        let mut candidates = Vec::new();
        for (value, pointer) in branches {
            if types::types(self.root(new), value, 0) & sub_types == 0 {
                continue;
            }
            let side = self.subset_side(
                sub.clone(),
                Part {
                    value,
                    pointer: pointer.clone(),
                    new,
                },
            );
            if side == Side::Empty {
                return Side::Empty;
            }
            candidates.push(side);
        }
        match candidates.pop() {
            None => Side::Witness(format!(
                "{} is {}, which no branch accepts",
                self.at(),
                types::render(sub_types)
            )),
            Some(side) if candidates.is_empty() => side,
            Some(_) => Side::Unknown(
                "no single branch accepts every such value; whether the branches together do \
                 is not decided"
                    .into(),
            ),
        }
    }

    fn disjoint(&self, branches: &Branches<'_>, new: bool) -> bool {
        let root = self.root(new);
        let sets: Vec<u8> = branches
            .iter()
            .map(|(b, _)| types::types(root, b, 0))
            .collect();
        sets.iter()
            .enumerate()
            .all(|(i, x)| *x != ALL && sets[i + 1..].iter().all(|y| x & y == 0))
    }

    /// Records every keyword the engine does not analyse that differs between the sides.
    pub(super) fn unanalysed(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, loc: &Loc) {
        let refs_may_differ = self.old_root != self.new_root;
        let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            if ANALYSED.contains(&key.as_str()) || ANNOTATIONS.contains(&key.as_str()) {
                continue;
            }
            let (a, b) = (o.get(key), n.get(key));
            let depends = key == "unevaluatedItems" && strip(o) != strip(n);
            let moved = refs_may_differ && a.is_some_and(contains_ref);
            if a != b || depends || moved {
                let present = if b.is_some() { &loc.new } else { &loc.old };
                self.unknown(
                    child(present, key),
                    "keyword_not_analysed",
                    format!(
                        "`{key}` changed (or depends on something that changed); the checker \
                         does not analyse this keyword"
                    ),
                );
            }
        }
    }
}
