//! Agent discovery in a folder and selection by needed capabilities.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::Path;

use common::{json_record, toml_record};
use weft_catalog::{CatalogSource, DiscoveredAgent, discover_agents, select_agents};

fn write(path: &Path, content: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn catalog_toml(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("[[capabilities]]\n{}", toml_record(id)))
        .collect()
}

fn names(agents: &[DiscoveredAgent]) -> Vec<&str> {
    agents.iter().map(|a| a.name.as_str()).collect()
}

fn needs(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

/// alpha: a b c (toml) · beta: AGENT.md only · delta: broken catalog · epsilon: a b (dir)
/// gamma: a x (json) · plus entries that are not agents.
fn fleet() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        &root.join("alpha/capabilities.toml"),
        &catalog_toml(&["a", "b", "c"]),
    );
    write(&root.join("beta/AGENT.md"), "# beta\n");
    write(
        &root.join("delta/capabilities.json"),
        "{\"capabilities\": [}",
    );
    write(&root.join("epsilon/capabilities/a.json"), &json_record("a"));
    write(&root.join("epsilon/capabilities/b.json"), &json_record("b"));
    write(
        &root.join("gamma/capabilities.json"),
        &format!(
            r#"{{"capabilities": [{}, {}]}}"#,
            json_record("x"),
            json_record("a")
        ),
    );
    write(
        &root.join(".hidden/AGENT.md"),
        "hidden agents are not discovered\n",
    );
    write(&root.join("plain-folder/README.md"), "not an agent\n");
    write(&root.join("notes.txt"), "not an agent\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("alpha"), root.join("alpha-link")).unwrap();
    tmp
}

#[test]
fn discovers_subfolder_agents_sorted_with_per_agent_results() {
    let tmp = fleet();
    let agents = discover_agents(tmp.path()).unwrap();
    assert_eq!(
        names(&agents),
        ["alpha", "beta", "delta", "epsilon", "gamma"]
    );
    assert_eq!(agents[0].dir, tmp.path().join("alpha"));
    assert_eq!(agents[0].catalog.as_ref().unwrap().records.len(), 3);
    let beta = agents[1].catalog.as_ref().unwrap();
    assert_eq!(beta.source, CatalogSource::None);
    assert_eq!(
        agents[2].catalog.as_ref().unwrap_err().code(),
        "invalid_json"
    );
    assert!(matches!(
        agents[3].catalog.as_ref().unwrap().source,
        CatalogSource::Directory(_)
    ));
}

#[test]
fn a_root_with_a_catalog_or_agent_md_is_the_only_agent() {
    let tmp = fleet();
    let alpha = tmp.path().join("alpha");
    write(
        &alpha.join("nested/AGENT.md"),
        "a sub-folder of an agent is not another agent\n",
    );
    let agents = discover_agents(&alpha).unwrap();
    assert_eq!(names(&agents), ["alpha"]);
    assert_eq!(agents[0].dir, alpha);

    let beta = tmp.path().join("beta");
    assert_eq!(names(&discover_agents(&beta).unwrap()), ["beta"]);
}

#[cfg(unix)]
#[test]
fn a_symlinked_catalog_marks_an_agent_whose_load_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target.toml");
    write(&target, &catalog_toml(&["a"]));
    fs::create_dir(tmp.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(&target, tmp.path().join("linked/capabilities.toml")).unwrap();
    let agents = discover_agents(tmp.path()).unwrap();
    assert_eq!(names(&agents), ["linked"]);
    assert_eq!(agents[0].catalog.as_ref().unwrap_err().code(), "symlink");
}

#[test]
fn empty_or_missing_roots() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(discover_agents(tmp.path()).unwrap().is_empty());
    let err = discover_agents(&tmp.path().join("missing")).unwrap_err();
    assert_eq!(err.code(), "io");
}

#[test]
fn selection_orders_by_extra_ids_then_name_and_explains_rejections() {
    let tmp = fleet();
    let agents = discover_agents(tmp.path()).unwrap();
    let selection = select_agents(&agents, &needs(&["a"]));
    let selected: Vec<(&str, Vec<String>)> = selection
        .selected
        .iter()
        .map(|s| (s.agent.name.as_str(), s.extra_ids.clone()))
        .collect();
    // alpha offers 2 ids besides `a`; epsilon and gamma 1 each (tie broken by name).
    assert_eq!(
        selected,
        [
            ("alpha", needs(&["b", "c"])),
            ("epsilon", needs(&["b"])),
            ("gamma", needs(&["x"])),
        ]
    );
    let rejected: Vec<(&str, Vec<String>, bool)> = selection
        .rejected
        .iter()
        .map(|r| {
            (
                r.agent.name.as_str(),
                r.missing.clone(),
                r.load_error().is_some(),
            )
        })
        .collect();
    assert_eq!(
        rejected,
        [
            ("beta", needs(&["a"]), false),
            ("delta", needs(&["a"]), true)
        ]
    );
}

#[test]
fn selection_requires_every_need_by_exact_match() {
    let tmp = fleet();
    let agents = discover_agents(tmp.path()).unwrap();
    let selection = select_agents(&agents, &needs(&["b", "a", "b"]));
    let selected: Vec<&str> = selection
        .selected
        .iter()
        .map(|s| s.agent.name.as_str())
        .collect();
    assert_eq!(selected, ["alpha", "epsilon"]);
    assert_eq!(selection.selected[0].extra_ids, ["c"]);
    assert!(selection.selected[1].extra_ids.is_empty());
    let gamma = selection
        .rejected
        .iter()
        .find(|r| r.agent.name == "gamma")
        .unwrap();
    assert_eq!(gamma.missing, ["b"]);
    let delta = selection
        .rejected
        .iter()
        .find(|r| r.agent.name == "delta")
        .unwrap();
    assert_eq!(delta.missing, ["b", "a"], "duplicates removed, order kept");

    let selection = select_agents(&agents, &needs(&["A"]));
    assert!(
        selection.selected.is_empty(),
        "ids match exactly, case-sensitively"
    );
    let selection = select_agents(&agents, &needs(&[" a"]));
    assert!(selection.selected.is_empty(), "needs are not trimmed");
}

#[test]
fn no_needs_selects_every_loaded_agent_ranked_by_size() {
    let tmp = fleet();
    let agents = discover_agents(tmp.path()).unwrap();
    let selection = select_agents(&agents, &[]);
    let selected: Vec<(&str, usize)> = selection
        .selected
        .iter()
        .map(|s| (s.agent.name.as_str(), s.extra_ids.len()))
        .collect();
    assert_eq!(
        selected,
        [("alpha", 3), ("epsilon", 2), ("gamma", 2), ("beta", 0)]
    );
    assert_eq!(selection.rejected.len(), 1);
    assert!(selection.rejected[0].missing.is_empty());
    assert_eq!(
        selection.rejected[0].load_error().unwrap().code(),
        "invalid_json"
    );
}
