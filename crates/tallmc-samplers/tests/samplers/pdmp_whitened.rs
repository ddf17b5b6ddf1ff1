//! Full-data BPS and Zig-Zag with the automatic envelope in whitened coordinates
//! z = L⁻¹(θ − θ*) ([`Whitened`], issue 29), through the library's continuous-time driver:
//! on a strongly correlated Gaussian regression every mean, second moment and E[θ_jθ_k] within
//! 4 batch-means MCSE of the closed form, and on a logistic regression the means within 4
//! combined MCSE of full-data HMC, at fixed seeds shifted by `TALLMC_SEED_OFFSET`; the model
//! in z against finite differences; the trajectory in θ is the image of the one in z, the same
//! seed gives the same trajectory, a step allocates nothing, and a frame of the wrong dimension
//! is refused naming both sizes.

#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use rand::RngExt;
use tallmc_core::rng::chain_rng;
use tallmc_core::{
    EventTotals, LogPrior, LogPriorHessian, Parallelism, PdmpChain, PdmpKernel, TermGradients,
    TermHessians, Terms, WhiteningFrame,
};
use tallmc_samplers::{
    AutoBoundConfig, Bps, BpsConfig, InFrame, NewtonOptions, Whitened, ZigZag, ZigZagConfig,
    laplace_approximation,
};
use tallmc_testkit::{assert_allocation_free, seed};

use crate::pdmp_support::{
    Averages, Family, Glm, check_gaussian, check_run_length, compare_with_hmc, logistic,
    time_averages,
};

/// Gaussian regression, N = 500, covariates AR(1) with ρ = 0.9 around 8 (so correlated with
/// the intercept and with each other: posterior correlations above 0.9 in absolute value).
fn correlated_gaussian() -> Glm {
    Glm::new(Family::Gaussian { sigma: 1.0 }, 500, 3, 0.9, 8.0, 29)
}

/// The frame of the model's Laplace approximation (the CLI's).
fn laplace_frame<M: TermHessians + LogPriorHessian>(model: &M) -> WhiteningFrame {
    let laplace =
        laplace_approximation(model, &vec![0.0; model.dim()], NewtonOptions::default()).unwrap();
    WhiteningFrame::new(laplace.mode, &laplace.covariance).unwrap()
}

/// The automatic envelope with its defaults (horizon 1: one posterior sd of travel in z).
fn envelope() -> AutoBoundConfig {
    AutoBoundConfig::default()
}

/// Violations of the heuristic envelope are counted: rare, then set aside for the checks that
/// forbid them.
fn without_violations(name: &str, avg: &Averages) -> Averages {
    let mut counted = avg.totals;
    let rate = counted.violation_rate();
    assert!(rate < 0.01, "{name}: violation rate {rate}");
    counted.violations = 0;
    Averages { totals: counted, ..avg.clone() }
}

/// The cost per unit time and per effective sample, reported with --nocapture.
fn report(name: &str, avg: &Averages, n: usize) {
    let passes = avg.totals.evals.gradients as f64 / n as f64;
    eprintln!(
        "{name}: {:.0} full-data gradients per unit time, {:.1} effective samples per batch, \
         {} events",
        passes / avg.time,
        avg.min_ess_per_batch(),
        avg.totals.events()
    );
}

/// On a Gaussian the whitened posterior is N(0, I) (the Laplace approximation is exact): every
/// moment of θ within 4 MCSE of the closed form, for BPS and Zig-Zag.
#[test]
fn whitened_bps_and_zigzag_match_a_correlated_gaussian_posterior() {
    let glm = correlated_gaussian();
    let (mean, cov) = glm.posterior();
    let d = mean.len();
    let corr = |j: usize, k: usize| cov[j * d + k] / (cov[j * d + j] * cov[k * d + k]).sqrt();
    let strongest =
        (0..d).flat_map(|j| (j + 1..d).map(move |k| (j, k))).map(|(j, k)| corr(j, k).abs());
    let strongest = strongest.fold(0.0, f64::max);
    assert!(strongest > 0.9, "the posterior should be strongly correlated: {strongest}");
    let frame = laplace_frame(&glm);
    let bps =
        Whitened::new(Bps::automatic(BpsConfig::default(), envelope()).unwrap(), frame.clone());
    let avg = time_averages(&glm, &bps, &mean, 20.0, 2_000.0, 40, 290);
    let avg = without_violations("whitened BPS", &avg);
    check_run_length("whitened BPS", &avg);
    let worst = check_gaussian("whitened BPS", &avg, &mean, &cov);
    report(&format!("whitened BPS (worst |z| {worst:.2}, |ρ| {strongest:.3})"), &avg, glm.n());
    let zz = Whitened::new(ZigZag::automatic(ZigZagConfig::default(), envelope()).unwrap(), frame);
    let avg = time_averages(&glm, &zz, &mean, 20.0, 2_000.0, 40, 291);
    let avg = without_violations("whitened Zig-Zag", &avg);
    check_run_length("whitened Zig-Zag", &avg);
    let worst = check_gaussian("whitened Zig-Zag", &avg, &mean, &cov);
    report(&format!("whitened Zig-Zag (worst |z| {worst:.2})"), &avg, glm.n());
}

/// Logistic regression, N = 10³: the time averages of whitened BPS and Zig-Zag match full-data
/// HMC within 4 combined MCSE.
#[test]
fn whitened_bps_and_zigzag_on_logistic_regression_match_hmc() {
    let model = logistic(1_000);
    let frame = laplace_frame(&model);
    let mode = frame.center().to_vec();
    let bps =
        Whitened::new(Bps::automatic(BpsConfig::default(), envelope()).unwrap(), frame.clone());
    let avg = time_averages(&model, &bps, &mode, 5.0, 2_000.0, 40, 292);
    compare_with_hmc("whitened BPS, N = 10³", 1_000, &without_violations("BPS", &avg));
    report("whitened BPS, N = 10³", &avg, 1_000);
    let zz = Whitened::new(ZigZag::automatic(ZigZagConfig::default(), envelope()).unwrap(), frame);
    let avg = time_averages(&model, &zz, &mode, 5.0, 1_000.0, 40, 293);
    compare_with_hmc("whitened Zig-Zag, N = 10³", 1_000, &without_violations("ZZ", &avg));
    report("whitened Zig-Zag, N = 10³", &avg, 1_000);
}

/// Central finite difference of `f` at `x` along coordinate `j`.
fn fd(f: &dyn Fn(&[f64]) -> f64, x: &[f64], j: usize) -> f64 {
    let h = 1e-5;
    let (mut a, mut b) = (x.to_vec(), x.to_vec());
    a[j] += h;
    b[j] -= h;
    (f(&a) - f(&b)) / (2.0 * h)
}

fn assert_close(what: &str, got: f64, want: f64) {
    let tol = 1e-6 * (1.0 + want.abs());
    assert!((got - want).abs() < tol, "{what}: {got} vs {want}");
}

/// The model in z: every gradient against finite differences of its values, every Hessian
/// (products, sums, prior) against finite differences of its gradients, batch and range forms
/// equal.
#[test]
fn the_model_in_whitened_coordinates_matches_finite_differences() {
    let model = logistic(200);
    let frame = laplace_frame(&model);
    let view = InFrame::new(&model, &frame).unwrap();
    let d = view.dim();
    let mut rng = chain_rng(seed(294), 0);
    let z: Vec<f64> = (0..d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
    let v: Vec<f64> = (0..d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
    let idx: Vec<u32> = (0..200).step_by(7).collect();
    let k = idx.len();
    // Gradient of Σ_batch ℓ̃_i and of log p̃.
    let (mut out, mut g) = (vec![0.0; k], vec![0.0; d]);
    let value = view.log_terms_grad_sum(&z, &idx, &mut out, &mut g);
    assert_close("batch value", value, view.sum_log_terms(&z, &idx));
    let (mut per, mut grads) = (vec![0.0; k], vec![0.0; k * d]);
    view.log_terms_grads(&z, &idx, &mut per, &mut grads);
    let mut g_range = vec![0.0; d];
    let v_range = view.sum_log_terms_grad_range(&z, 0, 200, &mut g_range);
    assert_close("range value", v_range, view.sum_log_terms_range(&z, 0, 200));
    let mut g_prior = vec![0.0; d];
    view.log_prior_grad(&z, &mut g_prior);
    for j in 0..d {
        let batch = |x: &[f64]| view.sum_log_terms(x, &idx);
        assert_close("∇ batch", g[j], fd(&batch, &z, j));
        let summed: f64 = (0..k).map(|r| grads[r * d + j]).sum();
        assert_close("per-term gradients", summed, g[j]);
        let range = |x: &[f64]| view.sum_log_terms_range(x, 0, 200);
        assert_close("∇ range", g_range[j], fd(&range, &z, j));
        assert_close("∇ prior", g_prior[j], fd(&|x: &[f64]| view.log_prior(x), &z, j));
    }
    // Hessian-vector products, Hessian sums and the prior Hessian.
    let mut hv_rows = vec![0.0; k * d];
    view.hessian_vector_products(&z, &idx, &v, &mut hv_rows);
    let mut hv_range = vec![0.0; d];
    view.sum_hessian_vector_range(&z, 0, 200, &v, &mut hv_range);
    let (mut h_batch, mut h_range, mut h_prior) =
        (vec![0.0; d * d], vec![0.0; d * d], vec![0.0; d * d]);
    view.sum_hessian(&z, &idx, &mut h_batch);
    view.sum_hessian_range(&z, 0, 200, &mut h_range);
    view.add_log_prior_hessian(&z, &mut h_prior);
    let grad_of = |x: &[f64], which: usize| -> Vec<f64> {
        let mut g = vec![0.0; d];
        match which {
            0 => {
                let mut out = vec![0.0; k];
                view.log_terms_grad_sum(x, &idx, &mut out, &mut g);
            }
            1 => {
                view.sum_log_terms_grad_range(x, 0, 200, &mut g);
            }
            _ => {
                view.log_prior_grad(x, &mut g);
            }
        }
        g
    };
    for i in 0..d {
        for j in 0..d {
            let batch = |x: &[f64]| grad_of(x, 0)[i];
            assert_close("∇² batch", h_batch[i * d + j], fd(&batch, &z, j));
            let range = |x: &[f64]| grad_of(x, 1)[i];
            assert_close("∇² range", h_range[i * d + j], fd(&range, &z, j));
            let prior = |x: &[f64]| grad_of(x, 2)[i];
            assert_close("∇² prior", h_prior[i * d + j], fd(&prior, &z, j));
        }
        let hv: f64 = (0..d).map(|j| h_range[i * d + j] * v[j]).sum();
        assert_close("∇²·v range", hv_range[i], hv);
        let hv: f64 = (0..d).map(|j| h_batch[i * d + j] * v[j]).sum();
        let rows: f64 = (0..k).map(|r| hv_rows[r * d + i]).sum();
        assert_close("∇²·v rows", rows, hv);
    }
}

type Logistic = tallmc_models::LogisticRegression;

/// A segment as (start time, duration, event, start, velocity).
type Segment = (f64, f64, String, Vec<f64>, Vec<f64>);

/// `steps` steps of a whitened chain of `kernel` (Bps or ZigZag, sequential passes) from the
/// mode with chain seed `base`: every θ-segment is the image of the z-segment (start θ* + Lz,
/// velocity Lv, the same duration and event) and starts where the last one ended; returns the
/// segments (start time, duration, event, start, velocity) and the totals.
fn run_and_check_image<K, C, T>(
    kernel: &Whitened<K>, model: &Logistic, steps: usize, base: u64,
) -> (Vec<Segment>, EventTotals)
where
    K: for<'a> PdmpKernel<InFrame<'a, Logistic>, Chain = C>,
    C: for<'a> PdmpChain<InFrame<'a, Logistic>, Tuning = T>,
    T: tallmc_core::Tuning,
{
    let frame = kernel.frame();
    let d = frame.dim();
    let mut rng = chain_rng(seed(base), 1);
    let mut chain = kernel.build_chain(model, frame.center(), &mut rng).unwrap();
    let mut out = Vec::new();
    let mut totals = EventTotals::default();
    let (mut mapped, mut end) = (vec![0.0; d], frame.center().to_vec());
    for _ in 0..steps {
        let stats = chain.step(model, &mut rng).unwrap();
        totals.add(&stats);
        let s = chain.trajectory().last_segment();
        let z = chain.inner().trajectory().last_segment();
        assert_eq!((s.start_time, s.duration, s.end), (z.start_time, z.duration, z.end));
        frame.to_theta(z.position, &mut mapped);
        for j in 0..d {
            assert!((s.position[j] - mapped[j]).abs() < 1e-12, "{:?} vs {mapped:?}", s.position);
            assert!((s.position[j] - end[j]).abs() < 1e-9, "not continuous: {end:?}");
        }
        frame.direction_to_theta(z.velocity, &mut mapped);
        assert_eq!(s.velocity, &mapped[..]);
        s.position_after(s.duration, &mut end);
        out.push((
            s.start_time,
            s.duration,
            format!("{:?}", s.end),
            s.position.to_vec(),
            s.velocity.to_vec(),
        ));
    }
    (out, totals)
}

/// Same seed, same trajectory (bit for bit); the θ-trajectory is the image of the z one; the
/// evaluations are those of the kernel in θ (N gradients per proposal, refreshment and band
/// point, N products per band); a step allocates nothing after warm-up; the tuning names the
/// frame.
#[test]
fn same_seed_same_trajectory_mapped_to_theta_without_allocation() {
    let n = 1_000u64;
    let model = logistic(n as usize);
    let frame = laplace_frame(&model);
    let seq = Parallelism::Sequential;
    let bps = Bps::automatic(BpsConfig { parallelism: seq, ..BpsConfig::default() }, envelope());
    let bps = Whitened::new(bps.unwrap(), frame.clone());
    let zz = ZigZag::automatic(ZigZagConfig { parallelism: seq }, envelope()).unwrap();
    let zz = Whitened::new(zz, frame.clone());
    let (a, ta) = run_and_check_image(&bps, &model, 400, 295);
    let (b, _) = run_and_check_image(&bps, &model, 400, 295);
    assert_eq!(a, b);
    let (c, tc) = run_and_check_image(&zz, &model, 400, 296);
    let (e, _) = run_and_check_image(&zz, &model, 400, 296);
    assert_eq!(c, e);
    assert_ne!(a, c);
    for t in [ta, tc] {
        assert_eq!(t.evals.hessians % n, 0, "{t:?}");
        let bands = t.evals.hessians / n;
        assert_eq!(t.evals.gradients, n * (1 + t.proposals + t.refreshes + bands), "{t:?}");
        assert!(t.bounces > 50, "{t:?}");
    }
    // No allocation in a step (the model view's scratch is per thread, grown once).
    let mut rng = chain_rng(seed(297), 1);
    let mut chain = zz.build_chain(&model, frame.center(), &mut rng).unwrap();
    assert_allocation_free("whitened Zig-Zag step", 50, 200, || {
        chain.step(&model, &mut rng).unwrap();
    });
    let mut chain = bps.build_chain(&model, frame.center(), &mut rng).unwrap();
    assert_allocation_free("whitened BPS step", 50, 200, || {
        chain.step(&model, &mut rng).unwrap();
    });
    let tuning = PdmpChain::<Logistic>::tuning(&chain);
    let lines = tallmc_core::Tuning::comment_lines(&tuning);
    assert!(lines[0].starts_with("coordinates = whitened"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("BPS refresh rate")), "{lines:?}");
}

/// A frame of another dimension than the model's is refused when a chain is built, and by the
/// model view, with both sizes in the message; so is a start of the wrong length.
#[test]
fn a_frame_of_the_wrong_dimension_is_refused_naming_the_sizes() {
    let model = logistic(100);
    let frame = WhiteningFrame::new(vec![0.0, 0.0], &[1.0, 0.0, 0.0, 1.0]).unwrap();
    let zz = Whitened::new(
        ZigZag::automatic(ZigZagConfig::default(), envelope()).unwrap(),
        frame.clone(),
    );
    let mut rng = chain_rng(seed(298), 1);
    let e = zz.build_chain(&model, &[0.0; 3], &mut rng).unwrap_err().to_string();
    assert!(e.contains("whitening frame") && e.contains('3') && e.contains('2'), "{e}");
    let e = InFrame::new(&model, &frame).unwrap_err().to_string();
    assert!(e.contains("expected 3, found 2"), "{e}");
    let good = laplace_frame(&model);
    let bps = Whitened::new(Bps::automatic(BpsConfig::default(), envelope()).unwrap(), good);
    let e = bps.build_chain(&model, &[0.0; 2], &mut rng).unwrap_err().to_string();
    assert!(e.contains("initial position"), "{e}");
}
