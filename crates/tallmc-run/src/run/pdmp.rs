//! `tallmc sample bps | sbps | psbps | lipsbps | zigzag | zigzag-ss | zigzag-cv`: the
//! piecewise-deterministic samplers, whose output is a continuous trajectory.
//!
//! The trajectory goes to three places: equally spaced draws x(kΔ) in CmdStan's CSV layout
//! (`chain_C.csv`, the only draws a PDMP makes — event positions are not draws), the exact
//! time averages of every parameter with their batch-means MCSE (summary.json's
//! `"continuous_time"`), and, with `--skeleton`, the event skeleton (`skeleton_C.csv`).
//!
//! Budgets: warmup is W·Δ of trajectory time (`--warmup W`); sampling is D·Δ (`--draws D`,
//! exactly D draws per chain) unless `--time`, `--events` or `--evaluations` is given. The grid
//! step Δ defaults to the median posterior sd of the Laplace approximation, about the time a
//! unit-speed particle needs to cross the posterior, so the defaults mean what they mean for
//! the other samplers: W warmup and D draws, each about one posterior width of travel apart.
//! Zig-Zag with control variates runs by default in whitened coordinates z = L⁻¹(θ − θ*) (the
//! Laplace approximation's mode and Cholesky factor), where a unit of trajectory time is about
//! one posterior sd of travel in every direction: its default Δ is 1. So do BPS and Zig-Zag with
//! the automatic envelope ([`Whitened`]; `--frame original` runs them in θ), SBPS and pSBPS,
//! and ZZ-SS on models with bounded per-datum gradients (logistic: the bounds in z are exact);
//! lipSBPS runs in θ unless `--frame whitened` (on such models), where it mixes better per
//! second. With the model's curvature bound BPS / Zig-Zag run in θ, and so do lipSBPS and ZZ-SS
//! on models with Lipschitz per-datum gradients (gaussian-mean, probit).
//! For that, every BPS-type sampler here draws its velocities from N(0, I) (each coordinate
//! moves at speed ~1, as in Zig-Zag); the SBPS paper's unit-sphere velocities move each
//! coordinate at speed ~1/√d, so the same trajectory time would mix √d times less.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use tallmc_core::{
    BoundedPredictorThirdDerivative, EvalCounts, EventTotals, LinearPredictor, LogPriorCurvature,
    LogPriorHessian, PdmpKernel, TermGradients, WhiteningFrame,
};
use tallmc_diagnostics::continuous::{ContinuousSummary, TimeAverageConfig, summarize_continuous};
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_models::{
    FastLogisticRegression, Gaussian, GaussianMean, LinearRegression, NegativeBinomialRegression,
    PoissonRegression, ProbitRegression, RobustRegression,
};
use tallmc_samplers::Whitened;
use tallmc_samplers::continuous::{
    Budget, ContinuousChainOutput, ContinuousDriver, ContinuousRunConfig, GridDraws,
    MemorySkeleton, SkeletonSink, TimeAverageSink,
};
use tallmc_samplers::piecewise::{
    AutoBoundConfig, BandConfig, Bps, BpsConfig, ControlVariates, LipSbps, LipSbpsConfig, Sbps,
    SbpsConfig, TaylorControlVariates, ZigZag, ZigZagConfig, ZigZagSubsampling,
};
use tallmc_samplers::sink::{ColumnMemorySink, Tee};
use tallmc_samplers::{Laplace, VelocityDistribution};

use super::context::{EvalTotals, Outcome, RunHeader, RunModel, Setup, WallSeconds};
use super::outputs::{AnyTuning, MaybeCsv, register_open_file};
use super::report::{self, RunFacts};
use crate::spec::{FrameChoice, RateBoundChoice, RunSpec, SamplerKind, SamplerSettings};

/// The sinks of one chain: time averages, grid draws (memory + CSV), and with `skeleton` the
/// event skeleton (memory + CSV).
pub(crate) type PdmpSink = Tee<
    TimeAverageSink,
    Tee<
        GridDraws<Tee<ColumnMemorySink, MaybeCsv>>,
        Tee<Option<MemorySkeleton>, Option<SkeletonSink>>,
    >,
>;
/// The chains of a continuous-time run, with each kernel's typed tuning as lines and JSON.
pub(crate) type PdmpOutputs = Vec<ContinuousChainOutput<PdmpSink, AnyTuning>>;

/// Default minibatch size of SBPS: min(100, N) (the paper's n).
const DEFAULT_SBPS_BATCH: usize = 100;
/// Default refresh rate of BPS and lipSBPS, per Δ.
const BPS_REFRESH_PER_GRID: f64 = 1.0;
/// Default refresh rate of SBPS and pSBPS, per Δ (the authors' 0.05 per unit time, with time
/// measured in posterior widths).
const SBPS_REFRESH_PER_GRID: f64 = 0.05;

/// The validated settings of a continuous-time run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PdmpSettings {
    kind: SamplerKind,
    grid: Option<f64>,
    time: Option<f64>,
    events: Option<u64>,
    evaluations: Option<u64>,
    warmup: usize,
    draws: usize,
    refresh_rate: Option<f64>,
    k: f64,
    batch: usize,
    rate_bound: Option<RateBoundChoice>,
    frame: Option<FrameChoice>,
    /// Whether the model has a curvature bound (BPS and Zig-Zag then use it unless
    /// `--rate-bound envelope`).
    has_bound: bool,
    /// Whether the model bounds its per-datum gradients (lipSBPS and ZZ-SS then run whitened
    /// unless `--frame original`; with Lipschitz constants only they run in θ).
    gradient_bounds: bool,
    skeleton: bool,
}

impl PdmpSettings {
    /// Settings of a continuous-time sampler, checked against N, against whether the model
    /// has a curvature bound (`has_bound`) and whether it bounds its per-datum gradients
    /// (`gradient_bounds`).
    pub(crate) fn new(
        spec: &RunSpec, n: usize, has_bound: bool, gradient_bounds: bool,
    ) -> Result<Self> {
        let sampler = &spec.sampler;
        let Some(c) = sampler.continuous() else {
            bail!("{} is not a continuous-time sampler", sampler.name());
        };
        let frame = match sampler {
            SamplerSettings::ZigzagCv(s) => s.frame,
            SamplerSettings::Bps(s) => s.frame,
            SamplerSettings::Zigzag(s) => s.frame,
            SamplerSettings::Sbps(s) | SamplerSettings::Psbps(s) => s.frame,
            SamplerSettings::Lipsbps(s) => s.frame,
            SamplerSettings::ZigzagSs(s) => s.frame,
            _ => None,
        };
        let (refresh_rate, k, batch, rate_bound) = match sampler {
            SamplerSettings::Bps(s) => (s.bouncy.refresh_rate, None, None, s.rate_bound),
            SamplerSettings::Sbps(s) | SamplerSettings::Psbps(s) => {
                (s.bouncy.refresh_rate, Some(s.k), s.batch, None)
            }
            SamplerSettings::Lipsbps(s) => (s.bouncy.refresh_rate, None, None, None),
            SamplerSettings::Zigzag(s) => (None, None, None, s.rate_bound),
            _ => (None, None, None, None),
        };
        let batch = batch.unwrap_or(n.min(DEFAULT_SBPS_BATCH));
        if batch == 0 || batch > n {
            bail!("--batch {batch}: expected 1 ≤ n ≤ N = {n}");
        }
        let s = Self {
            kind: sampler.kind(),
            grid: c.grid,
            time: c.budget.time,
            events: c.budget.events,
            evaluations: c.budget.evaluations,
            warmup: spec.warmup,
            draws: spec.draws,
            refresh_rate,
            k: k.unwrap_or(crate::spec::pdmp::DEFAULT_K),
            batch,
            rate_bound,
            frame,
            has_bound,
            gradient_bounds,
            skeleton: c.skeleton,
        };
        if s.frame == Some(FrameChoice::Whitened) && s.uses_model_bound() {
            bail!(
                "--frame whitened: {} with the model's curvature bound runs in the original \
                 coordinates; add --rate-bound envelope to run it whitened",
                sampler.name()
            );
        }
        // Validate a kernel's settings now, before the mode search.
        if matches!(s.kind, SamplerKind::Sbps | SamplerKind::Psbps) {
            s.sbps(1.0).validate()?;
        }
        Ok(s)
    }

    /// Whether the process runs in whitened coordinates unless --frame original: zigzag-cv,
    /// bps / zigzag with the automatic envelope, sbps / psbps, and lipsbps / zigzag-ss on a
    /// model with bounded per-datum gradients (whose bounds carry over to z exactly; the
    /// Lipschitz models' per-datum curvature constants do not, so they run in θ).
    fn whitenable(&self) -> bool {
        match self.kind {
            SamplerKind::ZigzagCv | SamplerKind::Sbps | SamplerKind::Psbps => true,
            SamplerKind::Bps | SamplerKind::Zigzag => !self.uses_model_bound(),
            SamplerKind::Lipsbps | SamplerKind::ZigzagSs => self.gradient_bounds,
            _ => false,
        }
    }

    /// Whether the process runs in whitened coordinates: [`whitenable`](Self::whitenable), and
    /// --frame whitened or, without --frame, every whitenable sampler but lipsbps. lipSBPS
    /// needs fewer evaluations in z but mixes less per unit of time there: measured with the
    /// defaults on two 1,000 × 20 logistic regressions (docs/benchmarks.md, "Whitened
    /// subsampling samplers in seconds"), its ESS per second was 2.6× (independent covariates)
    /// and 2.1× (ρ = 0.9) higher in θ on average over three seeds, while sbps, psbps and
    /// zigzag-ss did as well or better in z.
    fn whitened(&self) -> bool {
        self.whitenable()
            && match self.frame {
                Some(FrameChoice::Original) => false,
                Some(FrameChoice::Whitened) => true,
                None => self.kind != SamplerKind::Lipsbps,
            }
    }

    /// Whether BPS / Zig-Zag thin against the model's curvature bound (`--rate-bound model`,
    /// or by default when the model has one).
    fn uses_model_bound(&self) -> bool {
        matches!(self.kind, SamplerKind::Bps | SamplerKind::Zigzag)
            && match self.rate_bound {
                Some(RateBoundChoice::Model) => true,
                Some(RateBoundChoice::Envelope) => false,
                None => self.has_bound,
            }
    }

    /// The frame every sampler but zigzag-cv (which builds its own) runs in: the Laplace
    /// approximation's when whitened. By default a covariance that cannot be factored falls
    /// back to θ; asked for with --frame whitened, it is an error.
    fn laplace_frame(&self, laplace: &Laplace) -> Result<Option<WhiteningFrame>> {
        if self.kind == SamplerKind::ZigzagCv || !self.whitened() {
            return Ok(None);
        }
        match WhiteningFrame::new(laplace.mode.clone(), &laplace.covariance) {
            Ok(frame) => Ok(Some(frame)),
            Err(_) if self.frame.is_none() => Ok(None),
            Err(e) => Err(anyhow::Error::new(e)
                .context("cannot whiten with the Laplace covariance (use --frame original)")),
        }
    }

    /// The grid step: `--grid`, 1 in whitened coordinates (`whitened`), or the median Laplace
    /// posterior sd.
    fn grid_step(&self, laplace: &Laplace, whitened: bool) -> Result<f64> {
        if let Some(g) = self.grid {
            return Ok(g);
        }
        if whitened {
            return Ok(1.0);
        }
        let d = laplace.mode.len();
        let mut sds: Vec<f64> = (0..d).map(|j| laplace.covariance[j * d + j].sqrt()).collect();
        sds.sort_by(f64::total_cmp);
        let median = sds[d / 2];
        if !(median.is_finite() && median > 0.0) {
            bail!(
                "cannot choose a default --grid from the Laplace approximation (median sd \
                 {median}); give --grid DELTA"
            );
        }
        Ok(median)
    }

    /// The warmup and sampling budgets for grid step `grid`.
    fn budgets(&self, grid: f64) -> (Budget, Budget) {
        let warmup = Budget::Time(self.warmup as f64 * grid);
        let sampling = if let Some(t) = self.time {
            Budget::Time(t)
        } else if let Some(e) = self.events {
            Budget::Events(e)
        } else if let Some(v) = self.evaluations {
            Budget::Evaluations(v)
        } else {
            Budget::Draws { count: self.draws, grid_step: grid }
        };
        (warmup, sampling)
    }

    fn refresh(&self, grid: f64) -> f64 {
        let per_grid = match self.kind {
            SamplerKind::Sbps | SamplerKind::Psbps => SBPS_REFRESH_PER_GRID,
            _ => BPS_REFRESH_PER_GRID,
        };
        self.refresh_rate.unwrap_or(per_grid / grid)
    }

    fn bps(&self, grid: f64) -> BpsConfig {
        BpsConfig { refresh_rate: self.refresh(grid), ..BpsConfig::default() }
    }

    fn sbps(&self, grid: f64) -> SbpsConfig {
        let cfg = SbpsConfig {
            batch: self.batch,
            k: self.k,
            refresh_rate: self.refresh(grid),
            band: BandConfig { initial_horizon: grid, ..BandConfig::default() },
            velocity: VelocityDistribution::Gaussian,
            ..SbpsConfig::default()
        };
        if self.kind == SamplerKind::Psbps { cfg.preconditioned() } else { cfg }
    }

    fn lipsbps(&self, grid: f64) -> LipSbpsConfig {
        LipSbpsConfig { refresh_rate: self.refresh(grid), velocity: VelocityDistribution::Gaussian }
    }

    fn envelope(grid: f64) -> AutoBoundConfig {
        AutoBoundConfig { initial_horizon: grid, ..AutoBoundConfig::default() }
    }

    /// lipSBPS / ZZ-SS on a model whose per-datum gradients are only Lipschitz: they run in θ,
    /// and --frame whitened is an error that says why.
    fn lipschitz_in_theta(&self, model: &str) -> Result<()> {
        if self.frame == Some(FrameChoice::Whitened) {
            bail!(
                "--frame whitened: {} on --model {model} thins against per-datum Lipschitz \
                 constants of the gradients (its gradients are unbounded), whose whitened \
                 counterparts (curvature constants of LᵀH_iL) the model does not state; it runs in \
                 the original coordinates (--frame original)",
                if self.kind == SamplerKind::Lipsbps { "lipsbps" } else { "zigzag-ss" }
            );
        }
        Ok(())
    }

    /// Whether BPS / Zig-Zag use the model's bound (`has_bound`: the model has one).
    fn model_bound(&self, has_bound: bool, model: &str) -> Result<bool> {
        match self.rate_bound {
            Some(RateBoundChoice::Model) if !has_bound => bail!(
                "--rate-bound model: --model {model} has no curvature bound; use --rate-bound \
                 envelope (the automatic piecewise bound)"
            ),
            Some(RateBoundChoice::Envelope) => Ok(false),
            _ => Ok(has_bound),
        }
    }
}

/// Everything a continuous-time run needs besides the model and the kernel.
pub(crate) struct PdmpRun<'a> {
    pub(crate) settings: PdmpSettings,
    pub(crate) names: &'a [String],
    pub(crate) comments: Vec<(String, String)>,
    pub(crate) inits: &'a [Vec<f64>],
    pub(crate) mode: &'a [f64],
    /// The Laplace covariance at the mode (row-major d × d): the whitening frame's.
    covariance: &'a [f64],
    /// The frame of the process when it runs whitened (zigzag-cv's is built with its control
    /// variates).
    frame: Option<WhiteningFrame>,
    /// Per-datum evaluations a kernel's set-up made before its chains (Taylor control
    /// variates' pass), added to the run's set-up.
    pub(crate) kernel_setup: Cell<EvalCounts>,
    /// The run (chains, seed, output directory).
    pub(crate) spec: &'a RunSpec,
    /// Once raised (Ctrl-C), every chain ends after its current segment.
    pub(crate) stop: &'a AtomicBool,
    /// Where progress goes (a terminal bar, an observer).
    pub(crate) progress: super::progress::ProgressTo,
    grid: f64,
}

impl<'a> PdmpRun<'a> {
    /// A run of `settings` with the grid step resolved against the Laplace approximation.
    pub(crate) fn new(
        spec: &'a RunSpec, settings: PdmpSettings, laplace: &'a Laplace, names: &'a [String],
        mut comments: Vec<(String, String)>, inits: &'a [Vec<f64>], stop: &'a AtomicBool,
    ) -> Result<Self> {
        let frame = settings.laplace_frame(laplace)?;
        let whitened =
            frame.is_some() || (settings.kind == SamplerKind::ZigzagCv && settings.whitened());
        let grid = settings.grid_step(laplace, whitened)?;
        let (warmup, sampling) = settings.budgets(grid);
        let coordinates = if whitened { "whitened" } else { "original" };
        comments.push(("frame".into(), coordinates.into()));
        comments.push(("grid_step".into(), grid.to_string()));
        comments.push(("warmup_budget".into(), describe(&warmup)));
        comments.push(("sampling_budget".into(), describe(&sampling)));
        Ok(Self {
            settings,
            names,
            comments,
            inits,
            mode: &laplace.mode,
            covariance: &laplace.covariance,
            frame,
            kernel_setup: Cell::new(EvalCounts::ZERO),
            spec,
            stop,
            progress: super::progress::ProgressTo::default(),
            grid,
        })
    }

    fn config(&self) -> ContinuousRunConfig {
        let (warmup, sampling) = self.settings.budgets(self.grid);
        ContinuousRunConfig {
            warmup,
            sampling,
            num_chains: self.spec.chains,
            seed: self.spec.seed,
            ..ContinuousRunConfig::default()
        }
    }

    fn sinks(&self) -> Result<Vec<PdmpSink>> {
        let dir = self.spec.output.dir.as_deref();
        (0..self.spec.chains)
            .map(|c| {
                let csv = MaybeCsv::for_chain(dir, c)?;
                let grid = GridDraws::new(Tee(ColumnMemorySink::new(), csv), self.grid)?;
                let memory = self.settings.skeleton.then(MemorySkeleton::new);
                let skeleton = if let (true, Some(dir)) = (self.settings.skeleton, dir) {
                    let path = skeleton_path(dir, c);
                    let sink = SkeletonSink::create(&path)
                        .with_context(|| format!("cannot create {}", path.display()))?;
                    register_open_file(sink.handle());
                    Some(sink)
                } else {
                    None
                };
                let averages = TimeAverageSink::new(TimeAverageConfig::default())?;
                Ok(Tee(averages, Tee(grid, Tee(memory, skeleton))))
            })
            .collect()
    }

    /// Runs the chains `kernel` builds (settings that failed to validate are the error).
    fn go<M, K>(&self, model: &M, kernel: tallmc_core::Result<K>) -> Result<PdmpOutputs>
    where
        M: Sync + ?Sized,
        K: PdmpKernel<M>,
    {
        let kernel = kernel?;
        let progress = super::progress::Bar::new(self.spec.chains, 0, &self.progress);
        let driver = ContinuousDriver::new(self.config())
            .parameter_names(self.names.to_vec())
            .comments(self.comments.clone())
            .progress(&progress)
            .stop_when(self.stop);
        let outputs = driver.run(model, self.inits, &kernel, self.sinks()?)?;
        progress.finish();
        Ok(outputs.into_iter().map(|o| o.map(|s| s, |t| AnyTuning::of(&t))).collect())
    }

    /// Runs the chains `kernel` builds in the run's frame: [`Whitened`] when the process runs
    /// whitened, `kernel` itself in θ otherwise. A kernel that takes `per_datum` gradients
    /// (SBPS, lipSBPS, ZZ-SS) gets the model's rows precomputed in z when they fit
    /// ([`Whitened::precompute_rows`]); full-data kernels only sum gradients and do not need
    /// them.
    fn go_in_frame<M, K>(
        &self, model: &M, kernel: tallmc_core::Result<K>, per_datum: bool,
    ) -> Result<PdmpOutputs>
    where
        M: tallmc_core::Terms + ?Sized,
        K: PdmpKernel<M>,
        Whitened<K>: PdmpKernel<M>,
    {
        match &self.frame {
            Some(frame) if per_datum => {
                let whitened = kernel.map(|k| Whitened::new(k, frame.clone()));
                self.go(model, whitened.and_then(|w| w.precompute_rows(model)))
            }
            Some(frame) => self.go(model, kernel.map(|k| Whitened::new(k, frame.clone()))),
            None => self.go(model, kernel),
        }
    }
}

impl PdmpRun<'_> {
    /// zigzag-cv: in whitened coordinates with Taylor control variates (the default), or the
    /// first-order control variates of Bierkens et al. in θ (`--frame original`).
    fn zigzag_cv<M>(&self, model: &M) -> Result<PdmpOutputs>
    where
        M: LinearPredictor
            + BoundedPredictorThirdDerivative
            + TermGradients
            + LogPriorHessian
            + LogPriorCurvature
            + tallmc_core::TermGradientLipschitz
            + Sync,
    {
        if !self.settings.whitened() {
            let cv = ControlVariates::rank_one(self.mode.to_vec());
            return self.go(
                model,
                cv.map(|cv| ZigZagSubsampling::with_estimator(cv.built_on_all_cores())),
            );
        }
        let frame = WhiteningFrame::new(self.mode.to_vec(), self.covariance)
            .context("cannot whiten with the Laplace covariance (use --frame original)")?;
        let cv = TaylorControlVariates::new(model, frame)?;
        if self.settings.evaluations.is_some()
            && cv.remainder_coefficients().iter().all(|&c| c == 0.0)
        {
            bail!(
                "--evaluations: zigzag-cv reads no data after its set-up pass on this model (its \
                 second-order expansion is exact), so an evaluation budget would never be \
                 spent; give --draws, --time or --events"
            );
        }
        self.kernel_setup.set(cv.setup_evals());
        self.go(model, Ok(ZigZagSubsampling::with_estimator(cv)))
    }
}

/// `skeleton_{chain + 1}.csv` in `dir`.
pub(crate) fn skeleton_path(dir: &Path, chain: usize) -> PathBuf {
    dir.join(format!("skeleton_{}.csv", chain + 1))
}

fn describe(b: &Budget) -> String {
    match b {
        Budget::Time(t) => format!("trajectory time {t}"),
        Budget::Events(e) => format!("{e} events"),
        Budget::Evaluations(v) => format!("{v} per-datum evaluations"),
        Budget::Draws { count, grid_step } => format!("{count} draws every {grid_step}"),
    }
}

/// Running the continuous-time samplers: what every model can run (SBPS, pSBPS, BPS and
/// Zig-Zag with the automatic bound), plus what the model's bounds allow.
pub(crate) trait RunPdmp: RunModel {
    /// Runs the sampler of `run`, or explains why the model cannot.
    fn run_pdmp(&self, run: &PdmpRun<'_>) -> Result<PdmpOutputs>;

    /// Whether BPS and Zig-Zag can thin against the model's curvature bound (their default
    /// then, in θ).
    fn has_curvature_bound(&self) -> bool {
        false
    }

    /// Whether lipSBPS and ZZ-SS can thin against bounds on the per-datum gradients (then they
    /// run whitened by default; with Lipschitz constants of the gradients only, in θ).
    fn has_gradient_bounds(&self) -> bool {
        false
    }
}

/// The samplers every model can run; the bounded ones are an error naming what is missing.
pub(crate) fn run_without_bounds<M: RunModel>(
    model: &M, name: &str, run: &PdmpRun<'_>,
) -> Result<PdmpOutputs> {
    let s = &run.settings;
    let g = run.grid;
    match s.kind {
        SamplerKind::Sbps | SamplerKind::Psbps => {
            run.go_in_frame(model, Sbps::new(s.sbps(g)), true)
        }
        SamplerKind::Bps => {
            s.model_bound(false, name)?;
            run.go_in_frame(model, Bps::automatic(s.bps(g), PdmpSettings::envelope(g)), false)
        }
        SamplerKind::Zigzag => {
            s.model_bound(false, name)?;
            let zz = ZigZag::automatic(ZigZagConfig::default(), PdmpSettings::envelope(g));
            run.go_in_frame(model, zz, false)
        }
        SamplerKind::Lipsbps | SamplerKind::ZigzagSs | SamplerKind::ZigzagCv => bail!(
            "tallmc sample {} is exact only with bounds on the per-datum gradients or their \
             Lipschitz constants, and --model {name} has neither ({}); use sbps, or bps / zigzag",
            run.spec.sampler.name(),
            super::context::unbounded_because(name)
        ),
        _ => bail!("{} is not a continuous-time sampler", run.spec.sampler.name()),
    }
}

/// BPS and Zig-Zag with the model's curvature bound, when the settings ask for it; `None`
/// when they want the automatic bound.
macro_rules! full_data_with_bound {
    ($model:expr, $name:expr, $run:expr) => {{
        let (s, g) = (&$run.settings, $run.grid);
        match s.kind {
            SamplerKind::Bps if s.model_bound(true, $name)? => {
                Some($run.go($model, Bps::new(s.bps(g))))
            }
            SamplerKind::Zigzag if s.model_bound(true, $name)? => {
                Some($run.go($model, Ok(ZigZag::new(ZigZagConfig::default()))))
            }
            _ => None,
        }
    }};
}

impl RunPdmp for FastLogisticRegression {
    fn has_curvature_bound(&self) -> bool {
        true
    }

    fn has_gradient_bounds(&self) -> bool {
        true
    }

    /// Bounded per-datum gradients: lipSBPS and ZZ-SS with importance-sampled per-datum bounds
    /// (never above the paper's sup bounds), whitened unless --frame original (the bounds in z
    /// are the model's along the columns of L, exact for a GLM); ZZ-CV whitened with Taylor
    /// control variates.
    fn run_pdmp(&self, run: &PdmpRun<'_>) -> Result<PdmpOutputs> {
        if let Some(out) = full_data_with_bound!(self, "logistic", run) {
            return out;
        }
        let s = &run.settings;
        match s.kind {
            SamplerKind::Lipsbps => run.go_in_frame(
                self,
                LipSbps::with_bound(s.lipsbps(run.grid), tallmc_samplers::WeightedGradients::new()),
                true,
            ),
            SamplerKind::ZigzagSs => run.go_in_frame(
                self,
                Ok(ZigZagSubsampling::with_estimator(tallmc_samplers::WeightedGradients::new())),
                true,
            ),
            SamplerKind::ZigzagCv => run.zigzag_cv(self),
            _ => run_without_bounds(self, "logistic", run),
        }
    }
}

/// Implements [`RunPdmp`] for models whose per-datum gradients are Lipschitz (unbounded):
/// lipSBPS (importance-sampled) and ZZ-SS around the mode; ZZ-CV whitened with Taylor control
/// variates; BPS and Zig-Zag with the curvature bound.
macro_rules! lipschitz_pdmp {
    ($($model:ty => $name:literal),*) => {$(
        impl RunPdmp for $model {
            fn has_curvature_bound(&self) -> bool {
                true
            }

            fn run_pdmp(&self, run: &PdmpRun<'_>) -> Result<PdmpOutputs> {
                if let Some(out) = full_data_with_bound!(self, $name, run) {
                    return out;
                }
                let (s, mode) = (&run.settings, run.mode);
                if matches!(s.kind, SamplerKind::Lipsbps | SamplerKind::ZigzagSs) {
                    s.lipschitz_in_theta($name)?;
                }
                match s.kind {
                    SamplerKind::Lipsbps => run.go(
                        self,
                        tallmc_samplers::WeightedLipschitzGradients::new(mode.to_vec())
                            .and_then(|bound| LipSbps::with_bound(s.lipsbps(run.grid), bound)),
                    ),
                    SamplerKind::ZigzagSs => {
                        run.go(self, ZigZagSubsampling::lipschitz(mode.to_vec()))
                    }
                    SamplerKind::ZigzagCv => run.zigzag_cv(self),
                    _ => run_without_bounds(self, $name, run),
                }
            }
        }
    )*};
}

lipschitz_pdmp!(GaussianMean => "gaussian-mean", ProbitRegression => "probit");

/// Implements [`RunPdmp`] for models without gradient bounds: SBPS, and BPS / Zig-Zag with the
/// automatic envelope; the others refuse, naming the bound.
macro_rules! unbounded_pdmp {
    ($($model:ty => $name:literal),*) => {$(
        impl RunPdmp for $model {
            fn run_pdmp(&self, run: &PdmpRun<'_>) -> Result<PdmpOutputs> {
                run_without_bounds(self, $name, run)
            }
        }
    )*};
}

unbounded_pdmp!(
    LinearRegression => "linear",
    Gaussian => "gaussian",
    PoissonRegression => "poisson",
    NegativeBinomialRegression => "negative-binomial",
    RobustRegression => "robust"
);

/// What the trajectory did, summed over chains.
#[derive(Serialize)]
struct EventReport {
    trajectory_time_warmup: f64,
    trajectory_time_sampling: f64,
    segments: u64,
    proposals: u64,
    bounces: u64,
    refreshes: u64,
    /// Proposals whose rate exceeded the bound: SBPS's bias diagnostic (0 for the exact
    /// samplers, which stop with an error instead).
    violations: u64,
    violation_rate: f64,
    divergences: u64,
    events_per_unit_time: f64,
}

#[derive(Serialize)]
struct PdmpTotals {
    evals_setup: EvalTotals,
    evals_warmup: EvalTotals,
    evals_sampling: EvalTotals,
    evals: EvalTotals,
    evals_per_draw: f64,
    evals_per_unit_time: f64,
    /// Per-datum evaluations per unit of trajectory time, over N: the share of the data a
    /// unit of trajectory time costs.
    data_passes_per_unit_time: f64,
    wall_seconds: WallSeconds,
}

#[derive(Serialize)]
struct PdmpSummaryFile<'a> {
    #[serde(flatten)]
    run: RunHeader<'a>,
    seed: u64,
    grid_step: f64,
    warmup_budget: String,
    sampling_budget: String,
    draws_per_chain: Vec<usize>,
    /// The run report's warnings (R-hat, ESS, divergences, data use), one sentence each.
    warnings: Vec<String>,
    /// Summaries of the grid draws (ESS and R-hat as for any sampler), over the first
    /// min(draws_per_chain) draws of every chain.
    parameters: &'a [Summary],
    /// Exact time averages over the trajectory: mean, sd and the batch-means MCSE of the mean.
    continuous_time: Vec<ContinuousSummary>,
    events: EventReport,
    totals: PdmpTotals,
    laplace_mode: &'a [f64],
    /// The stop flag (Ctrl-C) ended the chains before their budgets were spent.
    interrupted: bool,
    adaptation: Vec<Vec<String>>,
    /// Per chain: the kernel's tuning, typed (refresh rate, clocks, preconditioner, …).
    tuning: Vec<serde_json::Value>,
}

/// Writes summary.json of a continuous-time run and prints the report; the outcome says
/// whether the stop flag ended the chains early.
pub(crate) fn write_summary(
    n: usize, run: &PdmpRun<'_>, setup: &Setup, outputs: &PdmpOutputs,
) -> Result<(Outcome, serde_json::Value)> {
    let spec = run.spec;
    let d = run.names.len();
    let draws: Vec<&ColumnMemorySink> = outputs.iter().map(|o| &o.sink.1.0.inner().0).collect();
    let counts: Vec<usize> = draws.iter().map(|m| m.num_draws()).collect();
    let interrupted = outputs.iter().any(|o| o.report.interrupted);
    if !interrupted && counts.iter().any(|&c| c < 4) {
        bail!(
            "the run produced {counts:?} grid draws per chain, fewer than the 4 ESS and R-hat \
             need: lengthen the sampling budget or shorten --grid"
        );
    }
    // Budgets in events or evaluations (or the stop flag) end chains at different times: the
    // draw summaries use every chain's first min-count draws (the time averages use each whole
    // trajectory). An interrupted run with fewer than 4 draws, or a chain with no sampled time,
    // has no summaries; its files hold what was made.
    let common = counts.iter().copied().min().unwrap_or(0);
    let parameters = if common >= 4 {
        let slices: Vec<&[f64]> = draws.iter().map(|m| &m.draws[..common * d]).collect();
        summarize(run.names, &Draws::new(&slices, d)?)?
    } else {
        Vec::new()
    };
    let averages = outputs.iter().map(|o| o.sink.0.averages()).collect::<Option<Vec<_>>>();
    let continuous_time = match averages {
        Some(averages) => summarize_continuous(run.names, &averages)?,
        None if interrupted => Vec::new(),
        None => bail!("a chain recorded no trajectory"),
    };
    let mut warm = EventTotals::default();
    let mut samp = EventTotals::default();
    let (mut t_warm, mut t_samp) = (0.0, 0.0);
    for o in outputs {
        warm += o.report.warmup;
        samp += o.report.sampling;
        t_warm += o.report.warmup_time;
        t_samp += o.report.sampling_time;
    }
    let max = |f: fn(&ContinuousChainOutput<PdmpSink, AnyTuning>) -> f64| {
        outputs.iter().map(f).fold(0.0, f64::max)
    };
    let warm_s = max(|o| o.report.warmup_seconds);
    let samp_s = max(|o| o.report.sampling_seconds);
    let total_draws = counts.iter().sum::<usize>().max(1);
    let sampling_total = samp.evals.total() as f64;
    let (warmup_budget, sampling_budget) = run.settings.budgets(run.grid);
    let wall_total = setup.started.elapsed().as_secs_f64();
    let setup_evals = setup.evals + run.kernel_setup.get();
    // Per thinning proposal, the continuous-time analogue of an iteration.
    let data_fraction = sampling_total / samp.proposals.max(1) as f64 / n as f64;
    let facts = RunFacts {
        sampler: spec.sampler.kind(),
        sampler_name: spec.sampler.name(),
        n,
        chains: spec.chains,
        draws_asked: common,
        draws_made: counts.clone(),
        parameters: &parameters,
        divergences: samp.divergences as usize,
        depth_limit: None,
        data_fraction: (samp.proposals > 0).then_some(data_fraction),
        max_rows: None,
        step_word: "proposal",
        data_unit: "per-datum evaluations",
        evals_total: (setup_evals + warm.evals + samp.evals).total(),
        evals_per_draw: sampling_total / total_draws as f64,
        wall_seconds: wall_total,
        interrupted,
        out_dir: spec.output.dir.as_deref(),
    };
    let mut warnings = setup.warnings.clone();
    warnings.extend(report::warnings(&facts));
    let file = PdmpSummaryFile {
        run: RunHeader::new(spec, n, run.names),
        seed: spec.seed,
        grid_step: run.grid,
        warmup_budget: describe(&warmup_budget),
        sampling_budget: describe(&sampling_budget),
        draws_per_chain: counts,
        warnings: warnings.clone(),
        parameters: &parameters,
        continuous_time,
        events: EventReport {
            trajectory_time_warmup: t_warm,
            trajectory_time_sampling: t_samp,
            segments: samp.segments,
            proposals: samp.proposals,
            bounces: samp.bounces,
            refreshes: samp.refreshes,
            violations: samp.violations,
            violation_rate: samp.violation_rate(),
            divergences: samp.divergences,
            events_per_unit_time: samp.events() as f64 / t_samp,
        },
        totals: PdmpTotals {
            evals_setup: setup_evals.into(),
            evals_warmup: warm.evals.into(),
            evals_sampling: samp.evals.into(),
            evals: (setup_evals + warm.evals + samp.evals).into(),
            evals_per_draw: sampling_total / total_draws as f64,
            evals_per_unit_time: sampling_total / t_samp,
            data_passes_per_unit_time: sampling_total / t_samp / n as f64,
            wall_seconds: WallSeconds {
                setup: setup.seconds,
                warmup_max_over_chains: warm_s,
                sampling_max_over_chains: samp_s,
                total: wall_total,
            },
        },
        laplace_mode: run.mode,
        interrupted,
        adaptation: outputs.iter().map(|o| o.report.tuning.lines.clone()).collect(),
        tuning: outputs.iter().map(|o| o.report.tuning.value.clone()).collect(),
    };
    report::deliver(spec, &file, &facts, &warnings)
}
