//! Suite `exact-mh`: exact minibatch Metropolis–Hastings beyond the four papers (REFERENCES §7)
//! — SMH (Cornish, Vanetti, Bouchard-Côté, Deligiannidis & Doucet, ICML 2019), TunaMH (Zhang,
//! Cooper & De Sa, NeurIPS 2020) and MH-SS (Prado, Nemeth & Sherlock 2024/2026).
//!
//! * [`scaling`] — **Cornish et al., §5**: the data SMH reads per iteration against n, for
//!   Taylor control variates of order 1 (O(1): flat) and 2 (O(n^{−1/2})), on a 10-parameter
//!   logistic regression ([`synthetic::scaling_logistic`](tallmc_models::synthetic::scaling_logistic)),
//!   n = 10³ … 10⁷ (quick) or up to 3·10⁷ by half decades (full).
//! * [`side_by_side`] — one real-like problem, every minibatch MH kernel beside exact MH: the
//!   collinear 37,591-row, 22-parameter logistic regression on which the issue found the
//!   confidence sampler reading every datum
//!   ([`synthetic::collinear_logistic`](tallmc_models::synthetic::collinear_logistic)); SMH
//!   (orders 1 and 2, random walk and pCN), MH-SS (orders 1 and 2), TunaMH, the confidence sampler with Taylor
//!   proxies, Austerity and exact random-walk MH — data fraction, ESS per evaluation, R-hat and
//!   the bias against a long full-data HMC run.
//!
//! **Cost** is counted by the kernels: per-datum evaluations of every kind, and the rows each
//! iteration reads (its Poisson minibatch, or the mean test's subsample). Set-up passes (the
//! mode, the control variates' sums, the bounds' alias table) are O(n) once and reported apart.

pub mod scaling;
pub mod side_by_side;

use serde_json::{Value, json};

use crate::part::{Part, Suite, timed};
use crate::{Context, Mode, Result};

/// Seed of every data set of the suite (fixed: the data set is part of the problem; `--seed`
/// changes the chains only).
pub const DATA_SEED: u64 = 1;

/// Everything the suite measured.
#[derive(Debug)]
pub struct ExactMh {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Rows per iteration against n.
    pub scaling: scaling::Scaling,
    /// Every kernel on the real-like problem.
    pub side_by_side: side_by_side::SideBySide,
}

impl Suite for ExactMh {
    const NAME: &'static str = "exact-mh";
    const TITLE: &'static str = "Exact minibatch Metropolis–Hastings: SMH, TunaMH, MH-SS";
    const PAPER: &'static str = "claim (paper)";

    fn compute(ctx: &Context<'_>) -> Result<Self> {
        let scaling = timed(ctx, "exact-mh", "SMH scaling in n", || scaling::compute(ctx))?;
        let side_by_side =
            timed(ctx, "exact-mh", "kernels side by side", || side_by_side::compute(ctx))?;
        Ok(ExactMh { mode: ctx.mode, seed: ctx.seed, scaling, side_by_side })
    }

    fn parts(&self) -> Vec<&dyn Part> {
        vec![&self.scaling, &self.side_by_side]
    }

    fn summary(&self) -> Value {
        json!({
            "suite": "exact-mh",
            "mode": self.mode,
            "seed": self.seed,
            "data_seed": DATA_SEED,
            "smh_scaling": self.scaling.summary(),
            "side_by_side": self.side_by_side.summary(),
        })
    }

    fn intro(&self) -> String {
        format!(
            "Mode `{}`, seed {} (data seed {DATA_SEED}). Exact minibatch MH: every kernel here \
             but Austerity leaves the posterior exactly invariant while reading a minibatch per \
             iteration — SMH a Poisson minibatch against bounds on the Taylor remainders at the \
             mode, TunaMH one against per-datum Lipschitz constants, MH-SS TunaMH's on the \
             remainders of first-order control variates. The bounds and why each kernel is exact \
             are in docs/methods/exact-minibatch-mh.md. Cost is counted by the kernels: rows read \
             and per-datum evaluations per iteration.",
            self.mode, self.seed
        )
    }
}
