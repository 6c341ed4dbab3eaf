//! Diagnostics: the node's call and stream counters as JSON (`GET /v1/diagnostics/node`) and
//! in the Prometheus text exposition format 0.0.4 (`GET /metrics`), written by hand.
//!
//! Both read the same [`weft_fabric::Diagnostics`] snapshot. Counters never reset while the
//! node runs; gauges (`active_*`) go up and down.

use std::collections::BTreeMap;
use std::fmt::{Display, Write as _};

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::header;
use axum::response::IntoResponse;
use weft_fabric::diagnostics::{CapabilitySnapshot, NodeSnapshot, TimingSnapshot};
use weft_registry::{Principal, Scope};

use super::ApiResult;
use crate::layers::require;
use crate::state::AppState;

/// The media type of `/metrics`.
pub const METRICS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The node's call and stream counters, per `id@version`, since it started.
///
/// The counters are node-wide: any authenticated token with `capabilities:read`, in any
/// tenant, sees the traffic of every tenant on this node, including the `id@version`s other
/// tenants call. No call ids or payloads are kept.
#[utoipa::path(get, path = "/v1/diagnostics/node", tag = "diagnostics",
    responses((status = 200, body = NodeSnapshot),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn node(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
) -> ApiResult<Json<NodeSnapshot>> {
    require(&principal, Scope::Read)?;
    Ok(Json(state.fabric.diagnostics().snapshot()))
}

/// The same counters in the Prometheus text format, with no authentication (like
/// `/healthz`) so a scraper needs no token.
///
/// It reveals the capability ids and traffic of every tenant: keep the node's port on the
/// operators' network, never on the public internet.
#[utoipa::path(get, path = "/metrics", tag = "diagnostics",
    responses((status = 200, body = String, content_type = "text/plain; version=0.0.4",
               description = "Prometheus text exposition format 0.0.4")))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let text = exposition(&state.fabric.diagnostics().snapshot());
    ([(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], text)
}

/// A label value escaped for the text format: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl Display) {
    out.push_str(name);
    for (i, (key, label)) in labels.iter().enumerate() {
        out.push(if i == 0 { '{' } else { ',' });
        let _ = write!(out, "{key}=\"{}\"", escape_label(label));
    }
    if !labels.is_empty() {
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// A family with one sample per capability and value of its extra `label` (if any).
type Family = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    fn(&CapabilitySnapshot) -> Vec<(String, u64)>,
);

/// `(name, type, help, extra label, values)` of every per-capability family but timings.
const FAMILIES: &[Family] = &[
    (
        "weft_calls_active",
        "gauge",
        "Unary calls admitted and not yet finished.",
        "",
        |c| one(c.active_calls),
    ),
    (
        "weft_calls_admitted_total",
        "counter",
        "Unary calls that took an admission slot.",
        "",
        |c| one(c.admitted),
    ),
    (
        "weft_calls_rejected_total",
        "counter",
        "Unary calls refused before admission, by code.",
        "code",
        |c| codes(&[], &c.rejected),
    ),
    (
        "weft_calls_total",
        "counter",
        "Admitted unary calls by outcome: completed, cancelled or the failure code.",
        "outcome",
        |c| {
            codes(
                &[("completed", c.completed), ("cancelled", c.cancelled)],
                &c.failed,
            )
        },
    ),
    (
        "weft_streams_active",
        "gauge",
        "Streams admitted and not yet ended.",
        "",
        |c| one(c.active_streams),
    ),
    (
        "weft_streams_admitted_total",
        "counter",
        "Streams that took a stream slot.",
        "",
        |c| one(c.admitted_streams),
    ),
    (
        "weft_streams_rejected_total",
        "counter",
        "Stream opens refused before admission, by code.",
        "code",
        |c| codes(&[], &c.rejected_streams),
    ),
    (
        "weft_streams_total",
        "counter",
        "Ended streams by outcome: completed, cancelled, missing_terminal or the failure code.",
        "outcome",
        |c| {
            codes(
                &[
                    ("completed", c.completed_streams),
                    ("cancelled", c.cancelled_streams),
                    ("missing_terminal", c.missing_terminals),
                ],
                &c.failed_streams,
            )
        },
    ),
    (
        "weft_stream_frames_total",
        "counter",
        "Stream chunks, out to or in from the caller.",
        "direction",
        |c| fixed(&[("out", c.frames_out), ("in", c.frames_in)]),
    ),
    (
        "weft_stream_bytes_total",
        "counter",
        "Stream chunk bytes (compact JSON), out to or in from the caller.",
        "direction",
        |c| fixed(&[("out", c.bytes_out), ("in", c.bytes_in)]),
    ),
    (
        "weft_stream_queue_depth_max",
        "gauge",
        "The deepest stream frame queue observed.",
        "",
        |c| one(c.max_queue_depth),
    ),
];

/// `(name, help, statistics)` of a timing summary (`_sum` and `_count`; the maximum is in
/// the JSON only).
type Timing = (
    &'static str,
    &'static str,
    fn(&CapabilitySnapshot) -> TimingSnapshot,
);

/// Every timing summary.
const TIMINGS: &[Timing] = &[
    (
        "weft_call_duration_seconds",
        "Arrival to outcome of finished admitted unary calls.",
        |c| c.call_duration,
    ),
    (
        "weft_stream_first_output_seconds",
        "Open to first chunk delivered.",
        |c| c.first_output,
    ),
    (
        "weft_stream_duration_seconds",
        "Open to terminal of ended streams.",
        |c| c.stream_duration,
    ),
];

fn one(value: u64) -> Vec<(String, u64)> {
    vec![(String::new(), value)]
}

fn fixed(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// `fixed` values first (always present, so their series exist from the first scrape), then
/// every code of `by_code`.
fn codes(fixed: &[(&str, u64)], by_code: &BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut out = self::fixed(fixed);
    out.extend(by_code.iter().map(|(k, v)| (k.clone(), *v)));
    out
}

/// The whole snapshot in the text format.
pub fn exposition(s: &NodeSnapshot) -> String {
    let mut out = String::new();
    let limits = &s.limits;
    let node_gauges: [(&str, &str, f64); 8] = [
        (
            "weft_node_calls_active",
            "Unary calls in flight on this node.",
            s.active_calls as f64,
        ),
        (
            "weft_node_streams_active",
            "Streams in flight on this node.",
            s.active_streams as f64,
        ),
        (
            "weft_limit_concurrent_calls",
            "Bound on concurrent unary calls.",
            limits.max_concurrent_calls as f64,
        ),
        (
            "weft_limit_concurrent_streams",
            "Bound on concurrent streams.",
            limits.max_concurrent_streams as f64,
        ),
        (
            "weft_limit_stream_queue_frames",
            "Frames buffered per stream and direction.",
            limits.stream_queue as f64,
        ),
        (
            "weft_limit_payload_bytes",
            "Largest payload, result or chunk.",
            limits.max_payload_bytes as f64,
        ),
        (
            "weft_limit_default_timeout_seconds",
            "Deadline when the caller gives none.",
            limits.default_timeout_seconds,
        ),
        (
            "weft_limit_max_timeout_seconds",
            "Largest deadline a caller may ask for.",
            limits.max_timeout_seconds,
        ),
    ];
    for (name, help, value) in node_gauges {
        header(&mut out, name, "gauge", help);
        sample(&mut out, name, &[], value);
    }
    for (name, help, by_code) in [
        (
            "weft_calls_unresolved_total",
            "Unary calls refused before they named a capability served here.",
            &s.unresolved_calls,
        ),
        (
            "weft_streams_unresolved_total",
            "Stream opens refused before they named a capability served here.",
            &s.unresolved_streams,
        ),
    ] {
        header(&mut out, name, "counter", help);
        for (code, value) in by_code {
            sample(&mut out, name, &[("code", code)], value);
        }
    }
    for (name, kind, help, label, values) in FAMILIES {
        header(&mut out, name, kind, help);
        for (capability, counters) in &s.capabilities {
            for (value_label, value) in values(counters) {
                let mut labels = vec![("capability", capability.as_str())];
                if !label.is_empty() {
                    labels.push((label, value_label.as_str()));
                }
                sample(&mut out, name, &labels, value);
            }
        }
    }
    for (name, help, timing) in TIMINGS {
        header(&mut out, name, "summary", help);
        for (capability, counters) in &s.capabilities {
            let (labels, t) = ([("capability", capability.as_str())], timing(counters));
            sample(&mut out, &format!("{name}_sum"), &labels, t.sum_seconds);
            sample(&mut out, &format!("{name}_count"), &labels, t.count);
        }
    }
    out
}
