//! Contract versions, `id@version` pins and version requirements such as `id@^1.2`.
//!
//! Versions are SemVer 2.0 `MAJOR.MINOR.PATCH` with an optional pre-release. Build metadata is
//! rejected: SemVer says it takes no part in precedence, so two descriptors differing only by it
//! could not be ordered and `id@version` would stop naming one contract.
//!
//! Requirements follow Cargo's syntax (the `semver` crate) with one deliberate difference: a
//! complete bare version (`1.2.3`) means exactly that version, because `id@1.2.3` is a pin
//! everywhere else in weft. Pre-releases match a requirement only when one of its comparators
//! names the same `MAJOR.MINOR.PATCH` with a pre-release (`^1.3.0-beta` matches `1.3.0-rc.1`
//! but not `1.4.0-rc.1`); `*`, `^1` and `>=1, <2` never select a pre-release.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::id::{CapabilityId, IdError};

/// A validated contract version: SemVer 2.0 without build metadata.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CapabilityVersion(semver::Version);

/// Why a string is not a [`CapabilityVersion`] or a requirement.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VersionError {
    /// The text is not `MAJOR.MINOR.PATCH[-PRERELEASE]`.
    #[error("{text:?} is not a semantic version MAJOR.MINOR.PATCH[-PRERELEASE]: {reason}")]
    Malformed {
        /// The rejected text.
        text: String,
        /// What the SemVer parser objected to.
        reason: String,
    },
    /// The version carries `+build` metadata.
    #[error("{text:?} carries build metadata; it takes no part in ordering, so weft rejects it")]
    BuildMetadata {
        /// The rejected text.
        text: String,
    },
    /// The requirement text does not parse.
    #[error("{text:?} is not a version requirement: {reason}")]
    BadRequirement {
        /// The rejected text.
        text: String,
        /// What the parser objected to.
        reason: String,
    },
}

impl CapabilityVersion {
    /// Parses and validates a version string.
    pub fn parse(text: &str) -> Result<Self, VersionError> {
        let version = semver::Version::parse(text).map_err(|e| VersionError::Malformed {
            text: text.to_owned(),
            reason: e.to_string(),
        })?;
        if !version.build.is_empty() {
            return Err(VersionError::BuildMetadata {
                text: text.to_owned(),
            });
        }
        Ok(Self(version))
    }

    /// The underlying SemVer value.
    pub fn semver(&self) -> &semver::Version {
        &self.0
    }

    /// Whether this version has a pre-release part.
    pub fn is_prerelease(&self) -> bool {
        !self.0.pre.is_empty()
    }
}

impl Ord for CapabilityVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for CapabilityVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for CapabilityVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for CapabilityVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Why an `id@version` or `id@requirement` string does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QualifiedIdError {
    /// There is no `@` separating id and version.
    #[error("{text:?} has no '@' between capability id and version")]
    MissingAt {
        /// The rejected text.
        text: String,
    },
    /// The id part is invalid.
    #[error(transparent)]
    Id(#[from] IdError),
    /// The version or requirement part is invalid.
    #[error(transparent)]
    Version(#[from] VersionError),
}

/// An exact contract name: `id@version`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedId {
    /// The capability id.
    pub id: CapabilityId,
    /// The exact version.
    pub version: CapabilityVersion,
}

impl QualifiedId {
    /// Joins an id and a version.
    pub fn new(id: CapabilityId, version: CapabilityVersion) -> Self {
        Self { id, version }
    }

    /// Parses `id@version`. The id may not contain `@`, so the first `@` splits.
    pub fn parse(text: &str) -> Result<Self, QualifiedIdError> {
        let (id, version) = text
            .split_once('@')
            .ok_or_else(|| QualifiedIdError::MissingAt {
                text: text.to_owned(),
            })?;
        Ok(Self {
            id: CapabilityId::parse(id)?,
            version: CapabilityVersion::parse(version)?,
        })
    }
}

impl fmt::Display for QualifiedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, self.version)
    }
}

impl FromStr for QualifiedId {
    type Err = QualifiedIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// A set of acceptable versions, such as `^1.2`, `~1.2.3`, `>=1, <2`, `*` or exactly `1.2.3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRequirement {
    text: String,
    req: semver::VersionReq,
}

impl VersionRequirement {
    /// Parses a requirement; see the module documentation for the accepted forms.
    pub fn parse(text: &str) -> Result<Self, VersionError> {
        let trimmed = text.trim();
        // A complete bare version is a pin, not Cargo's implicit caret.
        let source = match CapabilityVersion::parse(trimmed) {
            Ok(exact) => format!("={exact}"),
            Err(VersionError::BuildMetadata { .. }) => {
                return Err(VersionError::BuildMetadata {
                    text: text.to_owned(),
                });
            }
            Err(_) => trimmed.to_owned(),
        };
        let req = semver::VersionReq::parse(&source).map_err(|e| VersionError::BadRequirement {
            text: text.to_owned(),
            reason: e.to_string(),
        })?;
        if req
            .comparators
            .iter()
            .any(|c| !c.pre.is_empty() && (c.minor.is_none() || c.patch.is_none()))
        {
            return Err(VersionError::BadRequirement {
                text: text.to_owned(),
                reason: "a pre-release needs a complete MAJOR.MINOR.PATCH".to_owned(),
            });
        }
        Ok(Self {
            text: trimmed.to_owned(),
            req,
        })
    }

    /// Whether `version` satisfies the requirement.
    pub fn matches(&self, version: &CapabilityVersion) -> bool {
        self.req.matches(version.semver())
    }

    /// The highest version in `candidates` that satisfies the requirement.
    pub fn select_highest<'a, I>(&self, candidates: I) -> Option<&'a CapabilityVersion>
    where
        I: IntoIterator<Item = &'a CapabilityVersion>,
    {
        candidates.into_iter().filter(|v| self.matches(v)).max()
    }
}

impl fmt::Display for VersionRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A capability id with a version requirement: `id@^1.2`, or a bare `id` meaning any release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityRequirement {
    /// The capability id.
    pub id: CapabilityId,
    /// The acceptable versions.
    pub requirement: VersionRequirement,
}

impl CapabilityRequirement {
    /// Parses `id`, `id@REQ`; a missing requirement means `*`.
    pub fn parse(text: &str) -> Result<Self, QualifiedIdError> {
        let (id, req) = text.split_once('@').unwrap_or((text, "*"));
        Ok(Self {
            id: CapabilityId::parse(id)?,
            requirement: VersionRequirement::parse(req)?,
        })
    }
}

impl fmt::Display for CapabilityRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, self.requirement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> CapabilityVersion {
        CapabilityVersion::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn accepts_release_and_prerelease_versions() {
        for ok in [
            "1.0.0",
            "0.0.1",
            "10.20.30",
            "1.0.0-beta",
            "1.0.0-rc.1",
            "2.0.0-alpha.beta.1",
        ] {
            assert_eq!(v(ok).to_string(), ok);
        }
    }

    #[test]
    fn rejects_each_listed_bad_version() {
        for bad in [
            "1", "1.0", "v1.0.0", "", "01.0.0", "1.0.0-", " 1.0.0", "1.0.0 ",
        ] {
            assert!(
                matches!(
                    CapabilityVersion::parse(bad),
                    Err(VersionError::Malformed { .. })
                ),
                "{bad:?} should be malformed"
            );
        }
        assert!(matches!(
            CapabilityVersion::parse("1.0.0+b1"),
            Err(VersionError::BuildMetadata { .. })
        ));
    }

    #[test]
    fn qualified_ids_round_trip() {
        let q =
            QualifiedId::parse("embeddings:bge-m3@1.2.0-rc.1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(q.id.as_str(), "embeddings:bge-m3");
        assert_eq!(q.to_string(), "embeddings:bge-m3@1.2.0-rc.1");
        assert!(matches!(
            QualifiedId::parse("echo"),
            Err(QualifiedIdError::MissingAt { .. })
        ));
        assert!(matches!(
            QualifiedId::parse("Echo@1.0.0"),
            Err(QualifiedIdError::Id(_))
        ));
        assert!(matches!(
            QualifiedId::parse("echo@1.0"),
            Err(QualifiedIdError::Version(_))
        ));
    }

    #[test]
    fn selects_the_highest_matching_version() {
        let all: Vec<_> = [
            "1.0.0",
            "1.2.0",
            "1.2.7",
            "1.3.0-beta.1",
            "1.9.9",
            "2.0.0",
            "2.1.0-rc.1",
        ]
        .into_iter()
        .map(v)
        .collect();
        let pick = |req: &str| {
            let r = CapabilityRequirement::parse(&format!("echo@{req}"))
                .unwrap_or_else(|e| panic!("{req}: {e}"));
            r.requirement.select_highest(&all).map(ToString::to_string)
        };
        assert_eq!(pick("^1.2").as_deref(), Some("1.9.9"));
        assert_eq!(pick("~1.2.3").as_deref(), Some("1.2.7"));
        assert_eq!(pick(">=1, <2").as_deref(), Some("1.9.9"));
        assert_eq!(pick("*").as_deref(), Some("2.0.0"));
        assert_eq!(pick("1.2.0").as_deref(), Some("1.2.0"));
        assert_eq!(pick("=1.2.0").as_deref(), Some("1.2.0"));
        assert_eq!(pick("^3").as_deref(), None);
        // Pre-releases only match a comparator naming the same MAJOR.MINOR.PATCH.
        assert_eq!(pick("^1.3.0-alpha").as_deref(), Some("1.9.9"));
        assert_eq!(pick("~1.3.0-alpha").as_deref(), Some("1.3.0-beta.1"));
        assert_eq!(pick("1.3.0-beta.1").as_deref(), Some("1.3.0-beta.1"));
        assert_eq!(pick(">=2.1.0-rc.0").as_deref(), Some("2.1.0-rc.1"));
        assert_eq!(pick(">=2.0.0").as_deref(), Some("2.0.0"));
    }

    #[test]
    fn bare_id_means_any_release() {
        let r = CapabilityRequirement::parse("echo").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.to_string(), "echo@*");
        assert!(r.requirement.matches(&v("7.0.0")));
        assert!(!r.requirement.matches(&v("7.0.0-rc.1")));
    }

    #[test]
    fn rejects_bad_requirements() {
        for bad in ["echo@", "echo@^x", "echo@1.0.0+b", "echo@>=1 <2 ||3"] {
            assert!(
                CapabilityRequirement::parse(bad).is_err(),
                "{bad} should fail"
            );
        }
    }
}
