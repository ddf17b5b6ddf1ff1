//! What the four parts share: chains run to an evaluation budget, log-spaced checkpoints, and the
//! importance-sampling ground truth of the logistic posteriors.

use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::Serialize;
use tallmc_bounds::{AusterityConfig, AusterityTest};
use tallmc_core::linalg::Cholesky;
use tallmc_core::rng::{ChainRng, chain_rng};
use tallmc_core::{Chain, Kernel, LogPrior, StepStats, Terms};
use tallmc_samplers::{Laplace, StatsOf};

use crate::{Error, Result, Task};

/// Austerity's sequential t-test at level `epsilon` with mini-batches of `batch` (a bad
/// setting is a suite error, saying it came from the mean test).
pub(crate) fn austerity_test(epsilon: f64, batch: usize) -> Result<AusterityTest> {
    AusterityTest::new(AusterityConfig::new(epsilon, batch))
        .map_err(|e| Error::Core(e.context("mean test")))
}

/// Every pair (i, k) with i < `outer` and k < `inner`, i major: the (setting, chain) jobs of a
/// part's parallel runs.
pub(crate) fn index_pairs(outer: usize, inner: usize) -> Vec<(usize, usize)> {
    (0..outer).flat_map(|i| (0..inner).map(move |k| (i, k))).collect()
}

/// `n` ≥ 2 log-spaced values from `hi · 10^−decades` to `hi`.
pub(crate) fn log_grid(hi: f64, decades: f64, n: usize) -> Vec<f64> {
    let n = n.max(2);
    (0..n).map(|k| hi * 10f64.powf(-decades * (n - 1 - k) as f64 / (n - 1) as f64)).collect()
}

/// Numerically stable logistic function.
#[inline]
pub(crate) fn sigmoid(s: f64) -> f64 {
    if s >= 0.0 {
        1.0 / (1.0 + (-s).exp())
    } else {
        let e = s.exp();
        e / (1.0 + e)
    }
}

/// Steps and per-datum evaluations of a chain run to a stopping rule or a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ChainTotals {
    /// Transitions made.
    pub steps: u64,
    /// Per-datum evaluations made (all kinds), counted from the kernel's stats.
    pub evals: u64,
}

/// Evaluations reported to the progress bar at once.
const PROGRESS_CHUNK: u64 = 1 << 22;

/// Runs a chain of `kernel` from `init` (no warmup: every step is observed) until `stop(steps, evals)`
/// holds, calling `observe(position, stats, evals)` after every step with the cumulative
/// evaluations. Stops after `max_steps` steps in any case (a kernel reporting no evaluations
/// cannot loop forever). Progress: `task` advances by the evaluations made.
pub(crate) fn run_until<M, K, S, F>(
    model: &M, kernel: &K, init: &[f64], rng: &mut ChainRng, max_steps: u64, task: &dyn Task,
    stop: S, mut observe: F,
) -> Result<ChainTotals>
where
    M: ?Sized,
    K: Kernel<M>,
    S: Fn(u64, u64) -> bool,
    F: FnMut(&[f64], &StatsOf<K, M>, u64),
{
    let mut chain = kernel.build_chain(model, init, rng)?;
    let mut t = ChainTotals::default();
    let mut unreported = 0;
    while t.steps < max_steps && !stop(t.steps, t.evals) {
        let stats = chain.step(model, rng)?;
        let e = stats.evals().total();
        t.steps += 1;
        t.evals += e;
        unreported += e;
        observe(chain.position(), &stats, t.evals);
        if unreported >= PROGRESS_CHUNK {
            task.advance(unreported);
            unreported = 0;
        }
    }
    task.advance(unreported);
    Ok(t)
}

/// Runs to an evaluation budget: [`run_until`] stopping once `budget` evaluations are made.
pub(crate) fn run_to_budget<M, K, F>(
    model: &M, kernel: &K, init: &[f64], rng: &mut ChainRng, budget: u64, task: &dyn Task,
    observe: F,
) -> Result<ChainTotals>
where
    M: ?Sized,
    K: Kernel<M>,
    F: FnMut(&[f64], &StatsOf<K, M>, u64),
{
    run_until(model, kernel, init, rng, budget.max(1), task, |_, e| e >= budget, observe)
}

/// Checkpoint bookkeeping: which of a sorted list of evaluation budgets have been passed.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoints {
    grid: Vec<f64>,
    next: usize,
}

impl Checkpoints {
    /// Checkpoints at the (increasing) budgets `grid`.
    pub(crate) fn new(grid: Vec<f64>) -> Self {
        Self { grid, next: 0 }
    }

    /// How many checkpoints `evals` has newly passed (each is recorded with the state after
    /// the step that passed it).
    pub(crate) fn passed(&mut self, evals: u64) -> usize {
        let start = self.next;
        while self.next < self.grid.len() && evals as f64 >= self.grid[self.next] {
            self.next += 1;
        }
        self.next - start
    }
}

/// i.i.d. draws from the Laplace approximation N(θ*, Σ_L) with their importance weights
/// π(θ)/q(θ): a ground truth for posterior expectations that is exact in the limit, made of
/// independent draws (so its Monte Carlo error is the usual delta-method one), at one full-data
/// pass per draw. On tall-data posteriors the Laplace approximation is close, so the weights
/// are nearly equal (the effective sample size is reported).
#[derive(Debug, Clone)]
pub struct ImportanceSample {
    /// Dimension d.
    pub dim: usize,
    /// Draws, row-major (n × d).
    pub draws: Vec<f64>,
    /// Self-normalized weights, scaled to mean 1.
    pub weights: Vec<f64>,
    /// Effective sample size (Σw)²/Σw².
    pub ess: f64,
    /// Standard deviation of the log-weights.
    pub log_weight_sd: f64,
    /// Per-datum evaluations made (N per draw).
    pub evals: u64,
}

/// Posterior moments from [`ImportanceSample::moments`].
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    /// Means.
    pub mean: Vec<f64>,
    /// Variances.
    pub variance: Vec<f64>,
    /// MCSEs of the variances.
    pub variance_mcse: Vec<f64>,
}

/// Draws per parallel block (block b uses chain stream `stream_base + b`).
const IS_BLOCK: usize = 64;

impl ImportanceSample {
    /// `n` weighted draws from the Laplace approximation of `model`'s posterior; block b of
    /// 64 draws uses `chain_rng(seed, stream_base + b)`.
    pub fn draw<M: Terms + LogPrior + Sync>(
        model: &M, laplace: &Laplace, n: usize, seed: u64, stream_base: usize, task: &dyn Task,
    ) -> Result<Self> {
        let d = laplace.mode.len();
        let factor = Cholesky::new(&laplace.covariance, d, "Laplace covariance")?;
        let big_n = model.num_terms();
        let all: Vec<u32> = (0..big_n as u32).collect();
        let blocks: Vec<(Vec<f64>, Vec<f64>)> = (0..n.div_ceil(IS_BLOCK))
            .into_par_iter()
            .map(|b| {
                let mut rng = chain_rng(seed, stream_base + b);
                let k = IS_BLOCK.min(n - b * IS_BLOCK);
                let (mut th, mut lw) = (Vec::with_capacity(k * d), Vec::with_capacity(k));
                let (mut z, mut lz, mut out) = (vec![0.0; d], vec![0.0; d], vec![0.0; big_n]);
                for _ in 0..k {
                    z.iter_mut().for_each(|v| *v = StandardNormal.sample(&mut rng));
                    factor.mul_lower(&z, &mut lz);
                    let theta: Vec<f64> =
                        laplace.mode.iter().zip(&lz).map(|(m, e)| m + e).collect();
                    model.log_terms(&theta, &all, &mut out);
                    let log_post = out.iter().sum::<f64>() + model.log_prior(&theta);
                    let log_q = -0.5 * z.iter().map(|v| v * v).sum::<f64>();
                    lw.push(log_post - log_q);
                    th.extend_from_slice(&theta);
                }
                task.advance((k * big_n) as u64);
                (th, lw)
            })
            .collect();
        let mut draws = Vec::with_capacity(n * d);
        let mut log_w = Vec::with_capacity(n);
        for (t, l) in blocks {
            draws.extend(t);
            log_w.extend(l);
        }
        if let Some(bad) = log_w.iter().position(|l| !l.is_finite()) {
            return Err(Error::Core(tallmc_core::Error::NonFiniteLogDensity {
                what: format!("the posterior at importance draw {bad}"),
                value: log_w[bad],
            }));
        }
        let max = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = log_w.iter().map(|l| (l - max).exp()).collect();
        let (s, s2) = (w.iter().sum::<f64>(), w.iter().map(|x| x * x).sum::<f64>());
        let mean_w = s / n as f64;
        let mean_lw = log_w.iter().sum::<f64>() / n as f64;
        let log_weight_sd =
            (log_w.iter().map(|l| (l - mean_lw).powi(2)).sum::<f64>() / n as f64).sqrt();
        Ok(Self {
            dim: d,
            draws,
            weights: w.iter().map(|x| x / mean_w).collect(),
            ess: s * s / s2,
            log_weight_sd,
            evals: (n * big_n) as u64,
        })
    }

    /// Number of draws.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Whether there are no draws.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Posterior predictive probabilities E_π σ(x*ᵀθ) of the rows of `x` (row-major, d
    /// columns) and their Monte Carlo standard errors (delta method for the self-normalized
    /// estimator: √(Σ w̄_i² (σ_i − p̂)²)/n).
    pub fn predictive(&self, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let d = self.dim;
        let n = self.len() as f64;
        x.par_chunks_exact(d)
            .map(|row| {
                let s: Vec<f64> = self
                    .draws
                    .chunks_exact(d)
                    .map(|t| sigmoid(row.iter().zip(t).map(|(a, b)| a * b).sum()))
                    .collect();
                let p = s.iter().zip(&self.weights).map(|(s, w)| s * w).sum::<f64>() / n;
                let v =
                    s.iter().zip(&self.weights).map(|(s, w)| (w * (s - p)).powi(2)).sum::<f64>()
                        / (n * n);
                (p, v.sqrt())
            })
            .unzip()
    }

    /// Posterior means and variances of every coordinate, with the variances' Monte Carlo
    /// standard errors.
    ///
    /// With a_i = θ_ij − θ*_j and S = (Σ_L)_jj, whose expectations under the Laplace
    /// approximation q are known (E_q a = 0, E_q a² = S), the self-normalized estimates use them
    /// as control variates:
    ///
    /// ```text
    /// Ê a  = mean(w̄ a)  − mean(a),     Ê a² = mean(w̄ a²) − (mean(a²) − S),     v̂ = Ê a² − (Ê a)²,
    /// ```
    ///
    /// consistent for any q, and far less noisy than plain importance sampling when the weights
    /// are nearly equal (their error is driven by w̄ − 1, not by the spread of a²). The MCSE is
    /// √(mean ψ²/n) with the influence ψ_i = w̄_i(a_i² − Ê a²) − (a_i² − S) − 2 Ê a
    /// [w̄_i(a_i − Ê a) − a_i].
    pub fn moments(&self, laplace: &Laplace) -> Moments {
        let d = self.dim;
        let n = self.len() as f64;
        let per: Vec<(f64, f64, f64)> = (0..d)
            .map(|j| {
                let s = laplace.covariance[j * d + j];
                let a: Vec<f64> =
                    self.draws.chunks_exact(d).map(|t| t[j] - laplace.mode[j]).collect();
                let w = &self.weights;
                let mean = |f: &dyn Fn(usize) -> f64| (0..a.len()).map(f).sum::<f64>() / n;
                let ea = mean(&|i| w[i] * a[i]) - mean(&|i| a[i]);
                let ea2 = mean(&|i| w[i] * a[i] * a[i]) - (mean(&|i| a[i] * a[i]) - s);
                let v = ea2 - ea * ea;
                let psi2 = mean(&|i| {
                    let p2 = w[i] * (a[i] * a[i] - ea2) - (a[i] * a[i] - s);
                    let p1 = w[i] * (a[i] - ea) - a[i];
                    (p2 - 2.0 * ea * p1).powi(2)
                });
                (laplace.mode[j] + ea, v, (psi2 / n).sqrt())
            })
            .collect();
        Moments {
            mean: per.iter().map(|p| p.0).collect(),
            variance: per.iter().map(|p| p.1).collect(),
            variance_mcse: per.iter().map(|p| p.2).collect(),
        }
    }
}

/// The smallest eigenvalue of a symmetric positive definite d × d matrix (row-major), by
/// inverse iteration with its Cholesky factor (200 iterations from the all-ones vector).
pub(crate) fn smallest_eigenvalue(a: &[f64], d: usize) -> Result<f64> {
    let factor = Cholesky::new(a, d, "Laplace covariance")?;
    let mut v = vec![1.0 / (d as f64).sqrt(); d];
    let mut growth = 1.0;
    for _ in 0..200 {
        factor.solve_in_place(&mut v);
        growth = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= growth);
    }
    Ok(1.0 / growth)
}

/// Least-squares slope of log y against log x (points with a non-positive coordinate skipped);
/// NaN with fewer than two points.
pub(crate) fn log_log_slope(x: &[f64], y: &[f64]) -> f64 {
    let pts: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .filter(|(a, b)| **a > 0.0 && **b > 0.0)
        .map(|(a, b)| (a.ln(), b.ln()))
        .collect();
    if pts.len() < 2 {
        return f64::NAN;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>();
    let sxx = pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
    sxy / sxx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_checkpoints_and_slopes() {
        let g = log_grid(1000.0, 2.0, 3);
        assert!((g[0] - 10.0).abs() < 1e-9 && (g[1] - 100.0).abs() < 1e-9 && g[2] == 1000.0);
        let mut c = Checkpoints::new(g);
        assert_eq!(c.passed(5), 0);
        assert_eq!(c.passed(150), 2);
        assert_eq!(c.passed(999), 0);
        assert_eq!(c.passed(5000), 1);
        assert_eq!(c.passed(9000), 0);
        let x = [1.0, 10.0, 100.0];
        let y = [1.0, 0.1, 0.01];
        assert!((log_log_slope(&x, &y) + 1.0).abs() < 1e-12);
        assert!(log_log_slope(&x[..1], &y[..1]).is_nan());
    }

    #[test]
    fn smallest_eigenvalue_of_a_known_matrix() {
        // [[2, 1], [1, 2]] has eigenvalues 1 and 3.
        let l = smallest_eigenvalue(&[2.0, 1.0, 1.0, 2.0], 2).unwrap();
        assert!((l - 1.0).abs() < 1e-10, "{l}");
    }
}
