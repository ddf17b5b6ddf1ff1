//! Term bounds C(θ, θ′) ≥ max_i |ℓ_i(θ′) − ℓ_i(θ)| on random (θ, θ′) pairs, and tightness
//! where the bound is exact.

use std::sync::Arc;

use crate::common::*;
use proptest::prelude::*;
use tallmc_core::{TermBounds, Terms};
use tallmc_models::{Dataset, DesignOptions, Gaussian, GaussianMean, LogisticRegression};

/// max_i |ℓ_i(θ′) − ℓ_i(θ)| over all terms.
fn true_max<M: Terms>(m: &M, a: &[f64], b: &[f64]) -> f64 {
    let idx: Vec<u32> = (0..m.num_terms() as u32).collect();
    let mut la = vec![0.0; idx.len()];
    let mut lb = vec![0.0; idx.len()];
    m.log_terms(a, &idx, &mut la);
    m.log_terms(b, &idx, &mut lb);
    la.iter().zip(&lb).map(|(x, y)| (y - x).abs()).fold(0.0, f64::max)
}

fn logistic_models() -> Vec<LogisticRegression> {
    let data = Arc::new(random_dataset(300, 3, 11, bernoulli_response));
    [(false, false), (true, true), (true, false)]
        .into_iter()
        .map(|(intercept, standardize)| {
            LogisticRegression::new(data.clone(), DesignOptions { intercept, standardize }, 1.0)
                .unwrap()
        })
        .collect()
}

fn heavy_tailed() -> Arc<Dataset> {
    // Log-normal-ish responses with a wide range, and one exact duplicate of each extreme.
    Arc::new(random_dataset(300, 0, 12, |_, r| (1.3 * normal(r)).exp() - 2.0))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_123),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn logistic_bound_holds(a in prop::collection::vec(-3.0..3.0f64, 4), b in prop::collection::vec(-3.0..3.0f64, 4)) {
        for m in logistic_models() {
            let d = m.dim();
            let (a, b) = (&a[..d], &b[..d]);
            let c = m.term_difference_bound(a, b);
            prop_assert!(c >= true_max(&m, a, b), "{} < {}", c, true_max(&m, a, b));
            prop_assert_eq!(m.term_difference_bound(a, a), 0.0);
        }
    }

    #[test]
    fn gaussian_bound_holds(mu in -4.0..4.0f64, s in -2.0..2.0f64, mu2 in -4.0..4.0f64, s2 in -2.0..2.0f64, small in any::<bool>()) {
        let m = Gaussian::new(heavy_tailed()).unwrap();
        // Also nearby pairs, as a random-walk proposal makes them.
        let (mu2, s2) = if small { (mu + 1e-3 * mu2, s + 1e-3 * s2) } else { (mu2, s2) };
        let (a, b) = ([mu, s], [mu2, s2]);
        let c = m.term_difference_bound(&a, &b);
        let t = true_max(&m, &a, &b);
        prop_assert!(c >= t, "{} < {}", c, t);
    }

    #[test]
    fn gaussian_mean_bound_holds(mu in -4.0..4.0f64, mu2 in -4.0..4.0f64, small in any::<bool>()) {
        let m = GaussianMean::new(heavy_tailed(), 0.7, 0.0, 1.0).unwrap();
        let mu2 = if small { mu + 1e-4 * mu2 } else { mu2 };
        let c = m.term_difference_bound(&[mu], &[mu2]);
        let t = true_max(&m, &[mu], &[mu2]);
        prop_assert!(c >= t, "{} < {}", c, t);
        // Exact: attained at an extreme observation (up to the rounding margin).
        prop_assert!(c <= t * (1.0 + 1e-9) + 1e-9, "{} vs {}", c, t);
    }
}

/// The Gaussian bound is attained when the data contain y_min, y_max and the stationary point.
#[test]
fn gaussian_bound_is_tight_when_the_data_hit_the_candidates() {
    let (a, b): ([f64; 2], [f64; 2]) = ([0.5, 0.2], [-0.3, -0.4]);
    // Stationary point of Δ(y) = a y² + b y + c.
    let (w, w2) = ((-2.0 * a[1]).exp(), (-2.0 * b[1]).exp());
    let qa = 0.5 * (w - w2);
    let qb = b[0] * w2 - a[0] * w;
    let y_star = -qb / (2.0 * qa);
    let ys = vec![-3.0, y_star, 2.5, 0.0, 1.0];
    let m = Gaussian::from_observations(ys).unwrap();
    let c = m.term_difference_bound(&a, &b);
    let t = true_max(&m, &a, &b);
    assert!(c >= t && c <= t * (1.0 + 1e-9) + 1e-9, "{c} vs {t}");
}
