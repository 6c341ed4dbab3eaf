//! Layouts, layout conflicts, path types, symlinks, directory-mode selection and ordering,
//! the no-catalog case and dependency paths.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::{Agent, json_record, q, toml_record};
use weft_catalog::error::{NotAFileKind, PathSubject};
use weft_catalog::{CatalogError, CatalogSource, catalog_dependency_paths, load_agent_catalog};

fn ids(agent: &Agent) -> Vec<String> {
    agent.ok().records.into_iter().map(|r| r.id).collect()
}

#[test]
fn single_file_toml_loads_in_authored_order() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        format!(
            "[[capabilities]]\n{}\n[[capabilities]]\n{}",
            toml_record("zeta"),
            toml_record("alpha")
        ),
    );
    let catalog = agent.ok();
    assert_eq!(catalog.source, CatalogSource::TomlFile(path.clone()));
    assert_eq!(catalog.source.path(), Some(path.as_path()));
    assert!(catalog.is_present());
    assert_eq!(catalog.ids().collect::<Vec<_>>(), ["zeta", "alpha"]);
    assert_eq!(catalog.get("alpha").unwrap().summary, "Summary of alpha.");
    assert!(catalog.get("missing").is_none());
}

#[test]
fn single_file_json_loads_in_authored_order() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.json",
        format!(
            r#"{{"capabilities": [{}, {}]}}"#,
            json_record("zeta"),
            json_record("alpha")
        ),
    );
    let catalog = agent.ok();
    assert_eq!(catalog.source, CatalogSource::JsonFile(path));
    assert_eq!(ids(&agent), ["zeta", "alpha"]);
}

#[test]
fn directory_mode_toml_and_json_load_in_sorted_path_order() {
    for (ext, body) in [
        ("toml", toml_record as fn(&str) -> String),
        ("json", json_record),
    ] {
        let agent = Agent::new();
        for id in ["zeta", "alpha", "mid"] {
            agent.write(&format!("capabilities/{id}.{ext}"), body(id));
        }
        let catalog = agent.ok();
        assert_eq!(
            catalog.source,
            CatalogSource::Directory(agent.path("capabilities"))
        );
        assert_eq!(ids(&agent), ["alpha", "mid", "zeta"], "{ext}");
    }
}

#[test]
fn directory_mode_ignores_dotfiles_nested_dirs_other_extensions() {
    let agent = Agent::new();
    agent.write("capabilities/build-site.toml", toml_record("build-site"));
    agent.write("capabilities/.hidden.toml", "this is not = = valid toml");
    agent.write("capabilities/.hidden.json", "{broken");
    agent.write("capabilities/notes.txt", "notes");
    agent.write(
        "capabilities/UPPER.TOML",
        "not selected: extensions are case-sensitive",
    );
    agent.write("capabilities/nested/ignored.toml", "broken = = =");
    agent.mkdir("capabilities/looks-like.toml");
    // .json files are not mixed in when they are ignored.
    agent.write("capabilities/.x.json", json_record("x"));
    assert_eq!(ids(&agent), ["build-site"]);
}

#[cfg(unix)]
#[test]
fn directory_mode_skips_special_files() {
    let agent = Agent::new();
    agent.write("capabilities/a.toml", toml_record("a"));
    let _socket = agent.socket("capabilities/sock.toml");
    assert_eq!(ids(&agent), ["a"]);
}

#[test]
fn no_catalog_is_distinct_from_an_empty_directory() {
    let none = Agent::new();
    let catalog = none.ok();
    assert_eq!(catalog.source, CatalogSource::None);
    assert!(!catalog.is_present());
    assert!(catalog.records.is_empty());

    let empty = Agent::new();
    let dir = empty.mkdir("capabilities");
    empty.write("capabilities/readme.md", "only ignored files");
    let catalog = empty.ok();
    assert_eq!(catalog.source, CatalogSource::Directory(dir));
    assert!(catalog.is_present());
    assert!(catalog.records.is_empty());
}

#[test]
fn single_file_beside_directory_is_mixed_layouts() {
    let agent = Agent::new();
    let toml = agent.write("capabilities.toml", "");
    let dir = agent.mkdir("capabilities");
    let err = agent.err();
    assert_eq!(err.code(), "mixed_layouts");
    assert_eq!(err.path(), agent.dir);
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: mixed capability catalog layouts: {}, {}",
            q(&agent.dir),
            q(&toml),
            q(&dir)
        )
    );

    let agent = Agent::new();
    let json = agent.write("capabilities.json", "{}");
    let dir = agent.mkdir("capabilities");
    let err = agent.err();
    assert_eq!(err.code(), "mixed_layouts");
    assert!(matches!(&err, CatalogError::MixedLayouts { paths, .. } if *paths == [json, dir]));
}

#[test]
fn mixed_layouts_is_checked_before_multiple_files() {
    let agent = Agent::new();
    let toml = agent.write("capabilities.toml", "");
    let json = agent.write("capabilities.json", "{}");
    let dir = agent.mkdir("capabilities");
    let err = agent.err();
    assert_eq!(err.code(), "mixed_layouts");
    assert!(err.to_string().ends_with(&format!(
        "layouts: {}, {}, {}",
        q(&toml),
        q(&json),
        q(&dir)
    )));
}

#[test]
fn both_single_files_is_multiple_catalog_files() {
    let agent = Agent::new();
    let toml = agent.write("capabilities.toml", toml_record("x"));
    let json = agent.write("capabilities.json", json_record("x"));
    let err = agent.err();
    assert_eq!(err.code(), "multiple_catalog_files");
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: multiple capability catalog files: {}, {}",
            q(&agent.dir),
            q(&toml),
            q(&json)
        )
    );
}

#[test]
fn mixed_formats_inside_directory() {
    let agent = Agent::new();
    let b = agent.write("capabilities/b.toml", toml_record("b"));
    let a = agent.write("capabilities/a.json", json_record("a"));
    let d = agent.write("capabilities/d.toml", toml_record("d"));
    let err = agent.err();
    assert_eq!(err.code(), "mixed_formats");
    assert_eq!(err.path(), agent.path("capabilities"));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: mixed capability file formats: {}, {}, {}",
            q(&agent.path("capabilities")),
            q(&b),
            q(&d),
            q(&a)
        )
    );
}

#[test]
fn catalog_file_that_is_a_directory() {
    for name in ["capabilities.toml", "capabilities.json"] {
        let agent = Agent::new();
        let path = agent.mkdir(name);
        let err = agent.err();
        assert_eq!(err.code(), "not_a_file");
        assert!(matches!(
            err,
            CatalogError::NotAFile {
                kind: NotAFileKind::Directory,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            format!("capability catalog file {} must be a file", q(&path))
        );
    }
}

#[cfg(unix)]
#[test]
fn catalog_file_that_is_a_special_file() {
    let agent = Agent::new();
    let _socket = agent.socket("capabilities.json");
    let err = agent.err();
    assert_eq!(err.code(), "not_a_file");
    assert_eq!(
        err.to_string(),
        format!(
            "capability catalog file {} must be a regular file",
            q(&agent.path("capabilities.json"))
        )
    );
}

#[test]
fn capabilities_that_is_a_file() {
    let agent = Agent::new();
    let path = agent.write("capabilities", "not a directory");
    let err = agent.err();
    assert_eq!(err.code(), "not_a_directory");
    assert_eq!(err.path(), path);
    assert_eq!(
        err.to_string(),
        format!(
            "capability catalog directory {} must be a directory",
            q(&path)
        )
    );
}

#[cfg(unix)]
#[test]
fn symlinked_catalog_file_is_rejected_without_leaking_the_target() {
    for name in ["capabilities.toml", "capabilities.json"] {
        let agent = Agent::new();
        let target = agent.outside("secret-target.txt", "TOPSECRET = \"hunter2\"");
        let link = agent.symlink(&target, name);
        let err = agent.err();
        assert_eq!(err.code(), "symlink");
        assert!(matches!(
            err,
            CatalogError::Symlink {
                subject: PathSubject::CatalogFile,
                ..
            }
        ));
        let message = err.to_string();
        assert_eq!(
            message,
            format!(
                "capability catalog file {} must be a file, not a symlink",
                q(&link)
            )
        );
        assert!(!message.contains("hunter2") && !message.contains("secret-target"));
    }
}

#[cfg(unix)]
#[test]
fn dangling_symlink_is_still_a_symlink() {
    let agent = Agent::new();
    agent.symlink(&agent.tmp.path().join("nowhere"), "capabilities.toml");
    assert_eq!(agent.err().code(), "symlink");
}

#[cfg(unix)]
#[test]
fn symlinked_capabilities_directory_is_rejected() {
    let agent = Agent::new();
    let real = agent.tmp.path().join("real-caps");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("x.toml"), toml_record("x")).unwrap();
    let link = agent.symlink(&real, "capabilities");
    let err = agent.err();
    assert_eq!(err.code(), "symlink");
    assert_eq!(
        err.to_string(),
        format!(
            "capability catalog directory {} must be a directory, not a symlink",
            q(&link)
        )
    );
    let deps = catalog_dependency_paths(&agent.dir).unwrap_err();
    assert_eq!(deps.code(), "symlink");
    assert_eq!(deps.path(), link);
}

#[cfg(unix)]
#[test]
fn symlinked_record_file_is_rejected_without_leaking_the_target() {
    let agent = Agent::new();
    agent.write("capabilities/a.toml", toml_record("a"));
    let target = agent.outside(
        "b-target.toml",
        "id = \"TOPSECRET\"\nsummary = \"s\"\noutcome = \"o\"\n",
    );
    let link = agent.symlink(&target, "capabilities/b.toml");
    let err = agent.err();
    assert_eq!(err.code(), "symlink");
    assert_eq!(err.path(), link);
    let message = err.to_string();
    assert_eq!(
        message,
        format!(
            "read capability catalog entry {}: must be a file, not a symlink",
            q(&link)
        )
    );
    assert!(!message.contains("TOPSECRET") && !message.contains("b-target"));
    assert_eq!(
        catalog_dependency_paths(&agent.dir).unwrap_err().code(),
        "symlink"
    );
}

#[cfg(unix)]
#[test]
fn symlinked_record_is_reported_before_mixed_formats() {
    let agent = Agent::new();
    let target = agent.outside("t.json", json_record("a"));
    agent.symlink(&target, "capabilities/a.json");
    agent.write("capabilities/b.toml", toml_record("b"));
    assert_eq!(agent.err().code(), "symlink");
}

#[cfg(unix)]
#[test]
fn symlinked_dot_or_other_extension_entries_are_ignored() {
    let agent = Agent::new();
    let target = agent.outside("t.toml", toml_record("t"));
    agent.symlink(&target, "capabilities/.hidden.toml");
    agent.symlink(&target, "capabilities/notes.txt");
    agent.write("capabilities/a.toml", toml_record("a"));
    assert_eq!(ids(&agent), ["a"]);
}

#[cfg(unix)]
#[test]
fn path_type_errors_come_in_probe_order_before_conflicts() {
    // A symlinked capabilities.json is reported even though capabilities/ also exists.
    let agent = Agent::new();
    agent.write("capabilities.toml", toml_record("x"));
    let target = agent.outside("t.json", "{}");
    agent.symlink(&target, "capabilities.json");
    agent.mkdir("capabilities");
    let err = agent.err();
    assert_eq!(err.code(), "symlink");
    assert_eq!(err.path(), agent.path("capabilities.json"));
}

#[test]
fn agent_directory_must_be_given_exist_and_be_a_directory() {
    let err = load_agent_catalog(std::path::Path::new("  ")).unwrap_err();
    assert_eq!(err.code(), "agent_dir_required");
    assert_eq!(err.to_string(), "agent directory is required");
    assert_eq!(
        load_agent_catalog(std::path::Path::new(""))
            .unwrap_err()
            .code(),
        "agent_dir_required"
    );

    let agent = Agent::new();
    let missing = agent.tmp.path().join("missing");
    let err = load_agent_catalog(&missing).unwrap_err();
    assert_eq!(err.code(), "io");
    assert!(
        err.to_string()
            .starts_with(&format!("open agent directory {}: ", q(&missing)))
    );

    let file = agent.outside("plain-file", "x");
    let err = load_agent_catalog(&file).unwrap_err();
    assert_eq!(err.code(), "not_a_directory");
    assert_eq!(
        err.to_string(),
        format!("open agent directory {}: must be a directory", q(&file))
    );
}

#[test]
fn agent_directory_path_is_trimmed() {
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        format!("[[capabilities]]\n{}", toml_record("x")),
    );
    let padded = PathBuf::from(format!(" {}\n", agent.dir.display()));
    let catalog = load_agent_catalog(&padded).unwrap();
    assert_eq!(
        catalog.source,
        CatalogSource::TomlFile(agent.path("capabilities.toml"))
    );
}

#[cfg(unix)]
#[test]
fn symlinked_agent_directory_or_ancestor_is_rejected() {
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        format!("[[capabilities]]\n{}", toml_record("x")),
    );
    let link = agent.tmp.path().join("agent-link");
    std::os::unix::fs::symlink(&agent.dir, &link).unwrap();
    let err = load_agent_catalog(&link).unwrap_err();
    assert_eq!(err.code(), "symlink");
    assert_eq!(
        err.to_string(),
        format!(
            "open agent directory {}: must be a directory, not a symlink",
            q(&link)
        )
    );

    let parent_link = agent.tmp.path().join("parent-link");
    std::os::unix::fs::symlink(agent.tmp.path(), &parent_link).unwrap();
    let through = parent_link.join("agent");
    let err = load_agent_catalog(&through).unwrap_err();
    assert_eq!(err.code(), "symlink");
    assert_eq!(
        err.to_string(),
        format!(
            "open agent directory {}: path component {} is a symlink",
            q(&through),
            q(&parent_link)
        )
    );
    assert_eq!(
        catalog_dependency_paths(&through).unwrap_err().code(),
        "symlink"
    );
}

#[test]
fn dependency_paths_without_directory_are_the_three_probes_sorted() {
    let agent = Agent::new();
    let expected = vec![
        agent.path("capabilities"),
        agent.path("capabilities.json"),
        agent.path("capabilities.toml"),
    ];
    assert_eq!(catalog_dependency_paths(&agent.dir).unwrap(), expected);
    agent.write("capabilities", "a file, not a directory");
    assert_eq!(catalog_dependency_paths(&agent.dir).unwrap(), expected);
    let missing = agent.tmp.path().join("no-such-agent");
    assert_eq!(catalog_dependency_paths(&missing).unwrap().len(), 3);
    assert_eq!(
        catalog_dependency_paths(std::path::Path::new(" "))
            .unwrap_err()
            .code(),
        "agent_dir_required"
    );
}

#[test]
fn dependency_paths_list_every_considered_record_file_in_byte_order() {
    let agent = Agent::new();
    agent.write("capabilities/b.json", json_record("b"));
    agent.write("capabilities/a.toml", toml_record("a"));
    agent.write("capabilities/.hidden.toml", "");
    agent.write("capabilities/notes.txt", "");
    agent.write("capabilities/nested/c.toml", toml_record("c"));
    agent.mkdir("capabilities/dir.json");
    assert_eq!(
        catalog_dependency_paths(&agent.dir).unwrap(),
        [
            agent.path("capabilities"),
            agent.path("capabilities.json"),
            agent.path("capabilities.toml"),
            agent.path("capabilities/a.toml"),
            agent.path("capabilities/b.json"),
        ]
    );
}
