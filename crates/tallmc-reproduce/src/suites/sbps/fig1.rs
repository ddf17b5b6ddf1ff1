//! §3.1, Fig. 1 of Pakman et al. (2017): BPS with exact against noisy gradients.
//!
//! **Target.** N(0, Σ) in 2-D with unit sds and correlation ρ = [`RHO`] = 0.8, written as a
//! [`GaussianRegression`] so that the library's exact BPS applies: σ = 1, prior N(0, 1000² I),
//! two rows X = Lᵀ with L Lᵀ = Σ⁻¹ − I/1000² (Cholesky) and y = 0, so the posterior precision
//! is XᵀX + I/1000² = Σ⁻¹ and the mean 0, exactly.
//!
//! **Samplers.** Exact: [`Bps`] with exact inversion of the affine rate (quadratic potential).
//! Noisy: [`NoisyBps`] — the same process with independent
//! N(0, [`NOISE_SD`]² I) noise added to every gradient evaluation (the noise model of
//! Theorem 1), simulated by the Δt-discretization of eq. (1) with Δt = [`DT`]. Both: velocities
//! uniform on the circle, refresh rate [`REFRESH_RATE`], 2 chains started at 0, warmup 100 time
//! units, then 5,000 (quick) or 50,000 (full) time units per chain, grid draws every
//! [`GRID_STEP`].
//!
//! **Measured.** Exact time averages of x₁, x₂, x₁², x₂² with batch-means MCSE; the segment
//! durations (travel time between velocity changes) from the skeleton; ESS per unit time of x₁
//! (sd² / MCSE² / T); from the grid draws, the QQ plot of x₁ against N(0, 1) and the ACF of x₁.

use serde_json::{Value, json};
use tallmc_core::Parallelism;
use tallmc_core::linalg::Cholesky;
use tallmc_diagnostics::continuous::QuadratureConfig;
use tallmc_models::{Dataset, DesignOptions, GaussianRegression};
use tallmc_samplers::continuous::{Budget, ContinuousRunConfig};
use tallmc_samplers::piecewise::VelocityDistribution;
use tallmc_samplers::{Bps, BpsConfig};

use super::linalg::ellipse;
use super::noisy_bps::{NoisyBps, NoisyBpsConfig};
use super::pdmp::{
    PdmpRun, RunOptions, TestFunction, acf, ess_rate_ratio, mean_se, normal_quantile, quantiles,
    run_pdmp,
};
use super::{Claim, Part, Problems, chain_seed};
use crate::figure::{Axes, Figure, Histogram, Legend, Line, Marker, RefLine, Scatter};
use crate::report::{Report, fmt_sig};
use crate::{Context, Result};

/// Correlation of the 2-D target.
pub const RHO: f64 = 0.8;
/// Sd of the gradient noise per component (the paper's 5).
pub const NOISE_SD: f64 = 5.0;
/// Step of the noisy process's bounce clock.
pub const DT: f64 = 1e-3;
/// Refresh rate of both processes.
pub const REFRESH_RATE: f64 = 0.2;
/// Spacing of the grid draws (QQ plot, ACF).
pub const GRID_STEP: f64 = 0.25;
/// Lags of the ACF (in grid steps).
pub const ACF_LAGS: usize = 40;
/// Bounces drawn in the trajectory panels.
pub const SHOWN_BOUNCES: usize = 50;

/// One of the two processes.
#[derive(Debug)]
pub struct Process {
    /// "exact" or "noisy".
    pub name: &'static str,
    /// Time averages of x₁, x₂.
    pub mean: [f64; 2],
    /// Their MCSEs.
    pub mean_mcse: [f64; 2],
    /// Time averages of x₁², x₂².
    pub second: [f64; 2],
    /// Their MCSEs.
    pub second_mcse: [f64; 2],
    /// ESS per unit time of x₁ (sd² / MCSE² / T, pooled over chains).
    pub ess_per_time: f64,
    /// Batches behind that ESS (over chains).
    pub batches: usize,
    /// Durations of the complete segments between velocity changes (all chains).
    pub travel: Vec<f64>,
    /// Velocity changes per unit time.
    pub events_per_time: f64,
    /// Per-datum evaluations per unit time.
    pub evals_per_time: f64,
    /// Sampled time (all chains).
    pub time: f64,
    /// Skeleton of chain 1: (x₁, x₂) at its first rows.
    pub path: (Vec<f64>, Vec<f64>),
    /// Grid draws of x₁ (all chains).
    pub x1: Vec<f64>,
    /// ACF of x₁ (chain 1's grid draws), lags 0 ..= [`ACF_LAGS`].
    pub acf: Vec<f64>,
}

impl Process {
    fn from_run<T>(name: &'static str, run: &PdmpRun<T>) -> Self {
        let s = &run.summaries;
        let est = |f: &str| run.function(f).map_or((f64::NAN, f64::NAN), |e| (e.mean, e.mcse));
        let (m1, e1) = est("x1^2");
        let (m2, e2) = est("x2^2");
        let mut travel = Vec::new();
        for c in &run.chains {
            let Some(sk) = &c.sink.skeleton else { continue };
            let t = &sk.times;
            // Drop the first piece (it started in warmup) and the last (cut by the budget).
            if t.len() > 3 {
                travel.extend(t[1..t.len() - 1].windows(2).map(|w| w[1] - w[0]));
            }
        }
        let path = match &run.chains[0].sink.skeleton {
            Some(sk) => {
                let rows = sk.len().min(SHOWN_BOUNCES + 1);
                (0..rows).map(|i| (sk.position(i)[0], sk.position(i)[1])).unzip()
            }
            None => (Vec::new(), Vec::new()),
        };
        let x1_chain1: Vec<f64> =
            run.chains[0].sink.draws().map(|d| d.coordinate(0)).unwrap_or_default();
        let time = run.time();
        Self {
            name,
            mean: [s[0].mean, s[1].mean],
            mean_mcse: [s[0].mcse_mean, s[1].mcse_mean],
            second: [m1, m2],
            second_mcse: [e1, e2],
            ess_per_time: s[0].ess / time,
            batches: s[0].batches,
            travel,
            events_per_time: run.totals().events() as f64 / time,
            evals_per_time: run.evals_per_time(),
            time,
            path,
            x1: run.grid_coordinate(0),
            acf: acf(&x1_chain1, ACF_LAGS),
        }
    }

    /// z-scores of the four moments against the truth (0, 0, 1, 1).
    pub fn z_scores(&self) -> [f64; 4] {
        [
            self.mean[0] / self.mean_mcse[0],
            self.mean[1] / self.mean_mcse[1],
            (self.second[0] - 1.0) / self.second_mcse[0],
            (self.second[1] - 1.0) / self.second_mcse[1],
        ]
    }

    /// Largest |z| of [`Process::z_scores`].
    pub fn max_abs_z(&self) -> f64 {
        self.z_scores().iter().map(|z| z.abs()).fold(0.0, f64::max)
    }

    /// Mean travel time and its standard error.
    pub fn travel_mean_se(&self) -> (f64, f64) {
        mean_se(&self.travel)
    }

    fn summary(&self) -> Value {
        let (tm, tse) = self.travel_mean_se();
        json!({
            "mean": self.mean, "mean_mcse": self.mean_mcse,
            "second_moment": self.second, "second_moment_mcse": self.second_mcse,
            "max_abs_z": self.max_abs_z(),
            "ess_per_time_x1": self.ess_per_time,
            "travel_time": {"mean": tm, "se": tse, "segments": self.travel.len()},
            "events_per_time": self.events_per_time,
            "evals_per_time": self.evals_per_time,
            "time": self.time,
        })
    }
}

/// Fig. 1: both processes.
#[derive(Debug)]
pub struct Fig1 {
    /// Exact gradients.
    pub exact: Process,
    /// Noisy gradients.
    pub noisy: Process,
}

/// The 2-D Gaussian target N(0, Σ), Σ = [[1, ρ], [ρ, 1]], as a Gaussian regression (module docs).
pub fn target() -> Result<GaussianRegression> {
    const PRIOR_SD: f64 = 1000.0;
    let det = 1.0 - RHO * RHO;
    let p = 1.0 / (PRIOR_SD * PRIOR_SD);
    let m = [1.0 / det - p, -RHO / det, -RHO / det, 1.0 / det - p];
    let l = Cholesky::new(&m, 2, "Sigma^-1 - I/s^2")?;
    let l = l.lower();
    // X = Lᵀ: X[i][j] = L[j][i].
    let x = vec![l[0], l[2], l[1], l[3]];
    let data = Dataset::with_default_names(x, vec![0.0, 0.0], 2)?;
    Ok(GaussianRegression::new(data, DesignOptions::default(), 1.0, PRIOR_SD)?)
}

impl Fig1 {
    /// Runs both processes.
    pub fn compute(ctx: &Context<'_>, _problems: &Problems<'_>) -> Result<Self> {
        let model = target()?;
        let time = ctx.mode.pick(5_000.0, 50_000.0);
        let config = |tag| ContinuousRunConfig {
            warmup: Budget::Time(100.0),
            sampling: Budget::Draws { count: (time / GRID_STEP) as usize, grid_step: GRID_STEP },
            num_chains: 2,
            seed: chain_seed(ctx.seed, tag),
            ..ContinuousRunConfig::default()
        };
        let options = RunOptions {
            grid_step: Some(GRID_STEP),
            skeleton: true,
            functions: vec![
                TestFunction::new("x1^2", |x: &[f64]| x[0] * x[0], QuadratureConfig::default()),
                TestFunction::new("x2^2", |x: &[f64]| x[1] * x[1], QuadratureConfig::default()),
            ],
        };
        let start = [vec![0.0, 0.0]];
        let bps = BpsConfig {
            refresh_rate: REFRESH_RATE,
            velocity: VelocityDistribution::Sphere,
            parallelism: Parallelism::Sequential,
        };
        let exact = run_pdmp(
            &model,
            config(10),
            &start,
            &Bps::new(bps)?,
            &options,
            ctx.reporter,
            "sbps Fig. 1: exact BPS",
        )?;
        let noisy_cfg = NoisyBpsConfig { noise_sd: NOISE_SD, dt: DT, refresh_rate: REFRESH_RATE };
        let noisy = run_pdmp(
            &model,
            config(11),
            &start,
            &NoisyBps::new(noisy_cfg)?,
            &options,
            ctx.reporter,
            "sbps Fig. 1: noisy BPS",
        )?;
        Ok(Self {
            exact: Process::from_run("exact", &exact),
            noisy: Process::from_run("noisy", &noisy),
        })
    }

    /// Mean travel time exact / noisy and the standard error of the difference of the means.
    pub fn travel_ratio(&self) -> (f64, f64, f64) {
        let (a, sa) = self.exact.travel_mean_se();
        let (b, sb) = self.noisy.travel_mean_se();
        (a / b, a - b, sa.hypot(sb))
    }

    /// ESS per unit time of x₁, exact / noisy, and the standard error of its logarithm
    /// (a batch-means variance from B batches has relative sd ≈ √(2/(B − 1))).
    pub fn mixing_ratio(&self) -> (f64, f64) {
        ess_rate_ratio(
            (self.exact.ess_per_time, self.exact.batches),
            (self.noisy.ess_per_time, self.noisy.batches),
        )
    }
}

impl Part for Fig1 {
    fn key(&self) -> &'static str {
        "fig1_noisy_gradients"
    }

    fn summary(&self) -> Value {
        let (tr, _, _) = self.travel_ratio();
        let (mr, mse) = self.mixing_ratio();
        json!({
            "target": {"rho": RHO, "sd": 1.0},
            "settings": {"noise_sd": NOISE_SD, "dt": DT, "refresh_rate": REFRESH_RATE, "grid_step": GRID_STEP, "chains": 2},
            "exact": self.exact.summary(),
            "noisy": self.noisy.summary(),
            "travel_time_ratio_exact_over_noisy": tr,
            "ess_per_time_ratio_exact_over_noisy": mr, "ess_ratio_log_se": mse,
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let zs = |p: &Process| {
            let z = p.z_scores();
            format!(
                "mean (x₁, x₂) = ({}, {}), E[x²] = ({}, {}); z vs truth (0, 0, 1, 1): {}",
                fmt_sig(p.mean[0], 2),
                fmt_sig(p.mean[1], 2),
                fmt_sig(p.second[0], 3),
                fmt_sig(p.second[1], 3),
                z.iter().map(|z| format!("{z:.2}")).collect::<Vec<_>>().join(", ")
            )
        };
        let (tr, diff, se) = self.travel_ratio();
        let (mr, lse) = self.mixing_ratio();
        vec![
            Claim::new(
                "noise_leaves_marginal_unchanged",
                "Theorem 1, Fig. 1 (QQ plot): zero-mean gradient noise, independent at every point, leaves the invariant distribution unchanged",
                format!("noisy BPS (noise sd {NOISE_SD}, Δt = {DT}): {}", zs(&self.noisy)),
                "every |z| < 4 (batch-means MCSE)",
                self.noisy.max_abs_z() < 4.0,
            ),
            Claim::new(
                "exact_bps_correct",
                "(correctness, not in the paper) exact BPS samples N(0, Σ)",
                format!("exact BPS: {}", zs(&self.exact)),
                "every |z| < 4",
                self.exact.max_abs_z() < 4.0,
            ),
            Claim::new(
                "travel_times_shorter",
                "Fig. 1 (histogram): travel times until bouncing are shorter with noisy gradients (E[Ĝ]⁺ ≤ E[Ĝ⁺], Jensen)",
                format!(
                    "mean travel time exact {} vs noisy {} (ratio {})",
                    fmt_sig(self.exact.travel_mean_se().0, 3),
                    fmt_sig(self.noisy.travel_mean_se().0, 3),
                    fmt_sig(tr, 3)
                ),
                "exact − noisy > 4 standard errors",
                diff > 4.0 * se,
            ),
            Claim::new(
                "mixing_slower",
                "Fig. 1 (ACF): slower mixing with noisy gradients",
                format!(
                    "ESS per unit time of x₁: exact {} vs noisy {} (ratio {})",
                    fmt_sig(self.exact.ess_per_time, 3),
                    fmt_sig(self.noisy.ess_per_time, 3),
                    fmt_sig(mr, 3)
                ),
                format!("log ratio > 4 se of the log ratio (se {})", fmt_sig(lse, 2)),
                mr.ln() > 4.0 * lse,
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let contours = |mut a: Axes| {
            for r in [1.0, 2.0, 3.0] {
                let (x, y) = ellipse([0.0, 0.0], [[1.0, RHO], [RHO, 1.0]], r, 120);
                a.push(
                    Line::new(&x, &y)
                        .with_color(crate::figure::Color::rgb(0x99, 0x99, 0x99))
                        .with_width(0.8),
                );
            }
            a
        };
        let path = |p: &Process, title: &str| {
            contours(
                Axes::new()
                    .with_title(title)
                    .with_x_label("x₁")
                    .with_y_label("x₂")
                    .with_x_range(-4.0, 4.0)
                    .with_y_range(-4.0, 4.0)
                    .with_legend(Legend::Hidden),
            )
            .with_series(
                Line::new(&p.path.0, &p.path.1).with_marker(Marker::Circle).with_width(1.2),
            )
        };
        let top = self
            .exact
            .travel
            .iter()
            .chain(&self.noisy.travel)
            .copied()
            .fold(0.0, f64::max)
            .min(12.0);
        let edges: Vec<f64> = (0..=48).map(|k| top * k as f64 / 48.0).collect();
        let hist = Axes::new()
            .with_title("Time until bouncing (travel time between velocity changes)")
            .with_x_label("time")
            .with_y_label("density")
            .with_series(
                Histogram::new(&self.exact.travel, edges.clone()).with_label("exact gradient"),
            )
            .with_series(Histogram::new(&self.noisy.travel, edges).with_label("noisy gradient"));
        let probs: Vec<f64> = (1..=99).map(|k| k as f64 / 100.0).collect();
        let theory: Vec<f64> = probs.iter().map(|&p| normal_quantile(p)).collect();
        let qq = Axes::new()
            .with_title("QQ plot of x₁ (grid draws) against N(0, 1)")
            .with_x_label("N(0, 1) quantile")
            .with_y_label("sample quantile")
            .with_legend(Legend::TopLeft)
            .with_series(
                Scatter::new(&theory, &quantiles(&self.exact.x1, &probs))
                    .with_label("exact gradient"),
            )
            .with_series(
                Scatter::new(&theory, &quantiles(&self.noisy.x1, &probs))
                    .with_marker(Marker::Cross)
                    .with_label("noisy gradient"),
            )
            .with_series(RefLine::identity().with_label("y = x"));
        let lags: Vec<f64> = (0..=ACF_LAGS).map(|k| k as f64 * GRID_STEP).collect();
        let acf = Axes::new()
            .with_title("ACF of x₁ (grid draws)")
            .with_x_label("lag (trajectory time)")
            .with_y_label("autocorrelation")
            .with_series(
                Line::new(&lags[..self.exact.acf.len()], &self.exact.acf)
                    .with_label("exact gradient"),
            )
            .with_series(
                Line::new(&lags[..self.noisy.acf.len()], &self.noisy.acf)
                    .with_label("noisy gradient"),
            )
            .with_series(RefLine::horizontal(0.0));
        let fig = Figure::new()
            .with_title(format!(
                "Fig. 1: BPS on N(0, Σ), ρ = {RHO}, exact vs noisy gradients (noise N(0, {NOISE_SD}²) per component)"
            ))
            .with_columns(3)
            .with_panel(path(&self.exact, &format!("Exact gradient: {SHOWN_BOUNCES} bounces")))
            .with_panel(path(&self.noisy, &format!("Noisy gradient: {SHOWN_BOUNCES} bounces")))
            .with_panel(hist)
            .with_panel(qq)
            .with_panel(acf);
        vec![("fig1_noisy_gradients.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("Fig. 1: BPS with exact and noisy gradients");
        r.paragraph(&format!(
            "Target N(0, Σ), unit sds, ρ = {RHO} (a Gaussian regression whose posterior is exactly \
             that). Exact BPS inverts the affine rate exactly; the noisy process adds N(0, {NOISE_SD}² I) \
             to every gradient evaluation, independently, and is simulated by the Δt-discretization \
             of eq. (1) (Δt = {DT}: bounce with probability Δt [⟨ĝ, v⟩]⁺ per step, reflect off ĝ). \
             Both: unit-speed velocities, refresh rate {REFRESH_RATE}, 2 chains, {} + {} time units. \
             Moments are exact time averages with batch-means MCSE; QQ plot and ACF use grid draws \
             every {GRID_STEP}.",
            fmt_sig(self.exact.time / 2.0, 3),
            fmt_sig(self.noisy.time / 2.0, 3)
        ));
        let row = |p: &Process| {
            let (tm, tse) = p.travel_mean_se();
            vec![
                p.name.to_string(),
                format!("{} ± {}", fmt_sig(p.mean[0], 2), fmt_sig(p.mean_mcse[0], 2)),
                format!("{} ± {}", fmt_sig(p.mean[1], 2), fmt_sig(p.mean_mcse[1], 2)),
                format!("{} ± {}", fmt_sig(p.second[0], 3), fmt_sig(p.second_mcse[0], 2)),
                format!("{} ± {}", fmt_sig(p.second[1], 3), fmt_sig(p.second_mcse[1], 2)),
                format!("{} ± {}", fmt_sig(tm, 3), fmt_sig(tse, 2)),
                fmt_sig(p.events_per_time, 3),
                fmt_sig(p.ess_per_time, 3),
            ]
        };
        r.table(
            &[
                "gradient",
                "E x₁ (0)",
                "E x₂ (0)",
                "E x₁² (1)",
                "E x₂² (1)",
                "mean travel time",
                "events / time",
                "ESS / time (x₁)",
            ],
            &[row(&self.exact), row(&self.noisy)],
        );
        r.image("Fig. 1", "fig1_noisy_gradients.svg");
    }
}
