//! Part (a), the paper's Fig. 2: the random-walk minibatch MH chain on the MNIST-like logistic
//! regression, and for each ε the mean fraction of the data its test used and the fraction of
//! its accept/reject decisions that differ from the exact test's on the same u and proposal
//! ([`Audited`]).

use rayon::prelude::*;
use serde::Serialize;
use tallmc_bounds::ExactTest;
use tallmc_core::rng::chain_rng;
use tallmc_core::{Chain, Kernel};
use tallmc_models::LogisticRegression;
use tallmc_samplers::{MinibatchMh, RandomWalkProposal, RandomWalkProposalConfig};

use super::MnistSetup;
use super::common::{austerity_test, index_pairs, run_until};
use crate::audit::{AuditCounts, Audited};
use crate::figure::{Axes, Color, Figure, Legend, Line, Marker};
use crate::{Context, Result};

/// The ε of the paper's Fig. 2.
pub const EPSILONS: [f64; 6] = [0.0, 0.001, 0.01, 0.05, 0.1, 0.2];

/// Austerity's mini-batch m for the MH test on the MNIST-like problem (first batch = m). The
/// paper does not state it for §6.1; 500 is its value for Gibbs (§6.3) and about 4% of N.
pub const TEST_BATCH: usize = 500;

/// First chain stream of part (a) (ε index e, chain k: `STREAM + 100 e + k`).
const STREAM: usize = 1000;
/// Stream of the scale-tuning run.
pub(crate) const TUNE_STREAM: usize = 1;

/// The measurements at one ε.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fig2Row {
    /// ε.
    pub epsilon: f64,
    /// Accept/reject decisions audited (all chains).
    pub decisions: u64,
    /// Decisions that differ from the exact test's on the same u and proposal.
    pub wrong: u64,
    /// wrong / decisions.
    pub wrong_rate: f64,
    /// Binomial standard deviation √(p(1 − p)/decisions) at the measured rate.
    pub wrong_binomial_sd: f64,
    /// MCSE of the wrong-decision rate from the chains' 0/1 series (ESS-based; 0 if no wrong
    /// decision).
    pub wrong_mcse: f64,
    /// Mean fraction of the N data points the test used per decision.
    pub data_fraction: f64,
    /// MCSE of the data fraction (ESS-based; 0 if constant).
    pub data_fraction_mcse: f64,
    /// Acceptance rate.
    pub accept: f64,
    /// Per chain: wrong-decision rate.
    pub chain_wrong_rates: Vec<f64>,
    /// Per chain: mean data fraction.
    pub chain_data_fractions: Vec<f64>,
}

/// Part (a).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fig2 {
    /// Chains per ε.
    pub chains: usize,
    /// Decisions per chain.
    pub steps: usize,
    /// Austerity mini-batch m.
    pub test_batch: usize,
    /// Random-walk scale s (proposal θ + s L z, L Lᵀ the Laplace covariance), tuned by the
    /// exact chain's warmup.
    pub scale: f64,
    /// Warmup iterations of the scale-tuning exact chain (report only).
    #[serde(skip)]
    pub tune_warmup: usize,
    /// Acceptance rate over the second half of that warmup (report only).
    #[serde(skip)]
    pub tune_accept: f64,
    /// One row per ε.
    pub rows: Vec<Fig2Row>,
}

/// The scale s of the random walk θ′ = θ + s L z (L Lᵀ = the Laplace covariance): `warmup`
/// steps of the exact minibatch-MH chain from the mode, with the scale tuned by dual averaging
/// towards 0.234; returns the final (averaged) scale and the warmup's acceptance rate over its
/// second half.
pub(crate) fn tune_scale(
    setup: &MnistSetup, warmup: usize, ctx: &Context<'_>,
) -> Result<(f64, f64)> {
    let task = ctx.reporter.task("austerity (a): tune the random-walk scale", warmup as u64);
    let cfg = RandomWalkProposalConfig {
        covariance: Some(setup.laplace.covariance.clone()),
        ..Default::default()
    };
    let kernel = MinibatchMh::new(ExactTest::new(), RandomWalkProposal::new(cfg)?);
    let mut rng = chain_rng(ctx.seed, TUNE_STREAM);
    let model = &setup.model;
    let mut chain = kernel.build_chain(model, &setup.laplace.mode, &mut rng)?;
    Chain::<LogisticRegression>::begin_warmup(&mut chain, warmup);
    let mut accepted = 0usize;
    for it in 0..warmup {
        let stats = chain.step(model, &mut rng)?;
        chain.adapt(model, &stats, &mut rng)?;
        if it >= warmup / 2 {
            accepted += usize::from(stats.accepted);
        }
        task.advance(1);
    }
    Chain::<LogisticRegression>::end_warmup(&mut chain);
    Ok((chain.proposal().scale(), accepted as f64 / (warmup - warmup / 2).max(1) as f64))
}

/// The random-walk proposal with the Laplace shape and a fixed scale.
pub(crate) fn fixed_proposal(setup: &MnistSetup) -> Result<RandomWalkProposal> {
    Ok(RandomWalkProposal::new(RandomWalkProposalConfig {
        covariance: Some(setup.laplace.covariance.clone()),
        initial_scale: Some(setup.scale),
        adapt_scale: false,
        ..Default::default()
    })?)
}

/// MCSE of the mean of `chains` (0/1 or fraction series), 0 when every value is equal.
fn mcse_or_zero(chains: &[Vec<f64>]) -> f64 {
    let first = chains.first().and_then(|c| c.first()).copied().unwrap_or(0.0);
    if chains.iter().all(|c| c.iter().all(|&v| v == first)) {
        return 0.0;
    }
    tallmc_diagnostics::mcse_mean(chains).unwrap_or(f64::NAN)
}

/// Runs part (a): `chains` chains of `steps` audited decisions per ε, started at the given
/// (approximately stationary) positions.
pub(crate) fn compute(
    setup: &MnistSetup, starts: &[Vec<f64>], chains: usize, steps: usize, ctx: &Context<'_>,
) -> Result<Fig2> {
    let n = setup.model.design().len() as u64;
    let total = (EPSILONS.len() * chains * steps) as u64 * 2 * n;
    let task = ctx.reporter.task("austerity (a): audited decisions (Fig. 2)", total);
    let jobs = index_pairs(EPSILONS.len(), chains);
    let runs = jobs
        .par_iter()
        .map(|&(e, k)| {
            let counts = AuditCounts::new();
            let test = austerity_test(EPSILONS[e], TEST_BATCH)?;
            let kernel =
                MinibatchMh::new(Audited::new(test, counts.clone()), fixed_proposal(setup)?);
            let mut rng = chain_rng(ctx.seed, STREAM + 100 * e + k);
            let (mut fractions, mut wrong) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
            let (mut accepted, mut last) = (0u64, 0u64);
            let s = steps as u64;
            run_until(
                &setup.model,
                &kernel,
                &starts[k % starts.len()],
                &mut rng,
                s,
                &*task,
                |t, _| t >= s,
                |_, st, _| {
                    fractions.push(st.data_fraction);
                    let w = counts.wrong();
                    wrong.push((w - last) as f64);
                    last = w;
                    accepted += u64::from(st.accepted);
                },
            )?;
            Ok((fractions, wrong, accepted))
        })
        .collect::<Result<Vec<_>>>()?;
    drop(task);
    let rows = EPSILONS
        .iter()
        .zip(runs.chunks(chains))
        .map(|(&epsilon, mine)| {
            let fractions: Vec<Vec<f64>> = mine.iter().map(|r| r.0.clone()).collect();
            let wrongs: Vec<Vec<f64>> = mine.iter().map(|r| r.1.clone()).collect();
            let decisions = (chains * steps) as u64;
            let wrong = wrongs.iter().flatten().sum::<f64>() as u64;
            let p = wrong as f64 / decisions as f64;
            let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
            Fig2Row {
                epsilon,
                decisions,
                wrong,
                wrong_rate: p,
                wrong_binomial_sd: (p * (1.0 - p) / decisions as f64).sqrt(),
                wrong_mcse: mcse_or_zero(&wrongs),
                data_fraction: fractions.iter().flatten().sum::<f64>() / decisions as f64,
                data_fraction_mcse: mcse_or_zero(&fractions),
                accept: mine.iter().map(|r| r.2).sum::<u64>() as f64 / decisions as f64,
                chain_wrong_rates: wrongs.iter().map(mean).collect(),
                chain_data_fractions: fractions.iter().map(mean).collect(),
            }
        })
        .collect();
    Ok(Fig2 {
        chains,
        steps,
        test_batch: TEST_BATCH,
        scale: setup.scale,
        tune_warmup: 0,
        tune_accept: setup.tune_accept,
        rows,
    })
}

impl Fig2 {
    /// The row of `epsilon`, if measured.
    pub fn row(&self, epsilon: f64) -> Option<&Fig2Row> {
        self.rows.iter().find(|r| r.epsilon == epsilon)
    }

    /// The figure: percentage of data used and of wrong decisions against ε, with y = ε.
    pub fn figure(&self) -> Figure {
        let eps: Vec<f64> = self.rows.iter().map(|r| r.epsilon).collect();
        let pct = |f: &dyn Fn(&Fig2Row) -> f64| self.rows.iter().map(f).collect::<Vec<f64>>();
        let data = pct(&|r| 100.0 * r.data_fraction);
        let data_err = pct(&|r| 200.0 * r.data_fraction_mcse);
        let wrong = pct(&|r| 100.0 * r.wrong_rate);
        let wrong_err = pct(&|r| 200.0 * r.wrong_binomial_sd);
        let eps_pct: Vec<f64> = eps.iter().map(|e| 100.0 * e).collect();
        Figure::new().with_panel(
            Axes::new()
                .with_title(format!(
                    "Fig. 2: random-walk Austerity MH, MNIST-like (N = 12,214, d = 50), m = {}",
                    self.test_batch
                ))
                .with_x_label("ε")
                .with_y_label("percentage")
                .with_y_range(0.0, 100.0)
                .with_legend(Legend::TopRight)
                .with_series(
                    Line::new(&eps, &data)
                        .with_y_errors(&data_err)
                        .with_marker(Marker::Circle)
                        .with_label("data used (%)"),
                )
                .with_series(
                    Line::new(&eps, &wrong)
                        .with_y_errors(&wrong_err)
                        .with_marker(Marker::Square)
                        .with_label("wrong decisions (%)"),
                )
                .with_series(
                    Line::new(&eps, &eps_pct)
                        .with_dashes()
                        .with_color(Color::BLACK)
                        .with_label("y = ε (%)"),
                ),
        )
    }
}
