//! Suite `sbps`: the experiments of Pakman, Gilboa, Carlson & Paninski (2017), *Stochastic
//! Bouncy Particle Sampler*, ICML — BPS with noisy gradients, SBPS ([`Sbps`](tallmc_samplers::Sbps))
//! and pSBPS, against SGLD and exact references.
//!
//! **Parts** (one module each; every part is a result type implementing [`Part`]):
//!
//! * [`fig1`] — **§3.1, Fig. 1**: BPS on a 2-D correlated Gaussian with exact gradients against
//!   BPS with gradients perturbed by N(0, 5²) noise (Theorem 1): the marginal is unchanged,
//!   travel times are shorter, mixing per unit time is slower.
//! * [`fig2`] — **§4, Fig. 2**: SBPS's thinning band on a 2-D logistic regression, from one
//!   bounce to the next.
//! * [`fig3`] — **§5, Fig. 3**: SBPS against pSBPS on the §7.1 d = 20 logistic regression, along
//!   the direction of greatest Laplace covariance.
//! * [`tradeoff`] — **§4.1 and Supp. F**: posterior error and bound-violation rate against the
//!   band multiple k and the minibatch size n on the d = 20 problem, against a long full-data
//!   HMC reference.
//! * [`fig4`] — **§7.1, Fig. 4**: error of the running posterior-mean estimate against data
//!   passes on the d = 20, N = 1000 logistic regression, for SBPS, pSBPS, SGLD (step size
//!   scanned as in Supp. E, [`sg_scan`], and the paper's small step), mSGNHT, lipSBPS and ZZ-SS,
//!   all from the same random start.
//! * [`fig5`] — **§7.2, Fig. 5**: continuous (quadrature along the trajectory) against discrete
//!   (grid draws) estimates of E[sin((w₁ − ŵ₁)/r)] as r/b varies.
//! * [`fig6`] — **§7.3, Fig. 6**: the d = 192 softmax network on 7 × 7 four-digit images:
//!   SBPS against SGLD at two step sizes and an exact reference, along the reference's
//!   directions of largest, median and smallest variance.
//! * [`zzcv_scaling`] — **beyond the paper**: Zig-Zag with control variates' per-datum
//!   evaluations per effective sample against n on the higgs-like logistic regression (d = 29),
//!   beside full-data HMC's.
//!
//! **Adding a part.** Write a module with a result type, an inherent
//! `compute(ctx: &Context, problems: &Problems) -> Result<Self>` and an `impl Part` (summary,
//! claims, figures, report); then add a field to [`SbpsSuite`], one line to [`compute`] and one
//! entry to [`SbpsSuite::parts`]. Shared problems (the §7.1 posterior with its Laplace
//! approximation and HMC reference) are built once, lazily, by [`Problems`].
//!
//! **Claims.** Each part turns its measurements into [`Claim`]s — the paper's statement, the
//! measured numbers, the criterion and whether it holds — computed once: `report.md`'s verdict
//! column and the tests (which assert `holds`) read the same values, so they cannot disagree.
//!
//! **Seeds.** Every data set has the fixed seed [`DATA_SEED`] (each generator has its own tag,
//! so their streams differ); `--seed` changes the chains only. Run r of the suite uses the
//! master seed [`chain_seed`]`(seed, r)`.

pub mod fig1;
pub mod fig2;
pub mod fig3;
pub mod fig4;
pub mod fig4_trace;
pub mod fig5;
pub mod fig6;
pub mod linalg;
pub mod noisy_bps;
pub mod paper_bound;
pub mod pdmp;
pub mod problem;
pub mod sg_scan;
pub mod tradeoff;
pub mod zzcv_scaling;

use serde_json::{Map, Value, json};

use crate::part::timed;
pub use crate::part::{Claim, Part, Suite};
use crate::{Context, Mode, Result};
pub use problem::{Logistic, Problems};

/// Seed of every data set of the suite (fixed: the data are part of the problem; `--seed`
/// changes the chains only).
pub const DATA_SEED: u64 = 1;

/// The master seed of run `tag` of the suite: `seed · 100 + tag` (tags are below 100, so the
/// runs of different suite seeds never share a stream).
pub fn chain_seed(seed: u64, tag: u64) -> u64 {
    seed.wrapping_mul(100).wrapping_add(tag)
}

/// Everything the suite measured.
#[derive(Debug)]
pub struct SbpsSuite {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Fig. 1: exact against noisy gradients.
    pub fig1: fig1::Fig1,
    /// Fig. 2: the thinning band.
    pub fig2: fig2::Fig2,
    /// Fig. 3: SBPS against pSBPS.
    pub fig3: fig3::Fig3,
    /// The k / n trade-off.
    pub tradeoff: tradeoff::Tradeoff,
    /// Fig. 4: error against data passes.
    pub fig4: fig4::Fig4,
    /// Fig. 5: continuous against discrete estimates.
    pub fig5: fig5::Fig5,
    /// Fig. 6: the d = 192 network.
    pub fig6: fig6::Fig6,
    /// ZZ-CV's cost per effective sample against n (beyond the paper).
    pub zzcv_scaling: zzcv_scaling::ZzcvScaling,
    /// The shared §7.1 posterior's reference, summarized.
    pub reference: Value,
}

impl Suite for SbpsSuite {
    const NAME: &'static str = "sbps";
    const TITLE: &'static str = "Stochastic Bouncy Particle Sampler (Pakman et al. 2017)";
    const PAPER: &'static str = "paper (Pakman et al. 2017)";

    fn compute(ctx: &Context<'_>) -> Result<Self> {
        compute(ctx)
    }

    fn parts(&self) -> Vec<&dyn Part> {
        vec![
            &self.fig1,
            &self.fig2,
            &self.fig3,
            &self.tradeoff,
            &self.fig4,
            &self.fig5,
            &self.fig6,
            &self.zzcv_scaling,
        ]
    }

    fn summary(&self) -> Value {
        let mut parts = Map::new();
        for p in self.parts() {
            parts.insert(p.key().into(), p.summary());
        }
        json!({
            "suite": "sbps",
            "mode": self.mode,
            "seed": self.seed,
            "data_seed": DATA_SEED,
            "logistic_d20_reference": self.reference,
            "parts": parts,
        })
    }

    fn intro(&self) -> String {
        format!(
            "Mode `{}`, seed {} (data seed {DATA_SEED}). SBPS: BPS driven by minibatch gradients \
     (a fresh minibatch of n at every proposed bounce), proposals from the upper band of a \
     local linear regression of the noisy rate with multiple k, bound violations counted; \
     velocities uniform on the unit sphere (so trajectory time is distance), refresh rate \
     0.05. Posterior expectations are exact time averages along the trajectory; draws exist \
     only on a time grid. Cost is counted in per-datum evaluations; an epoch is N of them.",
            self.mode, self.seed
        )
    }
}

/// Runs the suite with the [shared runner](crate::part::run) and returns the summary.
pub fn run(ctx: &Context<'_>) -> Result<Value> {
    crate::part::run::<SbpsSuite>(ctx)
}

/// Runs every part (each reports its wall time).
pub fn compute(ctx: &Context<'_>) -> Result<SbpsSuite> {
    let problems = Problems::new(ctx);
    let fig1 =
        timed(ctx, "sbps", "Fig. 1 noisy gradients", || fig1::Fig1::compute(ctx, &problems))?;
    let fig2 = timed(ctx, "sbps", "Fig. 2 thinning band", || fig2::Fig2::compute(ctx, &problems))?;
    let reference = timed(ctx, "sbps", "d = 20 posterior and HMC reference", || {
        Ok(problems.logistic()?.reference_summary())
    })?;
    let fig3 = timed(ctx, "sbps", "Fig. 3 SBPS vs pSBPS", || fig3::Fig3::compute(ctx, &problems))?;
    let tradeoff =
        timed(ctx, "sbps", "k / n trade-off", || tradeoff::Tradeoff::compute(ctx, &problems))?;
    let fig4 = timed(ctx, "sbps", "Fig. 4 error against data passes", || {
        fig4::Fig4::compute(ctx, &problems)
    })?;
    let fig5 = timed(ctx, "sbps", "Fig. 5 continuous vs discrete", || {
        fig5::Fig5::compute(ctx, &problems)
    })?;
    let fig6 = timed(ctx, "sbps", "Fig. 6 neural network", || fig6::Fig6::compute(ctx, &problems))?;
    let zzcv_scaling = timed(ctx, "sbps", "ZZ-CV cost per effective sample against n", || {
        zzcv_scaling::ZzcvScaling::compute(ctx, &problems)
    })?;
    Ok(SbpsSuite {
        mode: ctx.mode,
        seed: ctx.seed,
        fig1,
        fig2,
        fig3,
        tradeoff,
        fig4,
        fig5,
        fig6,
        zzcv_scaling,
        reference,
    })
}
