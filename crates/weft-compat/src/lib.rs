//! Compatibility between two revisions of one capability: what changed, what it does to
//! callers and consumers, and which version bump it needs.
//!
//! [`compare`] walks two descriptors of the same id and returns a [`CompatReport`]: one
//! [`Finding`] per change (a JSON pointer into the descriptor, the kind of change, its
//! [`Effect`] and a reason), and the smallest [`Bump`] the changes need together.
//! [`allowed`] says whether the two version numbers permit that bump.
//!
//! Schemas are compared by a directional subset check (`subset`): input and input-chunk
//! schemas must accept every payload the old ones accepted (old ⊆ new); output and
//! output-chunk schemas must only allow results the old ones allowed (new ⊆ old). What the
//! checker cannot decide is [`Effect::Unknown`], never silently compatible. The rules are
//! documented in `docs/compatibility.md`.
//!
//! The crate performs no I/O and knows nothing of HTTP or registries.

mod bump;
mod descriptor;
mod finding;
mod subset;

pub use bump::{allowed_bump, bump_between};
pub use descriptor::compare_schemas;
pub use finding::{Bump, Effect, Finding};
pub use subset::Direction;

use serde::Serialize;
use weft_contract::{CapabilityVersion, Descriptor};

/// Every change between two descriptors of one capability, and the bump they need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompatReport {
    /// The capability id (the new descriptor's).
    pub id: String,
    /// The old descriptor's version.
    pub old_version: String,
    /// The new descriptor's version.
    pub new_version: String,
    /// The old descriptor's revision.
    pub old_revision: String,
    /// The new descriptor's revision.
    pub new_revision: String,
    /// Every change found, in descriptor order.
    pub findings: Vec<Finding>,
    /// The smallest bump that covers every finding (`major` if any is breaking or unknown).
    pub required_bump: Bump,
}

impl CompatReport {
    /// The findings with the given effect.
    pub fn with_effect(&self, effect: Effect) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.effect == effect)
    }

    /// Whether any finding is breaking or unknown (both count as breaking by default).
    pub fn breaks(&self) -> bool {
        self.findings.iter().any(|f| f.effect != Effect::Compatible)
    }
}

/// Compares two descriptors, reporting every change with its effect and the bump needed.
pub fn compare(old: &Descriptor, new: &Descriptor) -> CompatReport {
    let findings = descriptor::findings(old, new);
    let required_bump =
        findings
            .iter()
            .map(|f| f.bump)
            .max()
            .unwrap_or(if old.revision() == new.revision() {
                Bump::None
            } else {
                Bump::Patch
            });
    CompatReport {
        id: new.id().to_string(),
        old_version: old.version().to_string(),
        new_version: new.version().to_string(),
        old_revision: old.revision().to_string(),
        new_revision: new.revision().to_string(),
        findings,
        required_bump,
    }
}

/// Whether going from `old_version` to `new_version` is allowed for the changes in
/// `report`: a new major allows anything; within a major the step must be at least
/// [`CompatReport::required_bump`] (for `0.y.z`, a minor step counts as major).
pub fn allowed(
    old_version: &CapabilityVersion,
    new_version: &CapabilityVersion,
    report: &CompatReport,
) -> bool {
    allowed_bump(old_version, new_version, report.required_bump)
}
