//! The exact subsampling piecewise-deterministic samplers — lipSBPS, Zig-Zag with subsampling
//! (ZZ-SS) and with control variates (ZZ-CV) — against closed forms and a long full-data HMC
//! run, with continuous-time averages and 40 batch means over trajectory time (the loop of
//! `pdmp_full_data.rs`, in `pdmp_support`), at fixed seeds shifted by `TALLMC_SEED_OFFSET`.
//!
//! Models: the library's [`GaussianRegression`] with known σ (Lipschitz per-datum gradients,
//! posterior N(m, S) in closed form) and [`LogisticRegression`] (bounded per-datum gradients),
//! on data generated in `pdmp_support`; the test-local `pdmp_support::Glm` on the same data,
//! whose bounds can be made deliberately wrong, for the error tests. Tolerances are [`Z_MAX`]
//! MCSE; an exact sampler's bound violation is an error and fails the run.

#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use crate::pdmp_support::{
    Family, Glm, check_gaussian, check_run_length, compare_with_hmc, logistic, logistic_data,
    logistic_mode, time_averages,
};
use tallmc_core::rng::chain_rng;
use tallmc_core::{Error, PdmpChain, PdmpKernel, Terms};
use tallmc_estimators::{HessianProducts, RankOne};
use tallmc_models::{GaussianRegression, LogisticRegression};
use tallmc_samplers::{
    ControlVariates, LipSbps, LipSbpsConfig, NewtonOptions, ZigZagSubsampling,
    laplace_approximation,
};
use tallmc_testkit::{assert_allocation_free, seed};

/// 2-D Gaussian regression, N = 100, x_i = (1, z_i) with z_i ~ N(1.5, 1): posterior
/// correlation ≈ −0.81, sds ≈ (0.17, 0.10).
fn gaussian_2d_data() -> Glm {
    Glm::new(Family::Gaussian { sigma: 1.0 }, 100, 2, 0.0, 1.5, 11)
}

fn gaussian_2d() -> GaussianRegression {
    gaussian_2d_data().gaussian_regression()
}

/// 10-D Gaussian regression, N = 200, AR(1) covariates (ρ = 0.5) around 0.5: sds ≈ 0.1.
fn gaussian_10d() -> GaussianRegression {
    Glm::new(Family::Gaussian { sigma: 1.0 }, 200, 10, 0.5, 0.5, 12).gaussian_regression()
}

fn lipsbps_lipschitz(reference: &[f64]) -> LipSbps<tallmc_samplers::LipschitzGradients> {
    LipSbps::lipschitz(LipSbpsConfig::default(), reference.to_vec()).unwrap()
}

fn zzcv(reference: &[f64]) -> ZigZagSubsampling<ControlVariates<RankOne>> {
    ZigZagSubsampling::with_estimator(ControlVariates::rank_one(reference.to_vec()).unwrap())
}

/// Runs one sampler on a Gaussian regression from the posterior mean and checks every mean,
/// second moment and E[x_jx_k] (every pair) against the closed form.
fn gaussian_case<K: PdmpKernel<GaussianRegression>>(
    name: &str, model: &GaussianRegression, kernel: K, (t, batches): (f64, usize), base: u64,
) {
    let (mean, cov) = model.posterior_mean_covariance().unwrap();
    let avg = time_averages(model, &kernel, &mean, t / 100.0, t, batches, base);
    check_run_length(name, &avg);
    let worst = check_gaussian(name, &avg, &mean, &cov);
    assert_eq!(avg.totals.violations, 0, "{name}");
    eprintln!(
        "{name}: T = {t}, max |z| = {worst:.2}, {:.0} effective samples per batch, {} proposals, \
         {} events, {:.0} evaluations per unit time",
        avg.min_ess_per_batch(),
        avg.totals.proposals,
        avg.totals.events(),
        avg.totals.evals.gradients as f64 / avg.time
    );
}

#[test]
fn lipsbps_on_gaussian_regressions() {
    let model = gaussian_2d();
    let m = model.posterior_mean_covariance().unwrap().0;
    gaussian_case("lipSBPS 2-D", &model, lipsbps_lipschitz(&m), (4000.0, 40), 1);
    let model = gaussian_10d();
    let m = model.posterior_mean_covariance().unwrap().0;
    gaussian_case("lipSBPS 10-D", &model, lipsbps_lipschitz(&m), (400.0, 20), 2);
}

#[test]
fn zzss_on_gaussian_regressions() {
    let model = gaussian_2d();
    let m = model.posterior_mean_covariance().unwrap().0;
    gaussian_case("ZZ-SS 2-D", &model, ZigZagSubsampling::lipschitz(m).unwrap(), (4000.0, 40), 3);
    let model = gaussian_10d();
    let m = model.posterior_mean_covariance().unwrap().0;
    gaussian_case("ZZ-SS 10-D", &model, ZigZagSubsampling::lipschitz(m).unwrap(), (400.0, 20), 4);
}

#[test]
fn zzcv_on_gaussian_regressions() {
    let model = gaussian_2d();
    let m = model.posterior_mean_covariance().unwrap().0;
    gaussian_case("ZZ-CV 2-D", &model, zzcv(&m), (4000.0, 40), 5);
    let generic = ControlVariates::with_engine(m.clone(), HessianProducts::new(2, 1)).unwrap();
    let kernel = ZigZagSubsampling::with_estimator(generic);
    gaussian_case("ZZ-CV (Hessian products) 2-D", &model, kernel, (4000.0, 40), 6);
    let model = gaussian_10d();
    let m = model.posterior_mean_covariance().unwrap().0;
    gaussian_case("ZZ-CV 10-D", &model, zzcv(&m), (400.0, 20), 7);
}

/// lipSBPS and ZZ-SS mix diffusively: every datum bounce/flip proposal is drawn from the
/// bound N·B, and the many accepted ones randomize the velocity, so their integrated
/// autocorrelation time is O(1) in trajectory time at every N (≈ 5 time units here) while their
/// cost is O(N) per unit time. A run long enough for batch means (≈ 200 effective samples,
/// T = 1000) takes ≈ 9·10⁷ ZZ-SS proposals at N = 10⁴ (≈ 60 s in CI) and ≈ 10⁷ at N = 10³, so the
/// paper's uniform schemes are checked at N = 10³: exactness does not depend on N, and the cost
/// in N is measured in `zzcv_cost_per_posterior_sd_is_flat_in_n` and the sbps suite.
#[test]
fn lipsbps_on_logistic_regression_matches_hmc() {
    let model = logistic(1_000);
    let mode = logistic_mode(&model);
    let kernel = LipSbps::new(LipSbpsConfig::default()).unwrap();
    let avg = time_averages(&model, &kernel, &mode, 5.0, 1000.0, 20, 41);
    // One per-datum gradient per data proposal; prior proposals and refreshments touch none.
    assert!(avg.totals.evals.gradients <= avg.totals.proposals);
    compare_with_hmc("lipSBPS (bounded gradients), N = 10³", 1_000, &avg);
}

#[test]
fn zzss_on_logistic_regression_matches_hmc() {
    let model = logistic(1_000);
    let mode = logistic_mode(&model);
    let kernel = ZigZagSubsampling::new();
    let avg = time_averages(&model, &kernel, &mode, 5.0, 1000.0, 20, 42);
    // Exactly one term and gradient per proposal.
    assert_eq!(avg.totals.evals.gradients, avg.totals.proposals);
    assert_eq!(avg.totals.evals.terms, avg.totals.proposals);
    compare_with_hmc("ZZ-SS (bounded gradients), N = 10³", 1_000, &avg);
}

#[test]
fn zzcv_on_logistic_regression_matches_hmc() {
    let model = logistic(10_000);
    let mode = logistic_mode(&model);
    let avg = time_averages(&model, &zzcv(&mode), &mode, 1.0, 200.0, 40, 43);
    // Set-up: N at ξ* (Σ∇ℓ_J) + 2 (engine warm-up); then one datum at ξ and, unless the same J
    // comes twice in a row, one at ξ*.
    let g = avg.totals.evals.gradients;
    let p = avg.totals.proposals;
    assert!(g <= 10_002 + 2 * p && g + p / 1000 + 10 >= 10_002 + 2 * p, "{g} vs {p}");
    compare_with_hmc("ZZ-CV, N = 10⁴", 10_000, &avg);
}

/// Per-datum evaluations of one run: per unit trajectory time, and per unit time × the mean
/// posterior sd σ̄ (evaluations while travelling one posterior sd at unit speed).
fn cost_per_time<K: PdmpKernel<LogisticRegression>>(
    model: &LogisticRegression, kernel: K, sds_travelled: f64,
) -> (f64, f64) {
    let lap = laplace_approximation(model, &[0.0; 3], NewtonOptions::default()).unwrap();
    let sd = lap.sds().iter().sum::<f64>() / 3.0;
    let t = sds_travelled * sd;
    let avg = time_averages(model, &kernel, &lap.mode, 0.0, t, 20, 44);
    // Leave out the set-up pass: the cost of moving.
    let setup = if avg.totals.evals.gradients > avg.totals.proposals {
        model.num_terms() as f64
    } else {
        0.0
    };
    let per_time = (avg.totals.evals.gradients as f64 - setup) / t;
    (per_time, per_time * sd)
}

/// Bierkens et al.'s super-efficiency: near the mode ZZ-CV's proposal rate is
/// O(N‖ξ − ξ*‖) = O(√N) per unit time while the posterior's width is O(1/√N), so its
/// per-datum evaluations per posterior sd travelled are flat in N; ZZ-SS's grow like √N (its
/// rate is O(N) per unit time).
#[test]
fn zzcv_cost_per_posterior_sd_is_flat_in_n() {
    let mut cv = Vec::new();
    let mut ss = Vec::new();
    for n in [1_000, 10_000] {
        let model = logistic(n);
        let mode = logistic_mode(&model);
        cv.push(cost_per_time(&model, zzcv(&mode), 5_000.0));
        ss.push(cost_per_time(&model, ZigZagSubsampling::new(), 1_000.0));
        eprintln!(
            "N = {n}: ZZ-CV {:.0} evaluations per unit time, {:.1} per posterior sd; \
             ZZ-SS {:.0} per unit time, {:.0} per posterior sd",
            cv.last().unwrap().0,
            cv.last().unwrap().1,
            ss.last().unwrap().0,
            ss.last().unwrap().1
        );
    }
    let cv_ratio = cv[1].1 / cv[0].1;
    let ss_ratio = ss[1].1 / ss[0].1;
    eprintln!("N 10³ → 10⁴: per posterior sd ×{cv_ratio:.2} (ZZ-CV), ×{ss_ratio:.2} (ZZ-SS)");
    assert!((0.5..2.0).contains(&cv_ratio), "ZZ-CV's cost per sd grew ×{cv_ratio}");
    assert!(ss_ratio > 2.0, "ZZ-SS's cost per sd grew only ×{ss_ratio}");
}

/// Runs `kernel` until it errors (or 10⁶ steps) and returns the error.
fn first_error<K: PdmpKernel<Glm>>(model: &Glm, kernel: K, start: &[f64]) -> Option<Error> {
    let mut rng = chain_rng(seed(50), 0);
    let mut state = kernel.build_chain(model, start, &mut rng).unwrap();
    (0..1_000_000).find_map(|_| state.step(model, &mut rng).err())
}

#[test]
fn a_too_small_bound_is_a_bound_violation() {
    let expect = |name: &str, e: Option<Error>| match e {
        Some(Error::BoundViolation { ratio, .. }) => assert!(ratio > 1.0, "{name}: {ratio}"),
        other => panic!("{name}: expected a bound violation, got {other:?}"),
    };
    let mut model = logistic_data(1_000);
    let mode = logistic_mode(&model);
    model.bound_scale = 0.05;
    expect("lipSBPS", first_error(&model, LipSbps::new(LipSbpsConfig::default()).unwrap(), &mode));
    expect("ZZ-SS", first_error(&model, ZigZagSubsampling::new(), &mode));
    expect("ZZ-CV", first_error(&model, zzcv(&mode), &mode));
    let mut model = gaussian_2d_data();
    let m = model.posterior().0;
    model.bound_scale = 0.05;
    expect("lipSBPS Lipschitz", first_error(&model, lipsbps_lipschitz(&m), &m));
    expect(
        "ZZ-SS Lipschitz",
        first_error(&model, ZigZagSubsampling::lipschitz(m.clone()).unwrap(), &m),
    );
}

/// Runs `steps` steps and returns the divergences (a kernel error fails the test).
fn divergences<K: PdmpKernel<Glm>>(model: &Glm, kernel: K, start: &[f64], steps: usize) -> u64 {
    let mut rng = chain_rng(seed(55), 0);
    let mut state = kernel.build_chain(model, start, &mut rng).unwrap();
    let mut total = 0;
    for _ in 0..steps {
        let s = state.step(model, &mut rng).unwrap();
        if s.divergences > 0 {
            let seg = state.trajectory().last_segment();
            assert_eq!((seg.duration, seg.end), (0.0, tallmc_core::EventKind::Divergence));
        }
        total += s.divergences;
    }
    assert!(state.trajectory().position().iter().all(|x| x.is_finite()));
    total
}

/// Non-finite per-datum gradients (here wherever x_iᵀθ > 1.5, which some data reach in the
/// posterior's bulk) are divergences — a zero-length segment, velocity reversed — never a panic
/// or an error.
#[test]
fn non_finite_gradients_are_divergences() {
    let mut model = logistic_data(1_000);
    let mode = logistic_mode(&model);
    model.nan_above = 1.5;
    let lip = LipSbps::new(LipSbpsConfig::default()).unwrap();
    assert!(divergences(&model, lip, &mode, 20_000) > 0, "lipSBPS");
    assert!(divergences(&model, ZigZagSubsampling::new(), &mode, 20_000) > 0, "ZZ-SS");
    // ZZ-CV: its set-up pass at ξ* must be finite (an error naming the sum otherwise); with
    // the threshold just above the largest x_iᵀξ*, the run crosses it.
    let msg = init_error(&model, zzcv(&mode), &mode);
    assert!(msg.contains("non-finite control-variate sum"), "{msg}");
    let max_eta = model
        .x
        .chunks(model.d)
        .map(|r| r.iter().zip(&mode).map(|(a, b)| a * b).sum::<f64>())
        .fold(f64::NEG_INFINITY, f64::max);
    model.nan_above = max_eta + 0.01;
    assert!(divergences(&model, zzcv(&mode), &mode, 20_000) > 0, "ZZ-CV");
}

fn init_error<K: PdmpKernel<Glm>>(model: &Glm, kernel: K, start: &[f64]) -> String {
    let mut rng = chain_rng(1, 0);
    match kernel.build_chain(model, start, &mut rng) {
        Ok(_) => panic!("init accepted a bad input"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_inputs_are_errors_that_name_the_value() {
    let has = |msg: String, part: &str| assert!(msg.contains(part), "{msg:?} lacks {part:?}");
    let cfg = LipSbpsConfig { refresh_rate: -0.5, ..LipSbpsConfig::default() };
    has(LipSbps::new(cfg).unwrap_err().to_string(), "refresh rate = -0.5");
    has(
        ZigZagSubsampling::lipschitz(vec![0.0, f64::NAN]).unwrap_err().to_string(),
        "reference point x*: NaN at index 1",
    );
    has(
        ControlVariates::rank_one(vec![f64::INFINITY]).unwrap_err().to_string(),
        "reference point ξ*: inf at index 0",
    );
    let model = gaussian_2d_data();
    let m = model.posterior().0;
    has(
        init_error(&model, lipsbps_lipschitz(&[0.0; 3]), &m),
        "reference point x*: expected 2, found 3",
    );
    has(init_error(&model, zzcv(&[0.0; 3]), &m), "reference point ξ*: expected 2, found 3");
    has(init_error(&model, zzcv(&m), &[0.0]), "initial position: expected 2, found 1");
    has(init_error(&model, zzcv(&m), &[0.0, f64::NAN]), "initial position: NaN at index 1");
    // Gaussian per-datum gradients are unbounded: the test model reports B_j = ∞.
    has(init_error(&model, ZigZagSubsampling::new(), &m), "B_j = inf (coordinate 1)");
    let mut empty = gaussian_2d_data();
    empty.x.clear();
    empty.y.clear();
    has(
        init_error(&empty, ZigZagSubsampling::lipschitz(m.clone()).unwrap(), &m),
        "number of terms N = 0",
    );
    has(init_error(&empty, lipsbps_lipschitz(&m), &m), "number of terms N = 0");
    let mut negative = gaussian_2d_data();
    negative.bound_scale = -1.0;
    has(init_error(&negative, zzcv(&m), &m), "coordinate 1");
    has(init_error(&negative, lipsbps_lipschitz(&m), &m), "gradient Lipschitz constant C = -");
    // lipSBPS reads B(v) at every step (it depends on v): a bad one is an error there.
    let mut bad = logistic_data(100);
    let mode = logistic_mode(&bad);
    bad.bound_scale = -1.0;
    has(init_error(&bad, ZigZagSubsampling::new(), &mode), "B_j = -");
    let e = first_error(&bad, LipSbps::new(LipSbpsConfig::default()).unwrap(), &mode);
    has(e.map_or(String::new(), |e| e.to_string()), "data rate bound (A, B) of lipSBPS = (-");
}

/// The skeleton (time, position, velocity, end) of `steps` segments.
fn skeleton<M: Terms, K: PdmpKernel<M>>(
    model: &M, kernel: K, start: &[f64], steps: usize,
) -> Vec<f64> {
    let mut rng = chain_rng(seed(60), 0);
    let mut state = kernel.build_chain(model, start, &mut rng).unwrap();
    let mut out = Vec::new();
    for _ in 0..steps {
        let s = state.step(model, &mut rng).unwrap();
        let t = state.trajectory();
        out.push(t.time());
        out.extend_from_slice(t.position());
        out.extend_from_slice(t.velocity());
        // NaN (no proposal: a refreshment) never equals itself; record it as −1.
        out.push(if s.ratio.is_nan() { -1.0 } else { s.ratio });
    }
    out
}

#[test]
fn same_seed_same_trajectory_and_no_allocation() {
    let model = logistic(1_000);
    let mode = logistic_mode(&model);
    let lip = || LipSbps::new(LipSbpsConfig::default()).unwrap();
    let a = skeleton(&model, lip(), &mode, 2000);
    assert_eq!(a, skeleton(&model, lip(), &mode, 2000), "lipSBPS");
    let a = skeleton(&model, ZigZagSubsampling::new(), &mode, 2000);
    assert_eq!(a, skeleton(&model, ZigZagSubsampling::new(), &mode, 2000), "ZZ-SS");
    let a = skeleton(&model, zzcv(&mode), &mode, 2000);
    assert_eq!(a, skeleton(&model, zzcv(&mode), &mode, 2000), "ZZ-CV");

    fn no_alloc<M: Terms, K: PdmpKernel<M>>(name: &str, model: &M, kernel: K, start: &[f64]) {
        let mut rng = chain_rng(1, 0);
        let mut state = kernel.build_chain(model, start, &mut rng).unwrap();
        assert_allocation_free(&format!("{name} steps"), 1, 2000, || {
            state.step(model, &mut rng).unwrap();
        });
    }
    no_alloc("lipSBPS", &model, lip(), &mode);
    no_alloc("ZZ-SS", &model, ZigZagSubsampling::new(), &mode);
    no_alloc("ZZ-CV", &model, zzcv(&mode), &mode);
    let generic = ControlVariates::with_engine(mode.clone(), HessianProducts::new(3, 1)).unwrap();
    no_alloc("ZZ-CV (Hessian products)", &model, ZigZagSubsampling::with_estimator(generic), &mode);
    let g = gaussian_2d();
    let m = g.posterior_mean_covariance().unwrap().0;
    no_alloc("lipSBPS Lipschitz", &g, lipsbps_lipschitz(&m), &m);
    no_alloc("ZZ-SS Lipschitz", &g, ZigZagSubsampling::lipschitz(m.clone()).unwrap(), &m);
}
