//! Turning the two answers of a comparison into a finding, in the schema's direction, with
//! a reason that names the keyword and, when breaking, a value that breaks.

use super::{Ctx, Direction, Raw, Side};
use crate::finding::{Bump, Effect, Finding};

impl Ctx<'_> {
    /// Records a change from the two answers; the direction picks the one that matters.
    pub fn judge(
        &mut self,
        path: String,
        change: &str,
        summary: String,
        old_only: Side,
        new_only: Side,
    ) {
        let (relevant, other) = match self.dir {
            Direction::Input => (old_only, new_only),
            Direction::Output => (new_only, old_only),
        };
        let (effect, bump, reason, detail) = match relevant {
            Side::Empty => {
                let bump = if other == Side::Empty {
                    Bump::Patch
                } else {
                    Bump::Minor
                };
                (
                    Effect::Compatible,
                    bump,
                    self.compatible_reason(&summary),
                    String::new(),
                )
            }
            Side::Witness(w) => (
                Effect::Breaking,
                Bump::Major,
                self.breaking_reason(&summary, &w),
                w,
            ),
            Side::Unknown(r) => (Effect::Unknown, Bump::Major, format!("{summary}: {r}"), r),
            Side::NotChecked => {
                let r = "not decided".to_owned();
                (Effect::Unknown, Bump::Major, format!("{summary}: {r}"), r)
            }
        };
        self.push(path, change, effect, bump, reason, detail);
    }

    fn compatible_reason(&self, summary: &str) -> String {
        match self.dir {
            Direction::Input => format!(
                "{summary}; every {} the old schema accepted is still accepted",
                self.noun
            ),
            Direction::Output => format!(
                "{summary}; every {} the new schema allows was allowed before",
                self.noun
            ),
        }
    }

    fn breaking_reason(&self, summary: &str, witness: &str) -> String {
        match self.dir {
            Direction::Input => format!(
                "{summary}: a {} where {witness} was accepted and is now refused",
                self.noun
            ),
            Direction::Output => format!(
                "{summary}: a {} where {witness} can now be returned, and the old schema refused it",
                self.noun
            ),
        }
    }

    /// Records a finding as is.
    pub fn push(
        &mut self,
        path: String,
        change: &str,
        effect: Effect,
        bump: Bump,
        reason: String,
        detail: String,
    ) {
        self.findings.push(Raw {
            finding: Finding {
                path,
                change: change.to_owned(),
                effect,
                reason,
                bump,
            },
            detail,
        });
    }

    /// Records a change that cannot be decided.
    pub fn unknown(&mut self, path: String, change: &str, reason: String) {
        self.push(
            path,
            change,
            Effect::Unknown,
            Bump::Major,
            reason.clone(),
            reason,
        );
    }

    /// Runs `f` on an empty finding list and returns what it found.
    pub fn scratch(&mut self, f: impl FnOnce(&mut Self)) -> Vec<Raw> {
        let saved = std::mem::take(&mut self.findings);
        f(self);
        std::mem::replace(&mut self.findings, saved)
    }

    /// Compares `old` and `new` aside and records one finding that summarizes the result
    /// (used for changes that move a value under another subschema: a property added or
    /// removed, the content model opened or closed).
    pub fn summarize(&mut self, path: String, change: &str, summary: String, found: Vec<Raw>) {
        let worst = found.iter().max_by_key(|r| r.finding.effect);
        match worst {
            None => self.push(
                path,
                change,
                Effect::Compatible,
                Bump::Patch,
                format!("{summary}; it accepts exactly what was accepted before"),
                String::new(),
            ),
            Some(raw) => {
                let detail = raw.detail.clone();
                let (effect, bump, reason) = match raw.finding.effect {
                    Effect::Breaking => (
                        Effect::Breaking,
                        Bump::Major,
                        self.breaking_reason(&summary, &detail),
                    ),
                    Effect::Unknown => {
                        (Effect::Unknown, Bump::Major, format!("{summary}: {detail}"))
                    }
                    Effect::Compatible => {
                        let bump = found
                            .iter()
                            .map(|r| r.finding.bump)
                            .max()
                            .unwrap_or(Bump::Patch);
                        (Effect::Compatible, bump, self.compatible_reason(&summary))
                    }
                };
                self.push(path, change, effect, bump, reason, detail);
            }
        }
    }
}
