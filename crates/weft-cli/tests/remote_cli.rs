//! The client-side commands (`publish`, `discover`, `describe`, `show`, `nodes`, `token`,
//! `tenant`) run as the real binary against a real `weft serve` child process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_remote;

use std::time::{Duration, Instant};

use common_remote::{Node, Run, example, run};
use serde_json::{Value, json};

/// `id@version  revision  status` lines of a publish, split.
fn outcomes(run: &Run) -> Vec<(String, String, String)> {
    run.ok()
        .lines()
        .map(|line| {
            let parts: Vec<&str> = line.split("  ").collect();
            assert_eq!(parts.len(), 3, "{line:?}");
            (parts[0].into(), parts[1].into(), parts[2].into())
        })
        .collect()
}

/// The first column of every table row after the header.
fn first_column(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_owned())
        .collect()
}

fn ids(list: &Value) -> Vec<String> {
    list["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}@{}",
                d["id"].as_str().unwrap(),
                d["version"].as_str().unwrap()
            )
        })
        .collect()
}

/// Creates a token and returns (secret, id).
fn token(node: &Node, extra: &[&str]) -> (String, String) {
    let mut args = vec!["token", "create", "--name", "test", "--json"];
    args.extend_from_slice(extra);
    let created = node.weft(&args).json();
    (
        created["token"].as_str().unwrap().to_owned(),
        created["id"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn publish_says_new_then_unchanged_then_revised_and_show_follows_the_history() {
    let node = Node::start();
    let echo = example("echo.json");
    let first = node.weft(&["publish", &echo, "--provider", "p1"]);
    let lines = outcomes(&first);
    assert_eq!(lines.len(), 1);
    let (id, old_revision, status) = &lines[0];
    assert_eq!((id.as_str(), status.as_str()), ("echo@1.0.0", "new"));
    assert!(old_revision.starts_with("sha256:") && old_revision.len() == 71);
    assert!(
        first
            .stderr
            .contains("registered provider p1 on node local")
    );

    let streaming = node.weft(&["publish", &example("streaming.toml"), "--provider", "p2"]);
    let lines = outcomes(&streaming);
    let published: Vec<(&str, &str)> = lines
        .iter()
        .map(|(id, _, status)| (id.as_str(), status.as_str()))
        .collect();
    assert_eq!(
        published,
        [
            ("count@1.0.0", "new"),
            ("sum@1.0.0", "new"),
            ("upper@1.0.0", "new")
        ]
    );

    let again = outcomes(&node.weft(&["publish", &echo, "--provider", "p1"]));
    assert_eq!(again[0].1, *old_revision);
    assert_eq!(again[0].2, "unchanged");

    let text = std::fs::read_to_string(&echo).unwrap();
    let edited = text.replace(
        "Return the supplied text unchanged.",
        "Return the given text as it is.",
    );
    assert_ne!(text, edited);
    let edited = node.file("echo-edited.json", &edited);
    let revised = outcomes(&node.weft(&["publish", &edited, "--provider", "p1"]));
    let new_revision = &revised[0].1;
    assert_eq!(revised[0].2, "revised");
    assert_ne!(new_revision, old_revision);

    let shown = node.weft(&["show", "echo"]);
    let out = shown.ok();
    let row = out.lines().find(|l| l.starts_with("1.0.0 ")).unwrap();
    assert!(row.contains(new_revision.as_str()), "{out}");
    assert!(row.contains("unary") && row.contains("Echo") && row.contains("p1 (local)"));
    assert!(!out.contains(old_revision.as_str()), "{out}");

    let version = node.weft(&["show", "echo@1.0.0", "--json"]).json();
    assert_eq!(version["revision"], json!(new_revision));
    let history: Vec<&str> = version["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["revision"].as_str().unwrap())
        .collect();
    assert_eq!(history, [old_revision.as_str(), new_revision.as_str()]);
    assert_eq!(
        version["descriptor"]["description"],
        json!(
            "Return the given text as it is. Input: {\"text\": string}. Output: the same object."
        )
    );
    assert_eq!(version["providers"][0]["provider_id"], json!("p1"));

    let human = node.weft(&["show", "echo@1.0.0"]);
    let out = human.ok();
    assert!(out.starts_with("echo@1.0.0\n"), "{out}");
    assert!(out.contains(&format!("revision: {new_revision}")), "{out}");
    assert!(out.contains("\"title\": \"Echo\""), "{out}");

    node.weft(&["show", "nope"]).api_error("not_found");
    node.weft(&["show", "echo@9.9.9"]).api_error("not_found");
}

#[test]
fn discover_prints_a_table_json_and_filters() {
    let node = Node::start();
    node.weft(&["publish", &example("echo.json"), "--provider", "p1"])
        .ok();
    node.weft(&[
        "publish",
        &example("streaming.toml"),
        "--provider",
        "p2",
        "--node",
        "gpu-1",
    ])
    .ok();

    let human = node.weft(&["discover"]);
    let out = human.ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["ID@VERSION", "IO_MODE", "REVISION", "TITLE"]
    );
    assert_eq!(
        first_column(out),
        ["count@1.0.0", "echo@1.0.0", "sum@1.0.0", "upper@1.0.0"]
    );
    // Columns line up: every row's revision starts where the header's REVISION does.
    let column = lines[0].find("REVISION").unwrap();
    for line in &lines[1..] {
        assert_eq!(line.find("sha256:"), Some(column), "{out}");
    }
    assert!(lines[4].ends_with("Uppercase"), "{out}");
    assert!(!out.contains('\u{1b}'));

    let list = node.weft(&["discover", "--json"]).json();
    assert_eq!(
        ids(&list),
        ["count@1.0.0", "echo@1.0.0", "sum@1.0.0", "upper@1.0.0"]
    );
    assert_eq!(list["revisions"].as_object().unwrap().len(), 4);
    assert_eq!(list["nextCursor"], Value::Null);
    assert_eq!(list["hasMore"], json!(false));

    let only = node.weft(&["discover", "--id", "echo", "--json"]).json();
    assert_eq!(ids(&only), ["echo@1.0.0"]);
    let only = node.weft(&["discover", "--q", "uppercase"]);
    assert_eq!(first_column(only.ok()), ["upper@1.0.0"]);
    let only = node.weft(&["discover", "--node", "gpu-1", "--json"]).json();
    assert_eq!(ids(&only), ["count@1.0.0", "sum@1.0.0", "upper@1.0.0"]);
    let only = node
        .weft(&["discover", "--io-mode", "unary", "--json"])
        .json();
    assert_eq!(ids(&only), ["echo@1.0.0"]);
    node.weft(&["discover", "--node", "nowhere"])
        .api_error("not_found");
    node.weft(&["discover", "--io-mode", "sideways"])
        .api_error("invalid_request");
}

#[test]
fn discover_follows_cursors_until_every_page_is_fetched() {
    let node = Node::start();
    let count = 130;
    let descriptors: Vec<Value> = (0..count)
        .map(|i| {
            json!({"id": format!("gen-{i:03}"), "version": "1.0.0", "title": format!("Generated {i}"),
                   "description": "A generated capability.", "input_schema": {"type": "object"}})
        })
        .collect();
    let file = node.file(
        "many.json",
        &serde_json::to_string_pretty(&json!({ "descriptors": descriptors })).unwrap(),
    );
    let published = outcomes(&node.weft(&["publish", &file, "--provider", "gen"]));
    assert_eq!(published.len(), count);
    assert!(published.iter().all(|(_, _, status)| status == "new"));

    let expected: Vec<String> = (0..count).map(|i| format!("gen-{i:03}@1.0.0")).collect();
    // The default page size (100) needs two pages; 7 needs nineteen; the server's own
    // default (25) is covered by `--page-size 25`.
    for page_size in [None, Some("7"), Some("25")] {
        let mut args = vec!["discover", "--json"];
        if let Some(size) = page_size {
            args.extend(["--page-size", size]);
        }
        let list = node.weft(&args).json();
        assert_eq!(ids(&list), expected, "page size {page_size:?}");
        assert_eq!(list["revisions"].as_object().unwrap().len(), count);
        assert_eq!(list["hasMore"], json!(false));
        assert_eq!(list["nextCursor"], Value::Null);
    }
    let human = node.weft(&["discover", "--page-size", "30"]);
    assert_eq!(first_column(human.ok()), expected);

    assert_eq!(node.weft(&["discover", "--page-size", "0"]).code, 2);
}

#[test]
fn describe_shows_the_node_then_its_capabilities() {
    let node = Node::start();
    node.weft(&["publish", &example("echo.json"), "--provider", "p1"])
        .ok();
    node.weft(&[
        "publish",
        &example("streaming.toml"),
        "--provider",
        "p2",
        "--node",
        "gpu-1",
    ])
    .ok();

    let described = node.weft(&["describe", "gpu-1"]);
    let out = described.ok();
    let field = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].trim().to_owned())
            .unwrap_or_else(|| panic!("no {name} in {out}"))
    };
    assert_eq!(field("node"), "gpu-1");
    assert_eq!(field("status"), "ready");
    assert_eq!(field("providers"), "p2");
    assert_eq!(field("tags"), "count, sum, upper");
    assert!(field("last seen").ends_with('Z'));
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("ID@VERSION"))
        .collect();
    assert_eq!(
        first_column(&table.join("\n")),
        ["count@1.0.0", "sum@1.0.0", "upper@1.0.0"]
    );

    let json = node.weft(&["describe", "local", "--json"]).json();
    assert_eq!(json["node"]["node_id"], json!("local"));
    assert_eq!(json["node"]["providers"], json!(["p1"]));
    assert_eq!(json["node_id"], json!("local"));
    assert_eq!(ids(&json), ["echo@1.0.0"]);

    let unknown = node.weft(&["describe", "nowhere"]);
    unknown.api_error("not_found");
    assert!(unknown.stdout.is_empty());
}

#[test]
fn nodes_lists_every_node() {
    let node = Node::start();
    let empty = node.weft(&["nodes"]);
    assert!(empty.ok().is_empty());
    node.weft(&["publish", &example("echo.json"), "--provider", "p1"])
        .ok();
    node.weft(&[
        "publish",
        &example("streaming.toml"),
        "--provider",
        "p2",
        "--node",
        "gpu-1",
    ])
    .ok();
    let listed = node.weft(&["nodes"]);
    let out = listed.ok();
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NODE", "STATUS", "LAST_SEEN", "PROVIDERS", "TAGS"]
    );
    assert_eq!(lines[1][..2], ["gpu-1", "ready"]);
    assert_eq!(lines[1][3..], ["p2", "count,", "sum,", "upper"]);
    assert_eq!(lines[2][..2], ["local", "ready"]);
    assert_eq!(lines[2][3..], ["p1", "echo"]);
    assert_eq!(lines.len(), 3);

    let json = node.weft(&["nodes", "--json"]).json();
    let ids: Vec<&str> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["gpu-1", "local"]);
    assert_eq!(json["hasMore"], json!(false));
}

#[test]
fn an_invalid_file_is_reported_locally_and_nothing_is_sent() {
    let node = Node::start();
    let bad = node.file(
        "bad.json",
        "{\n  \"id\": \"Echo\",\n  \"version\": \"1.0\",\n  \"title\": \"t\",\n  \"description\": \"d\",\n  \"input_schema\": {}\n}\n",
    );
    let run = node.weft(&["publish", &bad, "--provider", "p1"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stdout.is_empty());
    let problems: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with(&bad)).collect();
    assert_eq!(problems.len(), 2, "{run:#?}");
    assert!(
        problems[0].starts_with(&format!("{bad}:2:9: invalid_id: ")),
        "{run:#?}"
    );
    assert!(
        problems[1].starts_with(&format!("{bad}:3:14: ")),
        "{run:#?}"
    );
    assert!(run.stderr.contains("nothing was published"));

    let broken = node.file("broken.toml", "id = \"echo\"\nversion = \n");
    let run = node.weft(&["publish", &broken, "--provider", "p1"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.starts_with(&format!("{broken}:2:")), "{run:#?}");

    let unsupported = node.file("echo.yaml", "id: echo\n");
    let run = node.weft(&["publish", &unsupported, "--provider", "p1"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains(": unsupported_file: "), "{run:#?}");

    // Nothing reached the node: no capability, no node, no provider.
    let list = node.weft(&["discover", "--json"]).json();
    assert_eq!(list["capabilities"], json!([]));
    assert_eq!(node.weft(&["nodes", "--json"]).json()["nodes"], json!([]));

    // Local problems are found before any connection is attempted.
    let offline = run_offline(&["publish", &bad, "--provider", "p1"]);
    assert_eq!(offline.code, 1);
    assert!(
        offline.stderr.contains(":2:9: invalid_id: "),
        "{offline:#?}"
    );
    assert!(!offline.stderr.contains("cannot reach"), "{offline:#?}");
}

/// Runs against a port nothing listens on.
fn run_offline(args: &[&str]) -> Run {
    let url = format!("http://127.0.0.1:{}", free_port());
    run(args, &[("WEFT_URL", &url), ("WEFT_TOKEN", "weft_x")])
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_rejection_by_the_node_lists_every_problem() {
    let node = Node::start();
    // Over the node's descriptor size limit, but within the raised local one.
    let big = json!({"id": "big", "version": "1.0.0", "title": "Big",
                     "description": "x".repeat(300 * 1024), "input_schema": {"type": "object"}});
    let file = node.file("big.json", &big.to_string());
    let local = node.weft(&["publish", &file, "--provider", "p1"]);
    assert_eq!(local.code, 1);
    assert!(
        local.stderr.contains(":1:1: descriptor_too_large: "),
        "{local:#?}"
    );

    let remote = node.weft(&[
        "publish",
        &file,
        "--provider",
        "p1",
        "--max-descriptor-bytes",
        "1000000",
    ]);
    remote.api_error("invalid_descriptor");
    assert!(
        remote.stderr.lines().any(|l| l.starts_with(&format!(
            "{file}: descriptor 0: /descriptors/0: descriptor_too_large: "
        ))),
        "{remote:#?}"
    );
    assert_eq!(
        node.weft(&["discover", "--json"]).json()["capabilities"],
        json!([])
    );
}

#[test]
fn an_idempotency_key_replays_the_first_answer() {
    let node = Node::start();
    let echo = example("echo.json");
    let args = [
        "publish",
        &echo,
        "--provider",
        "p1",
        "--idempotency-key",
        "k-1",
    ];
    let first = outcomes(&node.weft(&args));
    assert_eq!(first[0].2, "new");
    // A replay answers exactly as the first time ("new"), where a second publish would
    // have said "unchanged".
    let replay = outcomes(&node.weft(&args));
    assert_eq!(replay, first);
    let fresh = outcomes(&node.weft(&["publish", &echo, "--provider", "p1"]));
    assert_eq!(fresh[0].2, "unchanged");
    let other = node.weft(&[
        "publish",
        &example("streaming.toml"),
        "--provider",
        "p1",
        "--idempotency-key",
        "k-1",
    ]);
    other.api_error("idempotency_key_reused");
}

#[test]
fn tokens_are_created_listed_and_revoked() {
    let node = Node::start();
    let created = node.weft(&[
        "token",
        "create",
        "--name",
        "ci",
        "--scope",
        "capabilities:read",
        "--scope",
        "capabilities:call",
    ]);
    let out = created.ok();
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("no {name} in {out}"))
    };
    let secret = field("token");
    let id = field("id");
    assert!(secret.starts_with("weft_"), "{out}");
    assert!(id.starts_with("tok_"), "{out}");
    assert_eq!(field("scopes"), "capabilities:read, capabilities:call");
    assert!(created.stderr.contains("not shown again"));

    let listed = node.weft(&["token", "list"]);
    let row = listed
        .ok()
        .lines()
        .find(|l| l.starts_with(&id))
        .unwrap()
        .to_owned();
    assert!(row.contains(" ci ") && row.contains("capabilities:read, capabilities:call"));
    assert!(row.ends_with(" -"), "{row}");
    assert!(!listed.stdout.contains(&secret));

    node.weft_as(&secret, &["discover"]).ok();
    let revoked = node.weft(&["token", "revoke", &id]);
    assert!(revoked.ok().starts_with(&format!("revoked {id} (at ")));
    let list = node.weft(&["token", "list", "--json"]).json();
    let entry = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == json!(id))
        .unwrap();
    assert!(entry["revokedAt"].is_string(), "{entry}");
    node.weft_as(&secret, &["discover"])
        .api_error("unauthorized");
    node.weft(&["token", "revoke", "tok_nope"])
        .api_error("not_found");
    node.weft(&["token", "create", "--name", "x", "--scope", "everything"])
        .api_error("invalid_request");
    // A non-admin token cannot manage tokens.
    let (reader, _) = token(&node, &["--scope", "capabilities:read"]);
    node.weft_as(&reader, &["token", "list"])
        .api_error("forbidden");
}

#[test]
fn publishing_needs_the_publish_scope() {
    let node = Node::start();
    let echo = example("echo.json");
    let (reader, _) = token(&node, &["--scope", "capabilities:read"]);
    node.weft_as(&reader, &["publish", &echo, "--provider", "p1"])
        .api_error("forbidden");
    assert_eq!(
        node.weft(&["discover", "--json"]).json()["capabilities"],
        json!([])
    );

    // A publish-only token cannot read the provider to keep its node, so it names one.
    let (publisher, _) = token(&node, &["--scope", "capabilities:publish"]);
    let blind = node.weft_as(&publisher, &["publish", &echo, "--provider", "p1"]);
    blind.api_error("forbidden");
    assert!(blind.stderr.contains("pass --node"), "{blind:#?}");
    let named = node.weft_as(
        &publisher,
        &["publish", &echo, "--provider", "p1", "--node", "edge-1"],
    );
    assert_eq!(outcomes(&named)[0].2, "new");
    let listed = node
        .weft(&["discover", "--node", "edge-1", "--json"])
        .json();
    assert_eq!(ids(&listed), ["echo@1.0.0"]);
    // Without --node a later publish keeps the provider's node.
    node.weft(&["publish", &echo, "--provider", "p1"]).ok();
    let json = node.weft(&["nodes", "--json"]).json();
    assert_eq!(json["nodes"][0]["node_id"], json!("edge-1"));
    assert_eq!(json["nodes"].as_array().unwrap().len(), 1);
}

#[test]
fn tenants_are_created_listed_and_kept_apart() {
    let node = Node::start();
    node.weft(&["publish", &example("echo.json"), "--provider", "p1"])
        .ok();
    let created = node.weft(&["tenant", "create", "acme", "--name", "Acme Corp"]);
    let out = created.ok();
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().eq(["tenant:", "acme"])),
        "{out}"
    );
    assert!(out.contains("Acme Corp"), "{out}");
    node.weft(&["tenant", "create", "acme"])
        .api_error("conflict");
    let json = node.weft(&["tenant", "create", "beta", "--json"]).json();
    assert_eq!(json["id"], json!("beta"));
    assert_eq!(json["name"], json!("beta"));

    let listed = node.weft(&["tenant", "list"]);
    assert_eq!(first_column(listed.ok()), ["acme", "beta", "default"]);
    let list = node.weft(&["tenant", "list", "--json"]).json();
    assert_eq!(list["tenants"].as_array().unwrap().len(), 3);

    let (outsider, _) = token(&node, &["--tenant", "acme", "--scope", "capabilities:read"]);
    let discovered = node.weft_as(&outsider, &["discover"]);
    assert!(discovered.ok().is_empty(), "{discovered:#?}");
    let json = node.weft_as(&outsider, &["discover", "--json"]).json();
    assert_eq!(json["capabilities"], json!([]));
    node.weft_as(&outsider, &["show", "echo"])
        .api_error("not_found");
    node.weft_as(&outsider, &["tenant", "list"])
        .api_error("forbidden");
    // The admin still sees its own.
    assert_eq!(
        ids(&node.weft(&["discover", "--json"]).json()),
        ["echo@1.0.0"]
    );
}

#[test]
fn the_data_dir_supplies_the_url_and_admin_token() {
    let node = Node::start();
    let dir = node.data_dir.to_str().unwrap().to_owned();
    let by_flag = run(
        &[
            "publish",
            &example("echo.json"),
            "--provider",
            "p1",
            "--data-dir",
            &dir,
        ],
        &[],
    );
    assert_eq!(outcomes(&by_flag)[0].2, "new");
    let by_env = run(&["discover", "--json"], &[("WEFT_DATA_DIR", &dir)]);
    assert_eq!(ids(&by_env.json()), ["echo@1.0.0"]);

    // The local admin token is only ever sent to the node that wrote weft.url.
    let elsewhere = format!("http://127.0.0.1:{}", free_port());
    let refused = run(
        &["discover", "--data-dir", &dir],
        &[("WEFT_URL", &elsewhere)],
    );
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .starts_with("weft: no token for http://127.0.0.1:"),
        "{refused:#?}"
    );
    // An explicit token wins over the file.
    let wrong = run(
        &["discover", "--data-dir", &dir, "--token", "weft_wrong"],
        &[],
    );
    wrong.api_error("unauthorized");
}

#[test]
fn missing_settings_and_unreachable_nodes_are_clean_errors() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let missing = run(&["discover"], &[("WEFT_DATA_DIR", dir)]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .starts_with("weft: no node URL: pass --url or set WEFT_URL"),
        "{missing:#?}"
    );

    let started = Instant::now();
    let offline = run_offline(&["discover"]);
    assert_eq!(offline.code, 1, "{offline:#?}");
    assert!(
        offline
            .stderr
            .starts_with("weft: cannot reach http://127.0.0.1:"),
        "{offline:#?}"
    );
    assert_eq!(offline.stderr.lines().count(), 1, "{offline:#?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    for args in [
        &["publish", &example("echo.json"), "--provider", "p1"][..],
        &["token", "list"],
        &["show", "echo@1.0.0"],
    ] {
        let offline = run_offline(args);
        assert_eq!(offline.code, 1, "{offline:#?}");
        assert!(
            offline.stderr.starts_with("weft: cannot reach "),
            "{offline:#?}"
        );
    }

    let bad_url = run(
        &["nodes"],
        &[("WEFT_URL", "localhost:7411"), ("WEFT_TOKEN", "t")],
    );
    assert_eq!(bad_url.code, 1);
    assert!(bad_url.stderr.contains("invalid node URL"), "{bad_url:#?}");

    // Usage errors are clap's: exit 2.
    for args in [
        &["show", "@1.0.0"][..],
        &["token", "create", "--name", "x"],
        &["publish", "file.json"],
        &["discover", "--page-size", "101"],
    ] {
        assert_eq!(run(args, &[]).code, 2, "{args:?}");
    }
}
