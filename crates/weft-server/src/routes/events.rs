//! The change feed: Server-Sent Events of registry changes for the caller's tenant.
//!
//! Each event has a monotonic `id` (per tenant), an `event` name (its kind) and the full
//! record as `data`. A client resumes with `Last-Event-ID` (or `?after=N`) and receives
//! exactly the events after that id — none lost, none repeated — as long as they are still
//! retained (the newest `event_retention` events per tenant, 10,000 by default). Asking for
//! a position retention already dropped is `410 events_gone`; the client should re-list and
//! resume from the live feed. Without a position the feed starts with the next change.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use tokio::sync::broadcast;
use weft_registry::model::EventRecord;
use weft_registry::{Announcement, Principal, RegistryError, Scope, TenantId};

use super::ApiResult;
use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::layers::require;
use crate::state::AppState;

const BATCH: usize = 500;

struct Feed {
    state: AppState,
    tenant: TenantId,
    last: u64,
    backlog: VecDeque<EventRecord>,
    live: broadcast::Receiver<Announcement>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    done: bool,
}

impl Feed {
    /// Refills the backlog from the store; the store is the source of truth and the
    /// broadcast only says "something new".
    fn refill(&mut self) -> Result<(), RegistryError> {
        let events = self
            .state
            .registry
            .events_after(&self.tenant, self.last, BATCH)?;
        self.backlog.extend(events);
        Ok(())
    }

    async fn next_event(&mut self) -> Option<Event> {
        loop {
            if self.done {
                return None;
            }
            if let Some(record) = self.backlog.pop_front() {
                if record.id <= self.last {
                    continue;
                }
                self.last = record.id;
                let event = Event::default()
                    .id(record.id.to_string())
                    .event(record.kind.clone())
                    .json_data(&record)
                    .unwrap_or_else(|_| Event::default().comment("unserializable event"));
                return Some(event);
            }
            match self.refill() {
                Ok(()) if !self.backlog.is_empty() => continue,
                Ok(()) => {}
                Err(error) => {
                    // The reader fell behind retention: say so once, then end.
                    self.done = true;
                    let api: ApiError = error.into();
                    return Some(
                        Event::default()
                            .event("error")
                            .json_data(
                                serde_json::json!({"code": api.code, "message": api.message}),
                            )
                            .unwrap_or_default(),
                    );
                }
            }
            if *self.shutdown.borrow() {
                return None;
            }
            tokio::select! {
                received = self.live.recv() => match received {
                    Ok(announcement) if announcement.tenant != self.tenant => {}
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                // The node is shutting down: end the stream so the drain can finish.
                _ = self.shutdown.changed() => return None,
            }
        }
    }
}

fn position(headers: &HeaderMap, query: &QueryParams) -> Result<Option<u64>, ApiError> {
    let from_header = headers.get("last-event-id").map(|v| {
        v.to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| ApiError::invalid("Last-Event-ID must be an event id (a whole number)"))
    });
    let from_query = query.get("after").map(|v| {
        v.parse::<u64>()
            .map_err(|_| ApiError::invalid("after must be an event id (a whole number)"))
    });
    from_header.or(from_query).transpose()
}

/// Stream registry changes for the tenant (Server-Sent Events).
#[utoipa::path(get, path = "/v1/events", tag = "events",
    params(("Last-Event-ID" = Option<u64>, Header, description = "resume after this event id"),
           ("after" = Option<u64>, Query, description = "same as Last-Event-ID, for clients that cannot set headers")),
    responses((status = 200, content_type = "text/event-stream", description = "events: id, event (kind), data (EventRecord JSON)"),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope), (status = 410, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn events(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    query: QueryParams,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    require(&principal, Scope::Read)?;
    query.only(&["after"])?;
    // Subscribe before reading the backlog, so nothing committed in between is missed.
    let live = state.registry.subscribe();
    let last = match position(&headers, &query)? {
        Some(after) => {
            // Fails with 410 before any byte is streamed when `after` is gone.
            state.registry.events_after(&principal.tenant, after, 1)?;
            after
        }
        None => state.registry.latest_event_id(&principal.tenant)?,
    };
    let shutdown = state.shutdown.subscribe();
    let feed = Feed {
        shutdown,
        state,
        tenant: principal.tenant.clone(),
        last,
        backlog: VecDeque::new(),
        live,
        done: false,
    };
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        feed.next_event().await.map(|event| (Ok(event), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
