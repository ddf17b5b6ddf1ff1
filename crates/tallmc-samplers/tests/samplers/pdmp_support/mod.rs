//! Test support for the subsampling piecewise-deterministic samplers: a test-local generalized
//! linear model implementing every bound capability with a knob that makes its bounds wrong
//! (Gaussian regression with known σ — Lipschitz per-datum gradients, closed-form posterior —
//! and logistic regression — bounded per-datum gradients), the same data as the library's
//! [`tallmc_models::GaussianRegression`] / [`tallmc_models::LogisticRegression`], and
//! continuous-time averages with batch-means MCSE from the library's driver and sinks.

#![allow(dead_code)]
#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use std::sync::OnceLock;
use tallmc_core::linalg::Cholesky;
use tallmc_core::rng::setup_rng;
use tallmc_core::{
    EventTotals, LinearPredictor, LogPrior, LogPriorCurvature, LogPriorHessian, PdmpKernel,
    TermGradientBounds, TermGradientLipschitz, TermGradients, TermHessians, Terms,
};
use tallmc_diagnostics::continuous::{BatchConfig, QuadratureConfig, TimeAverageConfig};
use tallmc_samplers::continuous::{Budget, ContinuousDriver, ContinuousRunConfig, TimeAverageSink};

use tallmc_integrators::MetricKind;
use tallmc_models::LogisticRegression;
use tallmc_samplers::{
    HamiltonianWarmup, Hmc, HmcConfig, MetricSetting, NewtonOptions, RunConfig,
    laplace_approximation, sample_in_memory,
};
use tallmc_testkit::{Z_MAX, seed};

/// The likelihood of a [`Glm`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Family {
    /// y_i ~ N(x_iᵀθ, σ²).
    Gaussian { sigma: f64 },
    /// y_i ~ Bernoulli(1/(1 + e^{−x_iᵀθ})), y ∈ {0, 1}.
    Logistic,
}

/// ℓ_i(θ) = φ_i(x_iᵀθ), prior θ ~ N(0, s² I). `bound_scale` multiplies every bound constant
/// (1 for the true bounds; < 1 makes them deliberately wrong).
pub struct Glm {
    pub d: usize,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub family: Family,
    pub prior_sd: f64,
    pub bound_scale: f64,
    /// max_i ‖x_i‖₂ (cached: lipSBPS asks for B(v) at every step).
    max_row_norm: f64,
    /// Every term and derivative is NaN where x_iᵀθ exceeds this (∞: never), to provoke
    /// divergences.
    pub nan_above: f64,
}

fn sigmoid(eta: f64) -> f64 {
    1.0 / (1.0 + (-eta).exp())
}

impl Glm {
    /// N rows x_i = (1, z_i) with z_i ∈ ℝ^{d−1} AR(1)-correlated (ρ) around `shift`, responses
    /// from θ_true = (0.5, 1, −1, 0.5, …)/scale; fixed data seed.
    pub fn new(family: Family, n: usize, d: usize, rho: f64, shift: f64, data_seed: u64) -> Self {
        let mut rng = setup_rng(data_seed);
        let normal = |rng: &mut tallmc_core::rng::ChainRng| -> f64 { StandardNormal.sample(rng) };
        let theta: Vec<f64> = (0..d)
            .map(|j| {
                if j == 0 {
                    0.5
                } else if j % 2 == 1 {
                    1.0
                } else {
                    -0.5
                }
            })
            .collect();
        let mut x = vec![0.0; n * d];
        let mut y = vec![0.0; n];
        let c = (1.0 - rho * rho).sqrt();
        for i in 0..n {
            let row = &mut x[i * d..(i + 1) * d];
            row[0] = 1.0;
            let mut prev = normal(&mut rng);
            for v in &mut row[1..] {
                *v = shift + prev;
                prev = rho * prev + c * normal(&mut rng);
            }
            let eta: f64 = row.iter().zip(&theta).map(|(a, b)| a * b).sum();
            y[i] = match family {
                Family::Gaussian { sigma } => eta + sigma * normal(&mut rng),
                Family::Logistic => {
                    let u: f64 = rng.random();
                    f64::from(u8::from(u < sigmoid(eta)))
                }
            };
        }
        let max_row_norm =
            x.chunks(d).map(|r| r.iter().map(|a| a * a).sum::<f64>().sqrt()).fold(0.0, f64::max);
        Self {
            d,
            x,
            y,
            family,
            prior_sd: 10.0,
            bound_scale: 1.0,
            max_row_norm,
            nan_above: f64::INFINITY,
        }
    }

    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// The same data as a library model's data set (the intercept column is stored in x).
    fn dataset(&self) -> tallmc_models::Dataset {
        tallmc_models::Dataset::with_default_names(self.x.clone(), self.y.clone(), self.d).unwrap()
    }

    /// The library's logistic regression on these data (same prior).
    pub fn logistic_regression(&self) -> LogisticRegression {
        assert_eq!(self.family, Family::Logistic);
        LogisticRegression::new(
            self.dataset(),
            tallmc_models::DesignOptions::default(),
            self.prior_sd,
        )
        .unwrap()
    }

    /// The library's Gaussian regression on these data (same σ and prior).
    pub fn gaussian_regression(&self) -> tallmc_models::GaussianRegression {
        let Family::Gaussian { sigma } = self.family else { panic!("not Gaussian") };
        tallmc_models::GaussianRegression::new(
            self.dataset(),
            tallmc_models::DesignOptions::default(),
            sigma,
            self.prior_sd,
        )
        .unwrap()
    }

    fn row(&self, i: u32) -> &[f64] {
        &self.x[i as usize * self.d..(i as usize + 1) * self.d]
    }

    fn eta(&self, theta: &[f64], i: u32) -> f64 {
        self.row(i).iter().zip(theta).map(|(a, b)| a * b).sum()
    }

    /// φ, φ′, φ″ at η for datum i.
    fn phi(&self, i: u32, eta: f64) -> (f64, f64, f64) {
        if eta > self.nan_above {
            return (f64::NAN, f64::NAN, f64::NAN);
        }
        let y = self.y[i as usize];
        match self.family {
            Family::Gaussian { sigma } => {
                let s2 = sigma * sigma;
                (-0.5 * (y - eta).powi(2) / s2, (y - eta) / s2, -1.0 / s2)
            }
            Family::Logistic => {
                let p = sigmoid(eta);
                let log1p = if eta > 0.0 { eta + (-eta).exp().ln_1p() } else { eta.exp().ln_1p() };
                (y * eta - log1p, y - p, -p * (1.0 - p))
            }
        }
    }

    /// |φ″| ≤ c.
    fn curvature(&self) -> f64 {
        match self.family {
            Family::Gaussian { sigma } => 1.0 / (sigma * sigma),
            Family::Logistic => 0.25,
        }
    }

    /// Gaussian family: the posterior mean and covariance in closed form.
    pub fn posterior(&self) -> (Vec<f64>, Vec<f64>) {
        let Family::Gaussian { sigma } = self.family else { panic!("no closed form") };
        let d = self.d;
        let mut p = vec![0.0; d * d];
        let mut b = vec![0.0; d];
        for (row, y) in self.x.chunks(d).zip(&self.y) {
            for j in 0..d {
                b[j] += row[j] * y / (sigma * sigma);
                for k in 0..d {
                    p[j * d + k] += row[j] * row[k] / (sigma * sigma);
                }
            }
        }
        (0..d).for_each(|j| p[j * d + j] += 1.0 / (self.prior_sd * self.prior_sd));
        let c = Cholesky::new(&p, d, "posterior precision").unwrap();
        c.solve_in_place(&mut b);
        (b, c.inverse())
    }
}

impl Terms for Glm {
    fn dim(&self) -> usize {
        self.d
    }
    fn num_terms(&self) -> usize {
        self.y.len()
    }
    fn log_terms(&self, theta: &[f64], idx: &[u32], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(idx) {
            *o = self.phi(i, self.eta(theta, i)).0;
        }
    }
}

impl TermGradients for Glm {
    fn log_terms_grad_sum(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) -> f64 {
        for (o, &i) in out.iter_mut().zip(idx) {
            let (f, d1, _) = self.phi(i, self.eta(t, i));
            *o = f;
            for (gj, xj) in g.iter_mut().zip(self.row(i)) {
                *gj += d1 * xj;
            }
        }
        out[..idx.len()].iter().sum()
    }
    fn log_terms_grads(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
        for ((o, &i), row) in out.iter_mut().zip(idx).zip(g.chunks_mut(self.d)) {
            let (f, d1, _) = self.phi(i, self.eta(t, i));
            *o = f;
            for (gj, xj) in row.iter_mut().zip(self.row(i)) {
                *gj = d1 * xj;
            }
        }
    }
}

impl TermHessians for Glm {
    fn hessian_vector_products(&self, t: &[f64], idx: &[u32], v: &[f64], out: &mut [f64]) {
        for (&i, row) in idx.iter().zip(out.chunks_mut(self.d)) {
            let (_, _, d2) = self.phi(i, self.eta(t, i));
            let xv: f64 = self.row(i).iter().zip(v).map(|(a, b)| a * b).sum();
            for (o, xj) in row.iter_mut().zip(self.row(i)) {
                *o = d2 * xv * xj;
            }
        }
    }
    fn sum_hessian(&self, t: &[f64], idx: &[u32], h: &mut [f64]) {
        let d = self.d;
        for &i in idx {
            let (_, _, d2) = self.phi(i, self.eta(t, i));
            let x = self.row(i);
            for j in 0..d {
                for k in 0..d {
                    h[j * d + k] += d2 * x[j] * x[k];
                }
            }
        }
    }
}

impl LinearPredictor for Glm {
    fn linear_predictors(&self, t: &[f64], idx: &[u32], eta: &mut [f64]) {
        for (e, &i) in eta.iter_mut().zip(idx) {
            *e = self.eta(t, i);
        }
    }
    fn predictor_derivatives(
        &self, idx: &[u32], eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        for k in 0..idx.len() {
            (phi[k], d1[k], d2[k]) = self.phi(idx[k], eta[k]);
        }
    }
    fn add_weighted_rows(&self, idx: &[u32], w: &[f64], out: &mut [f64]) {
        for (&i, wk) in idx.iter().zip(w) {
            for (o, xj) in out.iter_mut().zip(self.row(i)) {
                *o += wk * xj;
            }
        }
    }
}

impl TermGradientBounds for Glm {
    /// Logistic: |y − σ| < 1, so B_j = max_i |x_ij|. Gaussian: unbounded (∞, rejected).
    fn coordinate_gradient_bound(&self, j: usize) -> f64 {
        match self.family {
            Family::Gaussian { .. } => f64::INFINITY,
            Family::Logistic => {
                self.bound_scale * self.x.chunks(self.d).map(|r| r[j].abs()).fold(0.0, f64::max)
            }
        }
    }
    fn directional_gradient_bound(&self, v: &[f64]) -> f64 {
        match self.family {
            Family::Gaussian { .. } => f64::INFINITY,
            Family::Logistic => {
                let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
                self.bound_scale * norm * self.max_row_norm
            }
        }
    }
}

impl TermGradientLipschitz for Glm {
    /// C_j = c max_i |x_ij| ‖x_i‖₂.
    fn coordinate_gradient_lipschitz(&self, j: usize) -> f64 {
        let c = self.curvature();
        self.bound_scale
            * c
            * self
                .x
                .chunks(self.d)
                .map(|r| r[j].abs() * r.iter().map(|a| a * a).sum::<f64>().sqrt())
                .fold(0.0, f64::max)
    }
    /// C = c max_i ‖x_i‖₂².
    fn gradient_lipschitz(&self) -> f64 {
        let c = self.curvature();
        self.bound_scale
            * c
            * self
                .x
                .chunks(self.d)
                .map(|r| r.iter().map(|a| a * a).sum::<f64>())
                .fold(0.0, f64::max)
    }
}

impl LogPrior for Glm {
    fn log_prior(&self, t: &[f64]) -> f64 {
        -0.5 * t.iter().map(|a| a * a).sum::<f64>() / (self.prior_sd * self.prior_sd)
    }
    fn log_prior_grad(&self, t: &[f64], g: &mut [f64]) -> f64 {
        for (gj, tj) in g.iter_mut().zip(t) {
            *gj -= tj / (self.prior_sd * self.prior_sd);
        }
        self.log_prior(t)
    }
}

impl LogPriorHessian for Glm {
    fn add_log_prior_hessian(&self, _t: &[f64], h: &mut [f64]) {
        for j in 0..self.d {
            h[j * self.d + j] -= 1.0 / (self.prior_sd * self.prior_sd);
        }
    }
}

impl LogPriorCurvature for Glm {
    fn prior_curvature_bound(&self) -> f64 {
        1.0 / (self.prior_sd * self.prior_sd)
    }
    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

/// A time average with its batch-means MCSE.
#[derive(Debug, Clone, Copy)]
pub struct Estimate {
    pub value: f64,
    pub mcse: f64,
}

/// Time averages of x_j, x_j² and x_jx_k over [t_warm, t_warm + t_total], with the run's totals.
#[derive(Debug, Clone)]
pub struct Averages {
    pub mean: Vec<Estimate>,
    pub second: Vec<Estimate>,
    /// E[x_j x_k] for every pair j < k, in row order ((0, 1), (0, 2), …, (d − 2, d − 1)).
    pub cross: Vec<(usize, usize, Estimate)>,
    /// Totals of warmup and sampling.
    pub totals: EventTotals,
    /// Totals of sampling only.
    pub sampling: EventTotals,
    /// Trajectory time covered, warmup included.
    pub time: f64,
    /// Number of batches.
    pub batches: usize,
}

impl Averages {
    /// The smallest effective sample size per batch over the coordinates, ESS_j / B with
    /// ESS_j = (E[x_j²] − E[x_j]²)/MCSE_j²: batch means need batches much longer than the
    /// autocorrelation time (several effective samples each) for their MCSE to be trusted.
    pub fn min_ess_per_batch(&self) -> f64 {
        self.mean
            .iter()
            .zip(&self.second)
            .map(|(m, s)| (s.value - m.value * m.value) / (m.mcse * m.mcse))
            .fold(f64::INFINITY, f64::min)
            / self.batches as f64
    }
}

/// Runs `kernel` (a clone of it) from `start` through the library's continuous-time driver:
/// warmup for trajectory time `t_warm` (the adaptation hooks are called), then `t_total` of
/// sampling on chain 0 of seed `seed(base)`, with the exact time averages of
/// [`TimeAverageSink`] (x_j) and its quadrature test functions (x_j², x_jx_k; two
/// Gauss–Legendre nodes are exact for these quadratics) and at most `batches` batch means
/// (rounded up to an even number ≥ 4; the driver's doubling scheme ends with between half of
/// that and that many). Panics on a kernel error (a bound violation fails the test).
pub fn time_averages<M, K>(
    model: &M, kernel: &K, start: &[f64], t_warm: f64, t_total: f64, batches: usize, base: u64,
) -> Averages
where
    M: Terms + Sync + ?Sized,
    K: PdmpKernel<M>,
{
    let d = model.dim();
    let max_batches = batches.max(4).next_multiple_of(2);
    let config = TimeAverageConfig {
        batches: BatchConfig { max_batches, ..BatchConfig::default() },
        ..TimeAverageConfig::default()
    };
    let exact = QuadratureConfig { nodes: 2, ..QuadratureConfig::default() };
    let mut sink = TimeAverageSink::new(config).unwrap();
    for j in 0..d {
        sink = sink.with_function(format!("x{j}^2"), move |x: &[f64]| x[j] * x[j], exact).unwrap();
    }
    for j in 0..d {
        for k in j + 1..d {
            let f = move |x: &[f64]| x[j] * x[k];
            sink = sink.with_function(format!("x{j}*x{k}"), f, exact).unwrap();
        }
    }
    let run = ContinuousRunConfig {
        warmup: Budget::Time(t_warm),
        sampling: Budget::Time(t_total),
        num_chains: 1,
        seed: seed(base),
        ..ContinuousRunConfig::default()
    };
    let mut out =
        ContinuousDriver::new(run).run(model, &[start.to_vec()], kernel, vec![sink]).unwrap();
    let chain = out.pop().unwrap();
    let averages = chain.sink.averages().unwrap();
    let function = |name: &str| {
        let f = chain.sink.function(name).unwrap();
        Estimate { value: f.mean(), mcse: f.mcse() }
    };
    let mut totals = chain.report.warmup;
    totals += chain.report.sampling;
    Averages {
        mean: averages
            .mean()
            .into_iter()
            .zip(averages.mcse_mean())
            .map(|(value, mcse)| Estimate { value, mcse })
            .collect(),
        second: (0..d).map(|j| function(&format!("x{j}^2"))).collect(),
        cross: (0..d)
            .flat_map(|j| (j + 1..d).map(move |k| (j, k)))
            .map(|(j, k)| (j, k, function(&format!("x{j}*x{k}"))))
            .collect(),
        totals,
        sampling: chain.report.sampling,
        time: t_warm + t_total,
        batches: averages.num_batches(),
    }
}

/// z = (estimate − truth)/MCSE.
pub fn z(e: Estimate, truth: f64) -> f64 {
    (e.value - truth) / e.mcse
}

/// Checks every mean, second moment and cross moment x_jx_k against N(mean, cov) within
/// [`Z_MAX`] MCSE; returns the largest |z|.
pub fn check_gaussian(name: &str, avg: &Averages, mean: &[f64], cov: &[f64]) -> f64 {
    let d = mean.len();
    let mut worst: f64 = 0.0;
    let mut check = |what: String, e: Estimate, truth: f64| {
        let zz = z(e, truth);
        worst = worst.max(zz.abs());
        assert!(
            zz.abs() < Z_MAX,
            "{name}: {what}: {} vs {truth} (mcse {}, z {zz:.2})",
            e.value,
            e.mcse
        );
    };
    for j in 0..d {
        check(format!("E[x_{j}]"), avg.mean[j], mean[j]);
        check(format!("E[x_{j}²]"), avg.second[j], cov[j * d + j] + mean[j] * mean[j]);
    }
    for &(j, k, e) in &avg.cross {
        check(format!("E[x_{j} x_{k}]"), e, cov[j * d + k] + mean[j] * mean[k]);
    }
    worst
}

/// Logistic regression with an intercept and two AR(1) covariates (ρ = 0.3), prior N(0, 10²).
pub fn logistic_data(n: usize) -> Glm {
    Glm::new(Family::Logistic, n, 3, 0.3, 0.0, 13)
}

pub fn logistic(n: usize) -> LogisticRegression {
    logistic_data(n).logistic_regression()
}

/// Posterior means and MCSEs of the logistic regression with N = 10³ or 10⁴ from full-data HMC
/// (2 chains of 2000 draws after 300 warmup, dense metric, from the mode: MCSE ≈ 1/10 of the
/// subsampling samplers'), computed once per N for every test of this binary.
pub fn hmc_reference(n: usize) -> &'static (Vec<f64>, Vec<f64>) {
    static SMALL: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    static LARGE: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    let cell = match n {
        1_000 => &SMALL,
        10_000 => &LARGE,
        _ => panic!("no HMC reference for N = {n}"),
    };
    cell.get_or_init(|| hmc_means(&logistic(n)))
}

/// Posterior means and MCSEs of a logistic regression with 3 parameters from full-data HMC (as
/// [`hmc_reference`], which calls it).
pub fn hmc_means(model: &LogisticRegression) -> (Vec<f64>, Vec<f64>) {
    let config = RunConfig::new(300, 2000, 2, seed(40));
    let inits = vec![logistic_mode(model); 2];
    let warmup = HamiltonianWarmup::default().with_metric(MetricSetting::adapt(MetricKind::Dense));
    let hmc = HmcConfig { warmup, ..HmcConfig::default() };
    let chains = sample_in_memory(model, config, &inits, &Hmc::new(hmc.clone()).unwrap()).unwrap();
    (0..3)
        .map(|j| {
            let draws: Vec<Vec<f64>> = chains.iter().map(|c| c.sink.coordinate(j)).collect();
            let mean = tallmc_diagnostics::mean(&draws).unwrap();
            (mean, tallmc_diagnostics::mcse_mean(&draws).unwrap())
        })
        .unzip()
}

/// Batch means are trusted only with batches much longer than the autocorrelation time: at
/// least 2 effective samples per batch (each run's length is chosen for about 5 or more).
pub fn check_run_length(name: &str, avg: &Averages) {
    let per_batch = avg.min_ess_per_batch();
    assert!(per_batch >= 2.0, "{name}: only {per_batch:.1} effective samples per batch");
}

/// Means within [`Z_MAX`] combined MCSE of the HMC reference.
pub fn compare_with_hmc(name: &str, n: usize, avg: &Averages) {
    compare_with(name, hmc_reference(n), avg);
}

/// Means within [`Z_MAX`] combined MCSE of `reference` (means and MCSEs, from [`hmc_means`]).
pub fn compare_with(name: &str, reference: &(Vec<f64>, Vec<f64>), avg: &Averages) {
    let (means, mcses) = reference;
    for j in 0..3 {
        let (e, m, s) = (avg.mean[j], means[j], mcses[j]);
        let z = (e.value - m) / (e.mcse * e.mcse + s * s).sqrt();
        eprintln!(
            "{name}: θ_{j}: {:.5} ± {:.5} vs HMC {m:.5} ± {s:.5}: z = {z:.2}",
            e.value, e.mcse
        );
        assert!(z.abs() < Z_MAX, "{name}: θ_{j}: {} vs HMC {m} (z {z:.2})", e.value);
    }
    assert_eq!(avg.totals.violations, 0, "{name}");
    check_run_length(name, avg);
    eprintln!(
        "{name}: {:.0} effective samples per batch, {} proposals, {} events, {:.0} evaluations \
         per unit time",
        avg.min_ess_per_batch(),
        avg.totals.proposals,
        avg.totals.events(),
        avg.totals.evals.gradients as f64 / avg.time
    );
}

pub fn logistic_mode<M: TermHessians + LogPriorHessian>(model: &M) -> Vec<f64> {
    laplace_approximation(model, &[0.0; 3], NewtonOptions::default()).unwrap().mode
}
