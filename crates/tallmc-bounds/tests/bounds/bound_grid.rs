//! Each concentration bound is at least the true deviation rate on a grid: for fixed finite
//! populations and fixed t, simulate many samples of t values drawn without replacement and check
//! P(|x̄_t − μ| > c_t) ≤ δ up to a rigorous binomial tolerance.

use crate::common::{Family, allowed_failures, mean_sd, rng};
use tallmc_bounds::{BoundKind, Population, SlicePopulation, half_width};

/// Samples per (population, t).
const SAMPLES: usize = 4_000;
/// False-alarm level of each assertion (see `allowed_failures`); 3 bounds × 2 δ × 36 cells.
const ALPHA: f64 = 1e-6;

/// Populations that stress the bounds differently: a two-point population with a rare value
/// (skewed; σ ≪ R), a uniform grid (spread over the whole range), and samples of two families.
fn populations(n: usize) -> Vec<(&'static str, Vec<f64>)> {
    let rare = n / 20;
    vec![
        ("two-point 5%", (0..n).map(|i| if i < rare.max(1) { 1.0 } else { 0.0 }).collect()),
        ("grid", (0..n).map(|i| i as f64 / n as f64).collect()),
        ("gaussian", Family::Gaussian.population(n, 11, 0)),
        ("lognormal", Family::LogNormal.population(n, 11, 1)),
    ]
}

#[test]
fn bounds_cover_the_true_deviation_on_a_grid() {
    let mut buffer = vec![0.0; 1_000];
    // Power check: the same grid flags bounds narrowed to a tenth of their width (the empirical
    // Bernstein bounds are so conservative at small t that a quarter would still hold).
    let mut narrowed_flagged = [false; 3];
    for n in [60usize, 1_000] {
        for (name, values) in populations(n) {
            let (mu, _) = mean_sd(&values);
            let range = SlicePopulation::exact_range(&values);
            let mut pop = SlicePopulation::new(&values, Some(range)).unwrap();
            for t in [1usize, 5, n / 4, n / 2 + 1, n - 1] {
                // failures[bound][delta]
                let deltas = [0.05, 0.3];
                let mut failures = [[0usize; 2]; 3];
                let mut narrowed = [0usize; 3];
                let mut r = rng(2024, t + 7 * n);
                for _ in 0..SAMPLES {
                    pop.reset();
                    let sample = &mut buffer[..t];
                    pop.draw(sample, &mut r);
                    let m = sample.iter().sum::<f64>() / t as f64;
                    let sd =
                        (sample.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / t as f64).sqrt();
                    for (b, kind) in BoundKind::ALL.into_iter().enumerate() {
                        for (j, &delta) in deltas.iter().enumerate() {
                            let c = half_width(kind, t, n, sd, range, delta);
                            if (m - mu).abs() > c {
                                failures[b][j] += 1;
                            }
                            if j == 1 && (m - mu).abs() > 0.1 * c {
                                narrowed[b] += 1;
                            }
                        }
                    }
                }
                for b in 0..3 {
                    narrowed_flagged[b] |=
                        narrowed[b] as f64 > allowed_failures(SAMPLES, deltas[1], ALPHA);
                }
                for (b, kind) in BoundKind::ALL.into_iter().enumerate() {
                    for (j, &delta) in deltas.iter().enumerate() {
                        let allowed = allowed_failures(SAMPLES, delta, ALPHA);
                        assert!(
                            failures[b][j] as f64 <= allowed,
                            "{kind} on {name}, N = {n}, t = {t}, δ = {delta}: {} of {SAMPLES} \
                             samples outside c_t (allowed {allowed:.0})",
                            failures[b][j]
                        );
                    }
                }
            }
        }
    }
    assert_eq!(narrowed_flagged, [true; 3], "the grid has no power against c_t / 10");
}

#[test]
fn bounds_have_the_documented_shape() {
    // Serfling factor: 1 at t = 1, 0 at t = N, Bardenet–Maillard branch above N/2.
    assert_eq!(tallmc_bounds::serfling_rho(1, 100), 1.0);
    assert_eq!(tallmc_bounds::serfling_rho(100, 100), 0.0);
    assert!((tallmc_bounds::serfling_rho(50, 100) - (1.0 - 49.0 / 100.0)).abs() < 1e-15);
    assert!((tallmc_bounds::serfling_rho(51, 100) - 0.49 * (1.0 + 1.0 / 51.0)).abs() < 1e-15);
    // Hand-computed values.
    let (t, n, sd, r, d) = (200usize, 1_000usize, 0.3, 2.0, 0.01);
    let rho = 1.0 - 199.0 / 1_000.0;
    let hs = r * (rho * (2.0f64 / d).ln() / (2.0 * t as f64)).sqrt();
    let eb =
        sd * (2.0 * (3.0f64 / d).ln() / t as f64).sqrt() + 3.0 * r * (3.0f64 / d).ln() / t as f64;
    let kappa = 7.0 / 3.0 + 3.0 / 2f64.sqrt();
    let ebs = sd * (2.0 * rho * (10.0f64 / d).ln() / t as f64).sqrt()
        + kappa * r * (10.0f64 / d).ln() / t as f64;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    assert!(close(half_width(BoundKind::HoeffdingSerfling, t, n, sd, r, d), hs));
    assert!(close(half_width(BoundKind::EmpiricalBernstein, t, n, sd, r, d), eb));
    assert!(close(half_width(BoundKind::EmpiricalBernsteinSerfling, t, n, sd, r, d), ebs));
    // Log-space form agrees and survives δ far below f64's range.
    let ln = tallmc_bounds::half_width_ln(BoundKind::EmpiricalBernsteinSerfling, t, n, sd, r, 1e4);
    assert!(ln.is_finite() && ln > ebs);
    assert!(half_width(BoundKind::HoeffdingSerfling, 0, n, sd, r, d).is_infinite());
    // Names round-trip.
    for kind in BoundKind::ALL {
        assert_eq!(kind.name().parse::<BoundKind>().unwrap(), kind);
    }
    assert!("bernstein".parse::<BoundKind>().is_err());
}
