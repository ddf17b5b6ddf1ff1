//! Suite `confidence`: the experiments of Bardenet, Doucet & Holmes (2014), *Towards scaling up
//! Markov chain Monte Carlo: an adaptive subsampling approach* (ICML), §4 — the confidence
//! sampler (minibatch MH with a concentration-bound test) against Austerity's t-test and exact
//! Metropolis–Hastings.
//!
//! * [`toy`] — **Fig. 4**: N(μ, σ²) with flat priors on (μ, log σ) fitted to 10⁵ draws from
//!   N(0, 0.1²) and from logN(0, 2). Austerity (ε = 0.05, first batch 2 then 500; and the
//!   variant starting at 500) against the confidence sampler (empirical Bernstein–Serfling,
//!   δ = 0.01, p = 2, γ = 2) and exact MH, with the closed-form posterior of σ as the truth.
//!   Plus the **exactness check**: Austerity with ε = 0 and the confidence test with δ = 1e-300
//!   reproduce minibatch MH with the exact test draw for draw, bit for bit.
//! * [`scaling`] — **Fig. 7(b)**: the fraction of the data the confidence sampler uses at
//!   equilibrium against n on the Gaussian-mean example (y ~ N(½, 0.1²), model N(μ, 1)).
//! * [`logistic`] — **§4.2.1, Fig. 6**: logistic regression on the 2-D two-class data
//!   (n = 10⁵ quick, 10⁷ full), confidence-sampler chains against exact MH from 4 dispersed
//!   starting points: evaluations needed to reach the posterior and the fraction of the data
//!   used in the transient and at equilibrium.
//!
//! **Cost convention.** The currency is per-datum term evaluations ℓ_i(θ). A careful exact MH
//! caches ℓ(θ) of the current state and evaluates one full likelihood per iteration: N
//! evaluations (the full-data [`RandomWalkMetropolis`](tallmc_samplers::RandomWalkMetropolis)
//! does exactly this). A subsampling kernel evaluates ℓ_i at θ and at θ′ for every value l_i it
//! uses: 2t evaluations for t values. Hence a subsampling method beats exact MH only when it
//! uses less than **half** of the data per iteration (BDH 2014, §4.3).

pub mod logistic;
pub mod scaling;
pub mod toy;

use serde_json::{Value, json};

use crate::part::{Part, Suite, timed};
use crate::{Context, Mode, Result};

/// Seed of every data set of the suite (fixed: the data set is part of the problem; `--seed`
/// changes the chains only).
pub const DATA_SEED: u64 = 1;

/// Everything the suite measured (the JSON summary is its [`Suite::summary`]).
#[derive(Debug)]
pub struct Confidence {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Fig. 4 and the exactness check.
    pub toy: toy::Toy,
    /// Fig. 7(b).
    pub scaling: scaling::Scaling,
    /// Fig. 6.
    pub logistic: logistic::Logistic,
}

impl Suite for Confidence {
    const NAME: &'static str = "confidence";
    const TITLE: &'static str = "Confidence sampler (Bardenet, Doucet & Holmes 2014)";
    const PAPER: &'static str = "paper (BDH 2014)";

    /// Runs the three parts.
    fn compute(ctx: &Context<'_>) -> Result<Self> {
        let toy = timed(ctx, "confidence", "Fig. 4 toy and exactness check", || toy::compute(ctx))?;
        let scaling = timed(ctx, "confidence", "Fig. 7(b)", || scaling::compute(ctx))?;
        let logistic = timed(ctx, "confidence", "Fig. 6 logistic", || logistic::compute(ctx))?;
        Ok(Confidence { mode: ctx.mode, seed: ctx.seed, toy, scaling, logistic })
    }

    fn parts(&self) -> Vec<&dyn Part> {
        vec![&self.toy, &self.scaling, &self.logistic]
    }

    fn summary(&self) -> Value {
        json!({
            "suite": "confidence",
            "mode": self.mode,
            "seed": self.seed,
            "data_seed": DATA_SEED,
            "fig4_toy": self.toy.summary(),
            "fig7b_scaling": self.scaling.summary(),
            "fig6_logistic": self.logistic.summary(),
        })
    }

    fn intro(&self) -> String {
        format!(
            "Mode `{}`, seed {} (data seed {DATA_SEED}). Cost is counted in per-datum term \
             evaluations ℓ_i(θ): exact MH (full-data random-walk Metropolis, which caches ℓ(θ) of \
             the current state) pays **N per iteration**; a subsampling kernel pays **2 per value \
             used** (ℓ_i at θ and at θ′). A subsampling method therefore beats exact MH only when \
             it uses less than half of the data per iteration, as the paper says in §4.3.",
            self.mode, self.seed
        )
    }
}

/// A mean-test error, saying it came from the mean test.
pub(crate) fn bounds_error(e: tallmc_bounds::Error) -> tallmc_core::Error {
    e.context("mean test")
}
