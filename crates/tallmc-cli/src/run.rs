//! `tallmc sample <SAMPLER>`: build the model, start the chains, run the sampler, write the
//! outputs.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, MeanTest,
};
use tallmc_core::{
    EvalCounts, LogPrior, LogPriorHessian, ParameterNames, TaylorRemainderBound, TermBounds,
    TermGradients, TermHessians, Terms,
};
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_integrators::{Metric, MetricKind};
use tallmc_models::{
    Dataset, DesignOptions, FastLogisticRegression, Gaussian, GaussianMean, LinearRegression,
    LoadOptions,
};
use tallmc_samplers::sink::{ColumnMemorySink, CsvSink, Tee};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, ChainOutput, Driver, Hmc, HmcConfig, Laplace,
    MAX_TREE_DEPTH, MinibatchMh, NewtonOptions, Nuts, NutsConfig, ProxyConfig, ProxyMinibatchMh,
    RandomWalkConfig, RandomWalkMetropolis, RandomWalkProposal, RandomWalkProposalConfig,
    RunConfig, SamplerError, laplace_approximation, uniform_positions,
};

use crate::args::{
    AusterityArgs, BoundArg, Common, ConfidenceArgs, HmcArgs, HmcEcsArgs, HmcEcsSignedArgs,
    InitKind, InnerArg, MaxDepth, MetricArg, ModelKind, NutsArgs, Sampler,
};
use crate::ecs::{EcsSettings, WithEngine, run_ecs, sign_corrected_summary};
use crate::outputs::{AnyTuning, Outputs, Sinks, run_kernel};
use crate::pdmp::{PdmpRun, PdmpSettings, RunPdmp};
use crate::progress::{ProgressTo, RunProgress, SetupSpinner};
use crate::report::{self, RunFacts};
use crate::sg::{SgSettings, run_stochastic_gradient};

/// What every model used by the CLI provides.
pub trait CliModel:
    TermHessians + TermGradients + Terms + LogPrior + LogPriorHessian + ParameterNames + Sync
{
}
impl<M> CliModel for M where
    M: TermHessians + TermGradients + Terms + LogPrior + LogPriorHessian + ParameterNames + Sync
{
}

/// Scale of a random-walk proposal shaped by the Laplace covariance, times 1/√d (Gelman,
/// Roberts & Gilks 1996), as `RandomWalkMetropolis` starts.
const RWM_SCALE: f64 = 2.38;

/// `value` of `flag` if it is a finite number > 0; otherwise an error saying it expected
/// `expected` (e.g. "a finite number > 0").
pub(crate) fn check_positive(flag: &str, value: f64, expected: &str) -> Result<()> {
    if !(value.is_finite() && value > 0.0) {
        bail!("{flag} {value}: expected {expected}");
    }
    Ok(())
}

/// Checks the common flags: the model's own flags (nothing is silently ignored) and the ranges
/// clap cannot check.
fn check_common(a: &Common) -> Result<()> {
    let regression = matches!(a.model, ModelKind::Logistic | ModelKind::Linear);
    if !regression && a.intercept {
        bail!("--intercept applies only to --model logistic or linear");
    }
    if !regression && a.standardize {
        bail!("--standardize applies only to --model logistic or linear");
    }
    if a.model != ModelKind::GaussianMean && a.sigma.is_some() {
        bail!("--sigma applies only to --model gaussian-mean (the known noise sd)");
    }
    if a.model != ModelKind::GaussianMean && a.prior_mean.is_some() {
        bail!("--prior-mean applies only to --model gaussian-mean");
    }
    if a.model == ModelKind::Gaussian && a.prior_sd.is_some() {
        bail!("--prior-sd does not apply to --model gaussian (its priors are flat)");
    }
    if a.chains == 0 {
        bail!("--chains 0: expected at least 1 chain");
    }
    if a.draws < 4 {
        bail!("--draws {}: expected at least 4 draws per chain (for ESS and R-hat)", a.draws);
    }
    if let Some(s) = a.prior_sd {
        check_positive("--prior-sd", s, "a finite number > 0")?;
    }
    if a.threads == Some(0) {
        bail!("--threads 0: expected at least 1 thread");
    }
    let npy = a.data.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if let (false, Some(y)) = (npy, &a.y_npy) {
        bail!(
            "--y-npy {} applies only to a .npy --data file (the covariates X); {} carries its own responses",
            y.display(),
            a.data.display()
        );
    }
    Ok(())
}

/// Checks the ranges of the sampler's own flags that do not depend on the data.
fn check_sampler(sampler: &Sampler) -> Result<()> {
    let (target_accept, trajectory_length) = match sampler {
        Sampler::Hmc(a) => (Some(a.target.target_accept), Some(a.trajectory_length)),
        Sampler::Nuts(a) => (Some(a.target.target_accept), None),
        Sampler::HmcEcs(a) => (Some(a.ecs.target.target_accept), Some(a.ecs.trajectory_length)),
        Sampler::HmcEcsSigned(a) => {
            (Some(a.ecs.target.target_accept), Some(a.ecs.trajectory_length))
        }
        _ => (None, None),
    };
    if let Some(t) = target_accept
        && !(t > 0.0 && t < 1.0)
    {
        bail!("--target-accept {t}: expected a number in the open interval (0, 1)");
    }
    if let Some(length) = trajectory_length {
        check_positive("--trajectory-length", length, "a finite number > 0")?;
    }
    let max_depth = match sampler {
        Sampler::Nuts(a) => Some(&a.max_depth),
        Sampler::HmcEcs(HmcEcsArgs { ecs, .. })
        | Sampler::HmcEcsSigned(HmcEcsSignedArgs { ecs, .. }) => {
            if let (InnerArg::Hmc, Some(d)) = (ecs.inner, ecs.max_depth.given) {
                bail!(
                    "--max-depth {d}: only meaningful with --inner nuts (the fixed-length HMC \
                     θ-step has no tree; its length is --trajectory-length)"
                );
            }
            Some(&ecs.max_depth)
        }
        _ => None,
    };
    if let Some(d) = max_depth.map(MaxDepth::value)
        && !(1..=MAX_TREE_DEPTH).contains(&d)
    {
        bail!("--max-depth {d}: expected a whole number from 1 to {MAX_TREE_DEPTH}");
    }
    crate::pdmp::check_flags(sampler)?;
    if let Some(sg) = sampler.stochastic_gradient() {
        check_positive("--step-size", sg.step_size, "a finite number > 0")?;
    }
    Ok(())
}

/// The Austerity test of the arguments, checked against N.
fn austerity_test(a: &AusterityArgs, n: usize) -> Result<AusterityTest> {
    if let Some(m) = a.batch
        && m > n
    {
        bail!("--batch {m}: expected at most the number of data points N = {n}");
    }
    let mut cfg = AusterityConfig::new(a.epsilon, a.batch.unwrap_or(n.min(500)));
    if let Some(k) = a.first_batch {
        cfg = cfg.with_first_batch(k);
    }
    let test = AusterityTest::new(cfg)?;
    test.check_population_size(n)?;
    Ok(test)
}

/// The confidence test of the arguments, checked against N.
fn confidence_test(a: &ConfidenceArgs, n: usize) -> Result<ConfidenceTest> {
    let bound = match a.bound {
        BoundArg::HoeffdingSerfling => BoundKind::HoeffdingSerfling,
        BoundArg::Bernstein => BoundKind::EmpiricalBernstein,
        BoundArg::BernsteinSerfling => BoundKind::EmpiricalBernsteinSerfling,
    };
    let k = a.first_batch;
    if k > n {
        bail!("--first-batch {k}: expected at most the number of data points N = {n}");
    }
    let cfg =
        ConfidenceConfig::new(bound, a.delta).with_gamma(a.gamma).with_p(a.p).with_first_batch(k);
    let test = ConfidenceTest::new(cfg)?;
    test.check_population_size(n)?;
    Ok(test)
}

/// What the confidence sampler runs with besides the model and the sinks.
pub struct ConfidenceRun<'a> {
    driver: &'a Driver<'a>,
    inits: &'a [Vec<f64>],
    test: &'a ConfidenceTest,
    walk: &'a RandomWalkProposalConfig,
    /// With `--cv`: the center of the 2nd-order Taylor proxies (the posterior mode).
    proxies_at: Option<&'a [f64]>,
}

/// Running the confidence sampler needs the model's term bounds (plain) or a bound on third
/// derivatives (with Taylor proxies, `--cv`): implemented per model.
pub trait RunConfidence: CliModel {
    /// Runs minibatch MH with the confidence test, with Taylor proxies (Bardenet, Doucet &
    /// Holmes 2017) if `run` has a center, or explains why the model cannot.
    fn run_confidence(&self, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs>;
}

fn confidence_with_proxies<M: CliModel + TaylorRemainderBound>(
    model: &M, run: &ConfidenceRun<'_>, center: &[f64], sinks: Vec<Sinks>,
) -> Result<Outputs> {
    let proxy = ProxyConfig::new(center.to_vec());
    let walk = RandomWalkProposal::new(run.walk.clone())?;
    let kernel = ProxyMinibatchMh::new(run.test.clone(), walk, proxy)?;
    run_kernel(run.driver, model, run.inits, &kernel, sinks)
}

fn no_third_derivative_bound(model: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "tallmc sample confidence --cv needs a bound on the third derivatives of ℓ_i and --model \
         {model} has none (its terms are unbounded in log σ); use confidence without --cv, \
         austerity or an exact sampler"
    )
}

fn confidence_with_bounds<M: CliModel + TermBounds>(
    model: &M, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>,
) -> Result<Outputs> {
    let walk = RandomWalkProposal::new(run.walk.clone())?;
    let kernel = MinibatchMh::new(run.test.clone(), walk).with_term_bounds();
    run_kernel(run.driver, model, run.inits, &kernel, sinks)
}

/// Implements [`RunConfidence`] for models with term bounds; `proxies` says whether the model
/// also bounds third derivatives (`TaylorRemainderBound`).
macro_rules! confidence_via_bounds {
    ($($model:ty => $name:literal, $proxies:tt);*) => {$(
        impl RunConfidence for $model {
            fn run_confidence(&self, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs> {
                match run.proxies_at {
                    None => confidence_with_bounds(self, run, sinks),
                    Some(center) => {
                        confidence_via_bounds!(@proxies $proxies, $name, self, run, center, sinks)
                    }
                }
            }
        }
    )*};
    (@proxies yes, $name:literal, $($arg:expr),*) => { confidence_with_proxies($($arg),*) };
    (@proxies no, $name:literal, $($arg:expr),*) => {{
        let _ = ($($arg),*);
        Err(no_third_derivative_bound($name))
    }};
}

confidence_via_bounds!(
    FastLogisticRegression => "logistic", yes;
    Gaussian => "gaussian", no;
    GaussianMean => "gaussian-mean", yes
);

impl RunConfidence for LinearRegression {
    fn run_confidence(&self, run: &ConfidenceRun<'_>, _sinks: Vec<Sinks>) -> Result<Outputs> {
        if run.proxies_at.is_some() {
            return Err(no_third_derivative_bound("linear"));
        }
        bail!(
            "tallmc sample confidence needs a bound on |ℓ_i(θ′) − ℓ_i(θ)| and --model linear has \
             none (its terms are unbounded in θ); use austerity or an exact sampler"
        )
    }
}

/// How a run ended (errors aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every chain made its draws.
    Finished,
    /// The stop flag (Ctrl-C) ended the chains early; the outputs hold the draws made.
    Interrupted,
}

/// Runs `tallmc sample <SAMPLER>` on `data`, or on the `--data` file when `None`, on
/// `--threads` worker threads (a pool of the run's own); `stop`, once raised, ends the chains
/// after their current iteration; progress goes to a terminal bar (unless `--no-progress`) and
/// to `observer`.
pub(crate) fn sample(
    sampler: &Sampler, data: Option<Dataset>, stop: &AtomicBool, observer: Option<Arc<RunProgress>>,
) -> Result<Outcome> {
    let progress = ProgressTo { terminal: sampler.common().progress(), observer };
    let run =
        || sample_model(sampler, data, stop, &progress).map_err(|e| explain_non_finite(e, sampler));
    match sampler.common().threads {
        Some(0) => bail!("--threads 0: expected at least 1 thread"),
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .with_context(|| format!("cannot start {t} worker threads"))?
            .install(run),
        None => run(),
    }
}

/// A chain that left the finite numbers, told in the CLI's terms: 1-based chain and its file,
/// the parameter, and the flag to change.
fn explain_non_finite(e: anyhow::Error, sampler: &Sampler) -> anyhow::Error {
    let Some(SamplerError::NonFiniteDraw { chain, iteration, parameter, value }) =
        e.downcast_ref::<SamplerError>()
    else {
        return e;
    };
    let k = chain + 1;
    let warmup = sampler.common().warmup;
    let when = if *iteration < warmup {
        format!("warmup iteration {}", iteration + 1)
    } else {
        format!("draw {}", iteration - warmup + 1)
    };
    let cure = match sampler.stochastic_gradient() {
        Some(sg) => format!("try a smaller --step-size than {}", sg.step_size),
        None => "a smaller step size usually cures this".to_string(),
    };
    anyhow::anyhow!(
        "chain {k} diverged to {parameter} = {value} at {when}; {cure} (chain_{k}.csv keeps the \
         draws made before it; no summary.json was written)"
    )
}

fn sample_model(
    sampler: &Sampler, data: Option<Dataset>, stop: &AtomicBool, progress: &ProgressTo,
) -> Result<Outcome> {
    let args = sampler.common();
    check_common(args)?;
    check_sampler(sampler)?;
    let setup_start = Instant::now();
    let spinner = SetupSpinner::new("reading and checking the data", progress);
    let data = match data {
        Some(data) => data,
        None => {
            let options =
                LoadOptions { npy_response: args.y_npy.clone(), ..LoadOptions::default() };
            tallmc_models::load(&args.data, &options)?
        }
    };
    let n = data.len();
    let design = DesignOptions { intercept: args.intercept, standardize: args.standardize };
    let prior_sd = args.prior_sd.unwrap_or(10.0);
    match args.model {
        ModelKind::Logistic => {
            let model = FastLogisticRegression::new(data, design, prior_sd)?;
            run_model(&model, sampler, n, (setup_start, spinner), stop, progress)
        }
        ModelKind::Linear => {
            let model = LinearRegression::new(data, design, prior_sd)?;
            run_model(&model, sampler, n, (setup_start, spinner), stop, progress)
        }
        ModelKind::Gaussian => {
            run_model(&Gaussian::new(data)?, sampler, n, (setup_start, spinner), stop, progress)
        }
        ModelKind::GaussianMean => {
            let Some(sigma) = args.sigma else {
                bail!("--model gaussian-mean needs --sigma S, the known noise sd");
            };
            let model = GaussianMean::new(data, sigma, args.prior_mean.unwrap_or(0.0), prior_sd)?;
            run_model(&model, sampler, n, (setup_start, spinner), stop, progress)
        }
    }
}

/// What to run, with its settings checked against N (before any work).
enum Plan<'a> {
    Rwm,
    AdaptiveMh,
    Hmc(&'a HmcArgs),
    Nuts(&'a NutsArgs),
    Austerity(AusterityTest),
    /// The confidence test and whether to use Taylor proxies (`--cv`).
    Confidence(ConfidenceTest, bool),
    Sg(SgSettings),
    Ecs(EcsSettings),
    Pdmp(PdmpSettings),
}

impl<'a> Plan<'a> {
    fn new(sampler: &'a Sampler, n: usize) -> Result<Self> {
        Ok(match sampler {
            Sampler::Rwm(_) => Self::Rwm,
            Sampler::AdaptiveMh(_) => Self::AdaptiveMh,
            Sampler::Hmc(a) => Self::Hmc(a),
            Sampler::Nuts(a) => Self::Nuts(a),
            Sampler::Austerity(a) => Self::Austerity(austerity_test(a, n)?),
            Sampler::Confidence(a) => Self::Confidence(confidence_test(a, n)?, a.cv),
            Sampler::Sgld(_) | Sampler::Sghmc(_) | Sampler::Sgnht(_) => {
                Self::Sg(SgSettings::new(sampler, n)?)
            }
            Sampler::HmcEcs(_) | Sampler::HmcEcsSigned(_) => {
                Self::Ecs(EcsSettings::new(sampler, n)?)
            }
            Sampler::Bps(_)
            | Sampler::Sbps(_)
            | Sampler::Psbps(_)
            | Sampler::Lipsbps(_)
            | Sampler::Zigzag(_)
            | Sampler::ZigzagSs(_)
            | Sampler::ZigzagCv(_) => Self::Pdmp(PdmpSettings::new(sampler, n)?),
        })
    }

    /// Lines for the CSV comments after the common ones: the mean test and the sampler's
    /// settings.
    fn comments(&self) -> Vec<(String, String)> {
        match self {
            Self::Austerity(test) => test.describe(),
            Self::Confidence(test, proxies) => {
                let mut c = test.describe();
                if *proxies {
                    c.push((
                        "proxies".to_string(),
                        "Taylor order 2 at the posterior mode (BDH 2017)".to_string(),
                    ));
                }
                c
            }
            Self::Sg(s) => s.comments(),
            Self::Ecs(s) => s.comments(),
            _ => Vec::new(),
        }
    }

    /// The mean test's settings for summary.json (empty for samplers without one).
    fn test_description(&self) -> Vec<(String, String)> {
        match self {
            Self::Austerity(test) => test.describe(),
            Self::Confidence(test, _) => test.describe(),
            _ => Vec::new(),
        }
    }
}

fn run_model<M: RunConfidence + WithEngine + RunPdmp>(
    model: &M, sampler: &Sampler, n: usize, setup: (Instant, SetupSpinner), stop: &AtomicBool,
    progress: &ProgressTo,
) -> Result<Outcome> {
    let (setup_start, spinner) = setup;
    let args = sampler.common();
    let d = model.dim();
    let names = model.parameter_names();
    // The sampler's settings first: a bad setting is an error before any work.
    let plan = Plan::new(sampler, n)?;
    // Warm-started on 100,000 evenly spaced rows: on tall data this saves most of Newton's
    // passes over the full data (the mode is still the full-data one, to Newton's tolerance).
    let newton = NewtonOptions {
        warm_start_rows: Some(NewtonOptions::WARM_START_ROWS),
        ..Default::default()
    };
    spinner.phase("finding the posterior mode (Newton's method)", n);
    let laplace = laplace_approximation(model, &vec![0.0; d], newton)
        .context("cannot find the posterior mode to start from (Newton's method)")?;
    drop(spinner);
    if stop.load(std::sync::atomic::Ordering::SeqCst) {
        // Interrupted during the setup: no chain starts and nothing is written.
        return Ok(Outcome::Interrupted);
    }
    let inits = match args.init {
        InitKind::Dispersed => laplace.dispersed_positions(args.chains, 2.0, args.seed)?,
        InitKind::Mode => laplace.dispersed_positions(args.chains, 0.0, args.seed)?,
        InitKind::Uniform => uniform_positions(d, args.chains, 2.0, args.seed)?,
    };
    let setup_seconds = setup_start.elapsed().as_secs_f64();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create output directory {}", args.out.display()))?;
    if let Plan::Pdmp(settings) = plan {
        let comments = config_comments(sampler, n, d);
        let mut run = PdmpRun::new(
            settings,
            &laplace,
            &names,
            comments,
            &inits,
            &args.out,
            args.chains,
            args.seed,
            stop,
        )?;
        run.progress = progress.clone();
        let outputs = model.run_pdmp(&run)?;
        let setup = Setup { evals: laplace.evals, seconds: setup_seconds, started: setup_start };
        return crate::pdmp::write_summary(sampler, n, &run, &setup, &outputs);
    }
    let sinks = (0..args.chains)
        .map(|k| {
            let path = args.out.join(format!("chain_{}.csv", k + 1));
            CsvSink::create(&path)
                .map(|csv| Tee(ColumnMemorySink::new(), csv))
                .with_context(|| format!("cannot create {}", path.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let run = RunConfig::new(args.warmup, args.draws, args.chains, args.seed);
    let mut comments = config_comments(sampler, n, d);
    comments.extend(plan.comments());
    let mut setup_evals = laplace.evals;
    let walk = minibatch_walk(&laplace.covariance, d);
    let progress = crate::progress::Bar::new(args.chains, n, progress);
    let driver = Driver::new(run)
        .parameter_names(names.clone())
        .comments(comments)
        .progress(&progress)
        .stop_when(stop);
    let outputs = match &plan {
        Plan::Rwm => {
            let cfg = RandomWalkConfig {
                proposal_covariance: Some(laplace.covariance.clone()),
                ..Default::default()
            };
            run_kernel(&driver, model, &inits, &RandomWalkMetropolis::new(cfg)?, sinks)?
        }
        Plan::AdaptiveMh => {
            let cfg = AdaptiveMetropolisConfig {
                initial_covariance: Some(laplace.covariance.clone()),
                ..Default::default()
            };
            run_kernel(&driver, model, &inits, &AdaptiveMetropolis::new(cfg)?, sinks)?
        }
        Plan::Hmc(a) => {
            let (metric, initial, adapt_metric) = metric_settings(&laplace, a.metric)?;
            let mut cfg = HmcConfig {
                metric,
                initial_metric: Some(initial),
                adapt_metric,
                trajectory_length: a.trajectory_length,
                ..Default::default()
            };
            cfg.dual_averaging.target_accept = a.target.target_accept;
            run_kernel(&driver, model, &inits, &Hmc::new(cfg)?, sinks)?
        }
        Plan::Nuts(a) => {
            let (metric, initial, adapt_metric) = metric_settings(&laplace, a.metric)?;
            let mut cfg = NutsConfig {
                metric,
                initial_metric: Some(initial),
                adapt_metric,
                max_depth: a.max_depth.value(),
                ..Default::default()
            };
            cfg.dual_averaging.target_accept = a.target.target_accept;
            run_kernel(&driver, model, &inits, &Nuts::new(cfg)?, sinks)?
        }
        Plan::Austerity(test) => {
            let kernel = MinibatchMh::new(test.clone(), RandomWalkProposal::new(walk.clone())?);
            run_kernel(&driver, model, &inits, &kernel, sinks)?
        }
        Plan::Confidence(test, proxies) => {
            let proxies_at = proxies.then_some(&laplace.mode[..]);
            let run =
                ConfidenceRun { driver: &driver, inits: &inits, test, walk: &walk, proxies_at };
            model.run_confidence(&run, sinks)?
        }
        Plan::Sg(s) => {
            let (outputs, cv_setup) = run_stochastic_gradient(
                model,
                s,
                &laplace.mode,
                &laplace.covariance,
                &driver,
                &inits,
                sinks,
            )?;
            setup_evals += cv_setup;
            check_sg_stayed_finite(s.step_size(), &names, &laplace, &inits, &outputs)?;
            outputs
        }
        Plan::Ecs(s) => run_ecs(model, s, &laplace.mode, &driver, &inits, sinks)?,
        Plan::Pdmp(_) => bail!("continuous-time settings in the discrete-time driver"),
    };
    let setup = Setup { evals: setup_evals, seconds: setup_seconds, started: setup_start };
    let signed = matches!(&plan, Plan::Ecs(s) if s.is_signed());
    progress.finish();
    let test = plan.test_description();
    write_summary(sampler, model, n, &names, &laplace, &setup, &test, signed, &outputs)
}

/// A stochastic-gradient step whose θ leaves the finite numbers stops the run with
/// `SamplerError::NonFiniteDraw` (told by `explain_non_finite`). A divergence that left θ
/// finite (a non-finite gradient or momentum inside an SG-HMC trajectory, a thermostat
/// overflow) also means the step size `h` is far too large for the posterior's curvature: the
/// run is an error, naming the coordinate that ran away (the one farthest from the mode in
/// Laplace sds at the chain's last draw) and the flag to change. The CSV files are complete up
/// to there.
fn check_sg_stayed_finite(
    h: f64, names: &[String], laplace: &Laplace, inits: &[Vec<f64>],
    outputs: &[ChainOutput<Sinks, AnyTuning>],
) -> Result<()> {
    let d = names.len();
    let Some(o) = outputs.iter().find(|o| o.report.divergences + o.report.warmup_divergences > 0)
    else {
        return Ok(());
    };
    let k = o.report.chain + 1;
    let draws = &o.sink.0.draws;
    let last = if draws.len() >= d { &draws[draws.len() - d..] } else { &inits[k - 1][..] };
    let distance = |j: usize| {
        let sd = laplace.covariance[j * d + j].sqrt();
        if last[j].is_finite() { ((last[j] - laplace.mode[j]) / sd).abs() } else { f64::INFINITY }
    };
    let j = (0..d).max_by(|&a, &b| distance(a).total_cmp(&distance(b))).unwrap_or(0);
    let far = distance(j);
    let far = if far.is_finite() {
        format!(", {far:.1e} posterior sds from the mode")
    } else {
        String::new()
    };
    bail!(
        "chain {k} left the finite numbers: {} of its steps made θ or its gradient non-finite \
         ({} = {:.4e} at its last draw{far}); try a smaller --step-size than {h} (chain_{k}.csv \
         keeps the draws; no summary.json was written)",
        o.report.divergences + o.report.warmup_divergences,
        names[j],
        last[j],
    )
}

/// The random walk of austerity and confidence: as rwm, it starts from the Laplace covariance
/// Σ at scale s = 2.38/√d (proposal covariance s²Σ = 2.38²/d · Σ, Gelman, Roberts & Gilks
/// 1996) rather than Haario's 2.4/√d; the scale is tuned during warmup and Σ kept. (Learning Σ
/// from warmup draws replaced a near-exact shape by the covariance of a transient: on a
/// 37,591-row, 22-parameter collinear logistic regression, R-hat 1.73 and bulk ESS 6 after
/// 10,000 iterations per chain.)
fn minibatch_walk(covariance: &[f64], d: usize) -> RandomWalkProposalConfig {
    RandomWalkProposalConfig {
        covariance: Some(covariance.to_vec()),
        initial_scale: Some(RWM_SCALE / (d as f64).sqrt()),
        adapt_covariance: false,
        ..Default::default()
    }
}

/// The metric kind, starting metric and whether to adapt it, for `--metric`.
fn metric_settings(laplace: &Laplace, arg: MetricArg) -> Result<(MetricKind, Metric, bool)> {
    let kind = match arg {
        MetricArg::Diag => MetricKind::Diagonal,
        MetricArg::Dense | MetricArg::Laplace => MetricKind::Dense,
    };
    Ok((kind, initial_metric(laplace, kind)?, arg != MetricArg::Laplace))
}

fn initial_metric(laplace: &Laplace, kind: MetricKind) -> Result<Metric> {
    let d = laplace.mode.len();
    Ok(match kind {
        MetricKind::Dense => Metric::dense(laplace.covariance.clone(), d)?,
        _ => Metric::diagonal((0..d).map(|j| laplace.covariance[j * d + j]).collect())?,
    })
}

/// The CSV comments every sampler writes: the model, the data, the sampler and, for HMC, its
/// settings.
pub(crate) fn config_comments(sampler: &Sampler, n: usize, d: usize) -> Vec<(String, String)> {
    let a = sampler.common();
    let model = format!("{:?}", a.model).to_lowercase();
    let mut c = vec![
        ("model".to_string(), model),
        ("data".to_string(), a.data.display().to_string()),
        ("n".to_string(), n.to_string()),
        ("dim".to_string(), d.to_string()),
        ("sampler".to_string(), sampler.kind().name()),
        ("init".to_string(), format!("{:?}", a.init).to_lowercase()),
        ("intercept".to_string(), a.intercept.to_string()),
        ("standardize".to_string(), a.standardize.to_string()),
    ];
    if let Some(s) = a.prior_sd {
        c.push(("prior_sd".into(), s.to_string()));
    }
    if let Some(s) = a.sigma {
        c.push(("sigma".into(), s.to_string()));
    }
    if let Some(m) = a.prior_mean {
        c.push(("prior_mean".into(), m.to_string()));
    }
    if let Sampler::Hmc(h) = sampler {
        c.push(("metric".into(), format!("{:?}", h.metric).to_lowercase()));
        c.push(("target_accept".into(), h.target.target_accept.to_string()));
        c.push(("trajectory_length".into(), h.trajectory_length.to_string()));
    }
    if let Sampler::Nuts(h) = sampler {
        c.push(("metric".into(), format!("{:?}", h.metric).to_lowercase()));
        c.push(("target_accept".into(), h.target.target_accept.to_string()));
        c.push(("max_depth".into(), h.max_depth.value().to_string()));
    }
    c
}

/// The set-up before sampling: Newton's method, the Laplace approximation and (with --cv) the
/// control variates' full-data pass.
pub(crate) struct Setup {
    pub(crate) evals: EvalCounts,
    pub(crate) seconds: f64,
    /// When the run started (before the set-up): the summary's total wall time is measured from
    /// here, since chains beyond the thread count run one after another and the longest chain's
    /// time is then only part of the wait.
    pub(crate) started: Instant,
}

#[derive(Serialize)]
pub(crate) struct EvalTotals {
    terms: u64,
    gradients: u64,
    hessians: u64,
    total: u64,
}

impl From<EvalCounts> for EvalTotals {
    fn from(e: EvalCounts) -> Self {
        Self { terms: e.terms, gradients: e.gradients, hessians: e.hessians, total: e.total() }
    }
}

#[derive(Serialize)]
struct Totals {
    /// Newton's method for the mode, the Laplace approximation and (with --cv) the control
    /// variates.
    evals_setup: EvalTotals,
    evals_warmup: EvalTotals,
    evals_sampling: EvalTotals,
    evals: EvalTotals,
    evals_per_draw: f64,
    data_fraction_per_iteration: f64,
    divergences: usize,
    mean_accept_stat: f64,
    wall_seconds: WallSeconds,
}

/// Seconds of wall time. The per-chain phases are the longest chain's; `total` is the elapsed
/// time of the whole run (set-up to the last draw), which exceeds set-up + warmup + sampling
/// when there are more chains than threads.
#[derive(Serialize)]
pub(crate) struct WallSeconds {
    pub(crate) setup: f64,
    pub(crate) warmup_max_over_chains: f64,
    pub(crate) sampling_max_over_chains: f64,
    pub(crate) total: f64,
}

/// The first fields of every summary.json: what was run on what.
#[derive(Serialize)]
pub(crate) struct RunHeader {
    model: String,
    sampler: String,
    data: String,
    n: usize,
    dim: usize,
    chains: usize,
}

impl RunHeader {
    /// The header of a run of `sampler` on N = `n` points and `d` parameters.
    pub(crate) fn new(sampler: &Sampler, n: usize, d: usize) -> Self {
        let a = sampler.common();
        Self {
            model: format!("{:?}", a.model).to_lowercase(),
            sampler: sampler.kind().name(),
            data: a.data.display().to_string(),
            n,
            dim: d,
            chains: a.chains,
        }
    }
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten)]
    run: RunHeader,
    warmup: usize,
    draws: usize,
    seed: u64,
    /// Ctrl-C ended the chains early: `draws_per_chain` says how many draws each made.
    interrupted: bool,
    draws_per_chain: Vec<usize>,
    /// The run report's warnings (R-hat, ESS, divergences, data use), one sentence each.
    warnings: Vec<String>,
    /// Plain summaries of the draws. For signed HMC-ECS these describe the chain's target
    /// π̃ ∝ |L̂_B|, not the posterior: use `sign_corrected`.
    parameters: &'a [Summary],
    /// Signed HMC-ECS: the sign-corrected (exact) posterior means, sds and MCSEs, and τ̂.
    #[serde(skip_serializing_if = "Option::is_none")]
    sign_corrected: Option<crate::ecs::SignCorrectedSummary>,
    totals: Totals,
    laplace_mode: &'a [f64],
    /// The mean test of minibatch samplers and its settings (ε, δ, …), empty otherwise.
    test: std::collections::BTreeMap<String, String>,
    adaptation: Vec<Vec<String>>,
    /// Per chain: the kernel's adapted tuning, typed (step size, metric, scale, …).
    tuning: Vec<serde_json::Value>,
}

fn write_summary<M: CliModel>(
    sampler: &Sampler, model: &M, n: usize, names: &[String], laplace: &Laplace, setup: &Setup,
    test: &[(String, String)], signed: bool, outputs: &[ChainOutput<Sinks, AnyTuning>],
) -> Result<Outcome> {
    let args = sampler.common();
    let d = model.dim();
    let interrupted = outputs.iter().any(|o| o.report.interrupted);
    let draws_made: Vec<usize> = outputs.iter().map(|o| o.sink.0.num_draws()).collect();
    // An interrupted run's chains stop at different draws: summarize every chain's first
    // min-count draws (ESS and R-hat need 4).
    let common = draws_made.iter().copied().min().unwrap_or(0);
    if interrupted {
        // ArviZ (and CmdStan's tools) read a run's chains only when they have equal lengths.
        for k in 1..=outputs.len() {
            cut_csv(&args.out.join(format!("chain_{k}.csv")), common)?;
        }
    }
    let draws_made = if interrupted { vec![common; outputs.len()] } else { draws_made };
    let parameters = if common >= 4 {
        let chains: Vec<&[f64]> = outputs.iter().map(|o| &o.sink.0.draws[..common * d]).collect();
        summarize(names, &Draws::new(&chains, d)?)?
    } else {
        Vec::new()
    };
    let warmup: EvalCounts = outputs.iter().map(|o| o.report.warmup_evals).sum();
    let sampling: EvalCounts = outputs.iter().map(|o| o.report.sampling_evals).sum();
    let draws_total = draws_made.iter().sum::<usize>().max(1) as f64;
    let max = |f: fn(&ChainOutput<_, _>) -> f64| outputs.iter().map(f).fold(0.0, f64::max);
    let warm_s = max(|o| o.report.warmup_seconds);
    let samp_s = max(|o| o.report.sampling_seconds);
    let data_fraction = outputs.iter().map(|o| o.report.mean_batch_size).sum::<f64>()
        / outputs.len() as f64
        / n as f64;
    let divergences = outputs.iter().map(|o| o.report.divergences).sum();
    let totals = Totals {
        evals_setup: setup.evals.into(),
        evals_warmup: warmup.into(),
        evals_sampling: sampling.into(),
        evals: (setup.evals + warmup + sampling).into(),
        evals_per_draw: sampling.total() as f64 / draws_total,
        data_fraction_per_iteration: data_fraction,
        divergences,
        mean_accept_stat: outputs.iter().map(|o| o.report.mean_accept_stat).sum::<f64>()
            / outputs.len() as f64,
        wall_seconds: WallSeconds {
            setup: setup.seconds,
            warmup_max_over_chains: warm_s,
            sampling_max_over_chains: samp_s,
            total: setup.started.elapsed().as_secs_f64(),
        },
    };
    let facts = RunFacts {
        sampler: sampler.kind(),
        n,
        chains: args.chains,
        draws_asked: args.draws,
        draws_made: draws_made.clone(),
        parameters: &parameters,
        divergences,
        depth_limit: match sampler {
            Sampler::Nuts(a) => Some((
                outputs.iter().map(|o| o.report.length_limit_hits).sum(),
                a.max_depth.value(),
            )),
            Sampler::HmcEcs(HmcEcsArgs { ecs, .. })
            | Sampler::HmcEcsSigned(HmcEcsSignedArgs { ecs, .. })
                if ecs.inner == InnerArg::Nuts =>
            {
                let hits = outputs.iter().map(|o| o.report.length_limit_hits).sum();
                Some((hits, ecs.max_depth.value()))
            }
            _ => None,
        },
        data_fraction: data_fraction.is_finite().then_some(data_fraction),
        step_word: "iteration",
        evals_total: totals.evals.total,
        evals_per_draw: totals.evals_per_draw,
        wall_seconds: totals.wall_seconds.total,
        interrupted,
        out_dir: &args.out,
    };
    let mut warnings = report::warnings(&facts);
    let laplace_sd: Vec<f64> = (0..d).map(|j| laplace.covariance[j * d + j].sqrt()).collect();
    warnings.extend(report::too_wide(&facts, &laplace_sd));
    let sign_corrected =
        if signed && !interrupted { Some(sign_corrected_summary(names, outputs)?) } else { None };
    let file = SummaryFile {
        run: RunHeader::new(sampler, n, d),
        warmup: args.warmup,
        draws: args.draws,
        seed: args.seed,
        interrupted,
        draws_per_chain: draws_made,
        warnings: warnings.clone(),
        parameters: &parameters,
        sign_corrected,
        totals,
        laplace_mode: &laplace.mode,
        test: test.iter().cloned().collect(),
        adaptation: outputs.iter().map(|o| o.report.tuning.lines.clone()).collect(),
        tuning: outputs.iter().map(|o| o.report.tuning.value.clone()).collect(),
    };
    let path = args.out.join("summary.json");
    write_json(&path, &file)?;
    if args.report() {
        report::print(&facts, &warnings);
    }
    Ok(if interrupted { Outcome::Interrupted } else { Outcome::Finished })
}

/// Keeps the first `keep` draws of a CmdStan CSV file, with every comment line and the header.
fn cut_csv(path: &Path, keep: usize) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = String::with_capacity(text.len());
    let (mut header_seen, mut rows) = (false, 0);
    for line in text.lines() {
        let is_row = !line.starts_with('#') && header_seen;
        header_seen |= !line.starts_with('#');
        if is_row {
            rows += 1;
            if rows > keep {
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    let tmp = path.with_extension("csv.tmp");
    std::fs::write(&tmp, out).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minibatch_walks_start_at_the_rwm_scale() {
        let d = 3;
        let sigma: Vec<f64> =
            (0..d * d).map(|i| if i % (d + 1) == 0 { 2.0 } else { 0.0 }).collect();
        let walk = minibatch_walk(&sigma, d);
        let s = walk.initial_scale.unwrap();
        assert!((s * s - 2.38 * 2.38 / d as f64).abs() < 1e-12);
        assert_eq!(walk.covariance.as_deref(), Some(&sigma[..]));
        assert!(!walk.adapt_covariance && walk.adapt_scale);
    }
}
