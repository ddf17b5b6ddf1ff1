//! Starting points: the posterior mode and the Laplace approximation, and initial positions for
//! chains.
//!
//! [`laplace_approximation`] finds θ* = argmax log π by damped Newton steps on the full data,
//! then returns θ* and Σ_L = (−∇² log π(θ*))⁻¹. Tall-data posteriors are close to Gaussian, so
//! Σ_L is an excellent initial metric / proposal covariance and θ* a good place to start.

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::linalg::{Cholesky, dot};
use tallmc_core::rng::setup_rng;
use tallmc_core::{
    Error, EvalCounts, FullData, LogPriorHessian, Parallelism, Result, TermHessians,
};
use tallmc_integrators::Metric;

use thinned::Thinned;

mod thinned;

/// Settings of Newton's method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonOptions {
    /// Maximum Newton iterations.
    pub max_iterations: usize,
    /// Stop when half the Newton decrement gᵀ(−H)⁻¹g/2 falls below this.
    pub tolerance: f64,
    /// Threads for the full-data sums.
    pub parallelism: Parallelism,
    /// Warm start: with `Some(m)` and N ≥ 4m, Newton's method first runs on about m evenly
    /// spaced terms weighted by N/m (cost: m per pass) and the full-data iterations start from
    /// that mode, which saves most of their passes over the data on tall data. The result is
    /// still the full-data mode to `tolerance`, but not bit for bit the one reached from
    /// `start`. `None` (the default) starts the full-data iterations at `start`.
    pub warm_start_rows: Option<usize>,
}

impl NewtonOptions {
    /// The warm start the CLI uses: 100,000 evenly spaced rows (a pass over them costs about
    /// what 1 % of a 10⁷-row pass does).
    pub const WARM_START_ROWS: usize = 100_000;
}

impl Default for NewtonOptions {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            tolerance: 1e-10,
            parallelism: Parallelism::Rayon,
            warm_start_rows: None,
        }
    }
}

/// The mode of the posterior and the Gaussian approximation around it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Laplace {
    /// θ* = argmax log π(θ).
    pub mode: Vec<f64>,
    /// Σ_L = (−∇² log π(θ*))⁻¹, row-major d × d.
    pub covariance: Vec<f64>,
    /// log π(θ*).
    pub log_density: f64,
    /// Newton iterations made.
    pub iterations: usize,
    /// Per-datum evaluations made.
    pub evals: EvalCounts,
}

impl Laplace {
    /// Posterior standard deviations under the approximation, √diag Σ_L.
    pub fn sds(&self) -> Vec<f64> {
        let d = self.mode.len();
        (0..d).map(|j| self.covariance[j * d + j].sqrt()).collect()
    }

    /// The dense metric Σ = Σ_L (the inverse mass matrix that makes the approximation's
    /// posterior a standard normal), for [`HmcConfig::with_fixed_metric`](crate::HmcConfig::with_fixed_metric)
    /// and the other kernels that take a metric.
    ///
    /// # Errors
    /// As [`Metric::dense`]: Σ_L has a non-finite entry or is not positive definite.
    pub fn dense_metric(&self) -> Result<Metric> {
        Metric::dense(self.covariance.clone(), self.mode.len())
    }
}

/// The rows [`laplace_approximation`]'s warm start reads on a model of `n` rows with
/// `options` (evenly spaced, from row 0, in order), or `None` when it makes no warm start: what
/// a driver whose rows live elsewhere fetches before the mode search, so that its warm start
/// reads the same rows as a local one.
pub fn warm_start_indices(n: usize, options: &NewtonOptions) -> Option<Vec<u32>> {
    let rows = options.warm_start_rows.filter(|&rows| rows > 0 && n / 4 >= rows)?;
    let (stride, len) = Thinned::<dyn tallmc_core::Terms>::stride_and_len(n, rows);
    Some((0..len as u32).map(|k| k * stride).collect())
}

/// Finds the posterior mode from `start` by Newton's method with Levenberg damping and
/// backtracking line search, and returns the Laplace approximation there.
///
/// Cost per iteration: N terms and gradients per line-search trial, N Hessian evaluations; one
/// more Hessian pass at the end only if the last step was not followed by a Hessian there.
pub fn laplace_approximation<M>(model: &M, start: &[f64], options: NewtonOptions) -> Result<Laplace>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let n = model.num_terms();
    tallmc_core::error::check_finite_vector("Newton start", start, model.dim())?;
    if let Some(rows) = options.warm_start_rows
        && rows > 0
        && n / 4 >= rows
    {
        let thinned = Thinned::new(model, rows);
        // A thinned problem Newton cannot solve (e.g. separable rows), or a warm mode where the
        // full posterior is not finite, only loses the warm start.
        if let Ok(warm) = newton(&thinned, start, options)
            && let Ok(mut laplace) = newton(model, &warm.mode, options)
        {
            laplace.evals += warm.evals;
            return Ok(laplace);
        }
    }
    newton(model, start, options)
}

/// Newton's method from `start` on `model` (no warm start): the body of
/// [`laplace_approximation`].
fn newton<M>(model: &M, start: &[f64], options: NewtonOptions) -> Result<Laplace>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let d = model.dim();
    let n = model.num_terms();
    let mut evals = EvalCounts::ZERO;
    let mut theta = start.to_vec();
    let mut full = FullData::for_model(model, options.parallelism);
    let mut grad = vec![0.0; d];
    let mut f = full.log_posterior_grad(model, &theta, &mut grad);
    evals += EvalCounts::terms_and_gradients(n);
    if !f.is_finite() {
        return Err(Error::NonFiniteLogDensity {
            what: format!("the Newton start {start:?}"),
            value: f,
        });
    }
    let mut neg_hess = vec![0.0; d * d];
    let (mut trial, mut trial_grad, mut step) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    let mut iterations = 0;
    // Whether `neg_hess` holds −∇²log π at the current θ (undamped: damping works on a copy),
    // so the covariance at the end needs no further pass.
    let mut hessian_at_theta = false;
    let negative_hessian =
        |full: &FullData, theta: &[f64], out: &mut [f64], evals: &mut EvalCounts| {
            full.hessian(model, theta, out);
            model.add_log_prior_hessian(theta, out);
            out.iter_mut().for_each(|h| *h = -*h);
            *evals += EvalCounts::hessians(n);
        };
    while iterations < options.max_iterations {
        iterations += 1;
        negative_hessian(&full, &theta, &mut neg_hess, &mut evals);
        hessian_at_theta = true;
        // Levenberg damping until −H + μI is positive definite.
        let scale = (0..d).map(|j| neg_hess[j * d + j].abs()).fold(1e-12, f64::max);
        let mut mu = 0.0;
        let factor = loop {
            let mut damped = neg_hess.clone();
            (0..d).for_each(|j| damped[j * d + j] += mu);
            match Cholesky::new(&damped, d, "negative Hessian of the log posterior") {
                Ok(c) => break c,
                Err(_) if mu < 1e12 * scale => {
                    mu = if mu == 0.0 { 1e-8 * scale } else { 10.0 * mu }
                }
                Err(e) => return Err(e),
            }
        };
        step.copy_from_slice(&grad);
        factor.solve_in_place(&mut step);
        let decrement = dot(&grad, &step);
        if decrement / 2.0 < options.tolerance {
            break;
        }
        let mut t = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            for j in 0..d {
                trial[j] = theta[j] + t * step[j];
            }
            let ft = full.log_posterior_grad(model, &trial, &mut trial_grad);
            evals += EvalCounts::terms_and_gradients(n);
            if ft.is_finite() && ft >= f + 1e-4 * t * decrement {
                accepted = Some(ft);
                break;
            }
            t *= 0.5;
        }
        let Some(ft) = accepted else { break };
        // The accepted trial's value and gradient are those at the new θ (a pass computes them
        // deterministically), so they are reused, not recomputed.
        theta.copy_from_slice(&trial);
        grad.copy_from_slice(&trial_grad);
        f = ft;
        hessian_at_theta = false;
    }
    if !hessian_at_theta {
        negative_hessian(&full, &theta, &mut neg_hess, &mut evals);
    }
    let factor = Cholesky::new(&neg_hess, d, "negative Hessian of the log posterior at the mode")?;
    Ok(Laplace { mode: theta, covariance: factor.inverse(), log_density: f, iterations, evals })
}

/// How to choose the chains' initial positions.
#[derive(Debug, Clone, PartialEq)]
pub enum InitStrategy {
    /// The same given position for every chain.
    Given(Vec<f64>),
    /// Independent draws from U(−r, r)^d (Stan's default with r = 2).
    Uniform {
        /// Half-width r.
        radius: f64,
    },
    /// The posterior mode θ* for every chain.
    Mode,
    /// θ* + s·L z with Σ_L = L Lᵀ and z ~ N(0, I): over-dispersed draws around the mode, which
    /// make R-hat meaningful (the peer benchmarks use s = 2).
    DispersedMode {
        /// Dispersion s.
        scale: f64,
    },
}

/// Initial positions, and the Laplace approximation when one was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Initialization {
    /// One position per chain.
    pub positions: Vec<Vec<f64>>,
    /// The Laplace approximation (for `Mode` and `DispersedMode`).
    pub laplace: Option<Laplace>,
}

/// `num` independent draws from U(−r, r)^d, from the set-up stream of `seed`.
pub fn uniform_positions(dim: usize, num: usize, radius: f64, seed: u64) -> Result<Vec<Vec<f64>>> {
    tallmc_core::error::check_positive("initial radius", radius)?;
    let mut rng = setup_rng(seed);
    Ok((0..num).map(|_| (0..dim).map(|_| rng.random_range(-radius..radius)).collect()).collect())
}

impl Laplace {
    /// `num` over-dispersed positions θ* + s·L z (Σ_L = L Lᵀ, z ~ N(0, I)) from the set-up
    /// stream of `seed`; s = 0 gives the mode `num` times.
    pub fn dispersed_positions(&self, num: usize, scale: f64, seed: u64) -> Result<Vec<Vec<f64>>> {
        if !(scale.is_finite() && scale >= 0.0) {
            return Err(Error::invalid("dispersion scale", scale, "a finite number ≥ 0"));
        }
        let d = self.mode.len();
        let factor = Cholesky::new(&self.covariance, d, "Laplace covariance")?;
        let mut rng = setup_rng(seed);
        let (mut z, mut lz) = (vec![0.0; d], vec![0.0; d]);
        Ok((0..num)
            .map(|_| {
                z.iter_mut().for_each(|x| *x = StandardNormal.sample(&mut rng));
                factor.mul_lower(&z, &mut lz);
                self.mode.iter().zip(&lz).map(|(m, e)| m + scale * e).collect()
            })
            .collect())
    }
}

/// Computes initial positions for `num_chains` chains. Random draws come from the set-up
/// stream of `seed` ([`setup_rng`]). `Mode` and `DispersedMode` start Newton's method at 0.
pub fn initialize<M>(
    model: &M, strategy: &InitStrategy, num_chains: usize, seed: u64, options: NewtonOptions,
) -> Result<Initialization>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let d = model.dim();
    match strategy {
        InitStrategy::Given(x) => {
            tallmc_core::error::check_finite_vector("initial position", x, d)?;
            Ok(Initialization { positions: vec![x.clone(); num_chains], laplace: None })
        }
        InitStrategy::Uniform { radius } => Ok(Initialization {
            positions: uniform_positions(d, num_chains, *radius, seed)?,
            laplace: None,
        }),
        InitStrategy::Mode | InitStrategy::DispersedMode { .. } => {
            let laplace = laplace_approximation(model, &vec![0.0; d], options)?;
            let scale = match strategy {
                InitStrategy::DispersedMode { scale } => *scale,
                _ => 0.0,
            };
            let positions = laplace.dispersed_positions(num_chains, scale, seed)?;
            Ok(Initialization { positions, laplace: Some(laplace) })
        }
    }
}
