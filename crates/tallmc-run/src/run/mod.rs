//! Running a [`RunSpec`]: read the data, build the model, find the posterior mode and the
//! Laplace approximation, start the chains, run the sampler, summarize. The draws stay in
//! memory ([`RunResult`]); the files (CmdStan CSV per chain, summary.json) are written only
//! when the run has an output directory.

mod confidence;
mod context;
mod custom;
mod data;
mod design;
mod design_of;
mod discrete;
mod ecs;
mod exact_mh;
mod outputs;
mod pdmp;
mod progress;
mod report;
mod served;
mod sg;
mod shard_kernel;
mod shard_source;
mod sharded_run;
mod sharded_setup;
mod summary;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use tallmc_models::dispersion::{NegativeBinomialFamily, StudentTFamily};
use tallmc_models::glm::{PoissonFamily, ProbitFamily};
use tallmc_models::{
    Dataset, FastLogisticRegression, Gaussian, GaussianMean, LinearRegression,
    NegativeBinomialRegression, PoissonRegression, ProbitRegression, RobustRegression,
};
use tallmc_samplers::continuous::MemorySkeleton;
use tallmc_samplers::sink::{ColumnMemorySink, Tee, memory_sink_bytes};
use tallmc_samplers::{SamplerError, laplace_approximation, uniform_positions};

pub use context::{Outcome, RunModel};
pub use custom::CustomModel;
pub use outputs::{AnyTuning, MaybeCsv, Sinks, abandon_open_files};
pub use progress::RunProgress;
pub use shard_kernel::shard_sums;
pub use sharded_run::run_on_shards;
pub use sharded_setup::{
    ControlVariateSums, ShardSource, ShardedSetup, setup_local, setup_on_shards,
};
pub use tallmc_core::PassKind;

use self::confidence::RunConfidence;
use self::context::Setup;
use self::custom::Custom;
use self::design::DesignWarnings;
use self::design_of::regression_design;
use self::discrete::{DiscreteRun, Plan, run_discrete};
use self::ecs::WithEngine;
use self::exact_mh::RunExactMh;
use self::pdmp::{PdmpRun, PdmpSettings, RunPdmp};
use self::progress::{ProgressTo, SetupSpinner};
use crate::spec::{DataSpec, InitChoice, ModelSpec, RunSpec};

/// What a run made, in memory: every chain's draws and stats (for a continuous-time sampler,
/// its draws on the time grid), and the summary (what summary.json holds).
#[derive(Debug)]
pub struct RunResult {
    /// How the run ended.
    pub outcome: Outcome,
    /// The parameters' names, in θ's order.
    pub parameter_names: Vec<String>,
    /// Each chain's post-warmup draws (row-major, one row of d per draw), `lp__`, stat columns
    /// and adapted tuning. After an interrupt the chains may hold different numbers of draws.
    pub chains: Vec<ColumnMemorySink>,
    /// A continuous-time sampler with `skeleton`: each chain's event skeleton (empty otherwise).
    pub skeletons: Vec<MemorySkeleton>,
    /// The summary: per-parameter summaries, evaluation totals, warnings, tuning, and the run
    /// itself under `spec`.
    pub summary: serde_json::Value,
}

/// Runs `spec`. With `data`, the model is built on it instead of reading the spec's data file
/// (how the Python package hands over NumPy arrays without copying them). `stop`, once raised,
/// ends every chain after its current iteration ([`Outcome::Interrupted`]). Progress goes to a
/// terminal bar (when the spec asks for one and stderr is a terminal) and to `observer`.
///
/// Runs on the spec's number of threads (a pool of the run's own), else on all cores.
pub fn run(
    spec: &RunSpec, data: Option<Dataset>, stop: &AtomicBool, observer: Option<Arc<RunProgress>>,
) -> Result<RunResult> {
    execute(spec, observer, move |progress| sample(spec, data, stop, progress))
}

/// Runs `spec` on a model of the user's own (`spec.model` is [`ModelSpec::Custom`]): any
/// type with the evaluation traits of `tallmc_core` ([`CustomModel`]), e.g. the Python
/// package's `CustomModel` whose terms call back into Python. Every sampler whose needs the
/// model meets runs it: the exact samplers, HMC-ECS and the SG kernels (control variates by
/// Hessian-vector products; second order only with exact Hessians), austerity, SBPS and BPS /
/// Zig-Zag with the automatic envelope; the bound-based samplers refuse. Otherwise as [`run`].
pub fn run_custom<M: CustomModel>(
    spec: &RunSpec, model: &M, stop: &AtomicBool, observer: Option<Arc<RunProgress>>,
) -> Result<RunResult> {
    if !matches!(spec.model, ModelSpec::Custom { .. }) {
        bail!(
            "run_custom runs a model of your own: the run's model must be ModelSpec::Custom, not \
             --model {}",
            spec.model.family()
        );
    }
    execute(spec, observer, move |progress| {
        let start = prepare(spec, "checking the model", progress)?;
        let n = model.num_terms();
        if n == 0 {
            bail!("the model has no terms (N = 0); expected at least one data point");
        }
        run_model(&Custom(model), spec, n, start, stop, progress)
    })
}

/// Validates `spec`, then runs `go` on the spec's number of threads (a pool of the run's own),
/// else on all cores; errors of diverging chains are told in the command's terms.
fn execute<F>(spec: &RunSpec, observer: Option<Arc<RunProgress>>, go: F) -> Result<RunResult>
where
    F: FnOnce(&ProgressTo) -> Result<RunResult> + Send,
{
    spec.validate()?;
    let progress = ProgressTo { terminal: spec.execution.progress, observer };
    let go = || {
        let result = go(&progress).map_err(|e| explain_non_finite(e, spec));
        outputs::forget_open_files();
        result
    };
    match spec.execution.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .with_context(|| format!("cannot start {t} worker threads"))?
            .install(go),
        None => go(),
    }
}

/// A chain that left the finite numbers, told in the command's terms: 1-based chain and its
/// file, the parameter, and the setting to change.
fn explain_non_finite(e: anyhow::Error, spec: &RunSpec) -> anyhow::Error {
    let Some(SamplerError::NonFiniteDraw { chain, iteration, parameter, value }) =
        e.downcast_ref::<SamplerError>()
    else {
        return e;
    };
    let k = chain + 1;
    let when = if *iteration < spec.warmup {
        format!("warmup iteration {}", iteration + 1)
    } else {
        format!("draw {}", iteration - spec.warmup + 1)
    };
    let cure = match spec.sampler.stochastic_gradient() {
        Some(sg) => format!("try a smaller --step-size than {}", sg.step_size),
        None => "a smaller step size usually cures this".to_string(),
    };
    let kept = match &spec.output.dir {
        Some(_) => {
            format!(" (chain_{k}.csv keeps the draws made before it; no summary.json was written)")
        }
        None => String::new(),
    };
    anyhow::anyhow!("chain {k} diverged to {parameter} = {value} at {when}; {cure}{kept}")
}

/// Files a run writes into its output directory: what `overwrite` removes.
fn is_run_file(name: &str) -> bool {
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".csv").or_else(|| rest.strip_suffix(".csv.tmp")))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
    };
    name == "summary.json"
        || name == "summary.json.tmp"
        || numbered("chain_")
        || numbered("skeleton_")
}

/// Makes the output directory ready: created if missing; refused if it already holds files,
/// unless `overwrite`, which first removes the files of the run there (chain_*.csv,
/// skeleton_*.csv, summary.json), so that two runs are never mixed.
fn prepare_output_dir(dir: &Path, overwrite: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!("--out {}: expected a directory, and it is a file", dir.display());
    }
    if dir.is_dir() {
        let entries: Vec<_> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the output directory {}", dir.display()))?
            .filter_map(|e| e.ok())
            .collect();
        if !entries.is_empty() && !overwrite {
            bail!(
                "--out {}: the directory exists and is not empty ({} entries); give --overwrite \
                 to replace the run there, or choose another directory (runs are never mixed)",
                dir.display(),
                entries.len()
            );
        }
        for entry in entries {
            let name = entry.file_name();
            if name.to_str().is_some_and(is_run_file) {
                std::fs::remove_file(entry.path())
                    .with_context(|| format!("cannot remove {}", entry.path().display()))?;
            }
        }
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output directory {}", dir.display()))
}

/// Bytes of memory available to this process for new allocations, if the system says
/// (`MemAvailable` of /proc/meminfo on Linux).
fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A run keeps every chain's draws in memory (for its summary and its caller): refused before
/// any work if they cannot fit. Continuous-time budgets in time, events or evaluations make an
/// unknown number of draws, and are not checked.
fn check_memory(spec: &RunSpec, d: usize) -> Result<()> {
    // lp__ and the kernel's stat columns besides θ (from 4 for random-walk MH to about a
    // dozen for HMC-ECS): a lower estimate, so that only runs that surely cannot fit are
    // refused.
    const STAT_COLUMNS: usize = 5;
    let need = memory_sink_bytes(spec.chains, spec.draws, d, STAT_COLUMNS);
    let Some(have) = available_memory() else { return Ok(()) };
    if need > have {
        bail!(
            "--draws {}: {} chains × {} draws × {} numbers per draw need {} of memory, and {} is \
             available; ask for fewer draws or chains",
            spec.draws,
            spec.chains,
            spec.draws,
            d + 1 + STAT_COLUMNS,
            bytes(need),
            bytes(have)
        );
    }
    Ok(())
}

/// `b` bytes in GB or TB, for a message.
fn bytes(b: u128) -> String {
    let gb = b as f64 / 1e9;
    if gb >= 1000.0 { format!("{:.1} TB", gb / 1000.0) } else { format!("{gb:.1} GB") }
}

/// What every run does before its model exists: refuse draw counts that cannot fit, make the
/// output directory ready, start the set-up's clock and spinner (at `phase`).
fn prepare(spec: &RunSpec, phase: &str, progress: &ProgressTo) -> Result<(Instant, SetupSpinner)> {
    if spec.sampler.continuous().is_none() {
        // The dimension is not known yet: a first check with d = 1 refuses absurd draw counts
        // before the data are read; `run_model` checks again with the real d.
        check_memory(spec, 1)?;
    }
    if let Some(dir) = &spec.output.dir {
        prepare_output_dir(dir, spec.output.overwrite)?;
    }
    Ok((Instant::now(), SetupSpinner::new(phase, progress)))
}

/// A run of a model defined in code cannot be run from its spec alone.
fn defined_in_code(label: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "the run's model was defined in code ({label}): hand it over again to repeat it \
         (tallmc_run::run_custom, or tallmc.sample with the CustomModel)"
    )
}

fn sample(
    spec: &RunSpec, data: Option<Dataset>, stop: &AtomicBool, progress: &ProgressTo,
) -> Result<RunResult> {
    if let ModelSpec::Custom { label } = &spec.model {
        return Err(defined_in_code(label));
    }
    let start = prepare(spec, "reading and checking the data", progress)?;
    let data = match (data, &spec.data) {
        (Some(data), _) => data,
        (None, DataSpec::File { path, y_npy, response, columns }) => {
            let offset = match &spec.model {
                ModelSpec::Poisson(c) | ModelSpec::NegativeBinomial(c) => c.offset.column(),
                _ => None,
            };
            let keep = offset.map(|(name, _)| name);
            let (response, columns) = (response.as_deref(), columns.as_deref());
            data::load_file(path, y_npy.as_deref(), response, columns, keep)?
        }
        (None, DataSpec::Arrays { label }) => bail!(
            "the run's data were arrays in memory ({label}): hand them over again to repeat it"
        ),
    };
    let n = data.len();
    build_model(&spec.model, data, RunWith { spec, n, start, stop, progress })
}

/// The things every model a spec describes can do: sample (every sampler whose needs it
/// meets), warn about its design.
pub(crate) trait SpecModel:
    RunConfidence + RunExactMh + WithEngine + RunPdmp + DesignWarnings + ecs::ServedEngine
{
}
impl<M: RunConfidence + RunExactMh + WithEngine + RunPdmp + DesignWarnings + ecs::ServedEngine>
    SpecModel for M
{
}

/// Something done with the model a [`ModelSpec`] describes, whatever its type
/// ([`build_model`]).
pub(crate) trait WithModel {
    /// What it gives.
    type Out;
    /// Does it with `model`.
    fn with<M: SpecModel>(self, model: &M) -> Result<Self::Out>;
}

/// Builds the model `spec` describes on `data` and hands it to `w`.
pub(crate) fn build_model<W: WithModel>(spec: &ModelSpec, data: Dataset, w: W) -> Result<W::Out> {
    match spec {
        ModelSpec::Logistic(r) => {
            let design = regression_design(data, r, None)?;
            w.with(&FastLogisticRegression::from_design(design, r.prior_sd)?)
        }
        ModelSpec::Probit(r) => {
            let design = regression_design(data, r, None)?;
            w.with(&ProbitRegression::with_family(ProbitFamily, design, r.prior_sd)?)
        }
        ModelSpec::Poisson(c) => {
            let design = regression_design(data, &c.regression, Some(&c.offset))?;
            let sd = c.regression.prior_sd;
            w.with(&PoissonRegression::with_family(PoissonFamily, design, sd)?)
        }
        ModelSpec::NegativeBinomial(c) => {
            let design = regression_design(data, &c.regression, Some(&c.offset))?;
            let (family, sd) = (NegativeBinomialFamily, c.regression.prior_sd);
            w.with(&NegativeBinomialRegression::with_family(family, design, sd)?)
        }
        ModelSpec::Linear(r) => {
            let design = regression_design(data, r, None)?;
            w.with(&LinearRegression::from_design(design, r.prior_sd)?)
        }
        ModelSpec::Robust(r) => {
            let design = regression_design(data, &r.regression, None)?;
            let family = StudentTFamily::new(r.nu)?;
            w.with(&RobustRegression::with_family(family, design, r.regression.prior_sd)?)
        }
        ModelSpec::Gaussian {} => w.with(&Gaussian::new(data)?),
        &ModelSpec::GaussianMean { sigma, prior_mean, prior_sd } => {
            w.with(&GaussianMean::new(data, sigma, prior_mean, prior_sd)?)
        }
        ModelSpec::Custom { label } => Err(defined_in_code(label)),
    }
}

/// A run of a spec's model ([`run_model`]).
struct RunWith<'a> {
    spec: &'a RunSpec,
    n: usize,
    start: (Instant, SetupSpinner),
    stop: &'a AtomicBool,
    progress: &'a ProgressTo,
}

impl WithModel for RunWith<'_> {
    type Out = RunResult;
    fn with<M: SpecModel>(self, model: &M) -> Result<RunResult> {
        run_model(model, self.spec, self.n, self.start, self.stop, self.progress)
    }
}

fn run_model<M: RunConfidence + RunExactMh + WithEngine + RunPdmp + DesignWarnings>(
    model: &M, spec: &RunSpec, n: usize, start: (Instant, SetupSpinner), stop: &AtomicBool,
    progress: &ProgressTo,
) -> Result<RunResult> {
    let (setup_start, spinner) = start;
    let d = model.dim();
    let names = model.parameter_names();
    // The sampler's settings first: a bad setting is an error before any work.
    let plan = Plan::new(&spec.sampler, n)?;
    let pdmp = match plan {
        Some(_) => {
            check_memory(spec, d)?;
            None
        }
        None => Some(PdmpSettings::new(
            spec,
            n,
            model.has_curvature_bound(),
            model.has_gradient_bounds(),
        )?),
    };
    spinner.phase("finding the posterior mode (Newton's method)", n);
    let laplace = laplace_approximation(model, &vec![0.0; d], sharded_setup::run_newton_options())
        .context("cannot find the posterior mode to start from (Newton's method)")?;
    drop(spinner);
    if stop.load(Ordering::SeqCst) {
        // Interrupted during the setup: no chain starts and nothing is written.
        return Ok(RunResult {
            outcome: Outcome::Interrupted,
            parameter_names: names,
            chains: Vec::new(),
            skeletons: Vec::new(),
            summary: serde_json::Value::Null,
        });
    }
    let inits = match spec.init {
        InitChoice::Dispersed => laplace.dispersed_positions(spec.chains, 2.0, spec.seed)?,
        InitChoice::Mode => laplace.dispersed_positions(spec.chains, 0.0, spec.seed)?,
        InitChoice::Uniform => uniform_positions(d, spec.chains, 2.0, spec.seed)?,
    };
    let warnings = match spec.model.regression() {
        Some(r) => model.design_warnings(&laplace.mode, r.prior_sd)?,
        None => Vec::new(),
    };
    let setup = Setup {
        evals: laplace.evals,
        seconds: setup_start.elapsed().as_secs_f64(),
        started: setup_start,
        warnings,
    };
    let comments = config_comments(spec, n, d);
    if let Some(settings) = pdmp {
        let mut run = PdmpRun::new(spec, settings, &laplace, &names, comments, &inits, stop)?;
        run.progress = progress.clone();
        let outputs = model.run_pdmp(&run)?;
        let (outcome, summary) = pdmp::write_summary(n, &run, &setup, &outputs)?;
        let (chains, skeletons): (Vec<_>, Vec<_>) = outputs
            .into_iter()
            .map(|o| {
                let Tee(grid, Tee(memory, _)) = o.sink.1;
                (grid.into_inner().0, memory)
            })
            .unzip();
        let skeletons = skeletons.into_iter().flatten().collect();
        return Ok(RunResult { outcome, parameter_names: names, chains, skeletons, summary });
    }
    let Some(plan) = plan else { unreachable!("a sampler is discrete or continuous") };
    let run = DiscreteRun {
        spec,
        n,
        names: &names,
        laplace: &laplace,
        inits: &inits,
        comments,
        setup,
        stop,
        progress,
    };
    let (outputs, outcome, summary) = run_discrete(model, &plan, run)?;
    let chains = outputs.into_iter().map(|o| o.sink.0).collect();
    Ok(RunResult { outcome, parameter_names: names, chains, skeletons: Vec::new(), summary })
}

/// The CSV comments every sampler writes: the model, the data and the sampler.
fn config_comments(spec: &RunSpec, n: usize, d: usize) -> Vec<(String, String)> {
    let init = match spec.init {
        InitChoice::Dispersed => "dispersed",
        InitChoice::Mode => "mode",
        InitChoice::Uniform => "uniform",
    };
    let mut c = vec![
        ("model".to_string(), spec.model.family().to_string()),
        ("data".to_string(), spec.data.label()),
        ("n".to_string(), n.to_string()),
        ("dim".to_string(), d.to_string()),
        ("sampler".to_string(), spec.sampler.name()),
        ("init".to_string(), init.to_string()),
    ];
    if let Some(r) = spec.model.regression() {
        c.push(("intercept".into(), r.intercept.to_string()));
        c.push(("standardize".into(), r.standardize.to_string()));
        c.push(("prior_sd".into(), r.prior_sd.to_string()));
    }
    if let Some((column, exposure)) = spec.model.offset().and_then(|o| o.column()) {
        let key = if exposure { "exposure" } else { "offset" };
        c.push((key.into(), column.to_string()));
    }
    match spec.model {
        ModelSpec::Robust(ref r) => c.push(("nu".into(), r.nu.to_string())),
        ModelSpec::GaussianMean { sigma, prior_mean, prior_sd } => {
            c.push(("sigma".into(), sigma.to_string()));
            c.push(("prior_mean".into(), prior_mean.to_string()));
            c.push(("prior_sd".into(), prior_sd.to_string()));
        }
        _ => {}
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_files_are_recognized_and_nothing_else() {
        for name in
            ["summary.json", "chain_1.csv", "chain_12.csv", "skeleton_3.csv", "chain_2.csv.tmp"]
        {
            assert!(is_run_file(name), "{name}");
        }
        for name in ["notes.txt", "chain_.csv", "chain_a.csv", "summary.json.bak", "chain_1.csvx"] {
            assert!(!is_run_file(name), "{name}");
        }
    }

    #[test]
    fn a_non_empty_directory_is_refused_and_kept_unless_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("chain_1.csv"), "old").unwrap();
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        let e = prepare_output_dir(&out, false).unwrap_err().to_string();
        assert!(e.contains("not empty") && e.contains("--overwrite"), "{e}");
        assert_eq!(std::fs::read_to_string(out.join("chain_1.csv")).unwrap(), "old");
        prepare_output_dir(&out, true).unwrap();
        assert!(!out.join("chain_1.csv").exists(), "the old run's files are removed");
        assert!(out.join("notes.txt").exists(), "other files are not the run's");
    }

    #[test]
    fn huge_draw_counts_are_refused_before_any_work() {
        let mut spec = RunSpec::new(
            ModelSpec::logistic(),
            DataSpec::file("x.csv"),
            crate::SamplerSettings::Nuts(Default::default()),
        );
        spec.draws = 1_000_000_000_000;
        if available_memory().is_some() {
            let e = check_memory(&spec, 3).unwrap_err().to_string();
            assert!(e.starts_with("--draws 1000000000000: ") && e.contains("TB"), "{e}");
        }
        spec.draws = 1000;
        check_memory(&spec, 3).unwrap();
    }
}
