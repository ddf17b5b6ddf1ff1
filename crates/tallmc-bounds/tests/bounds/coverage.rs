//! Coverage of the concentration-bound tests: over many simulated decisions on finite
//! populations (Gaussian, uniform, Student-t(2), lognormal(0, 2); N ∈ {100, 10⁴}; thresholds
//! within one standard error of the first batch's mean, within one standard error of the
//! population mean, and far from it), each bound's wrong-decision rate is at most δ.
//!
//! A wrong decision is one that differs from the exact decision (sign of population mean −
//! threshold). The range bound is the exact max − min of each population. δ = 0.2 is large
//! enough that a test whose error rate exceeded its budget would be caught (the allowance is
//! about 0.2 + 0.065 per cell of 1 000 decisions, 0.2 + 0.013 pooled over 24 000).

use crate::common::{Cell, Family, Regime, allowed_failures, run_cell};
use tallmc_bounds::{AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest};

const DELTA: f64 = 0.2;
/// Decisions per (bound, family, N, regime) cell: 24 cells per bound → 24 000 decisions each.
const DECISIONS: usize = 1_000;
/// Populations per (family, N).
const POPULATIONS: usize = 8;
/// False-alarm level of each assertion (75 assertions in all; see `allowed_failures`).
const ALPHA: f64 = 1e-5;

fn first_batch(n: usize) -> usize {
    if n <= 100 { 10 } else { 100 }
}

#[test]
#[allow(clippy::print_stderr)]
fn bound_tests_err_at_most_delta() {
    eprintln!("| bound | family | N | thresholds | decisions | wrong | rate | mean values used |");
    eprintln!("|---|---|---|---|---|---|---|---|");
    for (b, kind) in BoundKind::ALL.into_iter().enumerate() {
        let mut pooled = Cell { decisions: 0, wrong: 0, mean_used: 0.0 };
        for family in Family::ALL {
            for n in [100usize, 10_000] {
                for regime in [Regime::Hard, Regime::Nearest, Regime::Far] {
                    let config =
                        ConfidenceConfig::new(kind, DELTA).with_first_batch(first_batch(n));
                    let mut test = ConfidenceTest::new(config).unwrap();
                    let seed = 500 + 100 * b as u64 + n as u64;
                    let cell = run_cell(
                        &mut test,
                        family,
                        n,
                        regime,
                        first_batch(n),
                        DECISIONS,
                        POPULATIONS,
                        seed,
                    );
                    eprintln!(
                        "| {kind} | {} | {n} | {} | {} | {} | {:.4} | {:.0} |",
                        family.name(),
                        regime.name(),
                        cell.decisions,
                        cell.wrong,
                        cell.rate(),
                        cell.mean_used
                    );
                    let allowed = allowed_failures(cell.decisions, DELTA, ALPHA);
                    assert!(
                        cell.wrong as f64 <= allowed,
                        "{kind}, {}, N = {n}, {} thresholds: {} wrong of {} (allowed {allowed:.0})",
                        family.name(),
                        regime.name(),
                        cell.wrong,
                        cell.decisions
                    );
                    pooled.decisions += cell.decisions;
                    pooled.wrong += cell.wrong;
                }
            }
        }
        let allowed = allowed_failures(pooled.decisions, DELTA, ALPHA);
        eprintln!(
            "| {kind} | all | | | {} | {} | {:.4} | |",
            pooled.decisions,
            pooled.wrong,
            pooled.rate()
        );
        assert!(pooled.decisions >= 10_000);
        assert!(
            pooled.wrong as f64 <= allowed,
            "{kind}: {} wrong of {}",
            pooled.wrong,
            pooled.decisions
        );
    }
}

/// The assertions above have power: the same harness flags a test that decides from its first
/// batch (Austerity with ε = 0.999 stops at the first look; in the hard regime such a test errs
/// about E|Φ(−U)| ≈ 0.32 of the time, U ~ U(0, 1), far above the allowance for δ = 0.2).
#[test]
fn the_harness_flags_a_test_that_decides_too_early() {
    let mut test = AusterityTest::new(AusterityConfig::new(0.999, 100)).unwrap();
    let cell = run_cell(
        &mut test,
        Family::Gaussian,
        10_000,
        Regime::Hard,
        100,
        DECISIONS,
        POPULATIONS,
        4242,
    );
    assert!(
        cell.wrong as f64 > allowed_failures(cell.decisions, DELTA, ALPHA),
        "{} wrong of {}",
        cell.wrong,
        cell.decisions
    );
}
