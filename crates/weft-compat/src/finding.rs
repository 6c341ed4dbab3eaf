//! What one change is, what it does to callers, and which version bump it needs.

use serde::{Deserialize, Serialize};

/// What a change does to the parties that rely on the old descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Everything that worked against the old descriptor still works.
    Compatible,
    /// The checker could not decide; treated as breaking by the default policy.
    Unknown,
    /// Some caller or consumer of the old descriptor is proven to fail.
    Breaking,
}

impl Effect {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Compatible => "compatible",
            Effect::Unknown => "unknown",
            Effect::Breaking => "breaking",
        }
    }
}

/// A SemVer bump, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Bump {
    /// Nothing changed.
    None,
    /// Documentation, or a respelling that accepts and returns exactly the same values.
    Patch,
    /// A compatible change that adds capability (accepts more, or promises more).
    Minor,
    /// A breaking change, or one the checker could not decide.
    Major,
}

impl Bump {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

/// One change between two descriptors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Finding {
    /// JSON pointer into the descriptor (the new one; the old one for something removed).
    pub path: String,
    /// The kind of change, in `snake_case` (`type_narrowed`, `property_added`, …).
    pub change: String,
    /// What the change does to callers and consumers.
    pub effect: Effect,
    /// One sentence saying why, naming the keyword and, when breaking, a value that breaks.
    pub reason: String,
    /// The smallest version bump this change needs on its own.
    pub bump: Bump,
}

impl Finding {
    /// Whether this change only touches documentation: `title`, `description`, descriptor
    /// annotations, or annotation keywords inside a schema.
    pub fn is_documentation(&self) -> bool {
        self.change == "title_changed"
            || self.change == "description_changed"
            || self.change == "schema_documentation_changed"
            || self.change.starts_with("annotation_")
    }
}
