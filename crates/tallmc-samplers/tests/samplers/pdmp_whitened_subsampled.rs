//! The subsampling piecewise-deterministic samplers in whitened coordinates z = L⁻¹(θ − θ*)
//! ([`Whitened`] over [`InFrame`], issue 29, deliverable 2), on a logistic regression whose
//! covariates are AR(1)-correlated with ρ = 0.9 around 1 (so correlated with the intercept and
//! with each other):
//!
//! * **Bounds in z**: at 300 random points 3 units from the mode (in z), every per-datum bound of
//!   the model in z (B^z_ij, B^z_j, B^z(v), B^z_i(w), c^z_i, κ_z) dominates the true value
//!   recomputed here from the rows (∇_zℓ_i = Lᵀx_i(y_i − σ(x_iᵀθ))), for the library's GLM (whose
//!   per-datum directional bound is tight: B^z_ij = |(Lᵀx_i)_j| exactly) and for a model with
//!   only the default Σ_k |w_k| B_ik.
//! * **Precomputed rows** ([`FrameRows`], what the command uses): per-datum terms and gradients
//!   in z from the whitened rows (O(d) each) equal those of the general path (gradients in θ
//!   mapped by Lᵀ) up to rounding, at 20 random points 3 units from the mode.
//! * **Exactness**: whitened lipSBPS and ZZ-SS with importance-sampled per-datum bounds
//!   ([`WeightedGradients`]) and precomputed rows match full-data HMC on the same data within
//!   4 combined MCSE, at fixed seeds shifted by `TALLMC_SEED_OFFSET`, with no bound violation.
//! * **SBPS** (approximate; ignored, a measurement): its bias against HMC in z and in θ, in
//!   units of the posterior sd and of the combined MCSE (docs/methods/sbps.md).
//! * **Cost** (ignored, a measurement): per-datum gradients per effective sample, whitened vs
//!   original, for lipSBPS and ZZ-SS at d = 21 (docs/benchmarks.md).

#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use std::sync::OnceLock;
use tallmc_core::rng::chain_rng;
use tallmc_core::{
    LogPriorCurvature, LogPriorHessian, PdmpKernel, TermGradientBounds, TermGradients,
    TermHessians, TermLipschitz, Terms, WhiteningFrame,
};
use tallmc_models::LogisticRegression;
use tallmc_samplers::{
    BandConfig, FrameRows, InFrame, LipSbps, LipSbpsConfig, NewtonOptions, Sbps, SbpsConfig,
    VelocityDistribution, WeightedGradients, Whitened, ZigZagSubsampling, laplace_approximation,
};
use tallmc_testkit::seed;

use crate::pdmp_support::{Averages, Family, Glm, compare_with, hmc_means, time_averages};

/// Logistic regression, N = 10³, an intercept and two covariates AR(1)-correlated with ρ = 0.9
/// around 1 (so correlated with the intercept too), prior N(0, 10²).
fn correlated_data() -> Glm {
    Glm::new(Family::Logistic, 1_000, 3, 0.9, 1.0, 31)
}

/// The library's model on [`correlated_data`].
fn correlated_logistic() -> &'static LogisticRegression {
    static MODEL: OnceLock<LogisticRegression> = OnceLock::new();
    MODEL.get_or_init(|| correlated_data().logistic_regression())
}

/// Full-data HMC's means and MCSEs on [`correlated_logistic`], computed once per binary.
fn reference() -> &'static (Vec<f64>, Vec<f64>) {
    static REFERENCE: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    REFERENCE.get_or_init(|| hmc_means(correlated_logistic()))
}

/// The frame of the model's Laplace approximation (the command's).
fn laplace_frame<M: TermHessians + LogPriorHessian>(model: &M) -> WhiteningFrame {
    let laplace =
        laplace_approximation(model, &vec![0.0; model.dim()], NewtonOptions::default()).unwrap();
    WhiteningFrame::new(laplace.mode, &laplace.covariance).unwrap()
}

/// lipSBPS as the command runs it: refresh rate 1/Δ, Gaussian velocities.
fn lipsbps(grid: f64) -> LipSbps<WeightedGradients> {
    let config =
        LipSbpsConfig { refresh_rate: 1.0 / grid, velocity: VelocityDistribution::Gaussian };
    LipSbps::with_bound(config, WeightedGradients::new()).unwrap()
}

/// ZZ-SS with importance-sampled per-datum bounds, as the command runs it.
fn zigzag_ss() -> ZigZagSubsampling<WeightedGradients> {
    ZigZagSubsampling::with_estimator(WeightedGradients::new())
}

/// `out` = Lᵀg for L row-major lower triangular.
fn l_transpose(l: &[f64], g: &[f64], out: &mut [f64]) {
    let d = g.len();
    for (j, o) in out.iter_mut().enumerate() {
        *o = (j..d).map(|k| l[k * d + j] * g[k]).sum();
    }
}

/// A point `radius` from the origin in a uniformly random direction.
fn on_sphere(rng: &mut tallmc_core::rng::ChainRng, d: usize, radius: f64) -> Vec<f64> {
    let u: Vec<f64> = (0..d).map(|_| StandardNormal.sample(rng)).collect();
    let norm = u.iter().map(|a| a * a).sum::<f64>().sqrt();
    u.iter().map(|a| radius * a / norm).collect()
}

/// `got ≤ bound` up to rounding.
fn dominated(what: &str, got: f64, bound: f64) {
    assert!(got <= bound * (1.0 + 1e-12) + 1e-300, "{what}: {got} > bound {bound}");
}

/// Checks every bound of `view` (a model in z) against the true per-datum gradients in z at
/// `points` random points 3 units from the mode, recomputed from the rows of `data`; returns
/// the largest ratio true / bound seen for B^z_ij (how tight the bound is where the chain goes).
fn check_bounds_in_z<M>(name: &str, view: &InFrame<'_, M>, data: &Glm, points: usize) -> f64
where
    M: TermGradientBounds + LogPriorCurvature + ?Sized,
{
    let (d, n) = (data.d, data.n());
    let frame = view.frame();
    let l = frame.lower();
    let term: Vec<f64> = (0..n)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .map(|(i, j)| view.term_coordinate_gradient_bound(i, j))
        .collect();
    let coordinate: Vec<f64> = (0..d).map(|j| view.coordinate_gradient_bound(j)).collect();
    let lipschitz: Vec<f64> = (0..n).map(|i| view.term_lipschitz(i)).collect();
    for i in 0..n {
        for j in 0..d {
            dominated(&format!("{name}: B^z_{i}{j} ≤ B^z_{j}"), term[i * d + j], coordinate[j]);
        }
    }
    let mut rng = chain_rng(seed(330), 0);
    let (mut theta, mut gz) = (vec![0.0; d], vec![0.0; d]);
    let mut tightest: f64 = 0.0;
    for _ in 0..points {
        let z = on_sphere(&mut rng, d, 3.0);
        let v: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        frame.to_theta(&z, &mut theta);
        let b_v = view.directional_gradient_bound(&v);
        for (i, (x, &y)) in data.x.chunks(d).zip(&data.y).enumerate() {
            let eta: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
            let score = y - 1.0 / (1.0 + (-eta).exp());
            let g: Vec<f64> = x.iter().map(|a| score * a).collect();
            l_transpose(l, &g, &mut gz);
            for j in 0..d {
                let b = term[i * d + j];
                dominated(&format!("{name}: |∂_{j}ℓ_{i}| in z"), gz[j].abs(), b);
                if b > 0.0 {
                    tightest = tightest.max(gz[j].abs() / b);
                }
            }
            let along: f64 = gz.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>().abs();
            dominated(
                &format!("{name}: |⟨∇ℓ_{i}, v⟩| ≤ B^z_i(v)"),
                along,
                view.term_directional_gradient_bound(i, &v),
            );
            dominated(&format!("{name}: |⟨∇ℓ_{i}, v⟩| ≤ B^z(v)"), along, b_v);
            let norm = gz.iter().map(|a| a * a).sum::<f64>().sqrt();
            dominated(&format!("{name}: ‖∇ℓ_{i}‖ ≤ c^z_{i}"), norm, lipschitz[i]);
        }
    }
    // The prior N(0, s²I) has Hessian −I/s² in θ, −LᵀL/s² in z: its ∞-norm is below κ_z.
    let s2 = data.prior_sd * data.prior_sd;
    let mut ltl = vec![0.0; d * d];
    let identity: Vec<f64> = (0..d * d).map(|k| f64::from(u8::from(k % (d + 1) == 0))).collect();
    frame.congruence(&identity, &mut ltl);
    let inf = (0..d).map(|j| ltl[j * d..(j + 1) * d].iter().map(|a| a.abs()).sum::<f64>() / s2);
    dominated(
        &format!("{name}: prior ‖LᵀHL‖_∞ ≤ κ_z"),
        inf.fold(0.0, f64::max),
        view.prior_curvature_bound(),
    );
    assert!(view.prior_hessian_is_constant(), "{name}");
    tightest
}

/// Bounds in z dominate the true per-datum gradients 3 units from the mode, for the library's
/// GLM (tight bounds: B^z_ij = |(Lᵀx_i)_j| and c^z_i = ‖Lᵀx_i‖₂ exactly) and for a model with
/// only the default per-datum directional bound.
#[test]
fn bounds_in_whitened_coordinates_dominate_the_true_per_datum_gradients() {
    let data = correlated_data();
    let model = correlated_logistic();
    let frame = laplace_frame(model);
    let d = data.d;
    let view = InFrame::new(model, &frame).unwrap();
    let tightest = check_bounds_in_z("library GLM", &view, &data, 300);
    // Tight for a GLM: the bounds are the suprema, recomputed from the rows.
    let mut lx = vec![0.0; d];
    for (i, x) in data.x.chunks(d).enumerate() {
        l_transpose(frame.lower(), x, &mut lx);
        for j in 0..d {
            let b = view.term_coordinate_gradient_bound(i, j);
            assert!((b - lx[j].abs()).abs() <= 1e-12 * (1.0 + b), "B^z_{i}{j} {b} vs {}", lx[j]);
        }
        let norm = lx.iter().map(|a| a * a).sum::<f64>().sqrt();
        let c = view.term_lipschitz(i);
        assert!((c - norm).abs() <= 1e-12 * (1.0 + c), "c^z_{i} {c} vs ‖Lᵀx_i‖ {norm}");
    }
    eprintln!("library GLM: largest |∂_jℓ_i| / B^z_ij seen 3 units from the mode: {tightest:.3}");
    // A model with the default B_i(w) = Σ_k |w_k| B_ik (valid, looser).
    let view = InFrame::new(&data, &frame).unwrap();
    let tightest = check_bounds_in_z("default per-datum directional bound", &view, &data, 100);
    eprintln!("default bound: largest |∂_jℓ_i| / B^z_ij seen: {tightest:.3}");
}

/// Runs `kernel` in z and in θ is the caller's business; this runs one and compares with HMC.
fn run_and_compare<K: PdmpKernel<LogisticRegression>>(
    name: &str, kernel: &K, start: &[f64], t_total: f64, base: u64,
) -> Averages {
    let avg = time_averages(correlated_logistic(), kernel, start, 5.0, t_total, 20, base);
    compare_with(name, reference(), &avg);
    avg
}

/// Whitened lipSBPS and ZZ-SS (importance-sampled per-datum bounds) match full-data HMC on the
/// correlated logistic regression within 4 combined MCSE; the bounds are exact (no violation).
#[test]
fn whitened_lipsbps_and_zigzag_ss_match_hmc_on_a_correlated_logistic_regression() {
    let frame = laplace_frame(correlated_logistic());
    let mode = frame.center().to_vec();
    let model = correlated_logistic();
    let lip = Whitened::new(lipsbps(1.0), frame.clone()).precompute_rows(model).unwrap();
    assert!(lip.rows().is_some());
    let avg = run_and_compare("whitened lipSBPS, ρ = 0.9", &lip, &mode, 4_000.0, 331);
    assert!(avg.totals.evals.gradients <= avg.totals.proposals);
    let zz = Whitened::new(zigzag_ss(), frame).precompute_rows(model).unwrap();
    assert!(zz.rows().is_some());
    let avg = run_and_compare("whitened ZZ-SS, ρ = 0.9", &zz, &mode, 8_000.0, 332);
    assert_eq!(avg.totals.evals.gradients, avg.totals.proposals);
}

/// The SBPS of the command (batch 100, k = 3, refresh 0.05/Δ, Gaussian velocities, band horizon
/// Δ).
fn sbps(grid: f64) -> Sbps {
    let config = SbpsConfig {
        batch: 100,
        k: 3.0,
        refresh_rate: 0.05 / grid,
        band: BandConfig { initial_horizon: grid, ..BandConfig::default() },
        velocity: VelocityDistribution::Gaussian,
        ..SbpsConfig::default()
    };
    Sbps::new(config).unwrap()
}

/// The median Laplace posterior sd (the command's grid step in θ).
fn median_sd(frame: &WhiteningFrame) -> f64 {
    let d = frame.dim();
    let l = frame.lower();
    let mut sds: Vec<f64> =
        (0..d).map(|j| l[j * d..=j * d + j].iter().map(|a| a * a).sum::<f64>().sqrt()).collect();
    sds.sort_by(f64::total_cmp);
    sds[d / 2]
}

/// SBPS is approximate (its noisy gradient bound can be exceeded; Pakman et al. 2017, §4): its
/// bias against HMC, measured in z and in θ on the same problem and reported (bias / posterior
/// sd and z = bias / combined MCSE) — no tolerance is asserted, as its theory gives none.
#[test]
#[ignore = "a measurement (docs/methods/sbps.md): cargo test … -- --ignored --nocapture"]
fn sbps_bias_whitened_vs_original() {
    let model = correlated_logistic();
    let frame = laplace_frame(model);
    let mode = frame.center().to_vec();
    let (means, mcses) = reference();
    let d = frame.dim();
    let sd: Vec<f64> = (0..d)
        .map(|j| frame.lower()[j * d..=j * d + j].iter().map(|a| a * a).sum::<f64>().sqrt())
        .collect();
    let grid = median_sd(&frame);
    let whitened = Whitened::new(sbps(1.0), frame.clone());
    let run = |name: &str, base: u64| match name {
        "whitened" => time_averages(model, &whitened, &mode, 50.0, 4_000.0, 20, base),
        _ => time_averages(model, &sbps(grid), &mode, 50.0 * grid, 4_000.0 * grid, 20, base),
    };
    for name in ["whitened", "original"] {
        for rep in 0..3 {
            let avg = run(name, 340 + rep);
            let t = &avg.totals;
            assert!(t.violations <= t.proposals);
            let line: Vec<String> = (0..d)
                .map(|j| {
                    let (e, m, s) = (avg.mean[j], means[j], mcses[j]);
                    let z = (e.value - m) / (e.mcse * e.mcse + s * s).sqrt();
                    format!("θ_{j}: bias/sd {:+.3} (z {z:+.2})", (e.value - m) / sd[j])
                })
                .collect();
            eprintln!(
                "SBPS {name} rep {rep}: {}; violation rate {:.4}, {:.0} gradients per unit time",
                line.join(", "),
                t.violation_rate(),
                t.evals.gradients as f64 / avg.time
            );
        }
    }
}

/// Per-datum gradients per effective sample (min over coordinates of var / MCSE²) of one run.
fn evaluations_per_ess(avg: &Averages) -> (f64, f64) {
    let ess = avg
        .mean
        .iter()
        .zip(&avg.second)
        .map(|(m, s)| (s.value - m.value * m.value) / (m.mcse * m.mcse))
        .fold(f64::INFINITY, f64::min);
    (avg.sampling.evals.gradients as f64 / ess, ess)
}

/// docs/benchmarks.md: lipSBPS and ZZ-SS (importance-sampled bounds) on a logistic regression
/// with d = 21 (intercept and 20 AR(1) covariates, ρ = 0.9), N = 10³, whitened vs original:
/// per-datum gradients per effective sample, 3 seeds each.
#[test]
#[ignore = "a measurement (docs/benchmarks.md): cargo test … -- --ignored --nocapture"]
fn cost_per_ess_whitened_vs_original_d21() {
    let data = Glm::new(Family::Logistic, 1_000, 21, 0.9, 0.0, 41);
    let model = data.logistic_regression();
    let frame = laplace_frame(&model);
    let mode = frame.center().to_vec();
    let grid = median_sd(&frame);
    eprintln!("d = 21, N = 10³, ρ = 0.9: median Laplace sd {grid:.4}");
    let t_z = 400.0;
    for rep in 0..3 {
        let b = 350 + 10 * rep;
        let mut row = Vec::new();
        let avg = time_averages(
            &model,
            &Whitened::new(lipsbps(1.0), frame.clone()),
            &mode,
            5.0,
            t_z,
            20,
            b,
        );
        row.push(("lipSBPS whitened", avg));
        let avg = time_averages(&model, &lipsbps(grid), &mode, 5.0 * grid, t_z * grid, 20, b + 1);
        row.push(("lipSBPS original", avg));
        let avg = time_averages(
            &model,
            &Whitened::new(zigzag_ss(), frame.clone()),
            &mode,
            5.0,
            t_z,
            20,
            b + 2,
        );
        row.push(("ZZ-SS whitened", avg));
        let avg = time_averages(&model, &zigzag_ss(), &mode, 5.0 * grid, t_z * grid, 20, b + 3);
        row.push(("ZZ-SS original", avg));
        for (name, avg) in &row {
            let (per, ess) = evaluations_per_ess(avg);
            eprintln!(
                "rep {rep}: {name}: {:.0} gradients, min ESS {ess:.1}, {per:.0} gradients per ESS, \
                 {:.1} ESS per batch, {} violations",
                avg.sampling.evals.gradients as f64,
                avg.min_ess_per_batch(),
                avg.totals.violations
            );
        }
    }
}

/// The model in z refuses nothing a valid frame allows, and the bound of a random direction
/// is the model's at Lv (the forwarding is exact, not merely valid).
#[test]
fn directional_bounds_in_z_are_the_models_at_the_mapped_direction() {
    let model = correlated_logistic();
    let frame = laplace_frame(model);
    let view = InFrame::new(model, &frame).unwrap();
    let d = view.dim();
    let mut rng = chain_rng(seed(333), 0);
    let mut lv = vec![0.0; d];
    for _ in 0..20 {
        let v: Vec<f64> = (0..d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
        frame.direction_to_theta(&v, &mut lv);
        assert_eq!(view.directional_gradient_bound(&v), model.directional_gradient_bound(&lv));
        let i = rng.random_range(0..1_000);
        assert_eq!(
            view.term_directional_gradient_bound(i, &v),
            model
                .term_directional_gradient_bound(i, &lv)
                .min(model.directional_gradient_bound(&lv))
        );
    }
}

/// Per-datum terms and gradients in z from the precomputed whitened rows (η_i = η*_i + w_iᵀz,
/// ∇_zℓ_i = φ_i′(η_i) w_i, O(d) each) equal the general path's (θ = θ* + Lz, the model's
/// gradient in θ mapped by Lᵀ, O(d²) each) up to rounding; `Whitened::precompute_rows` builds
/// the rows only for a model that offers its linear-predictor form, and a chain on a model of
/// another size is refused.
#[test]
fn precomputed_rows_give_the_general_paths_per_datum_gradients() {
    let model = correlated_logistic();
    let frame = laplace_frame(model);
    let d = model.dim();
    let rows = FrameRows::new(model, &frame).unwrap();
    assert_eq!((rows.num_terms(), rows.dim(), rows.bytes()), (1_000, d, 8 * 1_000 * (d + 1)));
    let general = InFrame::new(model, &frame).unwrap();
    let fast = InFrame::with_rows(model, &frame, &rows).unwrap();
    let mut rng = chain_rng(seed(334), 0);
    let n = 300;
    let idx: Vec<u32> = (0..n).map(|_| rng.random_range(0..1_000)).collect();
    let (mut out_g, mut out_f) = (vec![0.0; n], vec![0.0; n]);
    let (mut grads_g, mut grads_f) = (vec![0.0; n * d], vec![0.0; n * d]);
    for _ in 0..20 {
        let z = on_sphere(&mut rng, d, 3.0);
        general.log_terms_grads(&z, &idx, &mut out_g, &mut grads_g);
        fast.log_terms_grads(&z, &idx, &mut out_f, &mut grads_f);
        for (a, b) in out_f.iter().zip(&out_g).chain(grads_f.iter().zip(&grads_g)) {
            assert!((a - b).abs() <= 1e-11 * (1.0 + b.abs()), "rows {a} vs general {b}");
        }
    }
    // Built for the library GLM (it offers its LinearPredictor form), not for a model that
    // does not (the test GLM): that one keeps the general path.
    let kernel = Whitened::new(zigzag_ss(), frame.clone()).precompute_rows(model).unwrap();
    assert_eq!(kernel.rows().map(FrameRows::bytes), Some(8 * 1_000 * (d + 1)));
    let data = correlated_data();
    let plain = Whitened::new(zigzag_ss(), frame.clone()).precompute_rows(&data).unwrap();
    assert!(plain.rows().is_none());
    // Rows of this model, a chain on a smaller one: refused, naming both sizes.
    let smaller = Glm::new(Family::Logistic, 500, 3, 0.9, 1.0, 31).logistic_regression();
    let err = kernel.build_chain(&smaller, frame.center(), &mut rng).unwrap_err().to_string();
    assert!(err.contains("number of data points") && err.contains("1000"), "{err}");
    // A frame of another dimension.
    let other = WhiteningFrame::centered(vec![0.0; d + 1]).unwrap();
    assert!(FrameRows::new(model, &other).is_err());
}
