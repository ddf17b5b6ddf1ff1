//! Suite `baseline`: the exact full-data kernels (random-walk Metropolis, adaptive Metropolis,
//! HMC) on two problems, measured the way every subsampling method will be measured against them.
//!
//! * **Conjugate Gaussian** (both modes n = 10⁶): y_i ~ N(1, 2²) (data seed 2), known σ = 2, prior
//!   μ ~ N(0, 10²); the posterior is Gaussian with closed-form mean and sd, so the error of every
//!   kernel is measured in units of its own MCSE.
//! * **higgs-like logistic regression** (quick n = 10⁵, full n = 10⁷; d = 29, data seed 1, prior
//!   N(0, 10² I)). Quick: compared with the committed long adaptive-Metropolis reference
//!   ([`crate::reference`]), errors in units of the combined MCSE. Full: compared with the
//!   Laplace approximation, whose error in posterior sds is O(n^{-1/2}) ≈ 3·10⁻⁴ at n = 10⁷ —
//!   far below the Monte Carlo error of the runs.
//!
//! Every kernel starts its 4 chains at over-dispersed draws around the mode (2 × a Laplace draw)
//! and uses the Laplace covariance as its proposal shape / initial metric. Reported per kernel:
//! accuracy, bulk and tail ESS, R-hat, per-datum evaluations per draw and ESS per 1,000
//! evaluations (the currency of every later comparison).

use serde_json::{Value, json};
use tallmc_core::Terms;
use tallmc_models::{GaussianMean, synthetic};
use tallmc_samplers::{Laplace, NewtonOptions, laplace_approximation};

use crate::chains::run_config;
use crate::exact::{ExactKernel, KernelRun, run_exact};
use crate::figure::{Axes, Bars, Figure, Histogram, Legend, Line, RefLine};
use crate::part::{Claim, Part, Suite, Z_MAX};
use crate::reference::{HIGGS_QUICK_N, higgs_model, higgs_reference};
use crate::report::{Report, fmt_sig};
use crate::{Context, Mode, Result};

/// Rows of the conjugate Gaussian problem.
pub const GAUSSIAN_N: usize = 1_000_000;
/// Data seed of the conjugate Gaussian problem.
pub const GAUSSIAN_DATA_SEED: u64 = 2;
const GAUSSIAN_MEAN: f64 = 1.0;
const GAUSSIAN_SIGMA: f64 = 2.0;
const PRIOR_SD: f64 = 10.0;

/// The coordinate of θ shown in trace and density figures of the logistic problem.
const SHOWN: usize = 1;

/// Where the logistic reference comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct LogisticReference {
    /// Posterior means.
    pub mean: Vec<f64>,
    /// Posterior sds.
    pub sd: Vec<f64>,
    /// MCSE of the means (0 for the Laplace approximation).
    pub mcse_mean: Vec<f64>,
    /// MCSE of the sds (0 for the Laplace approximation).
    pub mcse_sd: Vec<f64>,
    /// Description.
    pub source: String,
}

/// Everything the suite measured (the JSON summary is its [`Suite::summary`]).
#[derive(Debug)]
pub struct Baseline {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Closed-form posterior mean and sd of the conjugate Gaussian problem.
    pub gaussian_truth: (f64, f64),
    /// Runs on the conjugate Gaussian problem.
    pub gaussian: Vec<KernelRun>,
    /// Rows of the logistic problem.
    pub logistic_n: usize,
    /// Reference of the logistic problem.
    pub logistic_reference: LogisticReference,
    /// Runs on the logistic problem.
    pub logistic: Vec<KernelRun>,
}

/// Runs the suite with the [shared runner](crate::part::run) and returns the summary.
pub fn run(ctx: &Context<'_>) -> Result<Value> {
    crate::part::run::<Baseline>(ctx)
}

/// Runs every kernel on both problems.
pub fn compute(ctx: &Context<'_>) -> Result<Baseline> {
    let newton = NewtonOptions::default();
    // Conjugate Gaussian.
    let data =
        synthetic::normal_sample(GAUSSIAN_N, GAUSSIAN_MEAN, GAUSSIAN_SIGMA, GAUSSIAN_DATA_SEED)?;
    let model = GaussianMean::new(data, GAUSSIAN_SIGMA, 0.0, PRIOR_SD)?;
    let gaussian_truth = model.posterior_mean_sd();
    let laplace = laplace_approximation(&model, &[0.0], newton)?;
    let config = run_config(500, ctx.mode.pick(2000, 20_000), 4, ctx.seed);
    let gaussian = ExactKernel::ALL
        .iter()
        .map(|&k| run_exact(&model, k, &laplace, config, ctx.reporter, "conjugate Gaussian"))
        .collect::<Result<Vec<_>>>()?;
    drop(model);

    // higgs-like logistic regression.
    let n = ctx.mode.pick(HIGGS_QUICK_N, 10_000_000);
    ctx.reporter.note(&format!("baseline: generating the higgs-like data (n = {n})"));
    let (model, fingerprint) = higgs_model(n)?;
    ctx.reporter.note("baseline: posterior mode and Laplace approximation (Newton's method)");
    let laplace = laplace_approximation(&model, &vec![0.0; model.dim()], newton)?;
    let logistic_reference = match ctx.mode {
        Mode::Quick => {
            let r = higgs_reference(&fingerprint)?;
            LogisticReference {
                mean: r.mean,
                sd: r.sd,
                mcse_mean: r.mcse_mean,
                mcse_sd: r.mcse_sd,
                source: format!(
                    "long adaptive-Metropolis run ({} chains × {} draws, committed fixture)",
                    r.chains, r.draws
                ),
            }
        }
        Mode::Full => laplace_reference(&laplace),
    };
    let draws = ctx.mode.pick(1000, 2000);
    let logistic = ExactKernel::ALL
        .iter()
        .map(|&k| {
            // HMC starts with the Laplace metric and adapts only its step size (dual averaging
            // settles within ~100 iterations); the Metropolis kernels need the longer warmup to
            // leave their over-dispersed starts in d = 29.
            let warmup = if k == ExactKernel::Hmc { ctx.mode.pick(300, 1000) } else { 1000 };
            let config = run_config(warmup, draws, 4, ctx.seed);
            run_exact(&model, k, &laplace, config, ctx.reporter, "higgs-like logistic")
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Baseline {
        mode: ctx.mode,
        seed: ctx.seed,
        gaussian_truth,
        gaussian,
        logistic_n: n,
        logistic_reference,
        logistic,
    })
}

fn laplace_reference(l: &Laplace) -> LogisticReference {
    let d = l.mode.len();
    LogisticReference {
        mean: l.mode.clone(),
        sd: l.sds(),
        mcse_mean: vec![0.0; d],
        mcse_sd: vec![0.0; d],
        source: "Laplace approximation (error O(n^-1/2) posterior sds)".into(),
    }
}

/// Accuracy of a logistic run against the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogisticAccuracy {
    /// max_j |mean_j − ref_j| / √(mcse_j² + ref_mcse_j²).
    pub max_abs_z_mean: f64,
    /// max_j |sd_j − ref_sd_j| / √(mcse_sd_j² + ref_mcse_sd_j²).
    pub max_abs_z_sd: f64,
    /// max_j |mean_j − ref_j| / ref_sd_j.
    pub max_mean_error_in_sd: f64,
    /// max_j |sd_j / ref_sd_j − 1|.
    pub max_rel_sd_error: f64,
}

impl Baseline {
    /// Accuracy of a logistic run against the reference.
    pub fn logistic_accuracy(&self, run: &KernelRun) -> LogisticAccuracy {
        let r = &self.logistic_reference;
        let mut a = LogisticAccuracy {
            max_abs_z_mean: 0.0,
            max_abs_z_sd: 0.0,
            max_mean_error_in_sd: 0.0,
            max_rel_sd_error: 0.0,
        };
        for (j, s) in run.summaries.iter().enumerate() {
            let zm = (s.mean - r.mean[j]) / s.mcse_mean.hypot(r.mcse_mean[j]);
            let zs = (s.sd - r.sd[j]) / s.mcse_sd.hypot(r.mcse_sd[j]);
            a.max_abs_z_mean = a.max_abs_z_mean.max(zm.abs());
            a.max_abs_z_sd = a.max_abs_z_sd.max(zs.abs());
            a.max_mean_error_in_sd =
                a.max_mean_error_in_sd.max((s.mean - r.mean[j]).abs() / r.sd[j]);
            a.max_rel_sd_error = a.max_rel_sd_error.max((s.sd / r.sd[j] - 1.0).abs());
        }
        a
    }

    /// The JSON summary (the quick one is an insta snapshot after rounding).
    fn summary_json(&self) -> Value {
        let (tm, ts) = self.gaussian_truth;
        let mut gk = serde_json::Map::new();
        for run in &self.gaussian {
            let s = &run.summaries[0];
            gk.insert(
                run.kernel.key().into(),
                json!({
                    "mean": s.mean, "sd": s.sd, "mcse_mean": s.mcse_mean, "mcse_sd": s.mcse_sd,
                    "z_mean": (s.mean - tm) / s.mcse_mean, "z_sd": (s.sd - ts) / s.mcse_sd,
                    "ess_bulk": s.ess_bulk, "ess_tail": s.ess_tail, "rhat": s.rhat,
                    "accept": run.accept(), "divergences": run.divergences(),
                    "evals_per_draw": run.evals_per_draw(),
                    "ess_per_1000_evals": run.ess_per_1000_evals(0),
                    "sampling_seconds": run.sampling_seconds(),
                }),
            );
        }
        let mut lk = serde_json::Map::new();
        for run in &self.logistic {
            let a = self.logistic_accuracy(run);
            let min = |f: &dyn Fn(usize) -> f64| {
                (0..run.summaries.len()).map(f).fold(f64::INFINITY, f64::min)
            };
            let max_rhat = run.summaries.iter().map(|s| s.rhat).fold(0.0, f64::max);
            lk.insert(
                run.kernel.key().into(),
                json!({
                    "max_abs_z_mean": a.max_abs_z_mean, "max_abs_z_sd": a.max_abs_z_sd,
                    "max_mean_error_in_sd": a.max_mean_error_in_sd,
                    "max_rel_sd_error": a.max_rel_sd_error,
                    "min_ess_bulk": min(&|j| run.summaries[j].ess_bulk),
                    "min_ess_tail": min(&|j| run.summaries[j].ess_tail),
                    "min_ess_bulk_per_draw": min(&|j| run.summaries[j].ess_bulk) / run.draws as f64,
                    "max_rhat": max_rhat,
                    "accept": run.accept(), "divergences": run.divergences(),
                    "evals_per_draw": run.evals_per_draw(),
                    "min_ess_per_1000_evals": min(&|j| run.ess_per_1000_evals(j)),
                    "sampling_seconds": run.sampling_seconds(),
                }),
            );
        }
        json!({
            "suite": "baseline",
            "mode": self.mode,
            "seed": self.seed,
            "gaussian": {
                "n": GAUSSIAN_N, "data": "y ~ N(1, 2^2), data seed 2; sigma = 2 known; prior N(0, 10^2)",
                "truth": {"mean": tm, "sd": ts},
                "draws_per_kernel": self.gaussian.first().map_or(0, |r| r.draws),
                "kernels": gk,
            },
            "logistic": {
                "n": self.logistic_n, "d": 29, "data": "higgs-like, data seed 1; prior N(0, 10^2 I)",
                "reference": self.logistic_reference.source,
                "draws_per_kernel": self.logistic.first().map_or(0, |r| r.draws),
                "kernels": lk,
            },
        })
    }
}

fn normal_pdf(mean: f64, sd: f64) -> impl Fn(f64) -> f64 {
    move |x| (-0.5 * ((x - mean) / sd).powi(2)).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
}

/// R-hat below which the conjugate-Gaussian chains count as mixed.
pub const MAX_RHAT_GAUSSIAN: f64 = 1.05;
/// Rank R-hat below which HMC's chains on the logistic posterior count as mixed.
pub const MAX_RHAT_HMC: f64 = 1.01;
/// HMC's smallest bulk ESS per draw on the logistic posterior.
pub const MIN_HMC_ESS_PER_DRAW: f64 = 0.5;

impl Part for Baseline {
    fn key(&self) -> &'static str {
        "exact_kernels"
    }

    fn summary(&self) -> Value {
        self.summary_json()
    }

    /// The claims: each exact kernel against the closed form, HMC against the logistic reference,
    /// and the cost of full-data kernels.
    fn claims(&self) -> Vec<Claim> {
        let b = self;
        let (tm, ts) = b.gaussian_truth;
        let mut claims = Vec::new();
        let mut conjugate_ok = !b.gaussian.is_empty();
        let measured = b
            .gaussian
            .iter()
            .map(|k| {
                let s = &k.summaries[0];
                let (zm, zs) = ((s.mean - tm) / s.mcse_mean, (s.sd - ts) / s.mcse_sd);
                conjugate_ok &= zm.abs() < Z_MAX && zs.abs() < Z_MAX && s.rhat < MAX_RHAT_GAUSSIAN;
                format!(
                    "{}: z_mean = {}, z_sd = {}, R-hat {}",
                    k.kernel.label(),
                    fmt_sig(zm, 2),
                    fmt_sig(zs, 2),
                    fmt_sig(s.rhat, 4)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        claims.push(Claim::new(
            "exact_kernels_match_the_conjugate_posterior",
            "Each exact kernel samples the conjugate posterior",
            measured,
            format!("every kernel: mean and sd within {Z_MAX} MCSE of the closed form; R-hat < {MAX_RHAT_GAUSSIAN}"),
            conjugate_ok,
        ));
        let hmc = b.logistic.iter().find(|k| k.kernel == ExactKernel::Hmc);
        let not_run = || "HMC did not run".to_string();
        let a = hmc.map(|h| b.logistic_accuracy(h));
        claims.push(Claim::new(
            "hmc_matches_the_logistic_reference",
            format!(
                "HMC on higgs-like (d = 29) matches the reference ({})",
                b.logistic_reference.source
            ),
            a.map_or_else(not_run, |a| {
                format!(
                    "max |z| = {} (mean), {} (sd); max error {} posterior sd",
                    fmt_sig(a.max_abs_z_mean, 2),
                    fmt_sig(a.max_abs_z_sd, 2),
                    fmt_sig(a.max_mean_error_in_sd, 2)
                )
            }),
            format!("every mean and sd within {Z_MAX} combined MCSE of the reference"),
            a.is_some_and(|a| a.max_abs_z_mean < Z_MAX && a.max_abs_z_sd < Z_MAX),
        ));
        let max_rhat = hmc.map(|h| h.summaries.iter().map(|s| s.rhat).fold(0.0, f64::max));
        claims.push(Claim::new(
            "hmc_chains_mix",
            "HMC's chains on the logistic posterior mix",
            max_rhat.map_or_else(not_run, |m| format!("max rank R-hat = {}", fmt_sig(m, 4))),
            format!("max rank R-hat < {MAX_RHAT_HMC}"),
            max_rhat.is_some_and(|m| m < MAX_RHAT_HMC),
        ));
        let per_draw = hmc.map(|h| {
            h.summaries.iter().map(|s| s.ess_bulk).fold(f64::INFINITY, f64::min) / h.draws as f64
        });
        let divergences = hmc.map(KernelRun::divergences);
        claims.push(Claim::new(
            "hmc_is_efficient_and_stable",
            "HMC on a log-concave posterior: nearly independent draws, no divergences",
            match (per_draw, divergences) {
                (Some(p), Some(d)) => {
                    format!(
                        "min bulk ESS per draw over θ = {}; {d} divergent transitions",
                        fmt_sig(p, 3)
                    )
                }
                _ => not_run(),
            },
            format!(
                "bulk ESS per draw ≥ {MIN_HMC_ESS_PER_DRAW} for every θ_j; no divergent transition"
            ),
            per_draw.is_some_and(|p| p >= MIN_HMC_ESS_PER_DRAW) && divergences == Some(0),
        ));
        let eff = |k: &KernelRun| {
            (0..k.summaries.len()).map(|j| k.ess_per_1000_evals(j)).fold(f64::INFINITY, f64::min)
        };
        let rwm = b.logistic.iter().find(|k| k.kernel == ExactKernel::Rwm);
        let ratio = hmc.zip(rwm).map(|(h, r)| eff(h) / eff(r));
        claims.push(Claim::new(
            "gradients_pay_in_29_dimensions",
            "Gradients pay on a 29-d posterior: HMC's ESS per evaluation exceeds random-walk Metropolis'",
            ratio.map_or("HMC or RWM did not run".into(), |x| {
                format!("HMC / RWM = {}× (min ESS per 1,000 evaluations)", fmt_sig(x, 3))
            }),
            "ratio > 1",
            ratio.is_some_and(|x| x > 1.0),
        ));
        let passes = |k: &KernelRun, n: usize| {
            let n = n as u64;
            k.sampling_evals.terms.is_multiple_of(n) && k.sampling_evals.gradients.is_multiple_of(n)
        };
        let full_passes = b.gaussian.iter().all(|k| passes(k, GAUSSIAN_N))
            && b.logistic.iter().all(|k| passes(k, b.logistic_n));
        claims.push(Claim::new(
            "full_data_kernels_evaluate_every_term",
            "Full-data kernels evaluate all N terms for every density (and gradient)",
            b.logistic
                .iter()
                .map(|k| {
                    format!(
                        "{}: {} evaluations per draw = {} × N",
                        k.kernel.label(),
                        fmt_sig(k.evals_per_draw(), 3),
                        fmt_sig(k.evals_per_draw() / b.logistic_n as f64, 3)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            "on both problems, every kernel's term and gradient counts after warmup are multiples of N (full-data passes only)",
            full_passes,
        ));
        claims
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let b = self;
        let (tm, ts) = b.gaussian_truth;
        let r = &b.logistic_reference;
        let shown = format!("θ.{}", SHOWN + 1);
        // Traces of chain 1.
        let mut traces =
            Figure::new().with_title("Traces (chain 1, first 1,000 draws)").with_columns(3);
        for run in &b.gaussian {
            let x = run.chains[0].sink.coordinate(0);
            traces.push(
                Axes::new()
                    .with_title(format!("conjugate Gaussian: {}", run.kernel.label()))
                    .with_x_label("draw")
                    .with_y_label("μ")
                    .with_series(Line::trace(&x[..x.len().min(1000)]).with_label("μ"))
                    .with_series(RefLine::horizontal(tm).with_label("posterior mean")),
            );
        }
        for run in &b.logistic {
            let x = run.chains[0].sink.coordinate(SHOWN);
            traces.push(
                Axes::new()
                    .with_title(format!("higgs-like: {}", run.kernel.label()))
                    .with_x_label("draw")
                    .with_y_label(&shown)
                    .with_series(Line::trace(&x[..x.len().min(1000)]).with_label(&shown))
                    .with_series(RefLine::horizontal(r.mean[SHOWN]).with_label("reference mean")),
            );
        }

        // Densities against the truth.
        let mut dens = Figure::new().with_title("Marginal densities vs the truth").with_columns(3);
        for run in &b.gaussian {
            let x: Vec<f64> = run.coordinate(0).concat();
            dens.push(
                Axes::new()
                    .with_title(format!("conjugate Gaussian: {}", run.kernel.label()))
                    .with_x_label("μ")
                    .with_y_label("density")
                    .with_legend(Legend::TopLeft)
                    .with_series(Histogram::new(&x, 40).with_label("draws"))
                    .with_series(
                        Line::from_fn(tm - 4.0 * ts, tm + 4.0 * ts, 200, normal_pdf(tm, ts))
                            .with_label("closed form"),
                    ),
            );
        }
        let (rm, rs) = (r.mean[SHOWN], r.sd[SHOWN]);
        for run in &b.logistic {
            let x: Vec<f64> = run.coordinate(SHOWN).concat();
            dens.push(
                Axes::new()
                    .with_title(format!("higgs-like: {}", run.kernel.label()))
                    .with_x_label(&shown)
                    .with_y_label("density")
                    .with_legend(Legend::TopLeft)
                    .with_series(Histogram::new(&x, 40).with_label("draws"))
                    .with_series(
                        Line::from_fn(rm - 4.0 * rs, rm + 4.0 * rs, 200, normal_pdf(rm, rs))
                            .with_label("N(reference mean, sd)"),
                    ),
            );
        }

        // ESS per 1,000 evaluations.
        let mut bars = Axes::new()
            .with_title("Bulk ESS per 1,000 per-datum evaluations (logistic: min over θ)")
            .with_log_y()
            .with_y_label("ESS / 1,000 evaluations")
            .with_categories(["conjugate Gaussian", "higgs-like logistic"]);
        for (g, l) in b.gaussian.iter().zip(&b.logistic) {
            let lmin = (0..l.summaries.len())
                .map(|j| l.ess_per_1000_evals(j))
                .fold(f64::INFINITY, f64::min);
            bars.push(Bars::new(&[g.ess_per_1000_evals(0), lmin]).with_label(g.kernel.label()));
        }
        vec![
            ("traces.svg", traces),
            ("densities.svg", dens),
            ("ess_per_evaluation.svg", Figure::new().with_panel(bars)),
        ]
    }

    /// The report's sections below the claims table.
    fn report(&self, r: &mut Report) {
        let b = self;
        let (tm, ts) = b.gaussian_truth;
        r.section(&format!(
            "Conjugate Gaussian (n = {GAUSSIAN_N}): closed form mean {}, sd {}",
            fmt_sig(tm, 6),
            fmt_sig(ts, 4)
        ));
        r.table_of(
            &[
                "kernel",
                "mean",
                "sd",
                "z mean",
                "z sd",
                "bulk ESS",
                "tail ESS",
                "R-hat",
                "accept",
                "evals/draw",
                "ESS/1000 evals",
            ],
            b.gaussian.iter(),
            |k| {
                let s = &k.summaries[0];
                vec![
                    k.kernel.label().into(),
                    fmt_sig(s.mean, 7),
                    fmt_sig(s.sd, 4),
                    fmt_sig((s.mean - tm) / s.mcse_mean, 2),
                    fmt_sig((s.sd - ts) / s.mcse_sd, 2),
                    fmt_sig(s.ess_bulk, 4),
                    fmt_sig(s.ess_tail, 4),
                    fmt_sig(s.rhat, 4),
                    fmt_sig(k.accept(), 3),
                    fmt_sig(k.evals_per_draw(), 3),
                    fmt_sig(k.ess_per_1000_evals(0), 3),
                ]
            },
        );
        r.section(&format!("higgs-like logistic regression (n = {}, d = 29)", b.logistic_n));
        r.paragraph(&format!("Reference: {}.", b.logistic_reference.source));
        r.table_of(
            &[
                "kernel",
                "max |z| mean",
                "max |z| sd",
                "max error (sd)",
                "min bulk ESS",
                "min tail ESS",
                "max R-hat",
                "accept",
                "evals/draw",
                "min ESS/1000 evals",
            ],
            b.logistic.iter(),
            |k| {
                let a = b.logistic_accuracy(k);
                let min_of = |f: &dyn Fn(usize) -> f64| {
                    (0..k.summaries.len()).map(f).fold(f64::INFINITY, f64::min)
                };
                vec![
                    k.kernel.label().into(),
                    fmt_sig(a.max_abs_z_mean, 2),
                    fmt_sig(a.max_abs_z_sd, 2),
                    fmt_sig(a.max_mean_error_in_sd, 2),
                    fmt_sig(min_of(&|j| k.summaries[j].ess_bulk), 4),
                    fmt_sig(min_of(&|j| k.summaries[j].ess_tail), 4),
                    fmt_sig(k.summaries.iter().map(|s| s.rhat).fold(0.0, f64::max), 4),
                    fmt_sig(k.accept(), 3),
                    fmt_sig(k.evals_per_draw(), 3),
                    fmt_sig(min_of(&|j| k.ess_per_1000_evals(j)), 3),
                ]
            },
        );
        r.section("Figures");
        r.image("traces", "traces.svg");
        r.image("densities", "densities.svg");
        r.image("ESS per evaluation", "ess_per_evaluation.svg");
    }
}

impl Suite for Baseline {
    const NAME: &'static str = "baseline";
    const TITLE: &'static str = "Baseline: exact full-data kernels";
    const PAPER: &'static str = "claim";

    fn compute(ctx: &Context<'_>) -> Result<Self> {
        compute(ctx)
    }

    fn parts(&self) -> Vec<&dyn Part> {
        vec![self]
    }

    fn summary(&self) -> Value {
        self.summary_json()
    }

    fn intro(&self) -> String {
        format!(
            "Mode `{}`, seed {}. Every kernel runs 4 chains from over-dispersed starts (mode + 2 × a \
             Laplace draw), with the Laplace covariance as proposal shape / initial metric. Costs \
             are per-datum evaluations (terms + gradients) after warmup.",
            self.mode, self.seed
        )
    }
}
