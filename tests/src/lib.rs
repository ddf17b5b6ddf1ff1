//! Shared helpers of tallmc's cross-crate integration tests (`tests/tests/*.rs`).
//!
//! Statistical tests compare estimates with the truth in units of Monte Carlo standard errors;
//! the tolerance is [`Z_MAX`] MCSEs. Their seeds can be shifted with the environment variable
//! `TALLMC_SEED_OFFSET` to check that they pass at other seeds too (snapshot tests, which pin
//! one seed's numbers, are skipped then).

pub use tallmc_testkit::{Z_MAX, seed, seed_offset};

use serde_json::Value;
use tallmc_reproduce::part::{Claim, Part, Suite};
use tallmc_reproduce::snapshot::for_snapshot;

/// `summary` as the insta snapshots hold it (numbers rounded to 3 significant figures, timings
/// removed), or `None` when the seeds are shifted by `TALLMC_SEED_OFFSET`: a snapshot pins the
/// numbers of seed 1.
pub fn quick_snapshot(summary: &Value) -> Option<Value> {
    (seed_offset() == 0).then(|| for_snapshot(summary, 3))
}

/// A claim a suite reports but a test does not assert, with why (not reproduced, or decided
/// at the quick run's Monte Carlo noise floor, so that its verdict changes with the seed).
pub type NotAsserted = (&'static str, &'static str);

/// Asserts every claim of `part` that is not in `not_asserted` (each claim's `holds` was
/// computed once by the suite; the report's verdicts read the same values); prints the others.
#[allow(clippy::print_stderr)] // the claims not asserted are shown in the test output
pub fn assert_claims(part: &dyn Part, not_asserted: &[NotAsserted]) {
    let claims: Vec<Claim> = part.claims();
    assert!(!claims.is_empty(), "{}: no claims", part.key());
    for c in claims {
        assert!(
            !c.measured.is_empty() && !c.criterion.is_empty(),
            "{} / {}: empty claim",
            part.key(),
            c.id
        );
        if let Some((_, why)) = not_asserted.iter().find(|(id, _)| *id == c.id) {
            eprintln!("{} / {} (not asserted: {why}): {c}", part.key(), c.id);
        } else {
            assert!(c.holds, "{} / {c}", part.key());
        }
    }
}

/// Every id in `not_asserted` names a claim `suite` makes (a renamed claim must not silently
/// escape its assertion).
pub fn assert_not_asserted_exist<S: Suite>(suite: &S, not_asserted: &[NotAsserted]) {
    let ids: Vec<&str> = suite.claims().into_iter().map(|(_, c)| c.id).collect();
    for (id, _) in not_asserted {
        assert!(ids.contains(id), "not_asserted names {id}, which the suite does not claim");
    }
}
