//! The check every example's test makes: a sampler's posterior agrees with full-data HMC's.

use tallmc::RunSummary;
use tallmc_testkit::Z_MAX;

/// R-hat every run must stay below.
pub const RHAT_MAX: f64 = 1.01;

/// Asserts that `candidate` (labelled `label`) agrees with `reference` (full-data HMC) on every
/// parameter: |z| < [`Z_MAX`] for the difference of the means, z = (m₁ − m₂)/√(mcse₁² + mcse₂²),
/// and likewise for the sds; both runs' R-hat below [`RHAT_MAX`]. Returns the largest |z| of
/// the means and of the sds.
pub fn assert_agrees_with_hmc(
    names: &[String], reference: &RunSummary, candidate: &RunSummary, label: &str,
) -> (f64, f64) {
    let (mut max_mean_z, mut max_sd_z) = (0.0_f64, 0.0_f64);
    for (j, name) in names.iter().enumerate() {
        let (h, c) = (&reference.summaries[j], &candidate.summaries[j]);
        let z_mean = (c.mean - h.mean) / c.mcse_mean.hypot(h.mcse_mean);
        let z_sd = (c.sd - h.sd) / c.mcse_sd.hypot(h.mcse_sd);
        eprintln!("{name}: mean z = {z_mean:.2}, sd z = {z_sd:.2}, {label} R-hat {:.4}", c.rhat);
        assert!(z_mean.abs() < Z_MAX, "{name}: {label} mean z = {z_mean:.2}");
        assert!(z_sd.abs() < Z_MAX, "{name}: {label} sd z = {z_sd:.2}");
        assert!(h.rhat < RHAT_MAX, "{name}: HMC R-hat {}", h.rhat);
        assert!(c.rhat < RHAT_MAX, "{name}: {label} R-hat {}", c.rhat);
        max_mean_z = max_mean_z.max(z_mean.abs());
        max_sd_z = max_sd_z.max(z_sd.abs());
    }
    eprintln!("max |z|: means {max_mean_z:.2}, sds {max_sd_z:.2}");
    (max_mean_z, max_sd_z)
}
