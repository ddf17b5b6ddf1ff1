//! Poisson clocks against their exact distributions: for every rate kind, 10⁵ simulated first
//! arrivals pass a Kolmogorov–Smirnov test against P(τ ≤ t) = 1 − exp(−Λ(t)) (conditioned on
//! τ < ∞ when the rate has finite total mass); thinning from an upper bound produces the target
//! process (its first accepted time passes the same test, and so do the first three arrivals
//! after re-starting, by memorylessness); superposition picks the clock that fired with
//! probability proportional to its rate.
//!
//! Seeds are shifted by `TALLMC_SEED_OFFSET`; each test fails with probability 10⁻³ (p-value
//! threshold) when the clocks are right.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tallmc_integrators::poisson::{
    AffineRate, ConstantRate, PiecewiseLinearRate, Rate, ThinningCounts, earliest, thin,
    unit_exponential,
};
use tallmc_testkit::ks::ks_test;
use tallmc_testkit::seed;

const DRAWS: usize = 100_000;
const P_MIN: f64 = 1e-3;

fn rng(base: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed(base))
}

/// Draws `DRAWS` finite first arrivals of `rate` and returns the KS p-value against the exact
/// (conditional) CDF, and the fraction of infinite arrivals.
fn ks_first_arrival<Q: Rate>(rate: &Q, base: u64) -> (f64, f64) {
    let mut r = rng(base);
    let total = rate.integrated(1e12);
    let mass = 1.0 - (-total).exp();
    let mut xs = Vec::with_capacity(DRAWS);
    let mut infinite = 0usize;
    while xs.len() < DRAWS {
        let t = rate.first_arrival(&mut r);
        if t.is_finite() {
            xs.push(t);
        } else {
            infinite += 1;
        }
    }
    let p = ks_test(&mut xs, |t| (1.0 - (-rate.integrated(t)).exp()) / mass);
    (p, infinite as f64 / (DRAWS + infinite) as f64)
}

#[test]
fn constant_rate_first_arrivals_pass_ks() {
    let (p, inf) = ks_first_arrival(&ConstantRate(2.5), 1);
    assert!(p > P_MIN, "p = {p}");
    assert_eq!(inf, 0.0);
}

#[test]
fn affine_rate_first_arrivals_pass_ks_in_every_sign_case() {
    for (k, (a, b)) in [(0.7, 1.3), (0.0, 2.0), (-1.5, 0.8), (3.0, 0.0)].into_iter().enumerate() {
        let (p, inf) = ks_first_arrival(&AffineRate { a, b }, 10 + k as u64);
        assert!(p > P_MIN, "a = {a}, b = {b}: p = {p}");
        assert_eq!(inf, 0.0);
    }
}

/// b < 0, a > 0: the process fires with probability 1 − exp(−a²/(2|b|)); the finite arrivals
/// follow the conditional CDF and the share of infinite ones matches exp(−a²/(2|b|)).
#[test]
fn decreasing_affine_rate_is_defective_with_the_right_mass() {
    let rate = AffineRate { a: 1.2, b: -0.9 };
    let (p, inf) = ks_first_arrival(&rate, 20);
    assert!(p > P_MIN, "p = {p}");
    let never = (-1.2f64 * 1.2 / 1.8).exp();
    // Geometric count of infinite draws before 10⁵ finite ones: sd of the share ≈ √(q(1−q)/n).
    let sd = (never * (1.0 - never) / DRAWS as f64).sqrt();
    assert!((inf - never).abs() < 4.0 * sd, "{inf} vs {never}");
}

#[test]
fn piecewise_linear_rate_first_arrivals_pass_ks() {
    // Crosses zero twice; λ = 0 beyond the horizon 3.
    let knots = [0.0, 0.5, 1.2, 2.0, 3.0];
    let values = [1.0, -0.5, 0.0, 2.5, 0.4];
    let rate = PiecewiseLinearRate::from_knots(&knots, &values).unwrap();
    let (p, inf) = ks_first_arrival(&rate, 30);
    assert!(p > P_MIN, "p = {p}");
    let never = (-rate.integrated(3.0)).exp();
    let sd = (never * (1.0 - never) / DRAWS as f64).sqrt();
    assert!((inf - never).abs() < 4.0 * sd, "{inf} vs {never}");
}

/// Thinning a constant bound λ̄ = 3 down to the affine rate [2 − t]⁺ (≤ 2): the first accepted
/// proposal is the first arrival of the target; violations never happen.
#[test]
fn thinning_produces_the_target_process() {
    let target = AffineRate { a: 2.0, b: -1.0 };
    let bound = 3.0;
    let mut r = rng(40);
    let mut counts = ThinningCounts::default();
    let mut xs = Vec::with_capacity(DRAWS);
    let mut infinite = 0usize;
    while xs.len() < DRAWS {
        let mut t = 0.0;
        loop {
            t += unit_exponential(&mut r) / bound;
            if t > 2.0 {
                infinite += 1; // the target rate is 0 after t = 2
                break;
            }
            let d = thin(target.rate(t), bound, &mut r);
            counts.record(&d);
            if d.accept {
                xs.push(t);
                break;
            }
        }
    }
    let mass = 1.0 - (-target.integrated(2.0)).exp();
    let p = ks_test(&mut xs, |t| (1.0 - (-target.integrated(t)).exp()) / mass);
    assert!(p > P_MIN, "p = {p}");
    assert_eq!(counts.violations, 0);
    assert!(counts.max_ratio <= 2.0 / 3.0);
    let never = (-2.0f64).exp();
    let share = infinite as f64 / (DRAWS + infinite) as f64;
    assert!((share - never).abs() < 4.0 * (never * (1.0 - never) / DRAWS as f64).sqrt());
}

/// Thinning an increasing affine rate with a piecewise-constant bound (levels at the pieces'
/// right ends), re-starting at every accepted time: by memorylessness the gaps between
/// consecutive accepted times after a restart at time s follow [a + b(s + ·)]⁺; check the
/// first gap after a restart at 0.
#[test]
fn thinning_against_a_piecewise_constant_bound() {
    let target = AffineRate { a: 0.2, b: 1.5 };
    let edges = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 1e9];
    let mut band = PiecewiseLinearRate::new();
    for w in edges.windows(2) {
        let level = target.rate(w[1]);
        band.push(w[0], level).unwrap();
        band.push(w[1], level).unwrap();
    }
    let mut r = rng(50);
    let mut counts = ThinningCounts::default();
    let mut xs = Vec::with_capacity(DRAWS);
    while xs.len() < DRAWS {
        // Successive proposals from the band: Λ̄(t_{k+1}) = Λ̄(t_k) + E_k.
        let mut e = 0.0;
        loop {
            e += unit_exponential(&mut r);
            let t = band.arrival_for(e);
            let d = thin(target.rate(t), band.rate(t), &mut r);
            counts.record(&d);
            if d.accept {
                xs.push(t);
                break;
            }
        }
    }
    let p = ks_test(&mut xs, |t| 1.0 - (-target.integrated(t)).exp());
    assert!(p > P_MIN, "p = {p}");
    assert_eq!(counts.violations, 0, "max ratio {}", counts.max_ratio);
}

/// Superposing a constant clock (rate 0.5) and an affine one ([0.2 + t]⁺): the earliest arrival
/// has rate 0.7 + t, and the constant clock fires first with probability
/// ∫ 0.5·exp(−Λ(t)) dt (computed by quadrature).
#[test]
fn superposition_has_the_summed_rate_and_picks_clocks_by_rate() {
    let c = ConstantRate(0.5);
    let a = AffineRate { a: 0.2, b: 1.0 };
    let total = AffineRate { a: 0.7, b: 1.0 };
    let mut r = rng(60);
    let mut xs = Vec::with_capacity(DRAWS);
    let mut first_constant = 0usize;
    for _ in 0..DRAWS {
        let (k, t) = earliest([c.first_arrival(&mut r), a.first_arrival(&mut r)]).unwrap();
        xs.push(t);
        first_constant += usize::from(k == 0);
    }
    let p = ks_test(&mut xs, |t| 1.0 - (-total.integrated(t)).exp());
    assert!(p > P_MIN, "p = {p}");
    // P(constant first) = ∫_0^∞ 0.5 exp(−0.7t − t²/2) dt, by the midpoint rule on [0, 12].
    let h = 1e-4;
    let prob: f64 = (0..120_000)
        .map(|i| {
            let t = (f64::from(i) + 0.5) * h;
            0.5 * (-total.integrated(t)).exp() * h
        })
        .sum();
    let share = first_constant as f64 / DRAWS as f64;
    let sd = (prob * (1.0 - prob) / DRAWS as f64).sqrt();
    assert!((share - prob).abs() < 4.0 * sd, "{share} vs {prob}");
}
