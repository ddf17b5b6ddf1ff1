//! Each exact kernel on the conjugate Gaussian (n = 10⁴): posterior mean and sd within 4 MCSE of
//! the closed form, at a fixed seed and at three others (shift them all with
//! `TALLMC_SEED_OFFSET`). With 3 kernels × 4 seeds × 2 quantities the false-failure probability
//! is below 24 × 6.3·10⁻⁵ ≈ 0.15% if the MCSEs are right.

use tallmc_models::{GaussianMean, synthetic};
use tallmc_reproduce::Silent;
use tallmc_reproduce::exact::{ExactKernel, run_exact};
use tallmc_samplers::{NewtonOptions, RunConfig, laplace_approximation};
use tallmc_tests::{Z_MAX, seed};

#[test]
fn exact_kernels_match_the_closed_form_at_four_seeds() {
    let data = synthetic::normal_sample(10_000, 1.0, 2.0, 5).unwrap();
    let model = GaussianMean::new(data, 2.0, 0.0, 10.0).unwrap();
    let (mean, sd) = model.posterior_mean_sd();
    let laplace = laplace_approximation(&model, &[0.0], NewtonOptions::default()).unwrap();
    for kernel in ExactKernel::ALL {
        for base in [1, 2, 3, 4] {
            let config = RunConfig::new(500, 2000, 4, seed(base));
            let run = run_exact(&model, kernel, &laplace, config, &Silent, "conjugate").unwrap();
            let s = &run.summaries[0];
            let (zm, zs) = ((s.mean - mean) / s.mcse_mean, (s.sd - sd) / s.mcse_sd);
            assert!(
                zm.abs() < Z_MAX && zs.abs() < Z_MAX,
                "{} seed {}: mean {} vs {mean} (z = {zm:.2}), sd {} vs {sd} (z = {zs:.2}), ESS {}",
                kernel.label(),
                config.seed,
                s.mean,
                s.sd,
                s.ess_bulk
            );
            assert!(s.rhat < 1.05, "{} seed {}: R-hat {}", kernel.label(), config.seed, s.rhat);
        }
    }
}
