//! The verification report and the small builder verifiers fill it with.

use serde::{Deserialize, Serialize};

/// One named check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Stable snake_case name (listed per row in `docs/verification.md`).
    pub name: String,
    /// Whether the check passed.
    pub passed: bool,
    /// What was found, for people: measured values on success, the reason on failure.
    pub detail: String,
}

/// Every check of one row, run against one input/output pair.
///
/// Serializes as `{"passed": bool, "checks": [{"name", "passed", "detail"}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationReport {
    /// True when every check passed (and there was at least one).
    pub passed: bool,
    /// Every check, in a fixed order per row — never only the first failure.
    pub checks: Vec<Check>,
}

impl VerificationReport {
    /// Builds a report; `passed` is the conjunction of the checks.
    pub fn from_checks(checks: Vec<Check>) -> Self {
        let passed = !checks.is_empty() && checks.iter().all(|check| check.passed);
        VerificationReport { passed, checks }
    }

    /// The check named `name`, if the row has one.
    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|check| check.name == name)
    }

    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|check| !check.passed)
    }
}

/// A check's outcome while it is computed: `Ok(detail)` passes, `Err(detail)` fails.
pub(crate) type Outcome = Result<String, String>;

/// The detail of a check that could not run because `prerequisite` failed.
pub(crate) fn not_checked(prerequisite: &str) -> String {
    format!("not checked: `{prerequisite}` failed")
}

/// Runs `check` on a prerequisite's value, or fails with "not checked" when it is missing.
pub(crate) fn after<T>(
    prerequisite: &Result<T, String>,
    name: &str,
    check: impl FnOnce(&T) -> Outcome,
) -> Outcome {
    match prerequisite {
        Ok(value) => check(value),
        Err(_) => Err(not_checked(name)),
    }
}

/// Collects checks in order.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    list: Vec<Check>,
}

impl Checks {
    /// An empty list.
    pub(crate) fn new() -> Self {
        Checks::default()
    }

    /// Records `name` with `outcome`.
    pub(crate) fn add(&mut self, name: &str, outcome: Outcome) {
        let (passed, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        self.list.push(Check {
            name: name.to_owned(),
            passed,
            detail,
        });
    }

    /// The checks, in the order they were added.
    pub(crate) fn finish(self) -> Vec<Check> {
        self.list
    }
}
