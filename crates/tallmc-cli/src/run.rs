//! `tallmc sample`: build the model, start the chains, run the sampler, write the outputs.

use std::path::Path;
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
    DesignOptions, Gaussian, GaussianMean, LinearRegression, LoadOptions, LogisticRegression,
};
use tallmc_samplers::sink::{ColumnMemorySink, CsvSink, Tee};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, ChainOutput, Driver, Hmc, HmcConfig, Laplace,
    MinibatchMh, NewtonOptions, ProxyConfig, ProxyMinibatchMh, RandomWalkConfig,
    RandomWalkMetropolis, RandomWalkProposal, RandomWalkProposalConfig, RunConfig, SamplerError,
    laplace_approximation, uniform_positions,
};

use crate::args::{BoundArg, InitKind, MetricArg, ModelKind, SampleArgs, SamplerKind};
use crate::ecs::{EcsSettings, WithEngine, run_ecs, sign_corrected_summary};
use crate::outputs::{AnyTuning, Outputs, Sinks, run_kernel};
use crate::pdmp::{PdmpRun, PdmpSettings, RunPdmp};
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

/// Rejects flags that do not apply to the chosen model, so that nothing is silently ignored.
fn check_flags(a: &SampleArgs) -> Result<()> {
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
    if !(a.target_accept > 0.0 && a.target_accept < 1.0) {
        bail!("--target-accept {}: expected a number in the open interval (0, 1)", a.target_accept);
    }
    if let Some(t) = a.trajectory_length
        && !(t.is_finite() && t > 0.0)
    {
        bail!("--trajectory-length {t}: expected a finite number > 0");
    }
    if let Some(s) = a.prior_sd
        && !(s.is_finite() && s > 0.0)
    {
        bail!("--prior-sd {s}: expected a finite number > 0");
    }
    if a.threads == Some(0) {
        bail!("--threads 0: expected at least 1 thread");
    }
    if a.epsilon.is_some() && a.sampler != SamplerKind::Austerity {
        bail!("--epsilon applies only to --sampler austerity");
    }
    let sg = a.sampler.is_stochastic_gradient();
    let sbps = matches!(a.sampler, SamplerKind::Sbps | SamplerKind::Psbps);
    if a.batch.is_some() && !(sg || sbps || a.sampler == SamplerKind::Austerity) {
        bail!("--batch applies only to --sampler austerity, sgld, sghmc, sgnht, sbps or psbps");
    }
    crate::pdmp::check_flags(a)?;
    for (flag, given) in
        [("--step-size", a.step_size.is_some()), ("--precondition", a.precondition)]
    {
        if given && !sg {
            bail!("{flag} applies only to --sampler sgld, sghmc or sgnht");
        }
    }
    if a.cv && !(sg || a.sampler == SamplerKind::Confidence) {
        bail!("--cv applies only to --sampler sgld, sghmc, sgnht or confidence");
    }
    let ecs = a.sampler.is_hmc_ecs();
    if a.cv_order.is_some() && !(sg || ecs) {
        bail!("--cv-order applies only to --sampler sgld, sghmc, sgnht, hmc-ecs or hmc-ecs-signed");
    }
    if a.subsample.is_some() && !ecs {
        bail!("--subsample applies only to --sampler hmc-ecs or hmc-ecs-signed");
    }
    if a.blocks.is_some() && a.sampler != SamplerKind::HmcEcs {
        bail!("--blocks applies only to --sampler hmc-ecs");
    }
    if a.lambda.is_some() && a.sampler != SamplerKind::HmcEcsSigned {
        bail!("--lambda applies only to --sampler hmc-ecs-signed");
    }
    if a.num_steps.is_some() && !matches!(a.sampler, SamplerKind::Sghmc | SamplerKind::Sgnht) {
        bail!("--num-steps applies only to --sampler sghmc or sgnht");
    }
    if a.thermostat.is_some() && a.sampler != SamplerKind::Sgnht {
        bail!("--thermostat applies only to --sampler sgnht");
    }
    if let Some(h) = a.step_size
        && !(h.is_finite() && h > 0.0)
    {
        bail!("--step-size {h}: expected a finite number > 0");
    }
    let confidence_flags = [
        ("--bound", a.bound.is_some()),
        ("--delta", a.delta.is_some()),
        ("--gamma", a.gamma.is_some()),
        ("--p", a.p.is_some()),
    ];
    for (flag, given) in confidence_flags {
        if given && a.sampler != SamplerKind::Confidence {
            bail!("{flag} applies only to --sampler confidence");
        }
    }
    if a.first_batch.is_some()
        && !matches!(a.sampler, SamplerKind::Austerity | SamplerKind::Confidence)
    {
        bail!("--first-batch applies only to --sampler austerity or confidence");
    }
    if a.metric != MetricArg::Laplace && a.sampler != SamplerKind::Hmc {
        bail!("--metric applies only to --sampler hmc (HMC-ECS uses the Hessian at θ*)");
    }
    if a.trajectory_length.is_some() && !(a.sampler == SamplerKind::Hmc || ecs) {
        bail!("--trajectory-length applies only to --sampler hmc, hmc-ecs or hmc-ecs-signed");
    }
    Ok(())
}

/// The Austerity test of the arguments, checked against N.
fn austerity_test(a: &SampleArgs, n: usize) -> Result<AusterityTest> {
    if let Some(m) = a.batch
        && m > n
    {
        bail!("--batch {m}: expected at most the number of data points N = {n}");
    }
    let mut cfg = AusterityConfig::new(a.epsilon.unwrap_or(0.05), a.batch.unwrap_or(n.min(500)));
    if let Some(k) = a.first_batch {
        cfg = cfg.with_first_batch(k);
    }
    let test = AusterityTest::new(cfg)?;
    test.check_population_size(n)?;
    Ok(test)
}

/// The confidence test of the arguments, checked against N.
fn confidence_test(a: &SampleArgs, n: usize) -> Result<ConfidenceTest> {
    let bound = match a.bound.unwrap_or(BoundArg::BernsteinSerfling) {
        BoundArg::HoeffdingSerfling => BoundKind::HoeffdingSerfling,
        BoundArg::Bernstein => BoundKind::EmpiricalBernstein,
        BoundArg::BernsteinSerfling => BoundKind::EmpiricalBernsteinSerfling,
    };
    let mut cfg = ConfidenceConfig::new(bound, a.delta.unwrap_or(0.01));
    if let Some(g) = a.gamma {
        cfg = cfg.with_gamma(g);
    }
    if let Some(p) = a.p {
        cfg = cfg.with_p(p);
    }
    if let Some(k) = a.first_batch {
        cfg = cfg.with_first_batch(k.min(n));
        if k > n {
            bail!("--first-batch {k}: expected at most the number of data points N = {n}");
        }
    }
    let test = ConfidenceTest::new(cfg)?;
    test.check_population_size(n)?;
    Ok(test)
}

/// Running the confidence sampler needs the model's term bounds (plain) or a bound on third
/// derivatives (with Taylor proxies, `--cv`): implemented per model.
pub trait RunConfidence: CliModel {
    /// Runs minibatch MH with the confidence test (or explains why the model cannot).
    fn run_confidence(
        &self,
        driver: &Driver<'_>,
        inits: &[Vec<f64>],
        test: &ConfidenceTest,
        walk: &RandomWalkProposalConfig,
        sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
    ) -> Result<Outputs>;

    /// Runs the confidence sampler with 2nd-order Taylor proxies around `center` (Bardenet,
    /// Doucet & Holmes 2017), or explains why the model cannot.
    fn run_confidence_proxies(
        &self,
        driver: &Driver<'_>,
        inits: &[Vec<f64>],
        test: &ConfidenceTest,
        walk: &RandomWalkProposalConfig,
        center: &[f64],
        sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
    ) -> Result<Outputs>;
}

fn confidence_with_proxies<M: CliModel + TaylorRemainderBound>(
    model: &M,
    driver: &Driver<'_>,
    inits: &[Vec<f64>],
    test: &ConfidenceTest,
    walk: &RandomWalkProposalConfig,
    center: &[f64],
    sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
) -> Result<Outputs> {
    let proxy = ProxyConfig::new(center.to_vec());
    let kernel =
        ProxyMinibatchMh::new(test.clone(), RandomWalkProposal::new(walk.clone())?, proxy)?;
    run_kernel(driver, model, inits, &kernel, sinks)
}

fn no_third_derivative_bound(model: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "--sampler confidence --cv needs a bound on the third derivatives of ℓ_i and --model \
         {model} has none (its terms are unbounded in log σ); use --sampler confidence without \
         --cv, austerity or an exact sampler"
    )
}

fn confidence_with_bounds<M: CliModel + TermBounds>(
    model: &M,
    driver: &Driver<'_>,
    inits: &[Vec<f64>],
    test: &ConfidenceTest,
    walk: &RandomWalkProposalConfig,
    sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
) -> Result<Outputs> {
    let kernel =
        MinibatchMh::new(test.clone(), RandomWalkProposal::new(walk.clone())?).with_term_bounds();
    run_kernel(driver, model, inits, &kernel, sinks)
}

/// Implements [`RunConfidence`] for models with term bounds; `proxies` says whether the model
/// also bounds third derivatives (`TaylorRemainderBound`).
macro_rules! confidence_via_bounds {
    ($($model:ty => $name:literal, $proxies:tt);*) => {$(
        impl RunConfidence for $model {
            fn run_confidence(
                &self,
                driver: &Driver<'_>,
                inits: &[Vec<f64>],
                test: &ConfidenceTest,
                walk: &RandomWalkProposalConfig,
                sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
            ) -> Result<Outputs> {
                confidence_with_bounds(self, driver, inits, test, walk, sinks)
            }

            fn run_confidence_proxies(
                &self,
                driver: &Driver<'_>,
                inits: &[Vec<f64>],
                test: &ConfidenceTest,
                walk: &RandomWalkProposalConfig,
                center: &[f64],
                sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
            ) -> Result<Outputs> {
                confidence_via_bounds!(@proxies $proxies, $name, self, driver, inits, test, walk, center, sinks)
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
    LogisticRegression => "logistic", yes;
    Gaussian => "gaussian", no;
    GaussianMean => "gaussian-mean", yes
);

impl RunConfidence for LinearRegression {
    fn run_confidence(
        &self,
        _driver: &Driver<'_>,
        _inits: &[Vec<f64>],
        _test: &ConfidenceTest,
        _walk: &RandomWalkProposalConfig,
        _sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
    ) -> Result<Outputs> {
        bail!(
            "--sampler confidence needs a bound on |ℓ_i(θ′) − ℓ_i(θ)| and --model linear has none \
             (its terms are unbounded in θ); use --sampler austerity or an exact sampler"
        )
    }

    fn run_confidence_proxies(
        &self,
        _driver: &Driver<'_>,
        _inits: &[Vec<f64>],
        _test: &ConfidenceTest,
        _walk: &RandomWalkProposalConfig,
        _center: &[f64],
        _sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
    ) -> Result<Outputs> {
        Err(no_third_derivative_bound("linear"))
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

/// Runs `tallmc sample`; `stop`, once raised, ends the chains after their current iteration.
pub fn sample(args: &SampleArgs, stop: &AtomicBool) -> Result<Outcome> {
    sample_model(args, stop).map_err(|e| explain_non_finite(e, args))
}

/// A chain that left the finite numbers, told in the CLI's terms: 1-based chain and its file,
/// the parameter, and the flag to change.
fn explain_non_finite(e: anyhow::Error, args: &SampleArgs) -> anyhow::Error {
    let Some(SamplerError::NonFiniteDraw { chain, iteration, parameter, value }) =
        e.downcast_ref::<SamplerError>()
    else {
        return e;
    };
    let k = chain + 1;
    let when = if *iteration < args.warmup {
        format!("warmup iteration {}", iteration + 1)
    } else {
        format!("draw {}", iteration - args.warmup + 1)
    };
    let cure = match (args.sampler.is_stochastic_gradient(), args.step_size) {
        (true, Some(h)) => format!("try a smaller --step-size than {h}"),
        _ => "a smaller step size usually cures this".to_string(),
    };
    anyhow::anyhow!(
        "chain {k} diverged to {parameter} = {value} at {when}; {cure} (chain_{k}.csv keeps the \
         draws made before it; no summary.json was written)"
    )
}

fn sample_model(args: &SampleArgs, stop: &AtomicBool) -> Result<Outcome> {
    check_flags(args)?;
    if let Some(t) = args.threads {
        rayon_pool(t)?;
    }
    let setup_start = Instant::now();
    let data = tallmc_models::load(&args.data, &LoadOptions::default())?;
    let n = data.len();
    let design = DesignOptions { intercept: args.intercept, standardize: args.standardize };
    let prior_sd = args.prior_sd.unwrap_or(10.0);
    match args.model {
        ModelKind::Logistic => {
            run_model(&LogisticRegression::new(data, design, prior_sd)?, args, n, setup_start, stop)
        }
        ModelKind::Linear => {
            run_model(&LinearRegression::new(data, design, prior_sd)?, args, n, setup_start, stop)
        }
        ModelKind::Gaussian => run_model(&Gaussian::new(data)?, args, n, setup_start, stop),
        ModelKind::GaussianMean => {
            let Some(sigma) = args.sigma else {
                bail!("--model gaussian-mean needs --sigma S, the known noise sd");
            };
            let model = GaussianMean::new(data, sigma, args.prior_mean.unwrap_or(0.0), prior_sd)?;
            run_model(&model, args, n, setup_start, stop)
        }
    }
}

fn rayon_pool(threads: usize) -> Result<()> {
    // The global pool can be built once per process; the CLI does it before any parallel work.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .with_context(|| format!("cannot start {threads} worker threads"))
}

fn run_model<M: RunConfidence + WithEngine + RunPdmp>(
    model: &M,
    args: &SampleArgs,
    n: usize,
    setup_start: Instant,
    stop: &AtomicBool,
) -> Result<Outcome> {
    let d = model.dim();
    let names = model.parameter_names();
    // Minibatch tests first: a bad setting is an error before any work.
    let austerity = match args.sampler {
        SamplerKind::Austerity => Some(austerity_test(args, n)?),
        _ => None,
    };
    let confidence = match args.sampler {
        SamplerKind::Confidence => Some(confidence_test(args, n)?),
        _ => None,
    };
    let sg = SgSettings::from_args(args, n)?;
    let ecs = EcsSettings::from_args(args, n)?;
    let pdmp = PdmpSettings::from_args(args, n)?;
    let laplace = laplace_approximation(model, &vec![0.0; d], NewtonOptions::default())
        .context("cannot find the posterior mode to start from (Newton's method)")?;
    let inits = match args.init {
        InitKind::Dispersed => laplace.dispersed_positions(args.chains, 2.0, args.seed)?,
        InitKind::Mode => laplace.dispersed_positions(args.chains, 0.0, args.seed)?,
        InitKind::Uniform => uniform_positions(d, args.chains, 2.0, args.seed)?,
    };
    let setup_seconds = setup_start.elapsed().as_secs_f64();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create output directory {}", args.out.display()))?;
    if let Some(settings) = pdmp {
        let comments = config_comments(args, n, d);
        let run = PdmpRun::new(
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
        let outputs = model.run_pdmp(&run)?;
        let setup = Setup { evals: laplace.evals, seconds: setup_seconds };
        return crate::pdmp::write_summary(args, n, &run, &setup, &outputs);
    }
    let sinks = (0..args.chains)
        .map(|k| {
            let path = args.out.join(format!("chain_{}.csv", k + 1));
            CsvSink::create(&path)
                .map(|csv| Tee(ColumnMemorySink::new(), csv))
                .with_context(|| format!("cannot create {}", path.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let run = RunConfig {
        num_warmup: args.warmup,
        num_draws: args.draws,
        num_chains: args.chains,
        seed: args.seed,
        save_warmup: false,
    };
    let metric_kind = match args.metric {
        MetricArg::Diag => MetricKind::Diagonal,
        MetricArg::Dense | MetricArg::Laplace => MetricKind::Dense,
    };
    let mut comments = config_comments(args, n, d);
    let test_description = austerity
        .as_ref()
        .map(|t| t.describe())
        .or_else(|| confidence.as_ref().map(|t| t.describe()))
        .unwrap_or_default();
    comments.extend(test_description.iter().cloned());
    if args.sampler == SamplerKind::Confidence && args.cv {
        comments.push((
            "proxies".to_string(),
            "Taylor order 2 at the posterior mode (BDH 2017)".to_string(),
        ));
    }
    if let Some(s) = &sg {
        comments.extend(s.comments());
    }
    if let Some(s) = &ecs {
        comments.extend(s.comments());
    }
    let mut setup_evals = laplace.evals;
    let walk = minibatch_walk(&laplace.covariance, d);
    let progress = crate::progress::Bar::on_terminal(args.chains);
    let driver = Driver::new(run)
        .parameter_names(names.clone())
        .comments(comments)
        .progress(&progress)
        .stop_when(stop);
    let outputs = match args.sampler {
        SamplerKind::Rwm => {
            let cfg = RandomWalkConfig {
                proposal_covariance: Some(laplace.covariance.clone()),
                ..Default::default()
            };
            run_kernel(&driver, model, &inits, &RandomWalkMetropolis::new(cfg)?, sinks)?
        }
        SamplerKind::AdaptiveMh => {
            let cfg = AdaptiveMetropolisConfig {
                initial_covariance: Some(laplace.covariance.clone()),
                ..Default::default()
            };
            run_kernel(&driver, model, &inits, &AdaptiveMetropolis::new(cfg)?, sinks)?
        }
        SamplerKind::Hmc => {
            let mut cfg = HmcConfig {
                metric: metric_kind,
                initial_metric: Some(initial_metric(&laplace, metric_kind)?),
                adapt_metric: args.metric != MetricArg::Laplace,
                ..Default::default()
            };
            cfg.dual_averaging.target_accept = args.target_accept;
            if let Some(t) = args.trajectory_length {
                cfg.trajectory_length = t;
            }
            run_kernel(&driver, model, &inits, &Hmc::new(cfg)?, sinks)?
        }
        SamplerKind::Austerity => {
            let test = austerity.context("Austerity test")?;
            let kernel = MinibatchMh::new(test, RandomWalkProposal::new(walk.clone())?);
            run_kernel(&driver, model, &inits, &kernel, sinks)?
        }
        SamplerKind::Confidence => {
            let test = confidence.context("confidence test")?;
            if args.cv {
                model.run_confidence_proxies(&driver, &inits, &test, &walk, &laplace.mode, sinks)?
            } else {
                model.run_confidence(&driver, &inits, &test, &walk, sinks)?
            }
        }
        SamplerKind::Sgld | SamplerKind::Sghmc | SamplerKind::Sgnht => {
            let s = sg.context("stochastic-gradient settings")?;
            let (outputs, cv_setup) = run_stochastic_gradient(
                model,
                &s,
                &laplace.mode,
                &laplace.covariance,
                &driver,
                &inits,
                sinks,
            )?;
            setup_evals += cv_setup;
            check_sg_stayed_finite(args, &names, &laplace, &inits, &outputs)?;
            outputs
        }
        SamplerKind::HmcEcs | SamplerKind::HmcEcsSigned => {
            let s = ecs.context("HMC-ECS settings")?;
            run_ecs(model, &s, &laplace.mode, &driver, &inits, sinks)?
        }
        SamplerKind::Bps
        | SamplerKind::Sbps
        | SamplerKind::Psbps
        | SamplerKind::Lipsbps
        | SamplerKind::Zigzag
        | SamplerKind::ZigzagSs
        | SamplerKind::ZigzagCv => bail!("continuous-time settings missing"),
    };
    let setup = Setup { evals: setup_evals, seconds: setup_seconds };
    let signed = ecs.is_some_and(|s| s.is_signed());
    progress.finish();
    write_summary(args, model, n, &names, &laplace, &setup, &test_description, signed, &outputs)
}

/// A stochastic-gradient step whose θ leaves the finite numbers stops the run with
/// `SamplerError::NonFiniteDraw` (told by `explain_non_finite`). A divergence that left θ
/// finite (a non-finite gradient or momentum inside an SG-HMC trajectory, a thermostat
/// overflow) also means the step size is far too large for the posterior's curvature: the run
/// is an error, naming the coordinate that ran away (the one farthest from the mode in Laplace
/// sds at the chain's last draw) and the flag to change. The CSV files are complete up to there.
fn check_sg_stayed_finite(
    args: &SampleArgs,
    names: &[String],
    laplace: &Laplace,
    inits: &[Vec<f64>],
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
    let h = args.step_size.map_or_else(String::new, |h| format!(" than {h}"));
    let far = distance(j);
    let far = if far.is_finite() {
        format!(", {far:.1e} posterior sds from the mode")
    } else {
        String::new()
    };
    bail!(
        "chain {k} left the finite numbers: {} of its steps made θ or its gradient non-finite \
         ({} = {:.4e} at its last draw{far}); try a smaller --step-size{h} (chain_{k}.csv keeps \
         the draws; no summary.json was written)",
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

fn initial_metric(laplace: &Laplace, kind: MetricKind) -> Result<Metric> {
    let d = laplace.mode.len();
    Ok(match kind {
        MetricKind::Dense => Metric::dense(laplace.covariance.clone(), d)?,
        _ => Metric::diagonal((0..d).map(|j| laplace.covariance[j * d + j]).collect())?,
    })
}

pub(crate) fn config_comments(a: &SampleArgs, n: usize, d: usize) -> Vec<(String, String)> {
    let model = format!("{:?}", a.model).to_lowercase();
    let mut c = vec![
        ("model".to_string(), model),
        ("data".to_string(), a.data.display().to_string()),
        ("n".to_string(), n.to_string()),
        ("dim".to_string(), d.to_string()),
        ("sampler".to_string(), a.sampler.name()),
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
    if a.sampler == SamplerKind::Hmc {
        c.push(("metric".into(), format!("{:?}", a.metric).to_lowercase()));
        c.push(("target_accept".into(), a.target_accept.to_string()));
        let t = a.trajectory_length.unwrap_or(std::f64::consts::FRAC_PI_2);
        c.push(("trajectory_length".into(), t.to_string()));
    }
    c
}

/// The set-up before sampling: Newton's method, the Laplace approximation and (with --cv) the
/// control variates' full-data pass.
pub(crate) struct Setup {
    pub(crate) evals: EvalCounts,
    pub(crate) seconds: f64,
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

#[derive(Serialize)]
pub(crate) struct WallSeconds {
    pub(crate) setup: f64,
    pub(crate) warmup_max_over_chains: f64,
    pub(crate) sampling_max_over_chains: f64,
    pub(crate) total: f64,
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    model: String,
    sampler: String,
    data: String,
    n: usize,
    dim: usize,
    chains: usize,
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
    args: &SampleArgs,
    model: &M,
    n: usize,
    names: &[String],
    laplace: &Laplace,
    setup: &Setup,
    test: &[(String, String)],
    signed: bool,
    outputs: &[ChainOutput<Sinks, AnyTuning>],
) -> Result<Outcome> {
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
            total: setup.seconds + warm_s + samp_s,
        },
    };
    let facts = RunFacts {
        sampler: args.sampler,
        n,
        chains: args.chains,
        draws_asked: args.draws,
        draws_made: draws_made.clone(),
        parameters: &parameters,
        divergences,
        data_fraction: data_fraction.is_finite().then_some(data_fraction),
        step_word: "iteration",
        evals_total: totals.evals.total,
        evals_per_draw: totals.evals_per_draw,
        wall_seconds: totals.wall_seconds.total,
        interrupted,
    };
    let mut warnings = report::warnings(&facts);
    let laplace_sd: Vec<f64> = (0..d).map(|j| laplace.covariance[j * d + j].sqrt()).collect();
    warnings.extend(report::too_wide(&facts, &laplace_sd));
    let sign_corrected =
        if signed && !interrupted { Some(sign_corrected_summary(names, outputs)?) } else { None };
    let file = SummaryFile {
        model: format!("{:?}", args.model).to_lowercase(),
        sampler: args.sampler.name(),
        data: args.data.display().to_string(),
        n,
        dim: d,
        chains: args.chains,
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
    report::print(&facts, &warnings);
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
