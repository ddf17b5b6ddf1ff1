//! Cornish et al. (2019), §5: the data SMH reads per iteration against n.
//!
//! **Claim.** With Taylor control variates of order k at the mode θ̂ and a proposal whose scale
//! shrinks like the posterior's (n^{−1/2}), SMH's Poisson minibatch has mean φ(θ, θ′)Ψ with
//! φ = O(‖θ − θ̂‖^{k+1}) = O(n^{−(k+1)/2}) and Ψ = Σ_i ψ_i = O(n): O(1) rows per iteration for
//! k = 1 and O(n^{−1/2}) for k = 2, where full-data MH reads n.
//!
//! **Problem.** [`synthetic::scaling_logistic`]: an intercept and 9 standard normal covariates
//! (d = 10), prior N(0, 10² I), n = 10³, 10⁴, …, 10⁷ (quick) or by half decades up to 3·10⁷
//! (full). The sizes are nested samples of one stream.
//!
//! **Sampler.** SMH with a random walk N(θ, s²Σ_L), Σ_L the Laplace covariance at this n and
//! s = 2.38/√d fixed (no adaptation, so that every n runs the same kernel in posterior units);
//! θ̂ the mode by Newton's method; chains started at draws from the Laplace approximation.
//! 2 chains × (100 warmup + 2,000 draws) quick, 4 × (200 + 10,000) full, per (n, k).
//!
//! **What is measured.** Per iteration: the Poisson mean min(φΨ, n) (0 when the first factor
//! rejects — the expected rows the iteration reads, given its θ and θ′), the rows it read
//! (B, or n when φΨ ≥ n and every factor is evaluated instead), and the per-datum evaluations
//! counted by the kernel. The slope of log₁₀(mean expected rows) against log₁₀ n is fitted
//! over n ≥ 10⁴ (below, the posterior is not yet in its Gaussian regime), with the standard
//! error of the fit. The expected rows are the Rao–Blackwellized measurement: their mean has
//! a far smaller Monte Carlo error than the counted rows' when fewer than one row is read per
//! iteration; the counted rows are checked against them (B given φΨ is Poisson).

use serde::Serialize;
use serde_json::{Value, json};
use tallmc_diagnostics::mcse_mean;
use tallmc_estimators::{CvOrder, RankOne};
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    NewtonOptions, RandomWalkProposal, RandomWalkProposalConfig, Smh, SmhConfig,
    laplace_approximation,
};

use super::DATA_SEED;
use crate::chains::{Chains, pooled_mean, run_config};
use crate::figure::{Axes, Color, Figure, Legend, Line, Marker, Scatter};
use crate::part::{Claim, Part, Z_MAX};
use crate::report::{Report, fmt_n, fmt_sig};
use crate::suites::hmcecs::slope_with_se;
use crate::{Context, Error, Result};

/// Parameters: an intercept and 9 covariates.
pub const DIM: usize = 10;
/// Prior sd of every coefficient.
pub const PRIOR_SD: f64 = 10.0;
/// Smallest n of the slope fits.
pub const FIT_FROM: usize = 10_000;
/// The claimed slopes (order 1, order 2) and the tolerance around them.
pub const CLAIMED_SLOPES: [f64; 2] = [0.0, -0.5];
/// Half-width of the slope checks.
pub const SLOPE_TOLERANCE: f64 = 0.15;

/// The sizes of the sweep.
pub fn sizes(mode: crate::Mode) -> Vec<usize> {
    mode.pick(
        vec![1_000, 10_000, 100_000, 1_000_000, 10_000_000],
        vec![
            1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000,
            30_000_000,
        ],
    )
}

/// One (n, order) run.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Observations.
    pub n: usize,
    /// Order of the control variates (1 or 2).
    pub order: u8,
    /// Mean over iterations of min(φΨ, n): the expected rows read per iteration.
    pub expected_rows: f64,
    /// Its Monte Carlo standard error.
    pub expected_rows_mcse: f64,
    /// Mean rows read per iteration (counted).
    pub rows: f64,
    /// Mean per-datum evaluations per iteration (counted, all kinds).
    pub evals: f64,
    /// Acceptance rate.
    pub accept: f64,
    /// Data whose bound did not hold (must be 0).
    pub bounds_exceeded: f64,
    /// Iterations measured (all chains).
    pub iterations: usize,
}

impl Point {
    /// z of the counted rows against the expected ones: the sum over iterations of B − φΨ has
    /// variance Σ φΨ (B | φΨ is Poisson; the iterations where every factor is evaluated read
    /// exactly n and are left out of both sums by using min(φΨ, n)).
    pub fn counted_z(&self) -> f64 {
        let t = self.iterations as f64;
        (self.rows - self.expected_rows) * t / (self.expected_rows * t).sqrt()
    }
}

/// The sweep.
#[derive(Debug, Clone)]
pub struct Scaling {
    /// Every (n, order), by n then order.
    pub points: Vec<Point>,
    /// Chains, warmup and draws per point.
    pub chains: usize,
    /// Warmup iterations per chain.
    pub warmup: usize,
    /// Draws per chain.
    pub draws: usize,
}

/// Runs SMH of orders 1 and 2 at every n.
pub fn compute(ctx: &Context<'_>) -> Result<Scaling> {
    let (warmup, draws, chains) = ctx.mode.pick((100, 2_000, 2), (200, 10_000, 4));
    let mut points = Vec::new();
    for n in sizes(ctx.mode) {
        ctx.reporter.note(&format!("exact-mh: SMH scaling, n = {n}"));
        let data = synthetic::scaling_logistic(n, DIM, DATA_SEED)?.data;
        let model = LogisticRegression::new(data, DesignOptions::default(), PRIOR_SD)?;
        let laplace = laplace_approximation(&model, &[0.0; DIM], NewtonOptions::default())?;
        let inits = laplace.dispersed_positions(chains, 1.0, ctx.seed)?;
        let runner = Chains { model: &model, inits: &inits, reporter: ctx.reporter };
        for (k, order) in [(1u8, CvOrder::One), (2, CvOrder::Two)] {
            let walk = RandomWalkProposal::new(RandomWalkProposalConfig {
                covariance: Some(laplace.covariance.clone()),
                initial_scale: Some(2.38 / (DIM as f64).sqrt()),
                adapt_scale: false,
                ..Default::default()
            })?;
            let config = SmhConfig { order, center: laplace.mode.clone() };
            let kernel = Smh::new(walk, RankOne::new(1), config)?;
            let seed = ctx.seed.wrapping_add(u64::from(k) * 1_000 + n.ilog10() as u64);
            let run = run_config(warmup, draws, chains, seed);
            let out = runner.run(run, &kernel, &format!("SMH-{k} n = {n}"))?;
            let column = |name: &str| -> Result<Vec<Vec<f64>>> {
                out.iter()
                    .map(|c| c.sink.stat(name).ok_or_else(|| Error::MissingStat(name.into())))
                    .collect()
            };
            let nf = n as f64;
            let expected: Vec<Vec<f64>> = column("poisson_mean__")?
                .into_iter()
                .map(|c| c.into_iter().map(|m| m.min(nf)).collect())
                .collect();
            let mean = |cs: &[Vec<f64>]| pooled_mean(cs.iter().cloned().map(Some));
            let iterations = draws * chains;
            let evals: u64 = out.iter().map(|c| c.report.sampling_evals.total()).sum();
            points.push(Point {
                n,
                order: k,
                expected_rows: mean(&expected),
                expected_rows_mcse: mcse_mean(&expected)?,
                rows: mean(&column("batch_size__")?),
                evals: evals as f64 / iterations as f64,
                accept: mean(&column("accepted__")?),
                bounds_exceeded: column("bounds_exceeded__")?.iter().flatten().sum(),
                iterations,
            });
        }
    }
    Ok(Scaling { points, chains, warmup, draws })
}

impl Scaling {
    /// The points of `order`, by n.
    pub fn of(&self, order: u8) -> Vec<&Point> {
        self.points.iter().filter(|p| p.order == order).collect()
    }

    /// The fitted slope of log₁₀(expected rows) on log₁₀ n over n ≥ [`FIT_FROM`], with its
    /// standard error.
    pub fn slope(&self, order: u8) -> (f64, f64) {
        let pts: Vec<&Point> = self.of(order).into_iter().filter(|p| p.n >= FIT_FROM).collect();
        let x: Vec<f64> = pts.iter().map(|p| (p.n as f64).log10()).collect();
        let y: Vec<f64> = pts.iter().map(|p| p.expected_rows.log10()).collect();
        slope_with_se(&x, &y)
    }
}

impl Part for Scaling {
    fn key(&self) -> &'static str {
        "smh_scaling"
    }

    fn summary(&self) -> Value {
        let slopes: Vec<Value> = [1u8, 2]
            .iter()
            .map(|&k| {
                let (b, se) = self.slope(k);
                json!({"order": k, "slope": b, "se": se})
            })
            .collect();
        json!({
            "d": DIM, "prior_sd": PRIOR_SD, "proposal": "random walk, s = 2.38/sqrt(d), Laplace shape, fixed",
            "chains": self.chains, "warmup": self.warmup, "draws": self.draws,
            "fit_from_n": FIT_FROM,
            "points": self.points,
            "slopes": slopes,
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let mut claims = Vec::new();
        for (k, id, what) in [
            (1u8, "smh1_rows_flat_in_n", "O(1) rows per iteration for order 1"),
            (
                2,
                "smh2_rows_fall_like_n_to_minus_half",
                "O(n^{−1/2}) rows per iteration for order 2",
            ),
        ] {
            let (b, se) = self.slope(k);
            let target = CLAIMED_SLOPES[usize::from(k) - 1];
            claims.push(Claim::new(
                id,
                format!("Cornish et al. 2019, §5: {what}"),
                format!("slope {} ± {} (n = 10⁴ … {})", fmt_sig(b, 3), fmt_sig(se, 2), {
                    let top = self.points.iter().map(|p| p.n).max().unwrap_or(0);
                    fmt_n(top)
                }),
                format!("|slope − ({target})| ≤ {SLOPE_TOLERANCE}"),
                (b - target).abs() <= SLOPE_TOLERANCE,
            ));
        }
        let worst = self.points.iter().map(|p| p.counted_z().abs()).fold(0.0, f64::max);
        claims.push(Claim::new(
            "counted_rows_match_the_poisson_mean",
            "the rows read are a Poisson minibatch of mean φΨ (Cornish et al. 2019, Alg. 2)",
            format!("largest |z| of counted against expected rows {}", fmt_sig(worst, 2)),
            format!("|z| < {Z_MAX} at every (n, k)"),
            worst < Z_MAX,
        ));
        let exceeded: f64 = self.points.iter().map(|p| p.bounds_exceeded).sum();
        claims.push(Claim::new(
            "logistic_bounds_hold",
            "ψ_i bounds every datum's remainder (docs/methods/gradient-bounds.md)",
            format!("{exceeded} drawn data above their bound"),
            "0",
            exceeded == 0.0,
        ));
        claims
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let mut axes = Axes::new()
            .with_title("SMH on a 10-parameter logistic regression: rows read per iteration")
            .with_x_label("n (observations)")
            .with_y_label("rows read per iteration")
            .with_log_x()
            .with_log_y()
            .with_legend(Legend::TopLeft);
        let ns: Vec<f64> = self.of(1).iter().map(|p| p.n as f64).collect();
        axes.push(
            Line::new(&ns, &ns)
                .with_dashes()
                .with_color(Color::GREY)
                .with_label("full-data MH (n)"),
        );
        for (k, color, marker) in
            [(1u8, Color::cycle(0), Marker::Circle), (2, Color::cycle(1), Marker::Square)]
        {
            let pts = self.of(k);
            let x: Vec<f64> = pts.iter().map(|p| p.n as f64).collect();
            let expected: Vec<f64> = pts.iter().map(|p| p.expected_rows).collect();
            let counted: Vec<f64> = pts.iter().map(|p| p.rows).collect();
            let (b, _) = self.slope(k);
            axes.push(
                Line::new(&x, &expected)
                    .with_marker(marker)
                    .with_color(color)
                    .with_label(format!("SMH-{k}: expected rows (slope {})", fmt_sig(b, 2))),
            );
            axes.push(
                Scatter::new(&x, &counted)
                    .with_marker(Marker::Cross)
                    .with_color(color)
                    .with_label(format!("SMH-{k}: counted rows")),
            );
        }
        let fig = Figure::new()
            .with_title("Cornish et al. 2019, §5: SMH reads O(1) (order 1) and O(n^−1/2) (order 2) rows per iteration")
            .with_panel_size(760.0, 480.0)
            .with_panel(axes);
        vec![("smh_scaling.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("SMH: rows read per iteration against n (Cornish et al. 2019, §5)");
        r.paragraph(&format!(
            "Logistic regression, d = {DIM} (an intercept and 9 standard normal covariates), \
             prior N(0, {PRIOR_SD}² I); SMH with a random walk N(θ, s²Σ_L), s = 2.38/√d fixed, \
             Σ_L the Laplace covariance at each n, Taylor expansions at the mode. {} chains × \
             ({} warmup + {} draws) per point. Expected rows: the mean of min(φΨ, n) per \
             iteration (0 when the first factor rejects); counted rows: the minibatch read. \
             Slopes fitted over n ≥ 10⁴.",
            self.chains, self.warmup, self.draws
        ));
        r.table_of(
            &[
                "n",
                "order",
                "expected rows / it.",
                "± MCSE",
                "counted rows / it.",
                "evaluations / it.",
                "acceptance",
                "fraction of n",
            ],
            self.points.iter(),
            |p| {
                vec![
                    fmt_n(p.n),
                    p.order.to_string(),
                    fmt_sig(p.expected_rows, 3),
                    fmt_sig(p.expected_rows_mcse, 2),
                    fmt_sig(p.rows, 3),
                    fmt_sig(p.evals, 3),
                    fmt_sig(p.accept, 3),
                    fmt_sig(p.expected_rows / p.n as f64, 2),
                ]
            },
        );
        r.image("SMH rows per iteration against n", "smh_scaling.svg");
    }
}
