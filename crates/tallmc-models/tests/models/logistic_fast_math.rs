//! The logistic model's vectorized terms (branch-free `exp`/`log1p`, `glm/fast_math.rs`) against
//! a scalar libm reference written here: ℓ_i, Σℓ_i, ∇ℓ_i and Σ∇ℓ_i on random rows and θ, with
//! |η| from about 10⁻¹⁰ to beyond 800, through every batch path (random indices, contiguous
//! ranges crossing the 64-row chunks, per-row gradients).

use crate::common::*;
use proptest::prelude::*;
use rand::RngExt;
use tallmc_core::{LinearPredictor, TermGradients, Terms};
use tallmc_models::{Dataset, DesignOptions, FastLogisticRegression};

/// Agreement required with the libm reference, relative.
const REL_TOL: f64 = 1e-12;
/// Absolute floor of the relative comparisons: 2⁻¹⁰²². Below it e^{−|η|} (and so ℓ_i = −log1p(e)
/// and φ′ = ±e/(1 + e)) is subnormal, where even libm is accurate only to 2⁻¹⁰⁷⁵ absolute, so
/// a relative comparison would be meaningless; REL_TOL·2⁻¹⁰²² still exceeds that unit.
const ABS_FLOOR: f64 = f64::MIN_POSITIVE;

/// The scalar reference: (φ, φ′) of the logistic family with libm `exp` and `ln_1p`, in the
/// same stable form as the model (so the comparison measures only the `exp`/`log1p` change).
fn reference(y: f64, eta: f64) -> (f64, f64) {
    let e = (-eta.abs()).exp();
    let q = 1.0 / (1.0 + e);
    let (sigma, one_minus) = if eta >= 0.0 { (q, e * q) } else { (e * q, q) };
    ((y * eta - eta.max(0.0)) - e.ln_1p(), y * one_minus - (1.0 - y) * sigma)
}

#[track_caller]
fn check(got: f64, want: f64, scale: f64, what: &str) -> Result<(), TestCaseError> {
    let tol = REL_TOL * scale.max(ABS_FLOOR);
    prop_assert!((got - want).abs() <= tol, "{}: {:e} vs {:e} (tol {:e})", what, got, want, tol);
    Ok(())
}

fn model(x: &[f64], y: &[f64], p: usize, standardize: bool) -> Option<FastLogisticRegression> {
    let data = Dataset::with_default_names(x.to_vec(), y.to_vec(), p).ok()?;
    // Standardizing rejects a constant column; such cases just test the plain model.
    FastLogisticRegression::new(data, DesignOptions { intercept: standardize, standardize }, 1.0)
        .ok()
}

/// Everything the model computes for rows `idx`, checked against the reference.
fn check_model(
    m: &FastLogisticRegression, y: &[f64], theta: &[f64], idx: &[u32],
) -> Result<(), TestCaseError> {
    let d = m.dim();
    let n = m.num_terms();
    let all: Vec<u32> = (0..n as u32).collect();
    let mut eta = vec![0.0; n];
    m.linear_predictors(theta, &all, &mut eta);
    // x̃_i from the model's own row update (exact: a scale by 1).
    let rows: Vec<Vec<f64>> = (0..n as u32)
        .map(|i| {
            let mut r = vec![0.0; d];
            m.add_weighted_rows(&[i], &[1.0], &mut r);
            r
        })
        .collect();
    let refs: Vec<(f64, f64)> = (0..n).map(|i| reference(y[i], eta[i])).collect();

    // ℓ_i and Σℓ_i over random indices.
    let mut out = vec![0.0; idx.len()];
    m.log_terms(theta, idx, &mut out);
    for (&o, &i) in out.iter().zip(idx) {
        let want = refs[i as usize].0;
        check(o, want, want.abs(), "ℓ_i")?;
    }
    let abs_sum: f64 = idx.iter().map(|&i| refs[i as usize].0.abs()).sum();
    let want_sum: f64 = idx.iter().map(|&i| refs[i as usize].0).sum();
    check(m.sum_log_terms(theta, idx), want_sum, abs_sum, "Σℓ_i (indices)")?;

    // ∇ℓ_i per row and Σ∇ℓ_i over random indices.
    let mut grads = vec![0.0; idx.len() * d];
    let mut out2 = vec![0.0; idx.len()];
    m.log_terms_grads(theta, idx, &mut out2, &mut grads);
    for ((&o, &i), g) in out2.iter().zip(idx).zip(grads.chunks_exact(d)) {
        let (want, score) = refs[i as usize];
        check(o, want, want.abs(), "ℓ_i (grads)")?;
        for (&gj, &xj) in g.iter().zip(&rows[i as usize]) {
            check(gj, score * xj, (score * xj).abs(), "∇ℓ_i")?;
        }
    }
    let mut gsum = vec![0.0; d];
    let total = m.log_terms_grad_sum(theta, idx, &mut out2, &mut gsum);
    check(total, want_sum, abs_sum, "Σℓ_i (grad sum)")?;
    for j in 0..d {
        let want: f64 = idx.iter().map(|&i| refs[i as usize].1 * rows[i as usize][j]).sum();
        let scale: f64 =
            idx.iter().map(|&i| (refs[i as usize].1 * rows[i as usize][j]).abs()).sum();
        check(gsum[j], want, scale, "Σ∇ℓ_i (indices)")?;
    }

    // Contiguous ranges: the whole data and a range starting mid-chunk.
    for (start, end) in [(0, n), (n / 3, n)] {
        let range = start..end;
        let want_sum: f64 = refs[range.clone()].iter().map(|r| r.0).sum();
        let abs_sum: f64 = refs[range.clone()].iter().map(|r| r.0.abs()).sum();
        let (s, e) = (start as u32, end as u32);
        check(m.sum_log_terms_range(theta, s, e), want_sum, abs_sum, "Σℓ_i (range)")?;
        let mut gsum = vec![0.0; d];
        let total = m.sum_log_terms_grad_range(theta, s, e, &mut gsum);
        check(total, want_sum, abs_sum, "Σℓ_i (grad range)")?;
        for j in 0..d {
            let want: f64 = range.clone().map(|i| refs[i].1 * rows[i][j]).sum();
            let scale: f64 = range.clone().map(|i| (refs[i].1 * rows[i][j]).abs()).sum();
            check(gsum[j], want, scale, "Σ∇ℓ_i (range)")?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_126),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Rows x ∈ [−1, 1]^p, y ∈ {0, 1}, θ = 10^u·v with v ∈ [−1, 1]^d and u ∈ [−10, 3]: |η|
    /// from ~10⁻¹⁰ to a few thousand, so e^{−|η|} covers 1, the normal range, the subnormal
    /// range and 0.
    #[test]
    fn vectorized_logistic_terms_match_libm_reference(
        n in 1usize..200,
        p in 1usize..6,
        seed in any::<u64>(),
        u in -10.0..3.0f64,
        standardize in any::<bool>(),
    ) {
        let mut r = rng(seed);
        let x: Vec<f64> = (0..n * p).map(|_| 2.0 * r.random::<f64>() - 1.0).collect();
        let y: Vec<f64> = (0..n).map(|_| if r.random::<bool>() { 1.0 } else { 0.0 }).collect();
        let Some(m) = model(&x, &y, p, standardize).or_else(|| model(&x, &y, p, false)) else {
            return Err(TestCaseError::fail("model"));
        };
        let scale = 10f64.powf(u);
        let theta: Vec<f64> = (0..m.dim()).map(|_| scale * (2.0 * r.random::<f64>() - 1.0)).collect();
        let idx: Vec<u32> = (0..150).map(|_| r.random_range(0..n as u32)).collect();
        check_model(&m, &y, &theta, &idx)?;
    }
}

/// The ends exactly: η = 0, ±745, ±800 (e = 1, subnormal, 0).
#[test]
fn extreme_linear_predictors_match_libm_reference() {
    let etas = [0.0, 1e-300, 0.3, 0.881, 1.0, 36.0, 700.0, 709.0, 740.0, 745.0, 746.0, 800.0];
    let x: Vec<f64> = etas.iter().flat_map(|&e| [e, -e]).collect();
    for y in [0.0, 1.0] {
        let ys = vec![y; x.len()];
        let m = model(&x, &ys, 1, false).unwrap();
        let idx: Vec<u32> = (0..x.len() as u32).collect();
        check_model(&m, &ys, &[1.0], &idx).unwrap();
    }
}
