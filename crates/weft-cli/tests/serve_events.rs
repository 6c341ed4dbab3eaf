//! `weft serve`: the change feed (`/v1/events`, Server-Sent Events) over real HTTP: resume
//! without gaps or duplicates, retention, tenant isolation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::time::{Duration, Instant};

use harness::{Node, SseEvent, assert_error, descriptor, tempdir};
use serde_json::json;

/// Registers a fresh provider with one new descriptor: two events
/// (`capability.published`, then `provider.registered`).
fn publish(node: &Node, token: &str, n: usize) {
    let r = node.register(
        token,
        &format!("p{n}"),
        "n1",
        &[descriptor(&format!("cap-{n}"), "1.0.0", "C")],
    );
    assert_eq!(r.status, 201, "{}", r.text);
}

fn ids(events: &[SseEvent]) -> Vec<u64> {
    events.iter().map(|e| e.id).collect()
}

fn check_shape(e: &SseEvent) {
    assert_eq!(e.data["id"], e.id, "{e:?}");
    assert_eq!(e.data["kind"], e.event.as_str(), "{e:?}");
    assert!(e.data["at"].as_str().unwrap().ends_with('Z'), "{e:?}");
}

#[test]
fn a_reader_resumes_with_last_event_id_without_gap_or_duplicate() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let read = node.token(&admin, None, &["capabilities:read"]);
    let mut feed = node.events(&read, &[], "?after=0");
    for n in 0..6 {
        publish(&node, &admin, n);
    }
    let (status, headers) = feed.head(Duration::from_secs(10)).expect("a response head");
    assert_eq!(status, 200);
    assert_eq!(
        headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert!(headers.get("x-request-id").unwrap().starts_with("req-"));
    let first = feed.take(5);
    assert_eq!(ids(&first), [1, 2, 3, 4, 5]);
    first.iter().for_each(check_shape);
    assert_eq!(first[0].event, "capability.published");
    assert_eq!(
        first[0].data["data"],
        json!({"id": "cap-0", "version": "1.0.0", "provider_id": "p0", "previous_revision": null,
               "revision": first[0].data["data"]["revision"]})
    );
    assert_eq!(first[1].event, "provider.registered");
    assert_eq!(
        first[1].data["data"],
        json!({"provider_id": "p0", "node_id": "n1", "descriptors": ["cap-0@1.0.0"]})
    );
    drop(feed); // Disconnect mid-way, after event 5 of 12.

    for n in 6..9 {
        publish(&node, &admin, n);
    }
    let r = node.call(
        "POST",
        "/v1/providers/p8/unregister",
        Some(&admin),
        None,
        &[],
    );
    assert_eq!(r.body["unregistered"], true);
    // 6 providers × 2 + 3 × 2 + 1 unregister = 19 events; resume after 5.
    let mut resumed = node.events(&read, &[("last-event-id", "5")], "");
    let rest = resumed.take(14);
    assert_eq!(ids(&rest), (6..=19).collect::<Vec<_>>());
    rest.iter().for_each(check_shape);
    assert_eq!(rest.last().unwrap().event, "provider.unregistered");
    assert_eq!(
        rest.last().unwrap().data["data"],
        json!({"provider_id": "p8", "node_id": "n1"})
    );
    assert!(
        resumed.next(Duration::from_millis(500)).is_none(),
        "no duplicate, nothing extra"
    );
    // Live events continue on the same stream.
    publish(&node, &admin, 9);
    assert_eq!(ids(&resumed.take(2)), [20, 21]);

    // `?after=` is the same as the header, and the header wins over it.
    let mut by_query = node.events(&read, &[], "?after=17");
    assert_eq!(ids(&by_query.take(4)), [18, 19, 20, 21]);
    let mut both = node.events(&read, &[("last-event-id", "20")], "?after=1");
    assert_eq!(ids(&both.take(1)), [21]);
    assert!(both.next(Duration::from_millis(300)).is_none());
}

#[test]
fn a_feed_without_a_position_starts_with_the_next_change() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    for n in 0..2 {
        publish(&node, &admin, n);
    }
    let mut feed = node.events(&admin, &[], "");
    // The subscription exists once the request reached the handler; give it time.
    std::thread::sleep(Duration::from_millis(500));
    publish(&node, &admin, 2);
    let got = feed.take(2);
    assert_eq!(ids(&got), [5, 6]);
    assert_eq!(got[0].data["data"]["id"], "cap-2");
}

#[test]
fn revisions_and_updates_are_announced_with_their_previous_revision() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let d = descriptor("echo", "1.0.0", "Echo");
    let first = node.register(&admin, "p1", "n1", std::slice::from_ref(&d));
    let rev_a = first.body["descriptors"][0]["revision"].clone();
    let mut changed = d.clone();
    changed["title"] = json!("Echo 2");
    let second = node.register(&admin, "p1", "n1", &[changed]);
    let rev_b = second.body["descriptors"][0]["revision"].clone();
    // A third content (its description differs too): revised once more.
    let third = node.register(&admin, "p1", "n1", &[descriptor("echo", "1.0.0", "Echo 2")]);
    assert_eq!(third.body["descriptors"][0]["status"], "revised");
    let mut feed = node.events(&admin, &[], "?after=2");
    let got = feed.take(4);
    assert_eq!(
        got.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
        [
            "capability.revised",
            "provider.updated",
            "capability.revised",
            "provider.updated"
        ]
    );
    assert_eq!(got[0].data["data"]["previous_revision"], rev_a);
    assert_eq!(got[0].data["data"]["revision"], rev_b);
    assert_eq!(got[2].data["data"]["previous_revision"], rev_b);
    let again = node.register(&admin, "p1", "n1", &[descriptor("echo", "1.0.0", "Echo 2")]);
    assert_eq!(again.body["changed"], false);
    assert!(
        feed.next(Duration::from_millis(500)).is_none(),
        "an unchanged registration emits nothing"
    );
}

#[test]
fn resuming_before_the_retention_window_is_410_events_gone() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--event-retention", "3"]);
    let admin = node.admin();
    for n in 0..5 {
        publish(&node, &admin, n);
    }
    // Events 1..=10 were written; 8, 9, 10 are retained.
    for position in ["0", "5", "6"] {
        let mut feed = node.events(&admin, &[("last-event-id", position)], "");
        let r = feed.error();
        assert_error(&r, 410, "events_gone");
        let requested: u64 = position.parse().unwrap();
        assert_eq!(
            r.body["error"]["details"],
            json!({"requested": requested, "oldest": 8})
        );
    }
    let r = node.get("/v1/events?after=1", &admin);
    assert_error(&r, 410, "events_gone");
    let mut feed = node.events(&admin, &[("last-event-id", "7")], "");
    assert_eq!(ids(&feed.take(3)), [8, 9, 10]);
    let mut current = node.events(&admin, &[("last-event-id", "10")], "");
    publish(&node, &admin, 5);
    assert_eq!(ids(&current.take(2)), [11, 12]);
    assert_eq!(ids(&feed.take(2)), [11, 12]);
}

#[test]
fn another_tenants_stream_sees_none_of_these_events() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let acme = node.tenant(&admin, "acme");
    let mut acme_feed = node.events(&acme, &[], "?after=0");
    let mut default_feed = node.events(&admin, &[], "?after=0");
    for n in 0..3 {
        publish(&node, &admin, n);
    }
    assert_eq!(ids(&default_feed.take(6)), [1, 2, 3, 4, 5, 6]);
    assert!(
        acme_feed.next(Duration::from_millis(800)).is_none(),
        "acme saw default's events"
    );
    // Acme's own changes are numbered from 1 in its own sequence, and default does not see them.
    let r = node.register(&acme, "p0", "n1", &[descriptor("cap-0", "1.0.0", "C")]);
    assert_eq!(r.status, 201);
    let mine = acme_feed.take(2);
    assert_eq!(ids(&mine), [1, 2]);
    assert_eq!(mine[1].data["data"]["provider_id"], "p0");
    assert!(default_feed.next(Duration::from_millis(500)).is_none());
    // Default's later ids are not gone for acme: acme resumes from its own numbering.
    let acme_read = node.token(&acme, None, &["capabilities:read"]);
    let mut again = node.events(&acme_read, &[("last-event-id", "1")], "");
    assert_eq!(ids(&again.take(1)), [2]);
}

#[test]
fn bad_positions_and_scopes_are_refused_before_streaming() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let publish_only = node.token(&admin, None, &["capabilities:publish"]);
    for (headers, query) in [
        (vec![("last-event-id", "abc")], ""),
        (vec![("last-event-id", "-1")], ""),
        (vec![], "?after=1.5"),
        (vec![], "?from=1"),
    ] {
        let mut feed = node.events(&admin, &headers, query);
        assert_error(&feed.error(), 400, "invalid_request");
    }
    assert_error(
        &node.events(&publish_only, &[], "?after=0").error(),
        403,
        "forbidden",
    );
    assert_error(
        &node.events("weft_nope", &[], "?after=0").error(),
        401,
        "unauthorized",
    );
}

#[test]
fn the_response_head_arrives_before_the_first_event() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let mut feed = node.events(&node.admin(), &[], "");
    let head = feed.head(Duration::from_secs(3));
    assert_eq!(head.map(|h| h.0), Some(200), "no response head within 3 s");
}

#[test]
fn sigterm_ends_open_event_streams_and_exits() {
    let dir = tempdir();
    let mut node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    publish(&node, &admin, 0);
    let mut feed = node.events(&admin, &[], "?after=0");
    assert_eq!(ids(&feed.take(2)), [1, 2]);
    let started = Instant::now();
    let status = node.stop_term_within(Duration::from_secs(10));
    assert!(
        status.is_some_and(|s| s.success()),
        "still running {:?} after SIGTERM with one open event stream",
        started.elapsed()
    );
    drop(feed);
}
