//! Stochastic-gradient kernels against closed forms.
//!
//! The model is a d-dimensional Gaussian mean, ℓ_i(θ) = −½‖y_i − θ‖², prior N(0, τ² I): the
//! target is N(m, I/λ) with λ = N + 1/τ², and the plain minibatch gradient's error
//! N(ȳ_S − ȳ) does not depend on θ — additive noise with per-coordinate variance
//! V_j = (N²/n) S_j² (N − n)/(N − 1) without replacement (N² S_j²/n with), S_j² the data's
//! variance (divisor N). Every kernel is then a *linear* recursion in (θ, p), so its stationary
//! variance is known exactly for any step size (see each helper below). The tests check
//! measured sds against those exact discretized values within 4 MCSE, and that the naive
//! posterior sd is rejected where the bias is large (so the bias formula, not closeness to the
//! posterior, is what passes). Tolerances: 4 MCSE (ESS-based, tallmc-diagnostics), seeds
//! shifted by TALLMC_SEED_OFFSET.

#![allow(clippy::print_stderr)] // the measured numbers are part of the output

use crate::common;

use std::sync::{Arc, Mutex};

use rand_distr::{Distribution, StandardNormal};
use tallmc_core::rng::{ChainRng, chain_rng, setup_rng};
use tallmc_core::{Chain, EvalCounts, Kernel, LogPrior, StepStats, TermGradients, Terms};
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_estimators::{GradientEstimator, MinibatchGradient};
use tallmc_integrators::Metric;
use tallmc_samplers::sink::{ChainFooter, ChainHeader, DrawRecord, DrawSink, MemorySink};
use tallmc_samplers::{
    Driver, MinibatchScope, RunConfig, SamplerError, SgHmc, SgHmcConfig, Sgld, SgldConfig,
    SgldStats, Sgnht, SgnhtConfig, StatsOf, Subsampling, Thermostat, sample_in_memory,
};
use tallmc_testkit::seed_offset as offset;

/// Tolerance in Monte Carlo standard errors.
const Z: f64 = 4.0;

/// y_i ∈ R^d, ℓ_i(θ) = −½‖y_i − θ‖², prior N(0, τ² I).
struct IsoGaussianMean {
    d: usize,
    y: Vec<f64>,
    tau: f64,
}

impl IsoGaussianMean {
    /// N points, coordinate j with mean j − 1 and sd `sds[j]`.
    fn new(n: usize, sds: &[f64], seed: u64) -> Self {
        let d = sds.len();
        let mut rng = setup_rng(seed);
        let mut y = vec![0.0; n * d];
        for row in y.chunks_mut(d) {
            for (j, v) in row.iter_mut().enumerate() {
                let z: f64 = StandardNormal.sample(&mut rng);
                *v = j as f64 - 1.0 + sds[j] * z;
            }
        }
        Self { d, y, tau: 100.0 }
    }
    fn n(&self) -> usize {
        self.y.len() / self.d
    }
    /// Posterior precision λ (every coordinate).
    fn lambda(&self) -> f64 {
        self.n() as f64 + 1.0 / (self.tau * self.tau)
    }
    fn posterior_mean(&self) -> Vec<f64> {
        let mut m = vec![0.0; self.d];
        for row in self.y.chunks(self.d) {
            m.iter_mut().zip(row).for_each(|(m, y)| *m += y);
        }
        let l = self.lambda();
        m.iter_mut().for_each(|m| *m /= l);
        m
    }
    /// Per-coordinate variance of the plain minibatch gradient with batch n.
    fn noise_variance(&self, batch: usize, replacement: bool) -> Vec<f64> {
        let nn = self.n() as f64;
        let mut mean = vec![0.0; self.d];
        let mut sq = vec![0.0; self.d];
        for row in self.y.chunks(self.d) {
            for j in 0..self.d {
                mean[j] += row[j] / nn;
            }
        }
        for row in self.y.chunks(self.d) {
            for j in 0..self.d {
                sq[j] += (row[j] - mean[j]).powi(2) / nn;
            }
        }
        let b = batch as f64;
        let fpc = if replacement { 1.0 } else { (nn - b) / (nn - 1.0) };
        sq.iter().map(|s2| nn * nn / b * s2 * fpc).collect()
    }
}

impl Terms for IsoGaussianMean {
    fn dim(&self) -> usize {
        self.d
    }
    fn num_terms(&self) -> usize {
        self.n()
    }
    fn log_terms(&self, t: &[f64], idx: &[u32], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(idx) {
            let row = &self.y[i as usize * self.d..(i as usize + 1) * self.d];
            *o = -0.5 * row.iter().zip(t).map(|(y, t)| (y - t).powi(2)).sum::<f64>();
        }
    }
}

impl TermGradients for IsoGaussianMean {
    fn log_terms_grad_sum(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) -> f64 {
        self.log_terms(t, idx, out);
        for &i in idx {
            let row = &self.y[i as usize * self.d..(i as usize + 1) * self.d];
            g.iter_mut().zip(row).zip(t).for_each(|((g, y), t)| *g += y - t);
        }
        out.iter().sum()
    }
    fn log_terms_grads(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
        self.log_terms(t, idx, out);
        for (gk, &i) in g.chunks_mut(self.d).zip(idx) {
            let row = &self.y[i as usize * self.d..(i as usize + 1) * self.d];
            gk.iter_mut().zip(row).zip(t).for_each(|((g, y), t)| *g = y - t);
        }
    }
}

impl LogPrior for IsoGaussianMean {
    fn log_prior(&self, t: &[f64]) -> f64 {
        -0.5 * t.iter().map(|t| t * t).sum::<f64>() / (self.tau * self.tau)
    }
    fn log_prior_grad(&self, t: &[f64], g: &mut [f64]) -> f64 {
        g.iter_mut().zip(t).for_each(|(g, t)| *g -= t / (self.tau * self.tau));
        self.log_prior(t)
    }
}

/// Baker et al. (2017)'s control-variate gradient, written here for the tests only:
/// ∇ℓ(θ̂) + (N/n) Σ_{i∈S} [∇ℓ_i(θ) − ∇ℓ_i(θ̂)], with ∇ℓ(θ̂) = Σ_i ∇ℓ_i(θ̂) precomputed and
/// ∇ℓ_i(θ̂) recomputed on the minibatch (2n terms and 2n gradients per call).
#[derive(Clone)]
struct BakerCv {
    center: Vec<f64>,
    full_grad: Vec<f64>,
    values: Vec<f64>,
    at_center: Vec<f64>,
}

impl BakerCv {
    fn new<M: TermGradients>(model: &M, center: &[f64], max_batch: usize) -> Self {
        let n = model.num_terms();
        let idx: Vec<u32> = (0..n as u32).collect();
        let mut full_grad = vec![0.0; model.dim()];
        let mut values = vec![0.0; n];
        model.log_terms_grad_sum(center, &idx, &mut values, &mut full_grad);
        values.truncate(max_batch);
        Self { center: center.to_vec(), full_grad, values, at_center: vec![0.0; model.dim()] }
    }
}

impl<M: TermGradients> GradientEstimator<M> for BakerCv {
    fn estimate_gradient(
        &mut self, model: &M, theta: &[f64], indices: &[u32], grad: &mut [f64],
    ) -> EvalCounts {
        let n = indices.len();
        grad.fill(0.0);
        self.at_center.fill(0.0);
        model.log_terms_grad_sum(theta, indices, &mut self.values[..n], grad);
        model.log_terms_grad_sum(&self.center, indices, &mut self.values[..n], &mut self.at_center);
        let scale = model.num_terms() as f64 / n as f64;
        for ((g, c), f) in grad.iter_mut().zip(&self.at_center).zip(&self.full_grad) {
            *g = f + scale * (*g - c);
        }
        EvalCounts::terms_and_gradients(2 * n)
    }
}

/// Runs `chains` chains of `make()` from `start` (warmup steps discarded) and summarizes the d
/// coordinates plus one extra per-step quantity `extra(stats)`.
fn run<M, K>(
    model: &M, make: impl Fn() -> K, start: &[f64], (chains, warmup, draws): (usize, usize, usize),
    seed: u64, extra: impl Fn(&StatsOf<K, M>) -> f64,
) -> (Vec<Summary>, EvalCounts)
where
    M: Terms + ?Sized,
    K: Kernel<M>,
{
    let d = model.dim();
    let mut all = Vec::new();
    let mut evals = EvalCounts::ZERO;
    for c in 0..chains {
        let mut rng = chain_rng(seed, c + 1);
        let mut chain = make().build_chain(model, start, &mut rng).unwrap();
        for _ in 0..warmup {
            chain.step(model, &mut rng).unwrap();
        }
        let mut out = Vec::with_capacity(draws * (d + 1));
        for _ in 0..draws {
            let st = chain.step(model, &mut rng).unwrap();
            assert!(!st.divergent());
            evals += st.evals();
            out.extend_from_slice(chain.position());
            out.push(extra(&st));
        }
        all.push(out);
    }
    let views: Vec<&[f64]> = all.iter().map(|c| c.as_slice()).collect();
    let mut names: Vec<String> = (0..d).map(|j| format!("t{j}")).collect();
    names.push("extra".into());
    (summarize(&names, &Draws::new(&views, d + 1).unwrap()).unwrap(), evals)
}

/// z-score of the measured sd against a predicted variance.
fn sd_z(s: &Summary, var: f64) -> f64 {
    (s.sd - var.sqrt()) / s.mcse_sd
}

/// Exact stationary variance of SGLD on N(m, 1/λ) with additive gradient noise of variance v and
/// (preconditioned) step size h: x' = (1 − hλ/2)x + (h/2)e + √h z ⇒
/// var = (1 + hv/4) / (λ(1 − hλ/4)).
fn sgld_variance(h: f64, lambda: f64, v: f64) -> f64 {
    (1.0 + h * v / 4.0) / (lambda * (1.0 - h * lambda / 4.0))
}

/// The product ab of two 2 × 2 matrices (row-major).
fn mat2_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
    ]
}

/// The transpose of a 2 × 2 matrix (row-major).
fn transpose(a: [f64; 4]) -> [f64; 4] {
    [a[0], a[2], a[1], a[3]]
}

/// Stationary covariance of z' = F z + w, Cov w = Q (2 × 2, row-major), by doubling:
/// Σ = Σ_k F^k Q F^kᵀ.
fn lyapunov(f: [f64; 4], q: [f64; 4]) -> [f64; 4] {
    let (mut a, mut s) = (f, q);
    for _ in 0..64 {
        let add = mat2_mul(mat2_mul(a, s), transpose(a));
        s = [s[0] + add[0], s[1] + add[1], s[2] + add[2], s[3] + add[3]];
        a = mat2_mul(a, a);
    }
    s
}

/// Exact stationary variance of θ for SG-HMC on N(m, 1/λ), M⁻¹ = s, friction c, additive
/// gradient noise v, L steps from p ~ N(0, 1/s). One step on (x, p):
/// x_l = x + εs p, p_l = (1 − εcs − ε²λs) p − ελ x + w, Var w = ε²v + 2cε. Over a trajectory
/// x_L = a x + b p₀ + (noise of variance q), so var = (b²/s + q)/(1 − a²).
fn sghmc_variance(eps: f64, lambda: f64, s: f64, c: f64, v: f64, steps: usize) -> f64 {
    let f = [1.0, eps * s, -eps * lambda, 1.0 - eps * c * s - eps * eps * lambda * s];
    let qw = eps * eps * v + 2.0 * c * eps;
    let (mut fl, mut q) = ([1.0, 0.0, 0.0, 1.0], [0.0; 4]);
    for _ in 0..steps {
        fl = mat2_mul(f, fl);
        let n = mat2_mul(mat2_mul(f, q), transpose(f));
        q = [n[0], n[1], n[2], n[3] + qw];
    }
    (fl[1] * fl[1] / s + q[0]) / (1.0 - fl[0] * fl[0])
}

/// Exact stationary variance of θ for SG-HMC as in [`sghmc_variance`], but with one minibatch
/// per trajectory: the gradient noise ξ ~ N(0, v) is drawn once per trajectory and enters every
/// step's momentum as εξ. Over a trajectory x_L = a x + b p₀ + e ξ + (the independent friction
/// noise), and ξ is independent of (x, p₀), so the variance is that of [`sghmc_variance`] without
/// gradient noise plus e² v / (1 − a²).
fn sghmc_variance_one_batch(eps: f64, lambda: f64, s: f64, c: f64, v: f64, steps: usize) -> f64 {
    // Coefficients of (x, p₀, ξ) in x_l and p_l.
    let (mut x, mut p) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    for _ in 0..steps {
        let xn: [f64; 3] = std::array::from_fn(|k| x[k] + eps * s * p[k]);
        let drive = [0.0, 0.0, eps];
        p = std::array::from_fn(|k| p[k] - eps * lambda * xn[k] - eps * c * s * p[k] + drive[k]);
        x = xn;
    }
    sghmc_variance(eps, lambda, s, c, 0.0, steps) + x[2] * x[2] * v / (1.0 - x[0] * x[0])
}

/// Stationary covariance [xx, xp, px, pp] of SGNHT's update on one coordinate of N(m, 1/λ) at
/// a fixed thermostat ξ, diffusion A, additive gradient noise v:
/// p' = (1 − ξh) p − hλ x + w, x' = x + h p', Var w = h²v + 2Ah.
fn sgnht_cov(h: f64, lambda: f64, xi: f64, a: f64, v: f64) -> [f64; 4] {
    let f = [1.0 - h * h * lambda, h * (1.0 - xi * h), -h * lambda, 1.0 - xi * h];
    let q = h * h * v + 2.0 * a * h;
    lyapunov(f, [q * h * h, q * h, q * h, q])
}

/// The thermostat value ξ* at which the discrete chain's stationary E[p²] is 1 (what the
/// thermostat's update drives it to, up to its own fluctuations), by bisection.
fn sgnht_fixed_point(h: f64, lambda: f64, a: f64, v: f64) -> f64 {
    let (mut lo, mut hi) = (1e-6, 1.0 / h);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if sgnht_cov(h, lambda, mid, a, v)[3] > 1.0 { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

const SDS: [f64; 4] = [0.5, 1.0, 1.5, 2.0];

#[test]
fn full_batch_sgld_has_the_exact_euler_maruyama_variance() {
    // hλ = 0.5: the discretized variance 1/(λ(1 − hλ/4)) is 14 % above the posterior's.
    let model = IsoGaussianMean::new(1_000, &SDS, 1);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let h = 0.5 / lambda;
    let make = || Sgld::new(SgldConfig::new(h, 1_000).unwrap()).unwrap();
    let (s, evals) = run(&model, make, &m, (4, 500, 10_000), 11 + offset(), |_: &SgldStats| 0.0);
    assert_eq!(evals.gradients, 4 * 10_000 * 1_000);
    let var = sgld_variance(h, lambda, 0.0);
    for j in 0..4 {
        let zm = (s[j].mean - m[j]) / s[j].mcse_mean;
        assert!(zm.abs() < Z, "θ{j}: mean z = {zm:.2}");
        assert!(sd_z(&s[j], var).abs() < Z, "θ{j}: sd z = {:.2}", sd_z(&s[j], var));
        assert!(sd_z(&s[j], 1.0 / lambda) > 2.0 * Z, "θ{j}: the bias should be visible");
    }
}

#[test]
fn minibatch_sgld_variance_adds_the_gradient_noise_term() {
    // hλ = 0.1, n = 50: the minibatch term hV/4 is 0.1–1.9 (coordinates with data sd
    // 0.5…2), the discretization term 0.1/4. Exact formula with and without replacement.
    let model = IsoGaussianMean::new(1_000, &SDS, 2);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let h = 0.1 / lambda;
    for (k, sub) in
        [Subsampling::WithoutReplacement, Subsampling::WithReplacement].iter().enumerate()
    {
        let cfg = SgldConfig { step_size: h, batch: 50, subsampling: *sub, preconditioner: None };
        let make = || Sgld::new(cfg.clone()).unwrap();
        let (s, evals) = run(&model, make, &m, (4, 500, 20_000), 20 + k as u64 + offset(), |_| 0.0);
        assert_eq!(evals, EvalCounts::terms_and_gradients(4 * 20_000 * 50));
        let v = model.noise_variance(50, *sub == Subsampling::WithReplacement);
        for j in 0..4 {
            let var = sgld_variance(h, lambda, v[j]);
            let zm = (s[j].mean - m[j]) / s[j].mcse_mean;
            assert!(zm.abs() < Z, "{sub:?} θ{j}: mean z = {zm:.2}");
            let z = sd_z(&s[j], var);
            assert!(z.abs() < Z, "{sub:?} θ{j}: sd {} vs {}, z = {z:.2}", s[j].sd, var.sqrt());
        }
        // The largest-noise coordinate is far from the posterior (variance × ~2.9).
        assert!(sd_z(&s[3], 1.0 / lambda) > 2.0 * Z);
    }
}

#[test]
fn preconditioned_sgld_matches_its_exact_stationary_covariance() {
    // Σ dense: the stationary covariance is (1/λ)(I − hλΣ/4)⁻¹ (A = I − hλΣ/2 commutes with Σ).
    let model = IsoGaussianMean::new(500, &[1.0, 1.0], 3);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let h = 0.8 / lambda;
    let sigma = [1.5, 0.5, 0.5, 1.0];
    for (k, metric) in
        [Metric::diagonal(vec![1.5, 0.5]).unwrap(), Metric::dense(sigma.to_vec(), 2).unwrap()]
            .into_iter()
            .enumerate()
    {
        let cfg = SgldConfig {
            step_size: h,
            batch: 500,
            subsampling: Subsampling::WithoutReplacement,
            preconditioner: Some(metric.clone()),
        };
        let (s, _) = run(
            &model,
            || Sgld::new(cfg.clone()).unwrap(),
            &m,
            (4, 500, 10_000),
            30 + k as u64 + offset(),
            |_| 0.0,
        );
        // (I − hλΣ/4)⁻¹ for the 2 × 2 Σ.
        let sig = if k == 0 { [1.5, 0.0, 0.0, 0.5] } else { sigma };
        let b = h * lambda / 4.0;
        let a = [1.0 - b * sig[0], -b * sig[1], -b * sig[2], 1.0 - b * sig[3]];
        let det = a[0] * a[3] - a[1] * a[2];
        let var = [a[3] / det / lambda, a[0] / det / lambda];
        for j in 0..2 {
            let z = sd_z(&s[j], var[j]);
            assert!(z.abs() < Z, "metric {k}, θ{j}: sd z = {z:.2}");
        }
    }
}

#[test]
fn sgld_with_control_variates_removes_the_gradient_noise() {
    // On the Gaussian mean, ∇ℓ_i(θ) − ∇ℓ_i(θ̂) = θ̂ − θ for every i: the CV gradient is exact, so
    // SGLD-CV with n = 10 has the full-batch variance 1/(λ(1 − hλ/4)) and counts 2n evaluations.
    let model = IsoGaussianMean::new(1_000, &SDS, 4);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let h = 0.5 / lambda;
    let center: Vec<f64> = m.iter().map(|x| x + 0.01).collect();
    let make = || {
        let cfg = SgldConfig::new(h, 10).unwrap();
        Sgld::with_estimator(cfg, BakerCv::new(&model, &center, 10)).unwrap()
    };
    let (s, evals) = run(&model, make, &m, (4, 500, 10_000), 40 + offset(), |_| 0.0);
    assert_eq!(evals, EvalCounts::terms_and_gradients(4 * 10_000 * 20));
    let var = sgld_variance(h, lambda, 0.0);
    for j in 0..4 {
        let zm = (s[j].mean - m[j]) / s[j].mcse_mean;
        assert!(zm.abs() < Z && sd_z(&s[j], var).abs() < Z, "θ{j}: {zm:.2}");
    }
}

#[test]
fn control_variates_reduce_the_gradient_variance_near_the_mode() {
    // Linear regression (correlated covariates): at θ within ~1 posterior sd of the mode the CV
    // estimator's variance is a small fraction of the plain one, and both are unbiased.
    let model = common::LinearGaussian::new(2_000, 3, 5);
    let (mode, cov) = model.posterior();
    let theta: Vec<f64> = (0..3).map(|j| mode[j] + cov[j * 3 + j].sqrt()).collect();
    let n = 20;
    let mut plain = MinibatchGradient::new(n);
    let mut cv = BakerCv::new(&model, &mode, n);
    let all: Vec<u32> = (0..2_000).collect();
    let mut exact = vec![0.0; 3];
    model.log_terms_grad_sum(&theta, &all, &mut vec![0.0; 2_000], &mut exact);
    let mut sampler = tallmc_core::subsample::WithoutReplacement::new(2_000).unwrap();
    let mut rng = chain_rng(50 + offset(), 0);
    let reps = 4_000;
    let (mut g, mut acc) = (vec![0.0; 3], [[0.0; 3]; 4]);
    for _ in 0..reps {
        sampler.reset();
        let idx = sampler.draw(n, &mut rng);
        plain.estimate_gradient(&model, &theta, idx, &mut g);
        for j in 0..3 {
            acc[0][j] += g[j] - exact[j];
            acc[1][j] += (g[j] - exact[j]).powi(2);
        }
        let e = cv.estimate_gradient(&model, &theta, idx, &mut g);
        assert_eq!(e, EvalCounts::terms_and_gradients(2 * n));
        for j in 0..3 {
            acc[2][j] += g[j] - exact[j];
            acc[3][j] += (g[j] - exact[j]).powi(2);
        }
    }
    let r = reps as f64;
    for j in 0..3 {
        let (vp, vc) = (acc[1][j] / r, acc[3][j] / r);
        assert!((acc[0][j] / r).abs() < Z * (vp / r).sqrt(), "plain biased, θ{j}");
        assert!((acc[2][j] / r).abs() < Z * (vc / r).sqrt(), "CV biased, θ{j}");
        assert!(vc < 0.05 * vp, "θ{j}: CV variance {vc:.3e} vs plain {vp:.3e}");
    }
}

#[test]
fn sghmc_matches_the_exact_variance_of_its_discretization() {
    // ε√λ ≈ 0.13, L = 20, C = I: (a) CV (noise-free) gradient, near the posterior; (b) plain
    // minibatch n = 100, whose noise εV/2 ≫ C inflates the variance (the reason SG-HMC is run
    // with control variates); (c) a diagonal mass matrix. All against the exact linear theory.
    let model = IsoGaussianMean::new(1_000, &SDS, 6);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let (eps, steps) = (0.004, 20);
    let center = m.clone();
    let v = model.noise_variance(100, false);
    let cases: [(&str, Option<Metric>, bool); 3] = [
        ("cv", None, true),
        ("plain", None, false),
        ("cv + diagonal M", Some(Metric::diagonal(vec![0.5, 1.0, 1.5, 2.0]).unwrap()), true),
    ];
    for (k, (name, metric, use_cv)) in cases.into_iter().enumerate() {
        let cfg =
            SgHmcConfig { metric: metric.clone(), ..SgHmcConfig::new(eps, steps, 100).unwrap() };
        let seed = 60 + k as u64 + offset();
        let (s, evals) = if use_cv {
            let make =
                || SgHmc::with_estimator(cfg.clone(), BakerCv::new(&model, &center, 100)).unwrap();
            run(&model, make, &m, (4, 200, 4_000), seed, |st: &tallmc_samplers::SgHmcStats| {
                st.kinetic_energy
            })
        } else {
            run(
                &model,
                || SgHmc::new(cfg.clone()).unwrap(),
                &m,
                (4, 200, 4_000),
                seed,
                |st| st.kinetic_energy,
            )
        };
        let per = if use_cv { 200 } else { 100 };
        assert_eq!(evals.gradients, 4 * 4_000 * steps as u64 * per);
        for j in 0..4 {
            let sj = [0.5, 1.0, 1.5, 2.0][j];
            let s_inv_mass = if metric.is_some() { sj } else { 1.0 };
            let vj = if use_cv { 0.0 } else { v[j] };
            let var = sghmc_variance(eps, lambda, s_inv_mass, 1.0, vj, steps);
            let zm = (s[j].mean - m[j]) / s[j].mcse_mean;
            let z = sd_z(&s[j], var);
            assert!(zm.abs() < Z, "{name} θ{j}: mean z = {zm:.2}");
            assert!(
                z.abs() < Z,
                "{name} θ{j}: sd {:.4e} vs {:.4e}, z = {z:.2}",
                s[j].sd,
                var.sqrt()
            );
            if j == 0 {
                eprintln!(
                    "SG-HMC {name}: var·λ theory {:.4}, measured {:.4}",
                    var * lambda,
                    s[j].sd.powi(2) * lambda
                );
            }
        }
        if !use_cv {
            assert!(sd_z(&s[3], 1.0 / lambda) > 2.0 * Z, "plain SG-HMC should be visibly biased");
        }
    }
}

/// SG-HMC with one plain minibatch per trajectory (`MinibatchScope::PerStep`, BlackJAX's
/// scheme): the noise of one minibatch pushes the momentum the same way at all L steps, so the
/// variance is larger than with a fresh minibatch per step — checked against the exact theory of
/// each scheme (the per-step formula must be rejected: the scope really changed).
#[test]
fn sghmc_with_one_minibatch_per_trajectory_matches_its_exact_variance() {
    let model = IsoGaussianMean::new(1_000, &SDS, 7);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let (eps, steps, batch) = (0.004, 20, 100);
    let v = model.noise_variance(batch, false);
    let cfg = SgHmcConfig {
        minibatch: MinibatchScope::PerStep,
        ..SgHmcConfig::new(eps, steps, batch).unwrap()
    };
    let make = || SgHmc::new(cfg.clone()).unwrap();
    let (s, evals) = run(&model, make, &m, (4, 200, 4_000), 70 + offset(), |st| st.kinetic_energy);
    assert_eq!(evals.gradients, 4 * 4_000 * (steps * batch) as u64);
    for j in 0..4 {
        let var = sghmc_variance_one_batch(eps, lambda, 1.0, 1.0, v[j], steps);
        let per_step = sghmc_variance(eps, lambda, 1.0, 1.0, v[j], steps);
        let zm = (s[j].mean - m[j]) / s[j].mcse_mean;
        let z = sd_z(&s[j], var);
        eprintln!(
            "SG-HMC one minibatch per trajectory θ{j}: var·λ theory {:.3} (per step {:.3}), \
             measured {:.3}, z = {z:.2}",
            var * lambda,
            per_step * lambda,
            s[j].sd.powi(2) * lambda
        );
        assert!(zm.abs() < Z, "θ{j}: mean z = {zm:.2}");
        assert!(z.abs() < Z, "θ{j}: sd {:.4e} vs {:.4e}, z = {z:.2}", s[j].sd, var.sqrt());
    }
    let z_per_step = sd_z(&s[3], sghmc_variance(eps, lambda, 1.0, 1.0, v[3], steps));
    assert!(z_per_step > 2.0 * Z, "the per-step theory should be rejected, z = {z_per_step:.2}");
}

/// SGNHT and mSGNHT: the thermostat absorbs the minibatch noise. Theory (module docs of
/// `sgnht`): the continuous dynamics put ξ at A + hV/2; the discrete chain at a fixed ξ has an
/// exactly computable stationary E[p²], and the thermostat drives E[p²] to 1, i.e. to ξ* with
/// E[p²](ξ*) = 1. E[ξ] − ξ* is second order in ξ's fluctuations: with E[p²] ≈ D/ξ it is about
/// Var(ξ)/ξ* = 1/(k ξ*) for a thermostat averaging k coordinates — the allowance added to 4 MCSE.
/// Warmup is long because ξ relaxes slowly (time constant ≈ ξ*/h steps).
fn thermostat_case(
    sds: &[f64], n: usize, thermostat: Thermostat, (warmup, draws): (usize, usize), seed: u64,
) {
    let d = sds.len();
    let model = IsoGaussianMean::new(1_000, sds, 7);
    let (lambda, m) = (model.lambda(), model.posterior_mean());
    let (h, a) = (0.003, 1.0);
    let v = model.noise_variance(n, false);
    let cfg = SgnhtConfig { diffusion: a, ..SgnhtConfig::new(h, n, thermostat).unwrap() };
    // The extra column is the mean of the thermostat(s).
    let (s, _) = run(
        &model,
        || Sgnht::new(cfg).unwrap(),
        &m,
        (4, warmup, draws),
        seed,
        |st: &tallmc_samplers::SgnhtStats| st.thermostat,
    );
    let vbar = v.iter().sum::<f64>() / d as f64;
    let (xi_star, k) = match thermostat {
        Thermostat::Scalar => (sgnht_fixed_point(h, lambda, a, vbar), d as f64),
        // The recorded mean of the ξ_j: average of the per-coordinate fixed points.
        Thermostat::ElementWise => {
            (v.iter().map(|&vj| sgnht_fixed_point(h, lambda, a, vj)).sum::<f64>() / d as f64, 1.0)
        }
    };
    let xi = &s[d];
    let allowance = 1.0 / (k * xi_star);
    let continuous = a + h * vbar / 2.0;
    eprintln!(
        "{thermostat:?} n = {n}: E[ξ] = {:.4} ± {:.4} (MCSE); ξ* = {xi_star:.4}; A + hV/2 = {continuous:.4}",
        xi.mean, xi.mcse_mean
    );
    assert!(
        (xi.mean - xi_star).abs() < Z * xi.mcse_mean + allowance,
        "{thermostat:?}: E[ξ] = {} vs ξ* = {xi_star}",
        xi.mean
    );
    assert!(xi.mean - a > Z * xi.mcse_mean + allowance, "the thermostat should absorb the noise");
    for j in 0..d {
        let zm = (s[j].mean - m[j]) / s[j].mcse_mean;
        let x = match thermostat {
            Thermostat::Scalar => xi_star,
            Thermostat::ElementWise => sgnht_fixed_point(h, lambda, a, v[j]),
        };
        let var = sgnht_cov(h, lambda, x, a, v[j])[0];
        eprintln!(
            "  θ{j}: mean z {zm:.2}; var·λ {:.4} (theory at ξ*: {:.4}), sd z {:.2}",
            s[j].sd.powi(2) * lambda,
            var * lambda,
            sd_z(&s[j], var)
        );
        assert!(zm.abs() < Z, "θ{j}: mean z = {zm:.2}");
        assert!(sd_z(&s[j], var).abs() < Z, "θ{j}: sd z = {:.2}", sd_z(&s[j], var));
    }
}

#[test]
fn sgnht_thermostat_settles_at_the_noise_adjusted_value() {
    thermostat_case(&[1.0; 16], 100, Thermostat::Scalar, (30_000, 40_000), 70 + offset());
}

#[test]
fn msgnht_thermostats_settle_per_coordinate() {
    thermostat_case(&SDS, 300, Thermostat::ElementWise, (30_000, 60_000), 71 + offset());
}

#[test]
fn bad_settings_are_clear_errors() {
    let model = IsoGaussianMean::new(100, &[1.0], 8);
    let mut rng = chain_rng(1, 0);
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = SgldConfig::new(h, 10).unwrap_err().to_string();
        assert!(e.contains("SGLD step size"), "{e}");
        assert!(SgHmcConfig::new(h, 10, 10).is_err());
        assert!(SgnhtConfig::new(h, 10, Thermostat::Scalar).is_err());
    }
    let e = SgldConfig::new(1e-3, 0).unwrap_err().to_string();
    assert!(e.contains("batch") && e.contains("at least 1"), "{e}");
    assert!(SgHmcConfig::new(1e-3, 0, 10).is_err());
    let bad_c = SgHmcConfig { friction: 0.0, ..SgHmcConfig::default() };
    assert!(SgHmc::new(bad_c).unwrap_err().to_string().contains("friction"));
    let bad_a = SgnhtConfig { diffusion: -1.0, ..SgnhtConfig::default() };
    assert!(Sgnht::new(bad_a).unwrap_err().to_string().contains("diffusion"));
    let bad_l = SgnhtConfig { num_steps: 0, ..SgnhtConfig::default() };
    assert!(Sgnht::new(bad_l).is_err());
    // n > N is caught when a chain is built, naming N.
    let k = Sgld::new(SgldConfig::new(1e-3, 101).unwrap()).unwrap();
    let e = k.build_chain(&model, &[0.0], &mut rng).unwrap_err().to_string();
    assert!(e.contains("N = 100"), "{e}");
    let k = SgHmc::new(SgHmcConfig::new(1e-3, 5, 101).unwrap()).unwrap();
    assert!(k.build_chain(&model, &[0.0], &mut rng).is_err());
    let k = Sgnht::new(SgnhtConfig::new(1e-3, 101, Thermostat::ElementWise).unwrap()).unwrap();
    assert!(k.build_chain(&model, &[0.0], &mut rng).is_err());
    // A metric of the wrong dimension.
    let cfg = SgHmcConfig { metric: Some(Metric::Identity(3)), ..SgHmcConfig::default() };
    let k = SgHmc::new(SgHmcConfig { batch: 10, ..cfg }).unwrap();
    assert!(k.build_chain(&model, &[0.0], &mut rng).is_err());
    // Non-finite start.
    let k = Sgld::new(SgldConfig::new(1e-3, 10).unwrap()).unwrap();
    assert!(k.build_chain(&model, &[f64::NAN], &mut rng).is_err());
}

#[test]
fn a_step_that_leaves_the_finite_numbers_exposes_the_non_finite_position() {
    // A huge step overflows the dynamics within a few steps; every kernel must report it as a
    // divergence and take the non-finite values (no rollback to a stale state), so that the
    // driver stops the run there.
    fn blow_up<K: Kernel<IsoGaussianMean>>(name: &str, kernel: K, rng: &mut ChainRng) {
        let model = IsoGaussianMean::new(100, &[1.0, 1.0], 9);
        let mut chain = kernel.build_chain(&model, &[0.3, -0.2], rng).unwrap();
        for _ in 0..2_000 {
            let st = chain.step(&model, rng).unwrap();
            if st.divergent() {
                return;
            }
            assert!(chain.position().iter().all(|x| x.is_finite()), "{name}: not flagged");
        }
        panic!("{name} never diverged");
    }
    let mut rng = chain_rng(2, 0);
    blow_up("SGLD", Sgld::new(SgldConfig::new(1e3, 10).unwrap()).unwrap(), &mut rng);
    blow_up("SG-HMC", SgHmc::new(SgHmcConfig::new(10.0, 5, 10).unwrap()).unwrap(), &mut rng);
    let nht = SgnhtConfig::new(10.0, 10, Thermostat::ElementWise).unwrap();
    blow_up("SGNHT", Sgnht::new(nht).unwrap(), &mut rng);
}

#[test]
fn a_blown_up_run_fails_with_non_finite_draw_and_keeps_the_finite_draws() {
    let model = IsoGaussianMean::new(100, &[1.0, 1.0], 9);
    let config =
        RunConfig { num_warmup: 0, num_draws: 2_000, num_chains: 1, seed: 3, save_warmup: false };
    let kernel = Sgld::new(SgldConfig::new(1e3, 10).unwrap()).unwrap();
    let err = sample_in_memory(&model, config, &[vec![0.3, -0.2]], &kernel).unwrap_err();
    let SamplerError::NonFiniteDraw { chain, iteration, parameter, value } = err else {
        panic!("expected NonFiniteDraw, got {err}");
    };
    assert_eq!(chain, 0);
    assert!(iteration > 0 && iteration < 2_000, "{iteration}");
    assert!(parameter.starts_with("theta."), "{parameter}");
    assert!(!value.is_finite());
    // The same run into a sink we keep: every draw before the failing one is recorded, finite,
    // and the sink is finished.
    let shared = Shared::default();
    let err = Driver::new(config)
        .run(&model, &[vec![0.3, -0.2]], &kernel, vec![shared.clone()])
        .unwrap_err();
    assert!(matches!(err, SamplerError::NonFiniteDraw { iteration: i, .. } if i == iteration));
    let sink = shared.0.lock().unwrap();
    assert_eq!(sink.memory.num_draws(), iteration);
    assert!(sink.memory.draws.iter().all(|x| x.is_finite()));
    assert!(sink.finished);
}

/// A memory sink the test can read after a failed run.
#[derive(Debug, Clone, Default)]
struct Shared(Arc<Mutex<SharedSink>>);

#[derive(Debug, Default)]
struct SharedSink {
    memory: MemorySink<SgldStats>,
    finished: bool,
}

impl DrawSink<SgldStats> for Shared {
    fn begin(&mut self, header: &ChainHeader<'_>) -> std::io::Result<()> {
        self.0.lock().unwrap().memory.begin(header)
    }
    fn end_warmup(&mut self, tuning: &[String]) -> std::io::Result<()> {
        self.0.lock().unwrap().memory.end_warmup(tuning)
    }
    fn record(&mut self, draw: &DrawRecord<'_, SgldStats>) -> std::io::Result<()> {
        self.0.lock().unwrap().memory.record(draw)
    }
    fn finish(&mut self, footer: &ChainFooter) -> std::io::Result<()> {
        let mut s = self.0.lock().unwrap();
        s.finished = true;
        s.memory.finish(footer)
    }
}
