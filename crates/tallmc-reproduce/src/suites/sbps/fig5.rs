//! §7.2, Fig. 5 of Pakman et al. (2017): continuous against discrete estimates of
//! E[sin((w₁ − ŵ₁)/r)] on the §7.1 posterior (d = 20, N = 1000, SBPS n = 100, k = 3).
//!
//! **b.** The average segment length — trajectory time (distance, at unit speed) per segment,
//! i.e. per kernel step: SBPS's steps end at second-stage proposals, refreshments and band
//! horizons, and its trajectory is straight between velocity changes, so b is the spacing of
//! the points where the sampler looks at the data (the authors' code stores its trajectory at
//! those points; the paper's b ≈ 2·10⁻² matches) — measured on a pilot run (1 chain, 1,000
//! epochs, its own seed); r = (r/b)·b for r/b ∈ [`RATIOS`]. The distance between velocity
//! changes is reported too (about 7–8 b).
//!
//! **Runs.** [`RUNS`] independent chains (quick; 20 full; the paper: 5) from ŵ, warmup 100
//! epochs, then 1,000 epochs each (the paper's). Per run and r:
//!
//! * continuous: the time average (1/T)∫ f(x(t)) dt by composite Gauss–Legendre quadrature along
//!   every segment (5 nodes, sub-intervals ≤ r/2 long, so the phase (w₁ − ŵ₁)/r moves by at most
//!   ½ per sub-interval at unit speed: exact to rounding);
//! * discrete: the mean of f over grid draws x(kb), k = 1, 2, … — a uniform discretization
//!   with spacing b (the paper's "discretized uniformly").
//!
//! **Truth.** E f for w₁ ~ N(m, s²) is sin((m − ŵ₁)/r) exp(−s²/(2r²)); the paper assumes the
//! Laplace approximation, m = ŵ₁, which gives 0. Where the Gaussian factor exp(−s²/(2r²)) is
//! below [`NEGLIGIBLE`] — r well below the posterior sd, so that E f is the posterior's
//! characteristic function at frequency 1/r, negligible for a smooth posterior whatever its
//! shape — the truth is that Gaussian value with m, s from the full-data HMC reference (0 to
//! many digits), checked against the HMC draws' direct estimate (within 4 MCSE). Elsewhere the
//! posterior's shape matters (here the mean is 1 sd from the mode and the posterior is skewed)
//! and the truth is the HMC direct estimate itself (its MCSE is reported). The error of a run
//! is |estimate − truth|, averaged over runs.

use serde_json::{Value, json};
use tallmc_diagnostics::continuous::QuadratureConfig;
use tallmc_diagnostics::quadrature::GaussLegendre;
use tallmc_models::synthetic::SBPS_N;
use tallmc_samplers::continuous::{Budget, ContinuousRunConfig};
use tallmc_samplers::{Sbps, SbpsConfig};

use super::pdmp::{RunOptions, TestFunction, run_pdmp};
use super::{Claim, Part, Problems, chain_seed};
use crate::figure::{Axes, Figure, Legend, Line, Marker, PALETTE, RefLine};
use crate::report::{Report, fmt_sig};
use crate::{Context, Result};

/// r/b values.
pub const RATIOS: [f64; 7] = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0];
/// Independent runs in quick mode (the paper: 5).
pub const RUNS: usize = 10;
/// Below this Gaussian factor exp(−s²/(2r²)) the truth is the Gaussian value (module docs).
pub const NEGLIGIBLE: f64 = 1e-3;
/// Epochs per run (the paper's 1,000).
pub const EPOCHS: u64 = 1_000;
/// The paper's claim is about r/b ≪ 1: checked at r/b at or below this.
pub const SMALL_RATIO: f64 = 0.03;
/// The threshold r/b ≤ 0.1, checked separately from the smaller ratios.
pub const BRIEF_RATIO: f64 = 0.1;

/// One value of r/b.
#[derive(Debug, Clone)]
pub struct Ratio {
    /// r/b.
    pub ratio: f64,
    /// r.
    pub r: f64,
    /// The truth (module docs).
    pub truth: f64,
    /// Whether the truth is the Gaussian value (else the HMC estimate).
    pub gaussian_truth: bool,
    /// The HMC draws' direct estimate of E f and its MCSE.
    pub hmc: (f64, f64),
    /// Continuous estimates, one per run.
    pub continuous: Vec<f64>,
    /// Discrete estimates, one per run.
    pub discrete: Vec<f64>,
    /// Standard errors of the continuous estimates, one per run (batch means over time).
    pub continuous_se: Vec<f64>,
    /// Standard errors of the discrete estimates, one per run (MCSE of the grid draws' mean).
    pub discrete_se: Vec<f64>,
    /// Batches behind each continuous standard error.
    pub batches: Vec<usize>,
}

impl Ratio {
    /// Mean over runs of |continuous − truth|.
    pub fn continuous_error(&self) -> f64 {
        mean_abs(&self.continuous, self.truth)
    }

    /// Mean over runs of |discrete − truth|.
    pub fn discrete_error(&self) -> f64 {
        mean_abs(&self.discrete, self.truth)
    }

    /// √(mean over runs of the continuous estimates' squared standard errors): the expected
    /// error of one run, estimated with far less noise than the mean |error| of a few runs.
    pub fn continuous_pooled_se(&self) -> f64 {
        rms(&self.continuous_se)
    }

    /// The same for the discrete estimates.
    pub fn discrete_pooled_se(&self) -> f64 {
        rms(&self.discrete_se)
    }

    /// log(discrete pooled s.e. / continuous pooled s.e.) and its standard error: each pooled
    /// s.e. is a root mean square of MCSEs with about Σ_k (B_k − 1) degrees of freedom (B_k
    /// batches of run k; the discrete MCSEs are given the same), so its relative s.e. is
    /// ≈ √(1/(2 df)), and the log ratio's ≈ √2 times that.
    pub fn log_se_ratio(&self) -> (f64, f64) {
        let df: usize = self.batches.iter().map(|b| b.saturating_sub(1)).sum();
        let rel = (1.0 / (2.0 * df.max(1) as f64)).sqrt();
        (
            (self.discrete_pooled_se() / self.continuous_pooled_se()).ln(),
            std::f64::consts::SQRT_2 * rel,
        )
    }

    /// Whether the continuous estimator's pooled s.e. is below the discrete one's by more than
    /// 4 standard errors of the log ratio.
    pub fn continuous_resolved_better(&self) -> bool {
        let (l, se) = self.log_se_ratio();
        l > 4.0 * se
    }

    /// (HMC estimate − truth) / MCSE.
    pub fn hmc_z(&self) -> f64 {
        (self.hmc.0 - self.truth) / self.hmc.1
    }
}

fn rms(x: &[f64]) -> f64 {
    (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64).sqrt()
}

fn mean_abs(x: &[f64], t: f64) -> f64 {
    x.iter().map(|v| (v - t).abs()).sum::<f64>() / x.len() as f64
}

/// One r/b's running estimates of run 1: (r/b, (epochs, continuous) at the skeleton's events,
/// (epochs, discrete) at the grid points).
pub type RunningEstimate = (f64, Vec<(f64, f64)>, Vec<(f64, f64)>);

/// Fig. 5.
#[derive(Debug)]
pub struct Fig5 {
    /// b from the pilot.
    pub b: f64,
    /// The pilot's trajectory time per velocity change.
    pub event_spacing: f64,
    /// ŵ₁, and the reference's m and s of w₁.
    pub w1: (f64, f64, f64),
    /// Every r/b.
    pub ratios: Vec<Ratio>,
    /// Running estimates of run 1 against epochs, for r/b = 1 and r/b = 0.01: (epochs,
    /// continuous) at the skeleton's events and (epochs, discrete) at the grid points.
    pub running: Vec<RunningEstimate>,
    /// Independent runs.
    pub runs: usize,
}

impl Fig5 {
    /// Runs the pilot and the runs.
    pub fn compute(ctx: &Context<'_>, problems: &Problems<'_>) -> Result<Self> {
        let p = problems.logistic()?;
        let mode = p.laplace.mode.clone();
        let w_hat = mode[0];
        let (m, s) = (p.reference.mean[0], p.reference.sd[0]);
        let evals = |e: u64| 2 * e * SBPS_N as u64;
        let runs = ctx.mode.pick(RUNS, 20);
        let config = |chains: usize, tag: u64| ContinuousRunConfig {
            warmup: Budget::Evaluations(evals(100)),
            sampling: Budget::Evaluations(evals(EPOCHS)),
            num_chains: chains,
            seed: chain_seed(ctx.seed, tag),
            ..ContinuousRunConfig::default()
        };
        let sbps = SbpsConfig::default();
        let start = [mode.clone()];
        let pilot = run_pdmp(
            &p.model,
            config(1, 50),
            &start,
            &Sbps::new(sbps)?,
            &RunOptions::default(),
            ctx.reporter,
            "sbps Fig. 5: pilot",
        )?;
        let b = pilot.mean_segment();
        let event_spacing = pilot.mean_event_spacing();
        let functions = RATIOS
            .iter()
            .enumerate()
            .map(|(i, &ratio)| {
                let r = ratio * b;
                TestFunction::new(
                    format!("f{i}"),
                    move |x: &[f64]| ((x[0] - w_hat) / r).sin(),
                    QuadratureConfig { nodes: 5, max_step: 0.5 * r },
                )
            })
            .collect();
        let options = RunOptions { grid_step: Some(b), skeleton: true, functions };
        let run = run_pdmp(
            &p.model,
            config(runs, 51),
            &start,
            &Sbps::new(sbps)?,
            &options,
            ctx.reporter,
            "sbps Fig. 5: runs",
        )?;
        let mut ratios = Vec::new();
        for (i, &ratio) in RATIOS.iter().enumerate() {
            let r = ratio * b;
            let f = |w: f64| ((w - w_hat) / r).sin();
            let estimates: Vec<_> =
                (0..runs).map(|k| run.chain_function(k, &format!("f{i}"))).collect();
            let continuous = estimates.iter().map(|e| e.map_or(f64::NAN, |e| e.mean)).collect();
            let continuous_se = estimates.iter().map(|e| e.map_or(f64::NAN, |e| e.mcse)).collect();
            let batches = estimates.iter().map(|e| e.map_or(0, |e| e.batches)).collect();
            let mut discrete = Vec::with_capacity(runs);
            let mut discrete_se = Vec::with_capacity(runs);
            for c in &run.chains {
                let fx: Vec<f64> = c
                    .sink
                    .draws()
                    .map(|d| d.coordinate(0))
                    .unwrap_or_default()
                    .iter()
                    .map(|&w| f(w))
                    .collect();
                discrete.push(fx.iter().sum::<f64>() / fx.len() as f64);
                discrete_se.push(tallmc_diagnostics::mcse_mean(&[&fx])?);
            }
            let fw: Vec<Vec<f64>> =
                p.reference.w1.iter().map(|c| c.iter().map(|&w| f(w)).collect()).collect();
            let hmc_mean =
                fw.iter().flatten().sum::<f64>() / fw.iter().map(Vec::len).sum::<usize>() as f64;
            let hmc_mcse = tallmc_diagnostics::mcse_mean(&fw)?;
            let factor = (-(s * s) / (2.0 * r * r)).exp();
            let gaussian_truth = factor < NEGLIGIBLE;
            let truth = if gaussian_truth { ((m - w_hat) / r).sin() * factor } else { hmc_mean };
            ratios.push(Ratio {
                ratio,
                r,
                truth,
                gaussian_truth,
                hmc: (hmc_mean, hmc_mcse),
                continuous,
                discrete,
                continuous_se,
                discrete_se,
                batches,
            });
        }
        let epochs_per_time = run.epochs_per_time(SBPS_N);
        let running = [4usize, 0]
            .iter()
            .map(|&i| {
                let r = RATIOS[i] * b;
                (
                    RATIOS[i],
                    running_continuous(&run.chains[0].sink, w_hat, r, epochs_per_time),
                    running_discrete(&run.chains[0].sink, w_hat, r, b, epochs_per_time),
                )
            })
            .collect();
        Ok(Self { b, event_spacing, w1: (w_hat, m, s), ratios, running, runs })
    }
}

/// Running time average of sin((w₁ − ŵ₁)/r) along the skeleton of a chain, at every event, by
/// the same composite Gauss–Legendre rule as the sink (5 nodes, steps ≤ r/2); x-axis in epochs.
fn running_continuous(
    sink: &super::pdmp::RunSink, w_hat: f64, r: f64, epochs_per_time: f64,
) -> Vec<(f64, f64)> {
    let Some(sk) = &sink.skeleton else { return Vec::new() };
    let Ok(gl) = GaussLegendre::new(5) else { return Vec::new() };
    let mut out = Vec::with_capacity(sk.len());
    let mut integral = 0.0;
    for i in 0..sk.len().saturating_sub(1) {
        let (t0, t1) = (sk.times[i], sk.times[i + 1]);
        let (x, v) = (sk.position(i)[0], sk.velocity(i)[0]);
        integral +=
            gl.integrate_composite(0.0, t1 - t0, 0.5 * r, |s| ((x + v * s - w_hat) / r).sin());
        if t1 > 0.0 {
            out.push((t1 * epochs_per_time, integral / t1));
        }
    }
    out
}

/// Running mean of sin((w₁ − ŵ₁)/r) over a chain's grid draws (spacing b); x-axis in epochs.
fn running_discrete(
    sink: &super::pdmp::RunSink, w_hat: f64, r: f64, b: f64, epochs_per_time: f64,
) -> Vec<(f64, f64)> {
    let Some(d) = sink.draws() else { return Vec::new() };
    let mut sum = 0.0;
    d.coordinate(0)
        .iter()
        .enumerate()
        .map(|(k, &w)| {
            sum += ((w - w_hat) / r).sin();
            ((k + 1) as f64 * b * epochs_per_time, sum / (k + 1) as f64)
        })
        .collect()
}

impl Part for Fig5 {
    fn key(&self) -> &'static str {
        "fig5_continuous_vs_discrete"
    }

    fn summary(&self) -> Value {
        json!({
            "b": self.b, "time_per_velocity_change": self.event_spacing, "w_hat_1": self.w1.0, "reference_mean_1": self.w1.1, "reference_sd_1": self.w1.2,
            "runs": self.runs, "epochs_per_run": EPOCHS,
            "ratios": self.ratios.iter().map(|q| json!({
                "r_over_b": q.ratio, "r": q.r, "truth": q.truth, "gaussian_truth": q.gaussian_truth,
                "hmc_estimate": q.hmc.0, "hmc_mcse": q.hmc.1,
                "continuous_mean_abs_error": q.continuous_error(),
                "discrete_mean_abs_error": q.discrete_error(),
                "continuous_pooled_se": q.continuous_pooled_se(),
                "discrete_pooled_se": q.discrete_pooled_se(),
            })).collect::<Vec<_>>(),
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let upto = |limit: f64| -> Vec<&Ratio> {
            self.ratios.iter().filter(|q| q.ratio <= limit + 1e-12).collect()
        };
        let text = |v: &[&Ratio]| {
            v.iter()
                .map(|q| {
                    format!(
                        "r/b = {}: mean |error| {} vs {}, pooled s.e. {} vs {} (ratio {})",
                        q.ratio,
                        fmt_sig(q.continuous_error(), 2),
                        fmt_sig(q.discrete_error(), 2),
                        fmt_sig(q.continuous_pooled_se(), 2),
                        fmt_sig(q.discrete_pooled_se(), 2),
                        fmt_sig(q.continuous_pooled_se() / q.discrete_pooled_se(), 2)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let criterion = "the continuous estimator's pooled standard error (RMS over runs of each run's MCSE; both estimators are unbiased and the truth is 0 there) below the discrete one's by more than 4 s.e. of the log ratio";
        let small = upto(SMALL_RATIO);
        let at_tenth: Vec<&Ratio> = self
            .ratios
            .iter()
            .filter(|q| q.ratio > SMALL_RATIO + 1e-12 && q.ratio <= BRIEF_RATIO + 1e-12)
            .collect();
        let z = self
            .ratios
            .iter()
            .filter(|q| q.gaussian_truth)
            .map(|q| q.hmc_z().abs())
            .fold(0.0, f64::max);
        vec![
            Claim::new(
                "continuous_beats_discrete_for_small_r",
                "§7.2, Fig. 5: for r/b ≪ 1 the continuous estimate is more accurate than discrete samples spaced by b",
                format!(
                    "continuous vs discrete, {} runs, b = {}: {}",
                    self.runs,
                    fmt_sig(self.b, 3),
                    text(&small)
                ),
                format!("at every r/b ≤ {SMALL_RATIO}: {criterion}"),
                small.iter().all(|q| q.continuous_resolved_better()),
            ),
            Claim::new(
                "continuous_beats_discrete_at_r_over_b_0.1",
                "§7.2, Fig. 5: the advantage extends to r/b = 0.1",
                text(&at_tenth).to_string(),
                format!("at r/b = {BRIEF_RATIO}: {criterion}"),
                at_tenth.iter().all(|q| q.continuous_resolved_better()),
            ),
            Claim::new(
                "truth_matches_exact_run",
                "(how the truth is computed) where r ≪ posterior sd, E f ≈ 0 (the Gaussian value; the paper assumes the Laplace approximation, E f = 0)",
                format!(
                    "largest |HMC direct estimate − Gaussian truth| / MCSE where the Gaussian truth is used: {}",
                    fmt_sig(z, 2)
                ),
                "every |z| < 4 where the Gaussian truth is used",
                z < 4.0,
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let mut fig = Figure::new()
            .with_title(format!(
                "Fig. 5: continuous vs discrete estimates of E sin((w₁ − ŵ₁)/r), b = {}",
                fmt_sig(self.b, 3)
            ))
            .with_columns(3);
        for (ratio, cont, disc) in &self.running {
            let truth = self.ratios.iter().find(|q| q.ratio == *ratio).map_or(0.0, |q| q.truth);
            let (cx, cy): (Vec<f64>, Vec<f64>) = cont.iter().copied().unzip();
            let (dx, dy): (Vec<f64>, Vec<f64>) = disc.iter().copied().unzip();
            fig.push(
                Axes::new()
                    .with_title(format!("r/b = {ratio}: running estimate (run 1)"))
                    .with_x_label("epochs")
                    .with_y_label("estimate of E f")
                    .with_series(Line::new(&cx, &cy).with_label("continuous"))
                    .with_series(Line::new(&dx, &dy).with_label("discrete"))
                    .with_series(RefLine::horizontal(truth).with_label("truth")),
            );
        }
        let x: Vec<f64> = self.ratios.iter().map(|q| q.ratio).collect();
        let c: Vec<f64> = self.ratios.iter().map(|q| q.continuous_error()).collect();
        let d: Vec<f64> = self.ratios.iter().map(|q| q.discrete_error()).collect();
        let cs: Vec<f64> = self.ratios.iter().map(|q| q.continuous_pooled_se()).collect();
        let ds: Vec<f64> = self.ratios.iter().map(|q| q.discrete_pooled_se()).collect();
        fig.push(
            Axes::new()
                .with_title(format!("Mean |error| over {} runs of {EPOCHS} epochs", self.runs))
                .with_x_label("r/b")
                .with_y_label("mean |estimate − truth|")
                .with_log_x()
                .with_log_y()
                .with_legend(Legend::BottomRight)
                .with_series(Line::new(&x, &c).with_marker(Marker::Circle).with_label("continuous"))
                .with_series(Line::new(&x, &d).with_marker(Marker::Square).with_label("discrete"))
                .with_series(
                    Line::new(&x, &cs)
                        .with_dashes()
                        .with_color(PALETTE[0])
                        .with_label("continuous, pooled s.e."),
                )
                .with_series(
                    Line::new(&x, &ds)
                        .with_dashes()
                        .with_color(PALETTE[1])
                        .with_label("discrete, pooled s.e."),
                ),
        );
        vec![("fig5_continuous_vs_discrete.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("Fig. 5: continuous against discrete estimates");
        r.paragraph(&format!(
            "f(w) = sin((w₁ − ŵ₁)/r) on the §7.1 posterior, SBPS n = 100, k = 3. b = {} (pilot run: \
             trajectory time per segment, i.e. per proposal, refreshment or band horizon; the paper \
             reports b ≈ 2·10⁻²; the time between velocity changes is {}). {} runs of {EPOCHS} \
             epochs from ŵ. Continuous: quadrature along the segments; discrete: grid draws every b. \
             Truth: where exp(−s²/(2r²)) < {NEGLIGIBLE}, the Gaussian value with m = {}, s = {} from \
             the HMC reference (ŵ₁ = {}; the Laplace truth is 0); elsewhere the HMC draws' direct \
             estimate (the posterior is skewed).",
            fmt_sig(self.b, 3),
            fmt_sig(self.event_spacing, 3),
            self.runs,
            fmt_sig(self.w1.1, 4),
            fmt_sig(self.w1.2, 3),
            fmt_sig(self.w1.0, 4)
        ));
        r.table_of(
            &[
                "r/b",
                "r",
                "truth",
                "HMC direct estimate",
                "continuous mean |error|",
                "discrete mean |error|",
                "continuous pooled s.e.",
                "discrete pooled s.e.",
            ],
            self.ratios.iter(),
            |q| {
                vec![
                    q.ratio.to_string(),
                    fmt_sig(q.r, 3),
                    format!(
                        "{}{}",
                        fmt_sig(q.truth, 3),
                        if q.gaussian_truth { "" } else { " (HMC)" }
                    ),
                    format!("{} ± {}", fmt_sig(q.hmc.0, 2), fmt_sig(q.hmc.1, 2)),
                    fmt_sig(q.continuous_error(), 2),
                    fmt_sig(q.discrete_error(), 2),
                    fmt_sig(q.continuous_pooled_se(), 2),
                    fmt_sig(q.discrete_pooled_se(), 2),
                ]
            },
        );
        r.image("Fig. 5", "fig5_continuous_vs_discrete.svg");
    }
}
