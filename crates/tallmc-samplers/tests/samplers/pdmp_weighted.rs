//! The importance-sampled per-datum bounds of lipSBPS and ZZ-SS ([`WeightedGradients`],
//! [`WeightedLipschitzGradients`]): each datum's clock bounded by its own constant, the datum of a
//! proposal drawn ∝ its bound.
//!
//! * **Exactness** on data with a heavy-tailed covariate (where the weights differ by orders of
//!   magnitude, so a wrong weight would show): time averages against the closed form (Gaussian
//!   regression) and against a long full-data HMC run (logistic regression), within [`Z_MAX`]
//!   MCSE, at fixed seeds shifted by `TALLMC_SEED_OFFSET`.
//! * **Dominance**: at points far from the mode, every drawn datum's rate stays below its own
//!   bound, and the total rate is the sum of the constants recomputed from the rows here.
//! * **Cost**: the total rate never exceeds the paper's uniform N × worst-datum bound, and on
//!   these data is below it by the factor max_J c_J / mean_J c_J recomputed from the rows.
//!
//! [`Z_MAX`]: crate::pdmp_support::Z_MAX

#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use tallmc_core::rng::chain_rng;
use tallmc_core::{TermGradients, Terms};
use tallmc_estimators::{DatumRateBound, SwitchingRateEstimator};
use tallmc_models::LogisticRegression;
use tallmc_samplers::{
    LipSbps, LipSbpsConfig, WeightedGradients, WeightedLipschitzGradients, ZigZagSubsampling,
};
use tallmc_testkit::seed;

use crate::pdmp_support::{
    Family, Glm, check_gaussian, compare_with, hmc_means, logistic_mode, time_averages,
};

/// Multiplies covariate column 2 of every row by a log-normal factor e^{1.2 g}, g ~ N(0, 1): the
/// row norms then spread over two orders of magnitude (max/mean ≈ 10 at N = 1000).
fn heavy_tailed(mut data: Glm, data_seed: u64) -> Glm {
    let mut rng = chain_rng(data_seed, 0);
    for row in data.x.chunks_mut(data.d) {
        let g: f64 = StandardNormal.sample(&mut rng);
        row[2] *= (1.2 * g).exp();
    }
    data
}

/// Logistic regression, N = 1000, intercept and two AR(1) covariates (the second heavy-tailed).
fn heavy_logistic() -> LogisticRegression {
    heavy_tailed(Glm::new(Family::Logistic, 1_000, 3, 0.3, 0.0, 21), 22).logistic_regression()
}

/// Row norms ‖x_J‖₂ of a model's design, recomputed from the rows (logistic: c_J = ‖x_J‖₂).
fn row_norms(data: &Glm) -> Vec<f64> {
    data.x.chunks(data.d).map(|r| r.iter().map(|a| a * a).sum::<f64>().sqrt()).collect()
}

#[test]
fn weighted_lipsbps_on_a_heavy_tailed_gaussian_regression_matches_the_closed_form() {
    let data = heavy_tailed(Glm::new(Family::Gaussian { sigma: 1.0 }, 200, 3, 0.3, 0.5, 23), 24);
    let model = data.gaussian_regression();
    let (mean, cov) = model.posterior_mean_covariance().unwrap();
    let kernel = LipSbps::with_bound(
        LipSbpsConfig::default(),
        WeightedLipschitzGradients::new(mean.clone()).unwrap(),
    )
    .unwrap();
    let avg = time_averages(&model, &kernel, &mean, 10.0, 1000.0, 40, 61);
    let worst = check_gaussian("weighted lipSBPS, Gaussian", &avg, &mean, &cov);
    assert_eq!(avg.totals.violations, 0);
    eprintln!(
        "weighted lipSBPS, Gaussian: max |z| = {worst:.2}, {:.0} effective samples per batch, \
         {:.0} proposals per unit time",
        avg.min_ess_per_batch(),
        avg.totals.proposals as f64 / avg.time
    );
}

#[test]
fn weighted_lipsbps_and_zzss_on_a_heavy_tailed_logistic_regression_match_hmc() {
    let model = heavy_logistic();
    let mode = logistic_mode(&model);
    let reference = hmc_means(&model);
    let kernel = LipSbps::with_bound(LipSbpsConfig::default(), WeightedGradients::new()).unwrap();
    let avg = time_averages(&model, &kernel, &mode, 5.0, 1000.0, 20, 62);
    assert!(avg.totals.evals.gradients <= avg.totals.proposals);
    compare_with("weighted lipSBPS, heavy-tailed logistic, N = 10³", &reference, &avg);
    let kernel = ZigZagSubsampling::with_estimator(WeightedGradients::new());
    let avg = time_averages(&model, &kernel, &mode, 5.0, 1000.0, 20, 63);
    assert_eq!(avg.totals.evals.gradients, avg.totals.proposals);
    compare_with("weighted ZZ-SS, heavy-tailed logistic, N = 10³", &reference, &avg);
}

/// A random point at distance ≈ `radius` from `center` and a unit-speed velocity.
fn far_point(center: &[f64], radius: f64, rng: &mut impl rand::Rng) -> (Vec<f64>, Vec<f64>) {
    let mut normal = || -> f64 { StandardNormal.sample(&mut *rng) };
    let x: Vec<f64> = center.iter().map(|c| c + radius * normal()).collect();
    let mut v: Vec<f64> = center.iter().map(|_| normal()).collect();
    let s = v.iter().map(|a| a * a).sum::<f64>().sqrt();
    v.iter_mut().for_each(|a| *a /= s);
    (x, v)
}

/// ⟨∇ℓ_J(x + vτ), v⟩.
fn datum_slope<M: TermGradients>(model: &M, x: &[f64], v: &[f64], tau: f64, j: u32) -> f64 {
    let y: Vec<f64> = x.iter().zip(v).map(|(a, b)| a + tau * b).collect();
    let (mut value, mut grad) = ([0.0], vec![0.0; x.len()]);
    model.log_terms_grads(&y, &[j], &mut value, &mut grad);
    grad.iter().zip(v).map(|(g, b)| g * b).sum()
}

#[test]
fn the_weighted_bounds_dominate_every_drawn_datum_and_sum_the_constants() {
    let data = heavy_tailed(Glm::new(Family::Logistic, 1_000, 3, 0.3, 0.0, 21), 22);
    let model = data.logistic_regression();
    let n = model.num_terms() as u32;
    let mode = logistic_mode(&model);
    let norms = row_norms(&data);
    let (sum, max) = (norms.iter().sum::<f64>(), norms.iter().fold(0.0, |m: f64, &c| m.max(c)));
    let mut rng = chain_rng(seed(64), 0);

    // Bounded gradients: total ‖v‖Σ‖x_J‖ (below N·B(v)), each drawn J below ‖v‖‖x_J‖.
    let mut bound = WeightedGradients::new();
    DatumRateBound::<LogisticRegression>::prepare(&mut bound, &model).unwrap();
    assert!((bound.total() - sum).abs() <= 1e-9 * sum, "{} vs {sum}", bound.total());
    let mut below_uniform = f64::INFINITY;
    for _ in 0..200 {
        let (x, v) = far_point(&mode, 3.0, &mut rng);
        let (a, b) = DatumRateBound::data_rate(&mut bound, &model, &x, &v, n);
        let uniform = f64::from(n) * DatumRateBound::datum_bound(&bound, &model, &x, &v).0;
        assert!(a <= uniform && b == 0.0, "{a} vs {uniform}");
        below_uniform = below_uniform.min(uniform / a);
        for _ in 0..20 {
            let tau = 5.0 * rng.random::<f64>();
            let (j, (aj, bj)) =
                DatumRateBound::draw_datum(&mut bound, &model, &x, &v, tau, n, (a, b), &mut rng);
            let rate = datum_slope(&model, &x, &v, tau, j).abs();
            assert!(rate <= aj + bj * tau, "datum {j}: {rate} > {aj} + {bj}·{tau}");
        }
    }
    // The uniform bound is N·min(max‖x_J‖, Σ_j|v_j| max_J|x_Jj|) ≥ ... : at least the spread
    // max/mean of the norms when the L1 form does not win, and never below 1.
    eprintln!(
        "heavy-tailed rows: max/mean norm = {:.1}, uniform/weighted rate ≥ {below_uniform:.1}",
        max * f64::from(n) / sum
    );

    // Lipschitz gradients around the mode: each drawn J below ‖v‖(g_J + L_J(r + ‖v‖τ)).
    let mut bound = WeightedLipschitzGradients::new(mode.clone()).unwrap();
    let evals = DatumRateBound::<LogisticRegression>::prepare(&mut bound, &model).unwrap();
    assert_eq!(evals.gradients, u64::from(n), "one set-up pass at x*");
    let (_, sum_l) = bound.totals();
    // Logistic: L_J = ‖x_J‖²/4.
    let expected: f64 = norms.iter().map(|c| c * c / 4.0).sum();
    assert!((sum_l - expected).abs() <= 1e-9 * expected, "{sum_l} vs {expected}");
    for _ in 0..200 {
        let (x, v) = far_point(&mode, 3.0, &mut rng);
        let (a, b) = bound.data_rate(&model, &x, &v, n);
        let (ua, ub) = bound.datum_bound(&model, &x, &v);
        assert!(a <= f64::from(n) * ua * (1.0 + 1e-12) && b <= f64::from(n) * ub * (1.0 + 1e-12));
        for _ in 0..20 {
            let tau = 5.0 * rng.random::<f64>();
            let (j, (aj, bj)) = bound.draw_datum(&model, &x, &v, tau, n, (a, b), &mut rng);
            let rate = datum_slope(&model, &x, &v, tau, j).abs();
            assert!(
                rate <= (aj + bj * tau) * (1.0 + 1e-12),
                "datum {j}: {rate} > {aj} + {bj}·{tau}"
            );
        }
    }
}

#[test]
fn weighted_zzss_bounds_each_coordinate_by_the_sum_of_its_column() {
    let data = heavy_tailed(Glm::new(Family::Logistic, 1_000, 3, 0.3, 0.0, 21), 22);
    let model = data.logistic_regression();
    let n = data.n() as f64;
    let d = data.d;
    let kernel_estimator = WeightedGradients::new();
    let mut estimator = kernel_estimator.clone();
    SwitchingRateEstimator::<LogisticRegression>::prepare(&mut estimator, &model).unwrap();
    let (zero, theta) = (vec![0.0; d], vec![1.0; d]);
    let (mut a, mut b) = (vec![0.0; d], vec![0.0; d]);
    estimator.bounds(&model, &zero, &theta, &mut a, &mut b);
    for j in 0..d {
        // At ξ = 0 the prior gradient vanishes: a_j is the data part alone, the smaller of
        // N max_J |x_Jj| and Σ_J |x_Jj| (logistic: B_Jj = |x_Jj|), recomputed from the rows.
        let column = data.x.chunks(d).map(|r| r[j].abs());
        let (max_abs, sum) = column.fold((0.0, 0.0), |(m, s): (f64, f64), c| (m.max(c), s + c));
        let expected = (n * max_abs).min(sum);
        assert!(
            (a[j] - expected).abs() <= 1e-9 * expected,
            "coordinate {j}: {} vs {expected}",
            a[j]
        );
        eprintln!("ZZ-SS coordinate {j}: N·B_j / Σ_J B_Jj = {:.1}", n * max_abs / sum);
    }
    // The intercept column is constant: uniform and weighted bounds are equal (N).
    assert_eq!(a[0], n);
    // A chain of the same kernel on another model reads that model's constants, not the tables
    // the first chain built.
    let other = Glm::new(Family::Logistic, 500, 3, 0.3, 0.0, 25);
    let mut estimator = kernel_estimator.clone();
    let model = other.logistic_regression();
    SwitchingRateEstimator::<LogisticRegression>::prepare(&mut estimator, &model).unwrap();
    let sum: f64 = other.x.chunks(d).map(|r| r[1].abs()).sum();
    let got = estimator.coordinate_data_bounds()[1];
    assert!((got - sum).abs() <= 1e-9 * sum, "{got} vs {sum}");
}
