//! Choosing the agents whose catalogs cover a set of needed capabilities.

use std::collections::HashSet;

use crate::agents::DiscoveredAgent;
use crate::error::CatalogError;

/// An agent that covers every need.
#[derive(Debug)]
pub struct Selected<'a> {
    /// The agent.
    pub agent: &'a DiscoveredAgent,
    /// The agent's capability ids that are not among the needs, in catalog order. Their
    /// count is the ranking key.
    pub extra_ids: Vec<String>,
}

/// An agent that does not cover every need.
#[derive(Debug)]
pub struct Rejected<'a> {
    /// The agent.
    pub agent: &'a DiscoveredAgent,
    /// The needs it misses, in the order given (duplicates removed). When its catalog failed
    /// to load, every need is missing.
    pub missing: Vec<String>,
}

impl Rejected<'_> {
    /// The load error, when the agent was rejected because its catalog failed to load.
    pub fn load_error(&self) -> Option<&CatalogError> {
        self.agent.catalog.as_ref().err()
    }
}

/// The outcome of [`select_agents`].
#[derive(Debug)]
pub struct Selection<'a> {
    /// Agents covering every need, best first.
    pub selected: Vec<Selected<'a>>,
    /// Every other agent, by name, with what it misses.
    pub rejected: Vec<Rejected<'a>>,
}

/// Selects the agents whose catalogs cover every needed capability id.
///
/// Coverage is an exact string match between a need and a catalog's normalized ids (needs
/// are not trimmed or case-folded), the subset test CompozyOS uses for task claims and
/// reviewer routing. An agent without a catalog covers nothing (so it is selected only when
/// there are no needs); an agent whose catalog failed to load is always rejected, missing
/// every need.
///
/// Ordering of the selected agents, as read from "ordered by how many of the remaining ids
/// they also cover": the remaining ids are the capability ids beyond the needs, so an agent
/// ranks higher the more ids its catalog offers besides the needed ones (count descending;
/// counting against the union of all catalogs' ids gives the same number). Ties are broken
/// by name ascending (byte order), then by directory, so the result is deterministic.
/// Rejected agents are ordered by name, then directory.
pub fn select_agents<'a>(agents: &'a [DiscoveredAgent], needs: &[String]) -> Selection<'a> {
    let mut unique_needs: Vec<&str> = Vec::with_capacity(needs.len());
    let mut need_set: HashSet<&str> = HashSet::with_capacity(needs.len());
    for need in needs {
        if need_set.insert(need.as_str()) {
            unique_needs.push(need.as_str());
        }
    }

    let mut selected = Vec::new();
    let mut rejected = Vec::new();
    for agent in agents {
        let Ok(catalog) = &agent.catalog else {
            rejected.push(Rejected {
                agent,
                missing: unique_needs.iter().map(|n| (*n).to_owned()).collect(),
            });
            continue;
        };
        let ids: HashSet<&str> = catalog.ids().collect();
        let missing: Vec<String> = unique_needs
            .iter()
            .filter(|need| !ids.contains(*need))
            .map(|need| (*need).to_owned())
            .collect();
        if missing.is_empty() {
            let extra_ids = catalog
                .ids()
                .filter(|id| !need_set.contains(id))
                .map(str::to_owned)
                .collect();
            selected.push(Selected { agent, extra_ids });
        } else {
            rejected.push(Rejected { agent, missing });
        }
    }
    selected.sort_by(|a, b| {
        b.extra_ids
            .len()
            .cmp(&a.extra_ids.len())
            .then_with(|| a.agent.name.cmp(&b.agent.name))
            .then_with(|| a.agent.dir.cmp(&b.agent.dir))
    });
    rejected.sort_by(|a, b| {
        a.agent
            .name
            .cmp(&b.agent.name)
            .then_with(|| a.agent.dir.cmp(&b.agent.dir))
    });
    Selection { selected, rejected }
}
