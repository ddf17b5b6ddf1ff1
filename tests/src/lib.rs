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
use tallmc_reproduce::{Context, Mode};

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
pub fn assert_claims(part: &dyn Part, not_asserted: &[NotAsserted]) {
    let failed = failed_claims(part, not_asserted);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// [`assert_claims`] for every part of `suite`, reporting the failed claims of all parts
/// together.
pub fn assert_suite_claims<S: Suite>(suite: &S, not_asserted: &[NotAsserted]) {
    let failed: Vec<String> =
        suite.parts().into_iter().flat_map(|p| failed_claims(p, not_asserted)).collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The claims of `part` that do not hold and are not in `not_asserted`, each as
/// `part / claim`; prints the claims in `not_asserted`. Panics on a part without claims or a
/// claim with an empty measurement or criterion.
#[allow(clippy::print_stderr)] // the claims not asserted are shown in the test output
fn failed_claims(part: &dyn Part, not_asserted: &[NotAsserted]) -> Vec<String> {
    let claims: Vec<Claim> = part.claims();
    assert!(!claims.is_empty(), "{}: no claims", part.key());
    let mut failed = Vec::new();
    for c in claims {
        assert!(
            !c.measured.is_empty() && !c.criterion.is_empty(),
            "{} / {}: empty claim",
            part.key(),
            c.id
        );
        if let Some((_, why)) = not_asserted.iter().find(|(id, _)| *id == c.id) {
            eprintln!("{} / {} (not asserted: {why}): {c}", part.key(), c.id);
        } else if !c.holds {
            failed.push(format!("{} / {c}", part.key()));
        }
    }
    failed
}

/// Every id in `not_asserted` names a claim `suite` makes (a renamed claim must not silently
/// escape its assertion).
pub fn assert_not_asserted_exist<S: Suite>(suite: &S, not_asserted: &[NotAsserted]) {
    let ids: Vec<&str> = suite.claims().into_iter().map(|(_, c)| c.id).collect();
    for (id, _) in not_asserted {
        assert!(ids.contains(id), "not_asserted names {id}, which the suite does not claim");
    }
}

/// The quick run of suite `S` at [`seed`]`(1)`, as the suite tests check it.
///
/// # Panics
/// When the suite fails.
pub fn compute_quick<S: Suite>() -> S {
    S::compute(&Context::for_tests(Mode::Quick, seed(1)))
        .unwrap_or_else(|e| panic!("{} suite: {e:?}", S::NAME))
}

/// The shared part of a quick suite's test file: `fn suite() -> &'static $suite`, the quick run
/// ([`compute_quick`]) computed once per test binary and shared by its tests; the test
/// `quick_summary_snapshot`, the summary as the insta snapshot `$snapshot` (skipped when the
/// seeds are shifted, see [`quick_snapshot`]); the test `not_asserted_claims_exist`, every id
/// in the file's `NOT_ASSERTED` names a claim of the suite ([`assert_not_asserted_exist`]);
/// and the test `claims_hold`, every other claim of every part holds
/// ([`assert_suite_claims`]).
///
/// The snapshot keeps the name and folder of the test file that invokes the macro.
#[macro_export]
macro_rules! quick_suite_tests {
    ($suite:ty, $snapshot:literal) => {
        fn suite() -> &'static $suite {
            static RESULT: std::sync::OnceLock<$suite> = std::sync::OnceLock::new();
            RESULT.get_or_init($crate::compute_quick::<$suite>)
        }

        #[test]
        fn quick_summary_snapshot() {
            let summary = tallmc_reproduce::part::Suite::summary(suite());
            if let Some(summary) = $crate::quick_snapshot(&summary) {
                insta::assert_json_snapshot!($snapshot, summary);
            }
        }

        /// Every id in `NOT_ASSERTED` names a claim the suite makes.
        #[test]
        fn not_asserted_claims_exist() {
            $crate::assert_not_asserted_exist(suite(), NOT_ASSERTED);
        }

        /// Every claim of every part holds, except the ones in `NOT_ASSERTED`.
        #[test]
        fn claims_hold() {
            $crate::assert_suite_claims(suite(), NOT_ASSERTED);
        }
    };
}
