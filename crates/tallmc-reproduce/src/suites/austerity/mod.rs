//! Suite `austerity`: the experiments of Korattikara, Chen & Welling (2014), *Austerity in MCMC
//! land: cutting the Metropolis–Hastings budget*, ICML, §6 — on synthetic stand-ins for the
//! paper's data sets (which tallmc cannot download).
//!
//! * **(a) Fig. 2** ([`fig2`]) — random-walk minibatch MH on the MNIST-like logistic regression
//!   (N = 12,214, d = 50, prior N(0, 10² I), data seed 1): for ε ∈ {0, 0.001, 0.01, 0.05, 0.1,
//!   0.2} the mean fraction of the data each accept test used, and the fraction of decisions that
//!   differ from the exact test's on the same u and proposal ([`crate::audit::Audited`]).
//! * **(b) Fig. 3** ([`fig3`]) — the risk (bias² + variance over chains) of the posterior
//!   predictive mean of the 2,037 held-out points against per-datum evaluations, every chain
//!   given the same budget, ε ∈ {0, 0.01, 0.05, 0.1, 0.2}.
//! * **(c) Figs. 5–6** ([`fig56`]) — uncorrected SGLD, SGLD corrected by the exact MH test and
//!   by Austerity's test (ε ∈ {0.01, 0.05, 0.1}) on the 41-parameter KDD99-like logistic
//!   regression at a large and a small step size: L1 error of the 41 marginal variances against
//!   evaluations.
//! * **(d) Figs. 7–8** ([`fig78`]) — approximate Gibbs on the three-way binary MRF: empirical
//!   against exact conditionals, and the average L1 error of 5-variable marginals against
//!   factor evaluations, ε ∈ {0.01, 0.05, 0.1, 0.15, 0.2, 0.25} and exact Gibbs.
//!
//! **Starting points and tuning.** The logistic chains start at independent draws from the
//! Laplace approximation N(θ*, Σ_L) (on these tall-data posteriors an almost exact draw from
//! the posterior, so no burn-in is needed and every measured step is a stationary one). The
//! random walk is θ′ = θ + s L z with L Lᵀ = Σ_L and the scale s tuned (dual averaging to an
//! acceptance rate of 0.234) by a warmup of the exact chain started at the mode; every
//! Austerity chain of (a) and (b) then uses that fixed s.
//!
//! **Ground truths** of the logistic posteriors are importance sampling from the Laplace
//! approximation ([`common::ImportanceSample`]): i.i.d. draws, exact in the limit, with their
//! effective sample size and Monte Carlo errors reported, at one full-data pass per draw —
//! cheaper than a long HMC run for the same accuracy, which matters in the quick suite. The
//! MRF's truth is a long exact Gibbs run.
//!
//! **Cost** is counted from the kernels' stats, exactly: for minibatch MH 2 term evaluations
//! per datum the test used (ℓ_i at θ and θ′) plus the proposal's (SGLD: 2n terms and 2n
//! gradients); for SGLD n terms and n gradients per step; for Gibbs one factor evaluation per
//! log-ratio drawn.

pub mod common;
pub mod fig2;
pub mod fig3;
pub mod fig56;
pub mod fig78;
mod parts;

use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};
use tallmc_models::data::Dataset;
use tallmc_models::mrf::PAPER_LOG_POTENTIAL_SD;
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{Laplace, NewtonOptions, laplace_approximation};

use self::common::ImportanceSample;
use self::fig2::Fig2;
use self::fig3::Fig3;
use self::fig56::Fig56;
use self::fig78::{Fig78, GibbsSizes};
use crate::part::{Part, Suite};
use crate::{Context, Mode, Result};

/// Seed of the MNIST-like data (fixed: the data set is part of the problem).
pub const MNIST_DATA_SEED: u64 = 1;
/// Seed of the KDD99-like data.
pub const KDD_DATA_SEED: u64 = 1;
/// Seed of the MRF's potentials.
pub const MRF_SEED: u64 = 1;
/// Prior sd of both logistic regressions: θ ~ N(0, 10² I).
pub const PRIOR_SD: f64 = 10.0;

/// Streams of the importance-sampling truths (block b: `base + b`).
const MNIST_IS_STREAM: usize = 100_000;
const KDD_IS_STREAM: usize = 200_000;

/// Problem sizes of one mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sizes {
    /// (a, b) warmup iterations of the scale-tuning exact chain.
    pub tune_warmup: usize,
    /// (a) chains per ε.
    pub fig2_chains: usize,
    /// (a) audited decisions per chain.
    pub fig2_steps: usize,
    /// (b) importance draws of the predictive truth.
    pub mnist_truth_draws: usize,
    /// (b) chains per ε.
    pub fig3_chains: usize,
    /// (b) evaluation budget per chain.
    pub fig3_budget: u64,
    /// (c) rows N of the KDD99-like data.
    pub kdd_n: usize,
    /// (c) SGLD minibatch n = Austerity mini-batch m (N/20).
    pub sgld_batch: usize,
    /// (c) importance draws of the variance truth.
    pub kdd_truth_draws: usize,
    /// (c) chains per method and step size.
    pub sgld_chains: usize,
    /// (c) evaluation budget per chain.
    pub sgld_budget: u64,
    /// (d) the MRF experiment.
    pub gibbs: GibbsSizes,
}

impl Sizes {
    /// The sizes of `mode`.
    pub fn of(mode: Mode) -> Self {
        let gibbs = match mode {
            Mode::Quick => GibbsSizes {
                d: 30,
                log_potential_sd: PAPER_LOG_POTENTIAL_SD,
                mrf_seed: MRF_SEED,
                batch: 100,
                reference_chains: 2,
                reference_burn_in: 500,
                reference_sweeps: 20_000,
                kept_states: 200,
                subsets: 100,
                pair_bins: 20,
                pairs_per_bin: 1,
                reps: 20_000,
                reps_smallest_epsilon: 40_000,
                chains: 2,
                budget: 80_000_000,
            },
            Mode::Full => GibbsSizes {
                d: 100,
                log_potential_sd: PAPER_LOG_POTENTIAL_SD,
                mrf_seed: MRF_SEED,
                batch: 500,
                reference_chains: 4,
                reference_burn_in: 2_000,
                reference_sweeps: 100_000,
                kept_states: 500,
                subsets: 1600,
                pair_bins: 20,
                pairs_per_bin: 3,
                reps: 50_000,
                reps_smallest_epsilon: 100_000,
                chains: 4,
                budget: 10_000_000_000,
            },
        };
        let kdd_n = mode.pick(5_000, 20_000);
        Sizes {
            tune_warmup: mode.pick(1_000, 4_000),
            fig2_chains: mode.pick(2, 8),
            fig2_steps: mode.pick(1_000, 10_000),
            mnist_truth_draws: mode.pick(4_000, 100_000),
            fig3_chains: 8,
            fig3_budget: mode.pick(40_000_000, 1_000_000_000),
            kdd_n,
            sgld_batch: kdd_n / 20,
            kdd_truth_draws: mode.pick(10_000, 50_000),
            sgld_chains: mode.pick(2, 8),
            sgld_budget: mode.pick(30_000_000, 3_000_000_000),
            gibbs,
        }
    }
}

/// The MNIST-like problem shared by parts (a) and (b).
#[derive(Debug)]
pub struct MnistSetup {
    /// The training model (N = 12,214, d = 50).
    pub model: LogisticRegression,
    /// The 2,037 held-out rows.
    pub test: Dataset,
    /// Mode and Laplace covariance.
    pub laplace: Laplace,
    /// The tuned random-walk scale s.
    pub scale: f64,
    /// Acceptance rate over the second half of the tuning warmup.
    pub tune_accept: f64,
}

/// Everything the suite measured (the JSON summary is [`Austerity::summary`]).
#[derive(Debug)]
pub struct Austerity {
    /// Mode.
    pub mode: Mode,
    /// Master seed of the chains.
    pub seed: u64,
    /// Sizes used.
    pub sizes: Sizes,
    /// Tuned random-walk scale of (a) and (b).
    pub scale: f64,
    /// Acceptance rate of the exact chain during the second half of tuning.
    pub tune_accept: f64,
    /// (a) Fig. 2.
    pub fig2: Fig2,
    /// (b) Fig. 3.
    pub fig3: Fig3,
    /// (c) Figs. 5–6.
    pub fig56: Fig56,
    /// (d) Figs. 7–8.
    pub fig78: Fig78,
    /// Wall seconds per part (a + b together, c, d).
    pub seconds: [f64; 3],
}

/// The importance-sampling truth of `model`: `draws` weighted draws from `laplace`
/// ([`ImportanceSample::draw`] with the chains' seed and RNG streams from `stream`), with its
/// progress shown as `part`'s.
fn truth_sample(
    ctx: &Context<'_>, part: &str, model: &LogisticRegression, laplace: &Laplace, draws: usize,
    stream: usize,
) -> Result<ImportanceSample> {
    let n = model.design().len() as u64;
    let task = ctx.reporter.task(&format!("{part}: importance-sampling truth"), draws as u64 * n);
    ImportanceSample::draw(model, laplace, draws, ctx.seed, stream, &*task)
}

/// The paper's data fractions implied by its Fig. 3 legend: T(ε = 0)/T(ε) samples in the same
/// 400 s (an upper bound on the fraction, since each step also has costs that do not scale
/// with the data), for ε = 0.01, 0.05, 0.1, 0.2.
pub const PAPER_FIG3_IMPLIED_FRACTION: [(f64, f64); 4] = [
    (0.01, 75_484.0 / 133_069.0),
    (0.05, 75_484.0 / 200_672.0),
    (0.1, 75_484.0 / 257_897.0),
    (0.2, 75_484.0 / 422_978.0),
];

impl Suite for Austerity {
    const NAME: &'static str = "austerity";
    const TITLE: &'static str = "Austerity in MCMC land (Korattikara, Chen & Welling 2014)";
    const PAPER: &'static str = "paper (§6)";

    /// Runs the four parts.
    fn compute(ctx: &Context<'_>) -> Result<Self> {
        let sizes = Sizes::of(ctx.mode);
        let newton = NewtonOptions::default();

        // (a) and (b): the MNIST-like logistic regression.
        let t0 = Instant::now();
        ctx.reporter.note("austerity: MNIST-like data, mode and Laplace approximation");
        let (train, test) = synthetic::mnist_like(
            synthetic::MNIST_LIKE_TRAIN,
            synthetic::MNIST_LIKE_TEST,
            MNIST_DATA_SEED,
        )?;
        let model = LogisticRegression::new(train.data, DesignOptions::default(), PRIOR_SD)?;
        let d = synthetic::MNIST_LIKE_DIM;
        let laplace = laplace_approximation(&model, &vec![0.0; d], newton)?;
        let mut setup = MnistSetup { model, test, laplace, scale: 0.0, tune_accept: 0.0 };
        let (scale, tune_accept) = fig2::tune_scale(&setup, sizes.tune_warmup, ctx)?;
        setup.scale = scale;
        setup.tune_accept = tune_accept;
        let starts = setup.laplace.dispersed_positions(
            sizes.fig2_chains.max(sizes.fig3_chains),
            1.0,
            ctx.seed,
        )?;
        let mut fig2 = fig2::compute(&setup, &starts, sizes.fig2_chains, sizes.fig2_steps, ctx)?;
        fig2.tune_warmup = sizes.tune_warmup;
        let is = truth_sample(
            ctx,
            "austerity (b)",
            &setup.model,
            &setup.laplace,
            sizes.mnist_truth_draws,
            MNIST_IS_STREAM,
        )?;
        let fig3 = fig3::compute(&setup, &starts, &is, sizes.fig3_chains, sizes.fig3_budget, ctx)?;
        drop((setup, is));
        let t_ab = t0.elapsed().as_secs_f64();

        // (c): the KDD99-like logistic regression.
        let t0 = Instant::now();
        ctx.reporter.note("austerity: KDD99-like data, mode and Laplace approximation");
        let sim = synthetic::kdd_like(sizes.kdd_n, KDD_DATA_SEED)?;
        let model = LogisticRegression::new(sim.data, DesignOptions::default(), PRIOR_SD)?;
        let d = synthetic::KDD_LIKE_DIM;
        let laplace = laplace_approximation(&model, &vec![0.0; d], newton)?;
        let is = truth_sample(
            ctx,
            "austerity (c)",
            &model,
            &laplace,
            sizes.kdd_truth_draws,
            KDD_IS_STREAM,
        )?;
        let starts = laplace.dispersed_positions(sizes.sgld_chains, 1.0, ctx.seed ^ 0x5eed)?;
        let fig56 = fig56::compute(
            &model,
            &laplace,
            &starts,
            &is,
            sizes.sgld_batch,
            sizes.sgld_chains,
            sizes.sgld_budget,
            ctx,
        )?;
        drop((model, is));
        let t_c = t0.elapsed().as_secs_f64();

        // (d): the MRF.
        let t0 = Instant::now();
        let fig78 = fig78::compute(sizes.gibbs, ctx)?;
        let t_d = t0.elapsed().as_secs_f64();
        Ok(Austerity {
            mode: ctx.mode,
            seed: ctx.seed,
            sizes,
            scale,
            tune_accept,
            fig2,
            fig3,
            fig56,
            fig78,
            seconds: [t_ab, t_c, t_d],
        })
    }

    fn parts(&self) -> Vec<&dyn Part> {
        vec![&self.fig2, &self.fig3, &self.fig56, &self.fig78]
    }

    fn intro(&self) -> String {
        let s = &self.sizes;
        format!(
            "Mode `{}`, seed {}. Synthetic stand-ins for the paper's data (see `docs/reproduction.md`): \
             MNIST-like logistic regression (N = 12,214, d = 50, 2,037 held-out rows), KDD99-like \
             logistic regression (N = {}, d = 41), three-way binary MRF (D = {}, log-potential sd {:.4}, \
             i.e. variance 0.02). Costs are per-datum (or per-factor) evaluations counted from the \
             kernels' stats. Wall time: (a)+(b) {:.0} s, (c) {:.0} s, (d) {:.0} s. Sizes are in \
             `summary.json`.",
            self.mode,
            self.seed,
            s.kdd_n,
            s.gibbs.d,
            s.gibbs.log_potential_sd,
            self.seconds[0],
            self.seconds[1],
            self.seconds[2]
        )
    }

    /// The JSON summary (the quick one is an insta snapshot after rounding).
    fn summary(&self) -> Value {
        json!({
            "suite": "austerity",
            "mode": self.mode,
            "seed": self.seed,
            "sizes": to(&self.sizes),
            "data": {
                "mnist_like": {"n_train": synthetic::MNIST_LIKE_TRAIN, "n_test": synthetic::MNIST_LIKE_TEST,
                    "d": synthetic::MNIST_LIKE_DIM, "data_seed": MNIST_DATA_SEED, "prior": "N(0, 10^2 I)"},
                "kdd_like": {"n": self.sizes.kdd_n, "d": synthetic::KDD_LIKE_DIM, "data_seed": KDD_DATA_SEED,
                    "prior": "N(0, 10^2 I)"},
                "mrf": {"d": self.sizes.gibbs.d, "log_potential_sd": self.sizes.gibbs.log_potential_sd,
                    "seed": MRF_SEED},
            },
            "random_walk": {"scale": self.scale, "tune_accept": self.tune_accept},
            "fig2": to(&self.fig2),
            "fig3": to(&self.fig3),
            "fig5_6": to(&self.fig56),
            "fig7_8": to(&self.fig78),
            "wall_seconds": {"a_b": self.seconds[0], "c": self.seconds[1], "d": self.seconds[2]},
        })
    }
}

/// A value as JSON (`null` if it cannot be represented).
fn to<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
