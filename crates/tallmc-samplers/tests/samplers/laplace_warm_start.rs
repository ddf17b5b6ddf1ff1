//! Newton's warm start on a thinned view (`NewtonOptions::warm_start_rows`): same mode and
//! covariance as the cold start to Newton's tolerance, with fewer passes over the full data.

use tallmc_core::{Parallelism, Terms};
use tallmc_models::LogisticRegression;
use tallmc_models::data::DesignOptions;
use tallmc_models::synthetic::{HIGGS_LIKE_PRIOR_SD, higgs_like};
use tallmc_samplers::{NewtonOptions, laplace_approximation};

const N: usize = 200_000;
const WARM_ROWS: usize = 10_000;

fn model(seed: u64) -> LogisticRegression {
    let syn = higgs_like(N, seed).unwrap();
    LogisticRegression::new(syn.data, DesignOptions::default(), HIGGS_LIKE_PRIOR_SD).unwrap()
}

#[test]
fn warm_started_newton_finds_the_cold_mode_with_fewer_full_passes() {
    for seed in [3, 4] {
        let model = model(seed);
        let d = model.dim();
        let cold_opts =
            NewtonOptions { parallelism: Parallelism::Sequential, ..Default::default() };
        let warm_opts = NewtonOptions { warm_start_rows: Some(WARM_ROWS), ..cold_opts };
        let cold = laplace_approximation(&model, &vec![0.0; d], cold_opts).unwrap();
        let warm = laplace_approximation(&model, &vec![0.0; d], warm_opts).unwrap();
        // Newton stops at half-decrement < 1e-10: the mode is within √(2·1e-10) ≈ 1.4e-5
        // posterior sds of the exact one, from either start.
        for (j, sd) in cold.sds().iter().enumerate() {
            let gap = (warm.mode[j] - cold.mode[j]).abs() / sd;
            assert!(gap < 3e-5, "seed {seed}, θ_{j}: warm and cold modes {gap:.2e} sds apart");
        }
        for (a, b) in warm.covariance.iter().zip(&cold.covariance) {
            let scale = cold.covariance.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!((a - b).abs() < 1e-6 * scale, "covariance entries {a} vs {b}");
        }
        // Full-data Hessian passes: the warm start saves at least two of them (a pass over the
        // thinned view counts its ≈ WARM_ROWS rows, not N).
        let full_passes = |h: u64| h / N as u64;
        assert!(
            full_passes(warm.evals.hessians) + 2 <= full_passes(cold.evals.hessians),
            "seed {seed}: {} warm vs {} cold full Hessian passes",
            full_passes(warm.evals.hessians),
            full_passes(cold.evals.hessians)
        );
        assert!(warm.evals.total() < cold.evals.total());
    }
}

#[test]
fn warm_start_is_skipped_when_the_data_are_not_tall_enough() {
    let model = model(5);
    let d = model.dim();
    let cold_opts = NewtonOptions { parallelism: Parallelism::Sequential, ..Default::default() };
    // N / 4 < rows: the thinned view would be most of the data, so Newton starts cold.
    let warm_opts = NewtonOptions { warm_start_rows: Some(N / 4 + 1), ..cold_opts };
    let cold = laplace_approximation(&model, &vec![0.0; d], cold_opts).unwrap();
    let skipped = laplace_approximation(&model, &vec![0.0; d], warm_opts).unwrap();
    assert_eq!(cold, skipped);
}
