//! Whether the version numbers two descriptors carry allow the changes between them.

use weft_contract::CapabilityVersion;

use crate::finding::Bump;

/// The bump that goes from `old` to `new`, or `None` when `new` is lower than `old`.
///
/// For `0.y.z` versions a minor step counts as major, as in Cargo: before 1.0 the minor
/// number is the compatibility boundary. A step between pre-releases of the same
/// `MAJOR.MINOR.PATCH`, or from a pre-release to its release, counts as a patch.
pub fn bump_between(old: &CapabilityVersion, new: &CapabilityVersion) -> Option<Bump> {
    if new < old {
        return None;
    }
    let (o, n) = (old.semver(), new.semver());
    let bump = if n.major != o.major {
        Bump::Major
    } else if n.minor != o.minor {
        if n.major == 0 {
            Bump::Major
        } else {
            Bump::Minor
        }
    } else if n.patch != o.patch {
        if n.major == 0 {
            Bump::Minor
        } else {
            Bump::Patch
        }
    } else if n.pre != o.pre {
        Bump::Patch
    } else {
        Bump::None
    };
    Some(bump)
}

/// Whether going from `old_version` to `new_version` is allowed for changes that need
/// `required`: a new major allows anything; otherwise the step must be at least `required`.
pub fn allowed_bump(
    old_version: &CapabilityVersion,
    new_version: &CapabilityVersion,
    required: Bump,
) -> bool {
    bump_between(old_version, new_version).is_some_and(|step| step >= required)
}
