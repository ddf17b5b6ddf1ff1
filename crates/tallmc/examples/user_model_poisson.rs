//! A model of your own: Poisson regression with a log link, written from scratch against the
//! core traits of `tallmc-core` (no library model is used), then sampled with full-data HMC and
//! with perturbed HMC with energy-conserving subsampling (HMC-ECS).
//!
//! ```sh
//! cargo run --release -p tallmc --example user_model_poisson          # seed 1
//! cargo run --release -p tallmc --example user_model_poisson -- 7     # another seed
//! ```
//!
//! # The model
//!
//! Counts y_i ∈ {0, 1, 2, …} with covariates x_i ∈ ℝ^d (x_i1 = 1 for the intercept):
//!
//! ```text
//! y_i | θ ~ Poisson(μ_i),   μ_i = exp(η_i),   η_i = x_iᵀθ,   θ ~ N(0, σ₀² I).
//!
//! ℓ_i(θ)   = y_i η_i − exp(η_i) − log y_i!
//! ∇ℓ_i(θ)  = (y_i − μ_i) x_i
//! ∇²ℓ_i(θ) = −μ_i x_i x_iᵀ                     (a Hessian-vector product costs O(d))
//! log p(θ) = −‖θ‖² / (2σ₀²) + const,   ∇ log p = −θ/σ₀²,   ∇² log p = −I/σ₀².
//! ```
//!
//! # What each sampler needs
//!
//! * full-data HMC: `Terms + TermGradients + LogPrior`;
//! * the Laplace approximation (start and metric): `TermHessians + LogPriorHessian`;
//! * perturbed HMC-ECS with second-order Taylor control variates: `TermHessians +
//!   LogPriorHessian`, through the generic `HessianProducts` difference engine, which uses the
//!   model's per-datum gradients and Hessian-vector products. (A model that also implements
//!   `LinearPredictor` can use the cheaper rank-one engine of `HmcEcs::new`.)
//!
//! Cost is counted in per-datum evaluations (terms, gradients, Hessians), reported per run.

#![allow(clippy::print_stdout)]

use std::error::Error;
use std::fmt;

use rand_distr::{Distribution, Normal, Poisson};
use tallmc::prelude::*;

mod common;

/// Rows of the simulated data set.
pub const N: usize = 10_000;
/// Dimension of θ (intercept + 3 covariates).
pub const D: usize = 4;
/// The θ the data are simulated from.
pub const TRUE_THETA: [f64; D] = [0.5, 0.4, -0.3, 0.2];
/// Standard deviation of the simulated covariates.
pub const COVARIATE_SD: f64 = 0.5;
/// Prior standard deviation σ₀ of every coordinate of θ.
pub const PRIOR_SD: f64 = 10.0;

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// Why data were rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// No rows, or no columns.
    Empty,
    /// The design's length is not rows × d.
    Shape {
        /// Length of the design.
        design_len: usize,
        /// Number of responses.
        rows: usize,
        /// Number of columns d.
        dim: usize,
    },
    /// More rows than a u32 index can address.
    TooManyRows(usize),
    /// A response that is not a count (negative, fractional or not finite).
    NotACount {
        /// Row (0-based).
        row: usize,
        /// The value.
        value: f64,
    },
    /// A covariate that is not finite.
    NonFiniteCovariate {
        /// Row (0-based).
        row: usize,
        /// Column (0-based).
        column: usize,
        /// The value.
        value: f64,
    },
    /// A prior sd that is not finite and positive.
    PriorSd(f64),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "the data have no rows or no columns"),
            Self::Shape { design_len, rows, dim } => write!(
                f,
                "the design has {design_len} entries, expected rows × d = {rows} × {dim} = {}",
                rows * dim
            ),
            Self::TooManyRows(n) => write!(f, "{n} rows: at most {} are supported", u32::MAX),
            Self::NotACount { row, value } => {
                write!(f, "response y[{row}] = {value} is not a count (an integer ≥ 0)")
            }
            Self::NonFiniteCovariate { row, column, value } => {
                write!(f, "covariate x[{row}, {column}] = {value} is not finite")
            }
            Self::PriorSd(s) => write!(f, "prior sd {s} is not a finite number > 0"),
        }
    }
}

impl Error for ModelError {}

/// Bayesian Poisson regression with a log link (see the file's docs for the formulas).
#[derive(Debug, Clone)]
pub struct PoissonRegression {
    /// Design, row-major N × d.
    x: Vec<f64>,
    /// Counts.
    y: Vec<f64>,
    /// log y_i!, computed once.
    log_y_factorial: Vec<f64>,
    d: usize,
    prior_precision: f64,
}

impl PoissonRegression {
    /// The model of counts `y` on the design `x` (row-major, `y.len()` × `d`; put a column of
    /// ones in it for an intercept) with prior N(0, `prior_sd`² I). Rejects negative,
    /// fractional or non-finite counts and non-finite covariates.
    pub fn new(x: Vec<f64>, y: Vec<f64>, d: usize, prior_sd: f64) -> Result<Self, ModelError> {
        let rows = y.len();
        if rows == 0 || d == 0 {
            return Err(ModelError::Empty);
        }
        if x.len() != rows * d {
            return Err(ModelError::Shape { design_len: x.len(), rows, dim: d });
        }
        if u32::try_from(rows).is_err() {
            return Err(ModelError::TooManyRows(rows));
        }
        if !(prior_sd.is_finite() && prior_sd > 0.0) {
            return Err(ModelError::PriorSd(prior_sd));
        }
        for (row, &value) in y.iter().enumerate() {
            if !(value.is_finite() && value >= 0.0 && value.fract() == 0.0) {
                return Err(ModelError::NotACount { row, value });
            }
        }
        for (k, &value) in x.iter().enumerate() {
            if !value.is_finite() {
                return Err(ModelError::NonFiniteCovariate { row: k / d, column: k % d, value });
            }
        }
        // log y! = Σ_{j ≤ y} log j; counts are small, so the sum is exact enough and cheap.
        let log_y_factorial =
            y.iter().map(|&v| (2..=v as u64).map(|j| (j as f64).ln()).sum()).collect();
        Ok(Self { x, y, log_y_factorial, d, prior_precision: 1.0 / (prior_sd * prior_sd) })
    }

    fn row(&self, i: u32) -> &[f64] {
        let i = i as usize;
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// η_i = x_iᵀθ.
    fn eta(&self, theta: &[f64], i: u32) -> f64 {
        self.row(i).iter().zip(theta).map(|(a, b)| a * b).sum()
    }

    /// (ℓ_i(θ), μ_i) at η_i.
    fn term(&self, i: u32, eta: f64) -> (f64, f64) {
        let mu = eta.exp();
        let i = i as usize;
        (self.y[i] * eta - mu - self.log_y_factorial[i], mu)
    }
}

impl Terms for PoissonRegression {
    fn dim(&self) -> usize {
        self.d
    }

    fn num_terms(&self) -> usize {
        self.y.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = self.term(i, self.eta(theta, i)).0;
        }
    }
}

impl TermGradients for PoissonRegression {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let mut total = 0.0;
        for (o, &i) in out.iter_mut().zip(indices) {
            let (l, mu) = self.term(i, self.eta(theta, i));
            *o = l;
            total += l;
            let w = self.y[i as usize] - mu;
            for (g, xj) in grad_sum.iter_mut().zip(self.row(i)) {
                *g += w * xj;
            }
        }
        total
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        for ((o, &i), g) in out.iter_mut().zip(indices).zip(grads.chunks_exact_mut(self.d)) {
            let (l, mu) = self.term(i, self.eta(theta, i));
            *o = l;
            let w = self.y[i as usize] - mu;
            for (gj, xj) in g.iter_mut().zip(self.row(i)) {
                *gj = w * xj;
            }
        }
    }
}

impl TermHessians for PoissonRegression {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        for (&i, row) in indices.iter().zip(out.chunks_exact_mut(self.d)) {
            let x = self.row(i);
            let mu = self.eta(theta, i).exp();
            let xv: f64 = x.iter().zip(v).map(|(a, b)| a * b).sum();
            for (r, xj) in row.iter_mut().zip(x) {
                *r = -mu * xv * xj;
            }
        }
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let d = self.d;
        for &i in indices {
            let x = self.row(i);
            let mu = self.eta(theta, i).exp();
            for a in 0..d {
                for b in 0..d {
                    hess[a * d + b] -= mu * x[a] * x[b];
                }
            }
        }
    }
}

impl LogPrior for PoissonRegression {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        -0.5 * self.prior_precision * theta.iter().map(|t| t * t).sum::<f64>()
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        for (g, t) in grad.iter_mut().zip(theta) {
            *g -= self.prior_precision * t;
        }
        self.log_prior(theta)
    }
}

impl LogPriorHessian for PoissonRegression {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        for j in 0..self.d {
            hess[j * self.d + j] -= self.prior_precision;
        }
    }
}

impl ParameterNames for PoissonRegression {
    fn parameter_names(&self) -> Vec<String> {
        std::iter::once("intercept".to_owned())
            .chain((1..self.d).map(|j| format!("beta.{j}")))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Data and runs
// ---------------------------------------------------------------------------------------------

/// Simulated data: x_i = (1, z_i1, …, z_i,d−1) with z_ij ~ N(0, [`COVARIATE_SD`]²) i.i.d., and
/// y_i ~ Poisson(exp(x_iᵀ[`TRUE_THETA`])), all drawn in row order from tallmc's set-up stream
/// of `seed` (ChaCha8, stream 0). Returns (design row-major `n` × [`D`], counts).
pub fn simulate(n: usize, seed: u64) -> Result<(Vec<f64>, Vec<f64>), Box<dyn Error>> {
    let covariate = Normal::new(0.0, COVARIATE_SD)?;
    common::simulate_regression(n, &TRUE_THETA, seed, covariate, |eta, rng| {
        Ok(Poisson::new(eta.exp())?.sample(rng))
    })
}

/// Both runs on one data set.
#[derive(Debug, Clone)]
pub struct Report {
    /// Parameter names.
    pub names: Vec<String>,
    /// Full-data HMC.
    pub hmc: RunSummary,
    /// Perturbed HMC-ECS with second-order control variates.
    pub ecs: RunSummary,
}

/// Simulates the data from `seed` and samples the posterior with full-data HMC and perturbed
/// HMC-ECS (4 chains each, started over-dispersed around the Laplace mode).
pub fn run(seed: u64) -> Result<Report, Box<dyn Error>> {
    let (x, y) = simulate(N, seed)?;
    let model = PoissonRegression::new(x, y, D, PRIOR_SD)?;
    let names = model.parameter_names();

    // Posterior mode θ* and Laplace covariance: the start, HMC's metric and ECS's centre.
    let laplace = laplace_approximation(&model, &[0.0; D], NewtonOptions::default())?;
    let inits = laplace.dispersed_positions(4, 2.0, seed)?;

    let hmc_config = HmcConfig::with_fixed_metric(laplace.dense_metric()?);
    let hmc_run = RunConfig::new(300, 2000, 4, seed.wrapping_add(1));
    let hmc = sample_in_memory(&model, hmc_run, &inits, &Hmc::new(hmc_config)?)?;

    // m is tuned at θ* for V[ℓ̂] ≤ 1; θ* is re-set during warmup (the paper's schedule).
    let ecs_config = HmcEcsConfig { center: Some(laplace.mode.clone()), ..HmcEcsConfig::default() };
    let ecs_run = RunConfig::new(1000, 4000, 4, seed.wrapping_add(2));
    let ecs = sample_in_memory(
        &model,
        ecs_run,
        &inits,
        &HmcEcs::with_engine(ecs_config, HessianProducts::new(D, 1))?,
    )?;

    Ok(Report { hmc: RunSummary::of(&names, &hmc)?, ecs: RunSummary::of(&names, &ecs)?, names })
}

/// Prints the summary table and the evaluation counts.
pub fn print(report: &Report) {
    println!("Poisson regression (log link), n = {N}, d = {D}: a model defined outside tallmc\n");
    println!(
        "{:<10} {:>7} | {:>8} {:>7} {:>6} {:>6} | {:>8} {:>7} {:>6} {:>6}",
        "", "true", "HMC mean", "sd", "ESS", "R-hat", "ECS mean", "sd", "ESS", "R-hat"
    );
    for (j, name) in report.names.iter().enumerate() {
        let (h, e) = (&report.hmc.summaries[j], &report.ecs.summaries[j]);
        println!(
            "{name:<10} {:>7.3} | {:>8.4} {:>7.4} {:>6.0} {:>6.3} | {:>8.4} {:>7.4} {:>6.0} {:>6.3}",
            TRUE_THETA[j], h.mean, h.sd, h.ess_bulk, h.rhat, e.mean, e.sd, e.ess_bulk, e.rhat
        );
    }
    println!("\nper-datum evaluations (all chains, set-up and warmup included):");
    for (label, r) in [("full-data HMC", &report.hmc), ("HMC-ECS", &report.ecs)] {
        println!(
            "  {label:<14} {:12} ({} draws, {:.0} data points per iteration, acceptance {:.2}, \
             {} divergences after warmup)",
            r.evals, r.draws, r.batch, r.accept, r.divergences
        );
    }
}

/// `user_model_poisson [SEED]` (default seed 1).
fn main() -> Result<(), Box<dyn Error>> {
    print(&run(common::seed_arg()?)?);
    Ok(())
}
