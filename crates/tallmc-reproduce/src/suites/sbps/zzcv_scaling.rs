//! **Beyond the paper: ZZ-CV's cost per effective sample against n.** Zig-Zag with control
//! variates ([`ZigZagSubsampling`] with [`ControlVariates::rank_one`] around the posterior mode)
//! against full-data HMC (Laplace covariance as dense metric, [`run_exact`]) on the higgs-like
//! logistic regression (d = 29, prior N(0, 10² I), `synthetic::higgs_like(n, DATA_SEED)`), for
//! n = 10⁴, 10⁵, 10⁶ (quick) and up to 10⁷ (full; in full mode every data set is written to the
//! binary format, dropped, and memory-mapped back, so it is never held twice).
//!
//! **Cost per effective sample** = per-datum evaluations (terms + gradients, as the kernels
//! count them) of the sampling phase / ESS, per coordinate; the summary statistic is the median
//! over the 29 coordinates (the minimum ESS is reported too). **One ESS definition for both
//! samplers and every n:** the ESS of the mean, (sd / MCSE)², from
//! [`summarize`] (Geyer's initial-monotone-sequence estimate on
//! split chains, as Stan) applied to HMC's draws and to ZZ-CV's **grid draws** x(kΔ), with
//! Δ = [`GRID_FACTOR`] × the median Laplace sd: a grid in units of the posterior's width, so
//! that the draws per effective sample do not depend on n. This is per effective sample, not
//! per unit of trajectory time: ZZ-CV's evaluations per unit time grow like √n while the time
//! per effective sample shrinks like 1/√n (`docs/methods/zigzag.md`).
//!
//! **Set-up** (reported apart): Newton's method for the mode and Laplace covariance (shared by
//! both samplers: ZZ-CV's reference point, HMC's metric; from the previous n's mode), and
//! ZZ-CV's control-variate pass (N terms and gradients at ξ*, once per chain). Amortized over a
//! run of [`AMORTIZE_OVER`] effective samples, the pass adds 2N/1000 evaluations per effective
//! sample — that part grows with n by construction and is shown separately.
//!
//! **Full-data HMC at n = 10⁶** costs about 10⁹ per-datum evaluations for an ESS estimate
//! (≈ 1,000 gradient passes of 10⁶): too slow for the quick suite (≤ 60 s with Fig. 4). In
//! quick mode HMC is measured at 10⁴ and 10⁵ and its cost at 10⁶ is **extrapolated** as
//! n × (cost per ESS / n) averaged over the two measured sizes: every HMC gradient costs n
//! per-datum evaluations and, with the Laplace metric, the number of gradients per effective
//! sample does not depend on n (the posterior is Gaussian to O(n^{−1/2}) in the metric's
//! coordinates) — the measured 10⁴ → 10⁵ log-log slope checks it. Full mode measures HMC at
//! 10⁶ too (and extrapolates 10⁷ the same way).

use serde_json::{Value, json};
use tallmc_core::{EvalCounts, Terms};
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_models::synthetic::{HIGGS_LIKE_PRIOR_SD, higgs_like};
use tallmc_models::{DesignOptions, LogisticRegression, read_binary, write_binary};
use tallmc_samplers::continuous::{
    Budget, ContinuousRunConfig, InMemoryOptions, sample_trajectories_in_memory,
};
use tallmc_samplers::{
    ControlVariates, Laplace, NewtonOptions, ZigZagSubsampling, laplace_approximation,
};

use super::{Claim, DATA_SEED, Part, Problems, chain_seed};
use crate::chains::run_config;
use crate::exact::{ExactKernel, run_exact};
use crate::figure::{Axes, Figure, Legend, Line, Marker};
use crate::report::{Report, fmt_sig};
use crate::{Context, Error, Mode, Result};

/// Seed tag of the ZZ-CV chains (plus the index of n).
pub const TAG_ZZCV: u64 = 70;
/// Seed tag of the HMC chains (plus the index of n).
pub const TAG_HMC: u64 = 80;
/// Chains per sampler and n.
pub const CHAINS: usize = 2;
/// Grid step of ZZ-CV's draws, in median Laplace sds.
pub const GRID_FACTOR: f64 = 1.0;
/// Effective samples the set-up pass is amortized over in the report.
pub const AMORTIZE_OVER: f64 = 1000.0;
/// The claim: ZZ-CV's cost per effective sample at n = 10⁶ within this factor of n = 10⁴.
pub const FLAT_FACTOR: f64 = 2.0;
/// The claim: full-data HMC's grows "about 100×" from 10⁴ to 10⁶ — between these factors.
pub const HMC_GROWTH: (f64, f64) = (50.0, 200.0);

/// Sizes of the part.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The n of the data sets.
    pub sizes: Vec<usize>,
    /// The n at which HMC is run (the others are extrapolated).
    pub hmc_sizes: Vec<usize>,
    /// Grid draws per ZZ-CV chain.
    pub zz_draws: usize,
    /// HMC warmup iterations per chain.
    pub hmc_warmup: usize,
    /// HMC draws per chain.
    pub hmc_draws: usize,
    /// Write each data set to the binary format and memory-map it back.
    pub memory_map: bool,
}

impl Plan {
    /// Quick: n = 10⁴, 10⁵, 10⁶, HMC at 10⁴ and 10⁵; full: up to 10⁷, HMC up to 10⁶, memory-mapped.
    pub fn of(mode: Mode) -> Self {
        match mode {
            Mode::Quick => Self {
                sizes: vec![10_000, 100_000, 1_000_000],
                hmc_sizes: vec![10_000, 100_000],
                zz_draws: 150,
                hmc_warmup: 150,
                hmc_draws: 150,
                memory_map: false,
            },
            Mode::Full => Self {
                sizes: vec![10_000, 100_000, 1_000_000, 10_000_000],
                hmc_sizes: vec![10_000, 100_000, 1_000_000],
                zz_draws: 5_000,
                hmc_warmup: 500,
                hmc_draws: 2_000,
                memory_map: true,
            },
        }
    }
}

/// Per-coordinate results of one sampler at one n.
#[derive(Debug, Clone)]
pub struct SamplerRun {
    /// Posterior means.
    pub mean: Vec<f64>,
    /// Posterior sds.
    pub sd: Vec<f64>,
    /// MCSE of the means.
    pub mcse: Vec<f64>,
    /// ESS of the means, (sd / MCSE)².
    pub ess: Vec<f64>,
    /// Per-datum evaluations of the sampling phase, all chains.
    pub evals: EvalCounts,
    /// Draws over all chains (HMC iterations, or ZZ-CV grid draws).
    pub draws: usize,
    /// Wall seconds (slowest chain, sampling).
    pub seconds: f64,
}

impl SamplerRun {
    fn from_summaries(s: &[Summary], evals: EvalCounts, draws: usize, seconds: f64) -> Self {
        Self {
            mean: s.iter().map(|x| x.mean).collect(),
            sd: s.iter().map(|x| x.sd).collect(),
            mcse: s.iter().map(|x| x.mcse_mean).collect(),
            ess: s.iter().map(|x| (x.sd / x.mcse_mean).powi(2)).collect(),
            evals,
            draws,
            seconds,
        }
    }

    /// Median over coordinates of evaluations / ESS_j.
    pub fn cost_per_ess(&self) -> f64 {
        let mut c: Vec<f64> = self.ess.iter().map(|e| self.evals.total() as f64 / e).collect();
        c.sort_by(f64::total_cmp);
        let k = c.len();
        if k % 2 == 1 { c[k / 2] } else { 0.5 * (c[k / 2 - 1] + c[k / 2]) }
    }

    /// Evaluations / min_j ESS_j.
    pub fn cost_per_min_ess(&self) -> f64 {
        self.evals.total() as f64 / self.ess.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

/// Everything measured at one n.
#[derive(Debug, Clone)]
pub struct SizeRun {
    /// Observations.
    pub n: usize,
    /// Newton's evaluations for the mode (shared set-up).
    pub newton: EvalCounts,
    /// Median Laplace sd (the grid step's unit).
    pub median_sd: f64,
    /// ZZ-CV's control-variate set-up pass of one chain (plus its first proposal).
    pub zz_setup: EvalCounts,
    /// ZZ-CV.
    pub zz: SamplerRun,
    /// ZZ-CV's trajectory time, all chains.
    pub zz_time: f64,
    /// ZZ-CV's proposals and flips, all chains.
    pub zz_events: (u64, u64),
    /// Full-data HMC, where measured.
    pub hmc: Option<SamplerRun>,
}

/// The part: one [`SizeRun`] per n.
#[derive(Debug, Clone)]
pub struct ZzcvScaling {
    /// Sizes.
    pub plan: Plan,
    /// One run per n, in increasing n.
    pub runs: Vec<SizeRun>,
}

impl ZzcvScaling {
    /// Runs every n.
    pub fn compute(ctx: &Context<'_>, _problems: &Problems<'_>) -> Result<Self> {
        Self::compute_with(ctx, Plan::of(ctx.mode))
    }

    /// Runs with the given sizes.
    pub fn compute_with(ctx: &Context<'_>, plan: Plan) -> Result<Self> {
        let mut runs = Vec::new();
        let mut start = vec![0.0; 29];
        for (k, &n) in plan.sizes.iter().enumerate() {
            let model = higgs_model(ctx, n, plan.memory_map)?;
            let laplace = laplace_approximation(&model, &start, NewtonOptions::default())?;
            start.clone_from(&laplace.mode);
            let run = run_size(ctx, &plan, &model, &laplace, k)?;
            runs.push(run);
            drop(model);
            if plan.memory_map {
                let _ = std::fs::remove_file(data_path(ctx, n).with_extension("bin"));
                let _ = std::fs::remove_file(data_path(ctx, n).with_extension("json"));
            }
        }
        Ok(Self { plan, runs })
    }

    /// The run at `n`.
    pub fn at(&self, n: usize) -> Option<&SizeRun> {
        self.runs.iter().find(|r| r.n == n)
    }

    /// HMC's cost per effective sample at `n`: measured, else n × the mean of cost/n over the
    /// measured sizes (module docs). The flag says whether it was measured.
    pub fn hmc_cost(&self, n: usize) -> (f64, bool) {
        if let Some(h) = self.at(n).and_then(|r| r.hmc.as_ref()) {
            return (h.cost_per_ess(), true);
        }
        let per_n: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|r| r.hmc.as_ref().map(|h| h.cost_per_ess() / r.n as f64))
            .collect();
        (n as f64 * per_n.iter().sum::<f64>() / per_n.len() as f64, false)
    }

    /// ZZ-CV's cost per effective sample at `n` (sampling only).
    pub fn zz_cost(&self, n: usize) -> f64 {
        self.at(n).map_or(f64::NAN, |r| r.zz.cost_per_ess())
    }

    /// Log-log slope of HMC's measured cost per ESS between its two smallest measured sizes.
    pub fn hmc_slope(&self) -> f64 {
        let m: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter_map(|r| r.hmc.as_ref().map(|h| ((r.n as f64).ln(), h.cost_per_ess().ln())))
            .collect();
        if m.len() < 2 { f64::NAN } else { (m[1].1 - m[0].1) / (m[1].0 - m[0].0) }
    }

    /// max_j |ZZ-CV mean − HMC mean| / √(MCSE² + MCSE²) at `n` (NaN without HMC).
    pub fn max_z(&self, n: usize) -> f64 {
        let Some(r) = self.at(n) else { return f64::NAN };
        let Some(h) = &r.hmc else { return f64::NAN };
        (0..h.mean.len())
            .map(|j| (r.zz.mean[j] - h.mean[j]).abs() / r.zz.mcse[j].hypot(h.mcse[j]))
            .fold(0.0, f64::max)
    }
}

/// Where the binary copy of the data at `n` goes.
fn data_path(ctx: &Context<'_>, n: usize) -> std::path::PathBuf {
    let dir = if ctx.write_files { ctx.out_dir.clone() } else { std::env::temp_dir() };
    dir.join(format!("higgs_like_{n}_seed{DATA_SEED}_{}", std::process::id()))
}

/// The higgs-like model at `n`, in memory or memory-mapped from a binary file written (and the
/// in-memory copy dropped) first.
fn higgs_model(ctx: &Context<'_>, n: usize, memory_map: bool) -> Result<LogisticRegression> {
    let data = higgs_like(n, DATA_SEED)?.data;
    let data = if memory_map {
        let path = data_path(ctx, n);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        }
        let (bin, _) = write_binary(&data, &path)?;
        drop(data);
        read_binary(&bin, false)?
    } else {
        data
    };
    Ok(LogisticRegression::new(data, DesignOptions::default(), HIGGS_LIKE_PRIOR_SD)?)
}

/// ZZ-CV and (where planned) HMC at one n.
fn run_size(
    ctx: &Context<'_>, plan: &Plan, model: &LogisticRegression, laplace: &Laplace, k: usize,
) -> Result<SizeRun> {
    let n = model.num_terms();
    let d = model.dim();
    let mut sds = laplace.sds();
    sds.sort_by(f64::total_cmp);
    let median_sd = sds[d / 2];
    let grid_step = GRID_FACTOR * median_sd;
    let config = ContinuousRunConfig {
        // One step: the control-variate set-up pass (reported with the first step) and one
        // proposal, so that the sampling counts are the sampler's alone.
        warmup: Budget::Evaluations(1),
        sampling: Budget::Draws { count: plan.zz_draws, grid_step },
        num_chains: CHAINS,
        seed: chain_seed(ctx.seed, TAG_ZZCV + k as u64),
        ..ContinuousRunConfig::default()
    };
    let kernel =
        ZigZagSubsampling::with_estimator(ControlVariates::rank_one(laplace.mode.clone())?);
    let task = ctx.reporter.task(&format!("sbps zzcv: ZZ-CV n = {n}"), 1);
    let chains = sample_trajectories_in_memory(
        model,
        config,
        std::slice::from_ref(&laplace.mode),
        &kernel,
        InMemoryOptions::default(),
    )?;
    drop(task);
    let draws: Vec<&[f64]> =
        chains.iter().map(|c| c.sink.draws().map_or(&[][..], |m| m.draws.as_slice())).collect();
    let names: Vec<String> = (0..d).map(|j| format!("theta.{j}")).collect();
    let summaries = summarize(&names, &Draws::new(&draws, d)?)?;
    let evals: EvalCounts = chains.iter().map(|c| c.report.sampling.evals).sum();
    let seconds = chains.iter().map(|c| c.report.sampling_seconds).fold(0.0, f64::max);
    let zz = SamplerRun::from_summaries(&summaries, evals, CHAINS * plan.zz_draws, seconds);
    let zz_setup = chains[0].report.warmup.evals;
    let zz_time = chains.iter().map(|c| c.report.sampling_time).sum();
    let zz_events = (
        chains.iter().map(|c| c.report.sampling.proposals).sum(),
        chains.iter().map(|c| c.report.sampling.bounces).sum(),
    );

    let hmc = if plan.hmc_sizes.contains(&n) {
        let config = run_config(
            plan.hmc_warmup,
            plan.hmc_draws,
            CHAINS,
            chain_seed(ctx.seed, TAG_HMC + k as u64),
        );
        let label = format!("sbps zzcv: n = {n}");
        let run = run_exact(model, ExactKernel::Hmc, laplace, config, ctx.reporter, &label)?;
        Some(SamplerRun::from_summaries(
            &run.summaries,
            run.sampling_evals,
            run.draws,
            run.sampling_seconds(),
        ))
    } else {
        None
    };
    Ok(SizeRun { n, newton: laplace.evals, median_sd, zz_setup, zz, zz_time, zz_events, hmc })
}

impl Part for ZzcvScaling {
    fn key(&self) -> &'static str {
        "zzcv_scaling"
    }

    fn summary(&self) -> Value {
        let sizes: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                let (hmc, measured) = self.hmc_cost(r.n);
                json!({
                    "n": r.n,
                    "newton_evals": r.newton.total(),
                    "median_laplace_sd": r.median_sd,
                    "zz_cv": {
                        "cost_per_ess_median": r.zz.cost_per_ess(),
                        "cost_per_min_ess": r.zz.cost_per_min_ess(),
                        "setup_evals_per_chain": r.zz_setup.total(),
                        "cost_per_ess_amortized": r.zz.cost_per_ess()
                            + r.zz_setup.total() as f64 / AMORTIZE_OVER,
                        "evals": r.zz.evals.total(),
                        "grid_draws": r.zz.draws,
                        "min_ess": r.zz.ess.iter().copied().fold(f64::INFINITY, f64::min),
                        "evals_per_unit_time": r.zz.evals.total() as f64 / r.zz_time,
                        "proposals": r.zz_events.0,
                        "flips": r.zz_events.1,
                    },
                    "hmc": {
                        "cost_per_ess_median": hmc,
                        "measured": measured,
                        "cost_per_min_ess": r.hmc.as_ref().map(SamplerRun::cost_per_min_ess),
                        "draws": r.hmc.as_ref().map(|h| h.draws),
                        "min_ess": r.hmc.as_ref()
                            .map(|h| h.ess.iter().copied().fold(f64::INFINITY, f64::min)),
                    },
                    "max_z_zz_vs_hmc": self.max_z(r.n),
                })
            })
            .collect();
        json!({
            "data": format!("higgs-like logistic regression, d = 29, data seed {DATA_SEED}"),
            "chains": CHAINS,
            "grid_factor": GRID_FACTOR,
            "zz_draws_per_chain": self.plan.zz_draws,
            "hmc_warmup": self.plan.hmc_warmup,
            "hmc_draws_per_chain": self.plan.hmc_draws,
            "hmc_slope_measured": self.hmc_slope(),
            "sizes": sizes,
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let (lo, hi) = (10_000, 1_000_000);
        let zz_ratio = self.zz_cost(hi) / self.zz_cost(lo);
        let (h_hi, measured) = self.hmc_cost(hi);
        let h_ratio = h_hi / self.hmc_cost(lo).0;
        let how = if measured { "measured" } else { "extrapolated from 10⁴ and 10⁵" };
        vec![
            Claim::new(
                "zzcv_cost_per_ess_flat_in_n",
                "beyond the paper: ZZ-CV's per-datum evaluations per effective sample do not \
                 grow with n (Bierkens et al. 2019's super-efficiency)",
                format!(
                    "median over coordinates: {} at n = 10⁴, {} at 10⁶ (×{}); the set-up pass \
                     adds {} and {} per ESS amortized over {} effective samples",
                    fmt_sig(self.zz_cost(lo), 3),
                    fmt_sig(self.zz_cost(hi), 3),
                    fmt_sig(zz_ratio, 3),
                    fmt_sig(
                        self.at(lo).map_or(f64::NAN, |r| r.zz_setup.total() as f64) / AMORTIZE_OVER,
                        3
                    ),
                    fmt_sig(
                        self.at(hi).map_or(f64::NAN, |r| r.zz_setup.total() as f64) / AMORTIZE_OVER,
                        3
                    ),
                    fmt_sig(AMORTIZE_OVER, 2),
                ),
                format!("10⁶ within {FLAT_FACTOR}× of 10⁴ (sampling only)"),
                (1.0 / FLAT_FACTOR..=FLAT_FACTOR).contains(&zz_ratio),
            ),
            Claim::new(
                "hmc_cost_per_ess_grows_like_n",
                "full-data HMC's per-datum evaluations per effective sample grow like n",
                format!(
                    "{} at n = 10⁴, {} at 10⁶ ({how}): ×{}; measured log-log slope 10⁴ → 10⁵ {}",
                    fmt_sig(self.hmc_cost(lo).0, 3),
                    fmt_sig(h_hi, 3),
                    fmt_sig(h_ratio, 3),
                    fmt_sig(self.hmc_slope(), 3),
                ),
                format!("×{}–{} from 10⁴ to 10⁶", HMC_GROWTH.0, HMC_GROWTH.1),
                h_ratio >= HMC_GROWTH.0 && h_ratio <= HMC_GROWTH.1,
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let n: Vec<f64> = self.runs.iter().map(|r| r.n as f64).collect();
        let zz: Vec<f64> = self.runs.iter().map(|r| r.zz.cost_per_ess()).collect();
        let zz_amortized: Vec<f64> = self
            .runs
            .iter()
            .map(|r| r.zz.cost_per_ess() + r.zz_setup.total() as f64 / AMORTIZE_OVER)
            .collect();
        let (hn, hc): (Vec<f64>, Vec<f64>) = self
            .runs
            .iter()
            .filter_map(|r| r.hmc.as_ref().map(|h| (r.n as f64, h.cost_per_ess())))
            .unzip();
        let extrapolated: Vec<f64> = n.iter().map(|&x| self.hmc_cost(x as usize).0).collect();
        let anchor = |c: f64, slope: f64| {
            let x0 = n[0];
            Line::new(&[x0, n[n.len() - 1]], &[c, c * (n[n.len() - 1] / x0).powf(slope)])
        };
        let axes = Axes::new()
            .with_title("Per-datum evaluations per effective sample")
            .with_x_label("n")
            .with_y_label("evaluations / ESS (median over coordinates)")
            .with_log_x()
            .with_log_y()
            .with_legend(Legend::TopLeft)
            .with_series(Line::new(&n, &zz).with_marker(Marker::Circle).with_label("ZZ-CV"))
            .with_series(
                Line::new(&n, &zz_amortized)
                    .with_marker(Marker::Square)
                    .with_dashes()
                    .with_label(format!("ZZ-CV + set-up pass / {}", fmt_sig(AMORTIZE_OVER, 2))),
            )
            .with_series(
                Line::new(&hn, &hc).with_marker(Marker::Triangle).with_label("full-data HMC"),
            )
            .with_series(
                Line::new(&n, &extrapolated).with_dashes().with_label("HMC ∝ n (extrapolation)"),
            )
            .with_series(anchor(zz[0], 0.0).with_dashes().with_label("slope 0"))
            .with_series(
                anchor(hc.first().copied().unwrap_or(1.0), 1.0).with_dashes().with_label("slope 1"),
            );
        let fig = Figure::new()
            .with_title("ZZ-CV against full-data HMC, higgs-like logistic regression (d = 29)")
            .with_panel(axes);
        vec![("zzcv_scaling.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("Beyond the paper: ZZ-CV's cost per effective sample against n");
        r.paragraph(&format!(
            "Higgs-like logistic regression (d = 29), {CHAINS} chains per sampler and n. ZZ-CV: \
             control variates at the posterior mode, started there, {} grid draws per chain \
             every {GRID_FACTOR} median Laplace sd; HMC: Laplace covariance as dense metric, \
             {} warmup + {} draws per chain, at n ∈ {:?} (elsewhere extrapolated ∝ n). Cost = \
             per-datum evaluations of the sampling phase (terms + gradients) / ESS of the mean, \
             median over coordinates; the same ESS estimator (split-chain Geyer, as Stan) on \
             HMC's draws and ZZ-CV's grid draws.",
            self.plan.zz_draws, self.plan.hmc_warmup, self.plan.hmc_draws, self.plan.hmc_sizes
        ));
        r.table_of(
            &[
                "n",
                "ZZ-CV evals / ESS",
                "ZZ-CV evals / min ESS",
                "ZZ-CV set-up (per chain)",
                "ZZ-CV evals / unit time",
                "HMC evals / ESS",
                "HMC / ZZ-CV",
                "Newton evals",
                "max |z| ZZ-CV vs HMC",
            ],
            self.runs.iter(),
            |x| {
                let (h, measured) = self.hmc_cost(x.n);
                vec![
                    fmt_sig(x.n as f64, 2),
                    fmt_sig(x.zz.cost_per_ess(), 3),
                    fmt_sig(x.zz.cost_per_min_ess(), 3),
                    fmt_sig(x.zz_setup.total() as f64, 3),
                    fmt_sig(x.zz.evals.total() as f64 / x.zz_time, 3),
                    format!("{}{}", fmt_sig(h, 3), if measured { "" } else { " (extrapolated)" }),
                    fmt_sig(h / x.zz.cost_per_ess(), 3),
                    fmt_sig(x.newton.total() as f64, 3),
                    fmt_sig(self.max_z(x.n), 2),
                ]
            },
        );
        r.image("ZZ-CV against full-data HMC: cost per effective sample", "zzcv_scaling.svg");
    }
}
