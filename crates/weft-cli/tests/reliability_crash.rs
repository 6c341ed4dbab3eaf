//! Crash safety: a publish storm against a real `weft serve`, `SIGKILL` at a random moment,
//! a restart on the same data directory, and a check that every acknowledged (2xx) write is
//! there with the revision it was acknowledged with.
//!
//! `WEFT_CRASH_ROUNDS` sets the number of kill/restart rounds (default 5; `100` for the long
//! run of docs/reliability.md), `WEFT_CRASH_SEED` replays a run (the seed is printed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use harness::{Node, agent, descriptor, request, tempdir};
use serde_json::json;

/// Client threads publishing at once.
const WRITERS: usize = 4;

/// A small deterministic generator (xorshift64*), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the node acknowledged for one capability (`id@1.0.0`, one per provider).
#[derive(Debug, Clone)]
struct Acked {
    provider: String,
    revision: String,
    title: String,
}

/// One writer's record: acknowledged writes by capability id, and the capability whose
/// write was in flight when the node died (its outcome is unknown: either state is fine).
#[derive(Debug, Default)]
struct Journal {
    acked: BTreeMap<String, Acked>,
    acks: usize,
    in_flight: Option<String>,
}

/// Publishes until the node stops answering. Each step either registers a new provider
/// with one descriptor or revises the title of one this writer registered before.
fn storm(url: String, token: String, round: usize, writer: usize, seed: u64) -> Journal {
    let agent = agent(Duration::from_secs(10));
    let mut rng = Rng(seed | 1);
    let mut journal = Journal::default();
    let mut ids: Vec<String> = Vec::new();
    for step in 0.. {
        let (id, title) = if ids.is_empty() || rng.below(3) != 0 {
            let id = format!("cap-r{round}-w{writer}-{step}");
            ids.push(id.clone());
            (id, format!("first {step}"))
        } else {
            let id = ids[rng.below(ids.len() as u64) as usize].clone();
            (id, format!("revised at {step}"))
        };
        let provider = format!("p-{id}");
        let body = serde_json::to_vec(&json!({
            "node_id": format!("n{writer}"),
            "descriptors": [descriptor(&id, "1.0.0", &title)],
        }))
        .unwrap();
        journal.in_flight = Some(id.clone());
        let url = format!("{url}/v1/providers/{provider}");
        let Ok(r) = request(&agent, "PUT", &url, Some(&token), Some(&body), &[]) else {
            return journal; // The node is gone: this write's fate is unknown.
        };
        if !(200..300).contains(&r.status) {
            // A response that is not an acknowledgement (the node dies mid-request can
            // only show up as a transport error, so this is a real failure).
            panic!("PUT {provider}: {} {}", r.status, r.text);
        }
        let revision = r.body["descriptors"][0]["revision"]
            .as_str()
            .unwrap_or_else(|| panic!("no revision in {}", r.text))
            .to_owned();
        journal.in_flight = None;
        journal.acks += 1;
        journal.acked.insert(
            id,
            Acked {
                provider,
                revision,
                title,
            },
        );
    }
    unreachable!()
}

/// Checks one acknowledged capability on a restarted node. `settled` is false for the one
/// whose later write was in flight at the kill: then the acknowledged revision must be in
/// the history, and the current one may be either.
fn verify(node: &Node, token: &str, id: &str, acked: &Acked, settled: bool) {
    let view = node.get(&format!("/v1/capabilities/{id}/versions/1.0.0"), token);
    assert_eq!(view.status, 200, "{id} lost: {}", view.text);
    let history: Vec<&str> = view.body["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["revision"].as_str().unwrap())
        .collect();
    assert!(
        history.contains(&acked.revision.as_str()),
        "{id}: acknowledged revision {} not in history {history:?}",
        acked.revision
    );
    if settled {
        assert_eq!(
            view.body["revision"], acked.revision,
            "{id}: current revision is not the last acknowledged one ({:?})",
            acked.title
        );
        assert_eq!(view.body["descriptor"]["title"], acked.title.as_str());
        let provider = node.get(&format!("/v1/providers/{}", acked.provider), token);
        assert_eq!(provider.status, 200, "{}", provider.text);
        assert_eq!(provider.body["descriptors"][0]["id"], id);
    }
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a number")),
    )
}

#[test]
fn acknowledged_writes_survive_sigkill_at_random_moments() {
    let rounds = env_number("WEFT_CRASH_ROUNDS").unwrap_or(5) as usize;
    let seed = env_number("WEFT_CRASH_SEED").unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    });
    println!("crash safety: {rounds} rounds, WEFT_CRASH_SEED={seed}");
    let mut rng = Rng(seed | 1);
    let dir = tempdir();
    let mut node = Node::start(dir.path(), &[]);
    let token = node.admin();
    // Everything acknowledged so far (all rounds), and the ids left unsettled by a kill.
    let mut acked: BTreeMap<String, Acked> = BTreeMap::new();
    let mut unsettled: BTreeMap<String, Acked> = BTreeMap::new();
    let mut checks = 0usize;
    let mut total_acks = 0usize;
    for round in 0..rounds {
        let journals = Arc::new(Mutex::new(Vec::new()));
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let (url, token) = (node.url.clone(), token.clone());
                let writer_seed = rng.next();
                let journals = Arc::clone(&journals);
                std::thread::spawn(move || {
                    let journal = storm(url, token, round, writer, writer_seed);
                    journals.lock().unwrap().push(journal);
                })
            })
            .collect();
        // Let the storm run 50-600 ms, then kill the node without warning.
        std::thread::sleep(Duration::from_millis(50 + rng.below(550)));
        node.kill9();
        for writer in writers {
            writer.join().expect("a writer panicked");
        }
        let journals = std::mem::take(&mut *journals.lock().unwrap());
        let mut round_writes = 0;
        let mut in_flight = Vec::new();
        for journal in journals {
            round_writes += journal.acks;
            acked.extend(journal.acked);
            in_flight.extend(journal.in_flight);
        }
        total_acks += round_writes;
        // The store reopens on the same data directory.
        node = Node::start(dir.path(), &[]);
        assert_eq!(node.admin(), token);
        let listed = node.get("/v1/capabilities?limit=1", &token);
        assert_eq!(listed.status, 200, "{}", listed.text);
        for id in &in_flight {
            if let Some(a) = acked.get(id) {
                unsettled.insert(id.clone(), a.clone());
            }
        }
        // Every acknowledged write so far, on every round.
        for (id, a) in &acked {
            let settled = !unsettled.contains_key(id);
            verify(&node, &token, id, a, settled);
            checks += 1;
        }
        println!(
            "round {}/{rounds}: {round_writes} writes acknowledged, {} capabilities checked, all present",
            round + 1,
            acked.len()
        );
        // An in-flight write's fate is now fixed: record what the node holds as settled.
        for id in std::mem::take(&mut unsettled).into_keys() {
            let view = node.get(&format!("/v1/capabilities/{id}/versions/1.0.0"), &token);
            let entry = acked.get_mut(&id).unwrap();
            entry.revision = view.body["revision"].as_str().unwrap().to_owned();
            entry.title = view.body["descriptor"]["title"]
                .as_str()
                .unwrap()
                .to_owned();
        }
    }
    assert!(
        !acked.is_empty(),
        "no write was acknowledged in {rounds} rounds"
    );
    println!(
        "crash safety: {rounds} rounds, {total_acks} acknowledged writes to {} capabilities, {checks} checks, all present",
        acked.len()
    );
}
