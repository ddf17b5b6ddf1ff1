//! Test support for the subsampling piecewise-deterministic samplers: a test-local generalized
//! linear model implementing every bound capability with a knob that makes its bounds wrong
//! (Gaussian regression with known σ — Lipschitz per-datum gradients, closed-form posterior —
//! and logistic regression — bounded per-datum gradients), the same data as the library's
//! [`tallmc_models::GaussianRegression`] / [`tallmc_models::LogisticRegression`], and the
//! continuous-time average loop with batch means of `pdmp_full_data.rs`.

#![allow(dead_code)]

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use tallmc_core::linalg::Cholesky;
use tallmc_core::rng::{chain_rng, setup_rng};
use tallmc_core::{
    EventTotals, LinearPredictor, LogPrior, LogPriorCurvature, LogPriorHessian, PdmpKernel,
    PdmpState, TermGradientBounds, TermGradientLipschitz, TermGradients, TermHessians, Terms,
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
}

fn logistic(eta: f64) -> f64 {
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
                    f64::from(u8::from(u < logistic(eta)))
                }
            };
        }
        let max_row_norm =
            x.chunks(d).map(|r| r.iter().map(|a| a * a).sum::<f64>().sqrt()).fold(0.0, f64::max);
        Self { d, x, y, family, prior_sd: 10.0, bound_scale: 1.0, max_row_norm }
    }

    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// The same data as a library model's data set (the intercept column is stored in x).
    fn dataset(&self) -> tallmc_models::Dataset {
        tallmc_models::Dataset::with_default_names(self.x.clone(), self.y.clone(), self.d).unwrap()
    }

    /// The library's logistic regression on these data (same prior).
    pub fn logistic_regression(&self) -> tallmc_models::LogisticRegression {
        assert_eq!(self.family, Family::Logistic);
        tallmc_models::LogisticRegression::new(
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
        let y = self.y[i as usize];
        match self.family {
            Family::Gaussian { sigma } => {
                let s2 = sigma * sigma;
                (-0.5 * (y - eta).powi(2) / s2, (y - eta) / s2, -1.0 / s2)
            }
            Family::Logistic => {
                let p = logistic(eta);
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
        &self,
        idx: &[u32],
        eta: &[f64],
        phi: &mut [f64],
        d1: &mut [f64],
        d2: &mut [f64],
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

/// Time averages of x_j, x_j² and x_0x_1 over [t_warm, t_warm + t_total], with the run's totals.
#[derive(Debug)]
pub struct Averages {
    pub mean: Vec<Estimate>,
    pub second: Vec<Estimate>,
    pub cross: Estimate,
    pub totals: EventTotals,
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

fn batch_estimate(batches: &[f64], width: f64) -> Estimate {
    let b = batches.len() as f64;
    let means: Vec<f64> = batches.iter().map(|s| s / width).collect();
    let avg = means.iter().sum::<f64>() / b;
    let var = means.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / (b - 1.0);
    Estimate { value: avg, mcse: (var / b).sqrt() }
}

/// Runs `kernel` from `start` for trajectory time `t_warm + t_total` (chain seed
/// `seed(base)`), integrating the piecewise-linear path exactly over each of `batches` equal
/// batches of [t_warm, t_warm + t_total]. Panics on a kernel error (a bound violation fails the
/// test).
pub fn time_averages<M, K>(
    model: &M,
    kernel: &mut K,
    start: &[f64],
    t_warm: f64,
    t_total: f64,
    batches: usize,
    base: u64,
) -> Averages
where
    M: Terms + ?Sized,
    K: PdmpKernel<M>,
{
    let d = model.dim();
    let mut rng = chain_rng(seed(base), 0);
    let mut state = kernel.init(model, start, &mut rng).unwrap();
    let width = t_total / batches as f64;
    let mut m1 = vec![vec![0.0; batches]; d];
    let mut m2 = vec![vec![0.0; batches]; d];
    let mut cross = vec![0.0; batches];
    let mut totals = EventTotals::default();
    loop {
        let s = kernel.step(model, &mut state, &mut rng).unwrap();
        totals.add(&s);
        let seg = state.trajectory().last_segment();
        let (mut lo, hi) = (seg.start_time.max(t_warm), seg.end_time().min(t_warm + t_total));
        while lo < hi {
            let mut b = (((lo - t_warm) / width) as usize).min(batches - 1);
            let mut end = (t_warm + (b + 1) as f64 * width).min(hi);
            // Rounding can put lo on its batch's right edge: move to the next batch.
            while end <= lo && b + 1 < batches {
                b += 1;
                end = (t_warm + (b + 1) as f64 * width).min(hi);
            }
            if b + 1 == batches {
                end = hi;
            }
            let (s0, s1) = (lo - seg.start_time, end - seg.start_time);
            // ∫ (x_j + v_j s)(x_k + v_k s) ds = x_j x_k s + (x_j v_k + x_k v_j) s²/2 + v_j v_k s³/3.
            let f = |xj: f64, vj: f64, xk: f64, vk: f64, s: f64| {
                xj * xk * s + 0.5 * (xj * vk + xk * vj) * s * s + vj * vk * s * s * s / 3.0
            };
            for j in 0..d {
                let (x, v) = (seg.position[j], seg.velocity[j]);
                m1[j][b] += f(x, v, 1.0, 0.0, s1) - f(x, v, 1.0, 0.0, s0);
                m2[j][b] += f(x, v, x, v, s1) - f(x, v, x, v, s0);
            }
            let (x0, v0, x1, v1) =
                (seg.position[0], seg.velocity[0], seg.position[1], seg.velocity[1]);
            cross[b] += f(x0, v0, x1, v1, s1) - f(x0, v0, x1, v1, s0);
            lo = end;
        }
        if seg.end_time() >= t_warm + t_total {
            break;
        }
    }
    Averages {
        mean: m1.iter().map(|b| batch_estimate(b, width)).collect(),
        second: m2.iter().map(|b| batch_estimate(b, width)).collect(),
        cross: batch_estimate(&cross, width),
        totals,
        time: t_warm + t_total,
        batches,
    }
}

/// z = (estimate − truth)/MCSE.
pub fn z(e: Estimate, truth: f64) -> f64 {
    (e.value - truth) / e.mcse
}

/// Checks every mean, second moment and the cross moment x_0x_1 against N(mean, cov) within
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
    check("E[x_0 x_1]".into(), avg.cross, cov[1] + mean[0] * mean[1]);
    worst
}
