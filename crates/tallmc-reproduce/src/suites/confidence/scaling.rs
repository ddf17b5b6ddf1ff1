//! Fig. 7(b) of BDH 2014: how much of the data the confidence sampler needs at equilibrium, as
//! n grows, on the Gaussian-mean example (§4.3).
//!
//! **Problem.** y_i ~ N(½, 0.1²) ([`synthetic::gaussian_mean_example`]), model N(μ, 1) with σ = 1
//! known ([`GaussianMean`]) and a wide prior μ ~ N(0, 10²) (the paper's is flat). The posterior
//! is Gaussian with sd ≈ 1/√n. The paper's analysis: |θ − θ′| is O(n^{−1/2}) at equilibrium, the
//! leading term of the bound is σ̂_t √(log/t) with σ̂_t ∝ σ_X |θ − θ′|, and the gap |Λ − ψ| is
//! O(1/n), so the test stops once t ≳ σ_X² n × const: the fraction of the data needed tends to a
//! constant that is smaller when the data are clustered (σ_X small).
//!
//! **Runs.** As the paper: chains start at the posterior mode, with a proposal covariance
//! proportional to the target's — here N(θ, (2 sd)²), the scale at which a random walk on a
//! Gaussian target accepts exactly 50 % (acceptance = (2/π) arctan(2/s) for a step of s sds), so
//! no tuning is needed. The confidence test is the one of Fig. 4 (empirical Bernstein–Serfling,
//! δ = 0.01, p = 2, γ = 2, first batch 100) with the model's exact range bound. Reported per n:
//! the running average of the fraction of the data used per iteration, and its mean with an
//! MCSE. Memory: 8n bytes of data plus 4n bytes of the subsampler's permutation per chain.

use serde_json::{Value, json};
use tallmc_bounds::{BoundKind, ConfidenceConfig, ConfidenceTest};
use tallmc_models::{GaussianMean, synthetic};
use tallmc_samplers::{MinibatchMh, RandomWalkProposal, RandomWalkProposalConfig};

use super::{DATA_SEED, bounds_error};
use crate::chains::{mean_stat, run_config, run_driver, thin_indices};
use crate::figure::{Axes, Figure, Legend, Line, Marker, PALETTE, RefLine};
use crate::part::{Claim, Part, Z_MAX, z};
use crate::report::{Report, fmt_n, fmt_sig};
use crate::{Context, Result};

/// The known σ of the model.
pub const MODEL_SIGMA: f64 = 1.0;
/// Prior sd (wide; the paper's prior is flat).
pub const PRIOR_SD: f64 = 10.0;
/// Random-walk step in posterior sds (acceptance exactly 50 % on a Gaussian target).
pub const STEP_SDS: f64 = 2.0;
/// The confidence test's δ.
pub const DELTA: f64 = 0.01;
/// Chains per n.
pub const CHAINS: usize = 2;
/// Points kept per running-average curve in the figure.
const CURVE_POINTS: usize = 400;

/// The confidence sampler at one n.
#[derive(Debug, Clone)]
pub struct ScalingRun {
    /// Rows.
    pub n: usize,
    /// Iterations per chain (all at equilibrium: started at the mode, no warmup).
    pub iterations: usize,
    /// Exact posterior mean and sd.
    pub posterior: (f64, f64),
    /// Mean fraction of the data used per iteration, all chains.
    pub mean_fraction: f64,
    /// MCSE of `mean_fraction`.
    pub mcse_fraction: f64,
    /// Mean fraction per chain.
    pub chain_fractions: Vec<f64>,
    /// Acceptance rate.
    pub accept: f64,
    /// Mean number of looks per decision.
    pub mean_looks: f64,
    /// Running average of the fraction per iteration, averaged over chains.
    pub running_average: Vec<f64>,
    /// Posterior mean of μ from the chains, and its error in posterior sds.
    pub mean_error_sds: f64,
    /// Wall seconds of drawing (slowest chain).
    pub sampling_seconds: f64,
}

impl ScalingRun {
    /// The run's JSON summary.
    fn summary(&self) -> Value {
        json!({
            "n": self.n, "iterations_per_chain": self.iterations,
            "posterior_mean": self.posterior.0, "posterior_sd": self.posterior.1,
            "mean_fraction": self.mean_fraction, "mcse_fraction": self.mcse_fraction,
            "chain_fractions": self.chain_fractions,
            "evals_relative_to_exact_mh": 2.0 * self.mean_fraction,
            "accept": self.accept, "mean_looks": self.mean_looks,
            "mean_error_in_posterior_sds": self.mean_error_sds,
            "sampling_seconds": self.sampling_seconds,
        })
    }
}

/// Fig. 7(b).
#[derive(Debug, Clone)]
pub struct Scaling {
    /// One run per n, increasing.
    pub runs: Vec<ScalingRun>,
}

/// The sizes and iterations of each mode.
fn plan(ctx: &Context<'_>) -> Vec<(usize, usize)> {
    ctx.mode.pick(
        vec![(100_000, 600), (300_000, 300), (1_000_000, 150)],
        vec![(100_000, 4000), (1_000_000, 2000), (10_000_000, 1000), (100_000_000, 300)],
    )
}

/// Runs the confidence sampler at every n of the mode's plan.
pub fn compute(ctx: &Context<'_>) -> Result<Scaling> {
    let mut runs = Vec::new();
    for (n, iterations) in plan(ctx) {
        ctx.reporter.note(&format!("confidence: Fig. 7(b), Gaussian-mean example n = {n}"));
        let data = synthetic::gaussian_mean_example(n, DATA_SEED)?;
        let model = GaussianMean::new(data, MODEL_SIGMA, 0.0, PRIOR_SD)?;
        let (mean, sd) = model.posterior_mean_sd();
        let walk = RandomWalkProposalConfig {
            covariance: Some(vec![sd * sd]),
            initial_scale: Some(STEP_SDS),
            adapt_scale: false,
            ..Default::default()
        };
        let config = run_config(0, iterations, CHAINS, ctx.seed);
        let out = run_driver(
            &model,
            &[vec![mean]],
            config,
            &{
                let test = ConfidenceTest::new(ConfidenceConfig::new(
                    BoundKind::EmpiricalBernsteinSerfling,
                    DELTA,
                ))
                .map_err(bounds_error)?;
                MinibatchMh::new(test, RandomWalkProposal::new(walk.clone())?).with_term_bounds()
            },
            ctx.reporter,
            &format!("Fig. 7(b): n = {n}"),
        )?;
        let fractions: Vec<Vec<f64>> =
            out.iter().map(|c| c.sink.stat("data_fraction__").unwrap_or_default()).collect();
        let chain_fractions: Vec<f64> =
            fractions.iter().map(|f| f.iter().sum::<f64>() / f.len().max(1) as f64).collect();
        let mut running = vec![0.0; iterations];
        for f in &fractions {
            let mut sum = 0.0;
            for (i, v) in f.iter().enumerate() {
                sum += v;
                running[i] += sum / (i + 1) as f64 / fractions.len() as f64;
            }
        }
        let draws: Vec<f64> = out.iter().flat_map(|c| c.sink.coordinate(0)).collect();
        let chain_mean = draws.iter().sum::<f64>() / draws.len().max(1) as f64;
        runs.push(ScalingRun {
            n,
            iterations,
            posterior: (mean, sd),
            mean_fraction: chain_fractions.iter().sum::<f64>() / chain_fractions.len() as f64,
            mcse_fraction: tallmc_diagnostics::mcse_mean(&fractions)?,
            chain_fractions,
            accept: mean_stat(&out, "accept_stat__"),
            mean_looks: mean_stat(&out, "looks__"),
            running_average: running,
            mean_error_sds: (chain_mean - mean) / sd,
            sampling_seconds: out.iter().map(|c| c.report.sampling_seconds).fold(0.0, f64::max),
        });
    }
    Ok(Scaling { runs })
}

impl Part for Scaling {
    fn key(&self) -> &'static str {
        "fig7b_scaling"
    }

    fn summary(&self) -> Value {
        json!({
            "data": "y ~ N(0.5, 0.1^2); model N(mu, 1), prior N(0, 10^2)",
            "chains": CHAINS, "step_in_posterior_sds": STEP_SDS,
            "confidence": {"bound": "empirical-bernstein-serfling", "delta": DELTA, "p": 2.0, "gamma": 2.0, "first_batch": 100},
            "runs": self.runs.iter().map(ScalingRun::summary).collect::<Vec<_>>(),
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let pct = |x: f64| format!("{} %", fmt_sig(100.0 * x, 3));
        let list = self
            .runs
            .iter()
            .map(|r| {
                format!("n = {}: {} ± {}", fmt_n(r.n), pct(r.mean_fraction), pct(r.mcse_fraction))
            })
            .collect::<Vec<_>>()
            .join("; ");
        // The drop of the fraction from the smallest to the largest n, in combined MCSE.
        let drop_z = match (self.runs.first(), self.runs.last()) {
            (Some(a), Some(b)) if self.runs.len() > 1 => {
                z(a.mean_fraction, a.mcse_fraction, b.mean_fraction, b.mcse_fraction)
            }
            _ => f64::NAN,
        };
        let below_one = !self.runs.is_empty()
            && self.runs.iter().all(|r| r.mean_fraction + Z_MAX * r.mcse_fraction < 1.0);
        // n from which the fraction is below one half by more than Z_MAX MCSE.
        let below_half = self.runs.iter().find(|r| r.mean_fraction + Z_MAX * r.mcse_fraction < 0.5);
        vec![
            Claim::new(
                "fig7b_fraction_drops_with_n",
                "Fig. 7(b): with increasing n, the number of samples needed at equilibrium progressively drops, to 25 % of n at n = 10¹⁵",
                format!(
                    "mean fraction of the data per iteration: {list}; drop from the smallest to the largest n: {} combined MCSE",
                    fmt_sig(drop_z, 2)
                ),
                format!(
                    "fraction at the largest n below the smallest n's by more than {Z_MAX} combined MCSE (n = 10¹⁵ is out of reach: memory)"
                ),
                drop_z > Z_MAX,
            ),
            Claim::new(
                "fig7b_fraction_below_one_and_not_growing",
                "Fig. 7(b): the confidence sampler uses a fraction of the data below 1 at equilibrium, not growing with n",
                format!(
                    "{list}; growth from the smallest to the largest n: {} combined MCSE",
                    fmt_sig(-drop_z, 2)
                ),
                format!(
                    "every n: fraction + {Z_MAX} MCSE < 1; growth from the smallest to the largest n < {Z_MAX} combined MCSE"
                ),
                below_one && -drop_z < Z_MAX,
            ),
            Claim::new(
                "s4_3_fraction_below_half_pays",
                "§4.3: the fraction must be below 50 % to improve on exact MH (one full likelihood per iteration vs two evaluations per subsampled value)",
                below_half.map_or(
                    format!(
                        "not below 50 % by {Z_MAX} MCSE at any n tried (up to {}): {list}",
                        self.runs.last().map_or("–".into(), |r| fmt_n(r.n))
                    ),
                    |r| {
                        format!(
                            "below 50 % from n = {} on: the sampler pays (cost {} × exact MH's)",
                            fmt_n(r.n),
                            fmt_sig(2.0 * r.mean_fraction, 2)
                        )
                    },
                ),
                format!("some n with fraction + {Z_MAX} MCSE < 50 %"),
                below_half.is_some(),
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        vec![("fig7b_fraction_vs_n.svg", figure(self))]
    }

    fn report(&self, r: &mut Report) {
        r.section(
            "Fig. 7(b): fraction of the data used at equilibrium vs n (Gaussian-mean example)",
        );
        r.paragraph(&format!(
            "y_i ~ N(½, 0.1²), model N(μ, 1), prior N(0, {PRIOR_SD}²). {CHAINS} chains per n, \
             started at the posterior mode, no warmup; random walk N(θ, ({STEP_SDS} posterior \
             sds)²), whose acceptance on a Gaussian target is exactly (2/π)·arctan(2/{STEP_SDS}) \
             = 50 % (the paper: proposal covariance proportional to the target's, adaptive MH with \
             target 50 %). Confidence test: empirical Bernstein–Serfling, δ = {DELTA}, p = 2, \
             γ = 2, first batch 100. Exact MH costs N evaluations per iteration, this sampler 2 per \
             value used: it wins only below a 50 % fraction. The paper shows 6 runs with n from 10⁵ \
             to 10¹⁵; we stop where memory (8n bytes of data and 4n per chain for the \
             subsampler's permutation) and the time budget do."
        ));
        r.table_of(
            &[
                "n",
                "iterations / chain",
                "mean data fraction",
                "MCSE",
                "per chain",
                "evals ÷ exact MH's",
                "accept",
                "looks / decision",
                "chain mean − truth (post. sds)",
            ],
            self.runs.iter(),
            |x| {
                vec![
                    fmt_n(x.n),
                    x.iterations.to_string(),
                    fmt_sig(x.mean_fraction, 3),
                    fmt_sig(x.mcse_fraction, 2),
                    x.chain_fractions.iter().map(|f| fmt_sig(*f, 3)).collect::<Vec<_>>().join(", "),
                    fmt_sig(2.0 * x.mean_fraction, 3),
                    fmt_sig(x.accept, 2),
                    fmt_sig(x.mean_looks, 3),
                    fmt_sig(x.mean_error_sds, 2),
                ]
            },
        );
        r.image("Fig. 7(b): data fraction vs n", "fig7b_fraction_vs_n.svg");
    }
}

/// `fig7b_fraction_vs_n.svg`: running averages per n (left) and the equilibrium fraction
/// against n on a log axis (right).
fn figure(s: &Scaling) -> Figure {
    let mut left = Axes::new()
        .with_title("Running average of the fraction of data used")
        .with_x_label("iteration")
        .with_y_label("fraction of n")
        .with_y_range(0.0, 1.05)
        .with_legend(Legend::BottomRight);
    for r in &s.runs {
        let idx = thin_indices(r.running_average.len(), CURVE_POINTS);
        let x: Vec<f64> = idx.iter().map(|&i| (i + 1) as f64).collect();
        let y: Vec<f64> = idx.iter().map(|&i| r.running_average[i]).collect();
        left.push(Line::new(&x, &y).with_label(format!("n = {}", fmt_n(r.n))));
    }
    left.push(RefLine::horizontal(0.5).with_label("break-even with exact MH"));
    let x: Vec<f64> = s.runs.iter().map(|r| r.n as f64).collect();
    let y: Vec<f64> = s.runs.iter().map(|r| r.mean_fraction).collect();
    let e: Vec<f64> = s.runs.iter().map(|r| 2.0 * r.mcse_fraction).collect();
    let right = Axes::new()
        .with_title("Equilibrium fraction vs n (± 2 MCSE)")
        .with_x_label("n")
        .with_y_label("mean fraction of n per iteration")
        .with_log_x()
        .with_y_range(0.0, 1.05)
        .with_legend(Legend::BottomLeft)
        .with_series(
            Line::new(&x, &y)
                .with_marker(Marker::Circle)
                .with_y_errors(&e)
                .with_label("confidence sampler"),
        )
        .with_series(RefLine::horizontal(0.5).with_label("break-even with exact MH"))
        .with_series(
            RefLine::horizontal(0.25).with_color(PALETTE[1]).with_label("paper at n = 10¹⁵"),
        );
    Figure::new()
        .with_title("Fig. 7(b): Gaussian-mean example, y ~ N(½, 0.1²), model N(μ, 1)")
        .with_columns(2)
        .with_panel(left)
        .with_panel(right)
}
