//! Fig. 4 of BDH 2014: the N(μ, σ²) toy where Austerity's t-test fails, and the exactness
//! check of the minibatch kernels.
//!
//! **Model.** y_i ~ N(μ, σ²) with flat priors on μ and τ = log σ ([`Gaussian`]), fitted to
//! n = 10⁵ draws from N(0, 0.1²) ([`synthetic::confidence_gaussian`]) and from logN(0, 2)
//! (log-variance 2, [`synthetic::confidence_lognormal`]).
//!
//! **Closed-form posterior** ([`ClosedForm`]). With ȳ the sample mean and S = Σ(y_i − ȳ)²,
//! log π(μ, τ) = −nτ − [S + n(ȳ − μ)²] e^{−2τ}/2 + const. Integrating μ out (a Gaussian integral
//! worth √(2π) e^τ/√n) leaves log π(τ) = −(n − 1)τ − S e^{−2τ}/2 + const, i.e.
//! π(σ) ∝ σ^{−n} exp(−S/(2σ²)) and, with v = σ², π(v) ∝ v^{−(n+1)/2} exp(−S/(2v)):
//! an inverse-gamma((n − 1)/2, S/2), that is **S/σ² ~ χ²_{n−1}**. Given σ, μ ~ N(ȳ, σ²/n), so
//! marginally μ = ȳ + (s/√n) T_{n−1} with s² = S/(n − 1): mean ȳ, sd (s/√n)√((n − 1)/(n − 3)).
//! The moments of σ are computed by quadrature of π(τ) on a grid of ±12 posterior sds
//! (trapezoid rule: exponentially accurate for this smooth, rapidly decaying integrand).
//!
//! **Kernels.** Exact MH is the full-data [`RandomWalkMetropolis`](tallmc_samplers::RandomWalkMetropolis) (N evaluations per
//! iteration); the approximate kernels are [`MinibatchMh`](tallmc_samplers::MinibatchMh) with [`AusterityTest`](tallmc_bounds::AusterityTest) (ε = 0.05,
//! mini-batch 500, first batch 2 — Fig. 4(a, c) — or 500 — Fig. 4(b)) and with
//! [`ConfidenceTest`](tallmc_bounds::ConfidenceTest) (empirical Bernstein–Serfling, δ = 0.01, p = 2, γ = 2, first batch 100,
//! range 2·C(θ, θ′) from the model's exact term bound). Every kernel uses the same proposal: a
//! Gaussian random walk with the Laplace covariance as shape, its scale tuned during warmup by
//! dual averaging towards acceptance 0.5 (the paper's target in d ≤ 2) and then frozen. (The
//! paper uses adaptive Metropolis; on this 2-d, nearly Gaussian posterior the Laplace
//! covariance *is* the shape AM would learn, and freezing it after warmup keeps every chain a
//! time-homogeneous MH chain.) Four chains per kernel start at over-dispersed points
//! (mode + 2 × a Laplace draw).
//!
//! **Exactness** ([`Exactness`]): with the same seed, [`MinibatchMh`](tallmc_samplers::MinibatchMh) with Austerity at ε = 0
//! and with the confidence test at δ = 10⁻³⁰⁰ must produce the same chain as with
//! [`ExactTest`](tallmc_bounds::ExactTest), bit for bit, warmup included: the kernel draws proposals and uniforms from the
//! chain's stream and subsamples from a separate one, so a test that reaches the exact decision
//! changes nothing else.

mod claims;
mod closed_form;
mod figures;
mod report;
mod run;
mod summary;

use serde::Serialize;
use tallmc_diagnostics::Summary;
use tallmc_models::{Gaussian, synthetic};

use super::DATA_SEED;
use crate::Result;
use crate::figure::Figure;
use crate::part::{Claim, Part};
use crate::report::Report;

pub use claims::{
    EXACTNESS_ACCEPT, MAX_RHAT, MIN_GAUSSIAN_SHIFT, MIN_LOGNORMAL_BIAS, WHOLE_DATA_FRACTION,
};
pub use closed_form::ClosedForm;
pub use run::compute;

/// Rows of each toy data set (the paper's n).
pub const TOY_N: usize = 100_000;
/// Target acceptance of the random-walk scale tuning (the paper's, for d ≤ 2).
pub const TARGET_ACCEPT: f64 = 0.5;
/// Austerity's level ε.
pub const AUSTERITY_EPSILON: f64 = 0.05;
/// Austerity's mini-batch size.
pub const AUSTERITY_BATCH: usize = 500;
/// The confidence sampler's δ.
pub const CONFIDENCE_DELTA: f64 = 0.01;
/// On the log-normal data Austerity's chains run this many times longer than the others: they
/// are cheap there (2–14 % of the data per iteration) and mix far worse (sticky where the
/// t-test errs: σ ESS ≈ 10–130 from 4 × 8,000 draws), and their bias is judged in units of their own
/// MCSE, which needs an ESS in the dozens at least.
pub const AUSTERITY_DRAWS_FACTOR: usize = 4;
/// Warmup iterations of the audited chains (scale tuning).
pub const AUDIT_WARMUP: usize = 100;
/// δ of the "exact" confidence test of the exactness check.
pub const TINY_DELTA: f64 = 1e-300;

/// The two data sets of Fig. 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToyData {
    /// y ~ N(0, 0.1²): Fig. 4(a, b).
    Gaussian,
    /// y ~ logN(0, 2): Fig. 4(c).
    Lognormal,
}

impl ToyData {
    /// Both.
    pub const ALL: [Self; 2] = [Self::Gaussian, Self::Lognormal];

    /// Key in JSON summaries.
    pub fn key(self) -> &'static str {
        match self {
            Self::Gaussian => "gaussian",
            Self::Lognormal => "lognormal",
        }
    }

    /// Label for tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Self::Gaussian => "y ~ N(0, 0.1²)",
            Self::Lognormal => "y ~ logN(0, 2)",
        }
    }

    fn model(self) -> Result<Gaussian> {
        let data = match self {
            Self::Gaussian => synthetic::confidence_gaussian(TOY_N, DATA_SEED)?,
            Self::Lognormal => synthetic::confidence_lognormal(TOY_N, DATA_SEED)?,
        };
        Ok(Gaussian::new(data)?)
    }
}

/// The samplers compared in Fig. 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Full-data random-walk Metropolis.
    ExactMh,
    /// Minibatch MH with the confidence test.
    Confidence,
    /// Minibatch MH with Austerity's test, first batch 2 (Fig. 4(a, c)).
    AusterityT2,
    /// Minibatch MH with Austerity's test, first batch 500 (Fig. 4(b)).
    AusterityT500,
}

impl Method {
    /// All, in table order.
    pub const ALL: [Self; 4] =
        [Self::ExactMh, Self::Confidence, Self::AusterityT2, Self::AusterityT500];

    /// Key in JSON summaries.
    pub fn key(self) -> &'static str {
        match self {
            Self::ExactMh => "exact_mh",
            Self::Confidence => "confidence",
            Self::AusterityT2 => "austerity_t2",
            Self::AusterityT500 => "austerity_t500",
        }
    }

    /// Label for tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Self::ExactMh => "exact MH",
            Self::Confidence => "confidence (EBS, δ = 0.01)",
            Self::AusterityT2 => "Austerity (ε = 0.05, t₀ = 2)",
            Self::AusterityT500 => "Austerity (ε = 0.05, t₀ = 500)",
        }
    }
}

/// One sampler's run on one toy data set.
#[derive(Debug)]
pub struct MethodRun {
    /// Which sampler.
    pub method: Method,
    /// Summary of μ (all chains, post-warmup).
    pub mu: Summary,
    /// Summary of σ = e^τ.
    pub sigma: Summary,
    /// Acceptance rate after warmup.
    pub accept: f64,
    /// Mean fraction of the data used per iteration (1 for exact MH).
    pub data_fraction: f64,
    /// Per-datum term evaluations per post-warmup iteration.
    pub evals_per_iteration: f64,
    /// Tuned random-walk scale (chain 1).
    pub scale: f64,
    /// Post-warmup draws of σ, all chains pooled (for the histograms).
    pub sigma_draws: Vec<f64>,
    /// Wall seconds of drawing (slowest chain).
    pub sampling_seconds: f64,
}

impl MethodRun {
    /// Relative bias of the posterior mean of σ against `truth`, `E_run(σ)/E(σ) − 1`.
    pub fn sigma_relative_bias(&self, truth: &ClosedForm) -> f64 {
        self.sigma.mean / truth.sigma_mean - 1.0
    }
}

/// Every sampler on one toy data set.
#[derive(Debug)]
pub struct ToyProblem {
    /// Which data.
    pub data: ToyData,
    /// The exact posterior.
    pub truth: ClosedForm,
    /// Range of the data (min, max).
    pub y_range: (f64, f64),
    /// One run per [`Method`], in [`Method::ALL`] order.
    pub runs: Vec<MethodRun>,
}

impl ToyProblem {
    /// The run of `method`.
    pub fn run(&self, method: Method) -> Option<&MethodRun> {
        self.runs.iter().find(|r| r.method == method)
    }
}

/// The exactness check on one data set: the chains of the three tests, compared bit for bit.
#[derive(Debug, Clone, Serialize)]
pub struct Exactness {
    /// Which data.
    pub data: ToyData,
    /// Chains.
    pub chains: usize,
    /// Warmup iterations per chain (compared too).
    pub warmup: usize,
    /// Draws per chain.
    pub draws: usize,
    /// Austerity ε = 0 gave the exact test's chains, bit for bit.
    pub austerity_identical: bool,
    /// Confidence δ = 1e-300 gave the exact test's chains, bit for bit.
    pub confidence_identical: bool,
    /// Acceptance rate of the exact chains.
    pub accept: f64,
    /// Mean fraction of the data the δ = 1e-300 confidence test used.
    pub confidence_data_fraction: f64,
    /// Fraction of its decisions that stopped before N.
    pub confidence_early_stops: f64,
}

/// The wrong-decision rate of an approximate test along its own chain.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionAudit {
    /// Which data.
    pub data: ToyData,
    /// Which sampler.
    pub method: Method,
    /// Decisions audited (warmup included).
    pub decisions: u64,
    /// Fraction of them that differed from the exact decision on the same u and θ′.
    pub wrong_fraction: f64,
    /// Mean fraction of the data the test itself used.
    pub data_fraction: f64,
}

/// Fig. 4 and the exactness check.
#[derive(Debug)]
pub struct Toy {
    /// Chains per sampler.
    pub chains: usize,
    /// Warmup iterations per chain.
    pub warmup: usize,
    /// Draws per chain.
    pub draws: usize,
    /// One problem per [`ToyData`].
    pub problems: Vec<ToyProblem>,
    /// One check per [`ToyData`].
    pub exactness: Vec<Exactness>,
    /// Wrong-decision rates of the approximate tests, per data set.
    pub audits: Vec<DecisionAudit>,
    /// Draws per audited chain (2 chains, after [`AUDIT_WARMUP`] warmup iterations).
    pub audit_draws: usize,
}

impl Toy {
    /// The problem on `data`.
    pub fn problem(&self, data: ToyData) -> Option<&ToyProblem> {
        self.problems.iter().find(|p| p.data == data)
    }
}

/// Seed of the chains on data set `k`: the master seed, shifted per data set. The posterior
/// depends on the data only through (ȳ, S) and every sampler here is equivariant under the
/// affine map that takes one data set's posterior to the other's, so with one seed the
/// *exact* decisions (exact MH, and the confidence test, which almost always agrees with it)
/// would trace the same standardized chain on both data sets; distinct seeds make the two
/// comparisons independent.
pub fn toy_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_add(1000 * k as u64)
}

impl Part for Toy {
    fn key(&self) -> &'static str {
        "fig4_toy"
    }

    fn summary(&self) -> serde_json::Value {
        summary::summary(self)
    }

    fn claims(&self) -> Vec<Claim> {
        self.all_claims()
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        figures::figures(self)
    }

    fn report(&self, r: &mut Report) {
        report::section(self, r);
    }
}
