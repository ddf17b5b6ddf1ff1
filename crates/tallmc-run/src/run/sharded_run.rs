//! A run whose data stay in shards elsewhere (a Dask cluster's workers): the set-up's passes
//! run next to the shards ([`setup_on_shards`](super::setup_on_shards)'s path) and the chains
//! read only the rows they declared ahead, fetched from the shards in batches while they
//! sample ([`Served`]). Over the same shards the draws are those of a local run, bit for bit.
//!
//! What runs this way:
//!
//! * perturbed HMC-ECS with its subsample size m given (the subsample's indices come from a
//!   stream of their own, so its rows are known ahead);
//! * SMH, TunaMH and MH-SS: their per-datum constants come from one pass over the shards each,
//!   and their minibatches' indices from a stream of their own, declared a window ahead
//!   (`tallmc_samplers::mh`'s index stream). SMH thins its minibatch even where a local run
//!   would evaluate all N factors instead (φΨ ≥ N, rare after warmup): as exact, but from that
//!   iteration on not the local run's draws.
//!
//! The other samplers read all rows per iteration, or draw their subsamples with the kernel's
//! random numbers, or tune m with passes of their own: they are refused, naming what to use.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};

use super::confidence::{ConfidenceRun, RunConfidence};
use super::design::{DesignChecks, DesignWarnings, warnings};
use super::ecs::{ServedEngine, WithEngine};
use super::exact_mh::{self, ExactMhRun, RunExactMh, constant_needed};
use super::outputs::Outputs;
use super::pdmp::{PdmpOutputs, PdmpRun, RunPdmp};
use super::progress::{ProgressTo, RunProgress, SetupSpinner};
use super::served::{Servable, Served};
use super::sharded_setup::{
    ShardSource, SourcePasses, WarmRows, WithServed, on_served, standardized_on_shards,
};
use super::{RunResult, SpecModel, execute, prepare, run_model};
use crate::spec::{ModelSpec, RunSpec, SamplerSettings};
use tallmc_core::{PassKind, ShardPasses, TermConstant, Terms};
use tallmc_models::{
    DEFAULT_COLLINEARITY_TOLERANCE, DesignFinding, DesignMatrix, DesignRanges, GramPlan,
    findings_from, gram_from_partials,
};

/// Runs `spec` on the shards `source` holds: the set-up's passes run next to the shards, and
/// the chains read only the rows they declared ahead, fetched while they sample; over the same
/// shards the draws are a local run's, bit for bit. Perturbed HMC-ECS with its subsample size
/// given runs this way; the other samplers are refused, naming what to use. Otherwise as
/// [`run`](super::run): `stop` ends the chains after their current iteration, progress goes to
/// the terminal and to `observer`.
///
/// # Errors
/// A sampler or model not supported over shards (the message says what is), the errors of a
/// run, a failed pass or fetch (its message).
pub fn run_on_shards(
    spec: &RunSpec, source: &dyn ShardSource, stop: &AtomicBool, observer: Option<Arc<RunProgress>>,
) -> Result<RunResult> {
    check_on_shards(spec)?;
    execute(spec, observer, move |progress| {
        let start = prepare(spec, "fetching Newton's warm-start rows from the shards", progress)?;
        let warm = WarmRows::fetch(source)?;
        // A standardizing model's spec gains the column moments of all the shards: the run
        // records them with its spec, so it can be repeated anywhere.
        let model = standardized_on_shards(&spec.model, source, &warm)?;
        let spec = &RunSpec { model, ..spec.clone() };
        let n = warm.layout.num_rows();
        let passes = SourcePasses::new(source, &spec.model);
        let run = RunServed { spec, n, start, stop, progress };
        on_served(&spec.model, source, &passes, warm, run)
    })
}

/// What runs over shards elsewhere, or why not.
fn check_on_shards(spec: &RunSpec) -> Result<()> {
    if let ModelSpec::Custom { label } = &spec.model {
        bail!("a model of your own ({label}) has no shards to run on: its terms are in memory");
    }
    match &spec.sampler {
        SamplerSettings::HmcEcs(s) if s.subsample.is_some() => Ok(()),
        SamplerSettings::Smh(_) | SamplerSettings::Tunamh(_) | SamplerSettings::MhSs(_) => Ok(()),
        SamplerSettings::HmcEcs(_) => bail!(
            "hmc-ecs over shards needs its subsample size: give --subsample M (tuning m reads \
             every row at four points, a pass not yet run on the shards)"
        ),
        other => bail!(
            "{} over shards elsewhere is not built yet: use hmc-ecs with --subsample M, smh, \
             tunamh or mh-ss (their rows are fetched ahead from the shards), or read the data \
             into memory",
            other.name()
        ),
    }
}

/// [`run_on_shards`] on the served model.
struct RunServed<'a> {
    spec: &'a RunSpec,
    n: usize,
    start: (std::time::Instant, SetupSpinner),
    stop: &'a AtomicBool,
    progress: &'a ProgressTo,
}

impl WithServed for RunServed<'_> {
    type Out = RunResult;
    fn with<M: SpecModel>(self, model: &Served<'_, M>) -> Result<RunResult> {
        run_model(model, self.spec, self.n, self.start, self.stop, self.progress)
    }
}

impl<'a, M: ServedEngine> WithEngine for Served<'a, M> {
    type Engine = M::Served;
    fn engine(&self, lanes: usize, m: usize) -> M::Served {
        self.with_model(|model| model.served_engine(lanes, m))
    }
    fn exact_hessians(&self) -> bool {
        self.with_model(WithEngine::exact_hessians)
    }
}

/// Refused before any work by [`check_on_shards`]; kept as an error all the same.
impl<M: ServedEngine> RunConfidence for Served<'_, M> {
    fn run_confidence(
        &self, _run: &ConfidenceRun<'_>, _sinks: Vec<super::outputs::Sinks>,
    ) -> Result<Outputs> {
        bail!("the confidence sampler over shards elsewhere is not built yet")
    }
}

/// SMH, TunaMH and MH-SS on rows fetched ahead: the model's check first, then the per-datum
/// constants the kernel draws with (one pass each), then the kernel on the served model with
/// the served engine. Each chain declares the rows of its coming minibatches (its index stream,
/// `tallmc_samplers::mh`): the draws are the local run's bit for bit.
impl<M: ServedEngine + RunExactMh> RunExactMh for Served<'_, M> {
    fn run_exact_mh(
        &self, run: &ExactMhRun<'_>, sinks: Vec<super::outputs::Sinks>,
    ) -> Result<Outputs> {
        self.check_exact_mh(run.sampler)?;
        if let Some(constant) = constant_needed(run.sampler) {
            self.fetch_constants(constant)?;
        }
        let engine = WithEngine::engine(self, 1, 1);
        match run.sampler {
            SamplerSettings::Smh(s) => exact_mh::smh(self, run, s, engine, sinks),
            SamplerSettings::MhSs(s) => exact_mh::mh_ss(self, run, s, engine, sinks),
            SamplerSettings::Tunamh(s) => exact_mh::tuna_mh(self, run, s.chi, sinks),
            other => bail!("{} is not an exact minibatch MH kernel", other.name()),
        }
    }

    fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>> {
        bail!(
            "internal error: the {}s of rows served from shards come from the shards",
            constant.describe()
        )
    }

    fn check_exact_mh(&self, sampler: &SamplerSettings) -> Result<()> {
        self.with_model(|model| model.check_exact_mh(sampler))
    }
}

/// Refused before any work by [`check_on_shards`]; kept as an error all the same.
impl<M: ServedEngine> RunPdmp for Served<'_, M> {
    fn run_pdmp(&self, _run: &PdmpRun<'_>) -> Result<PdmpOutputs> {
        bail!("the piecewise-deterministic samplers over shards elsewhere are not built yet")
    }
}

/// The design's checks (constant and collinear columns, separation) as passes over the
/// shards: the first pass's ranges and the Gram matrix of the second merged in shard order
/// (the bits of the same checks here over the same shards), and separation at the mode.
impl<M: Servable + DesignWarnings> DesignWarnings for Served<'_, M> {
    fn binary_response(&self) -> bool {
        self.with_model(DesignWarnings::binary_response)
    }

    fn design_warnings(&self, mode: &[f64], prior_sd: f64) -> Result<Vec<String>> {
        let Some(names) = self.with_model(|m| m.design_matrix().map(DesignMatrix::column_names))
        else {
            return Ok(Vec::new());
        };
        let Some(passes) = self.shard_passes() else {
            bail!("a model served from shards has the shards' passes")
        };
        let checks = ChecksOnShards { passes, names };
        warnings(&checks, self.binary_response(), mode, prior_sd)
    }
}

/// The design checks' passes over shards elsewhere.
struct ChecksOnShards<'a> {
    passes: &'a dyn ShardPasses,
    names: Vec<String>,
}

impl ChecksOnShards<'_> {
    fn partials(&self, theta: &[f64], kind: PassKind) -> Result<Vec<Vec<f64>>> {
        self.passes
            .shard_partials(theta, kind)
            .map_err(|e| anyhow::anyhow!("a pass of the design checks over the shards failed: {e}"))
    }
}

impl DesignChecks for ChecksOnShards<'_> {
    fn findings(&self) -> Result<Vec<DesignFinding>> {
        let d = self.names.len();
        let ranges = DesignRanges::from_partials(d, &self.partials(&[], PassKind::DesignRanges)?)?;
        let gram = |plan: &GramPlan| {
            let partials = self.partials(&plan.to_values(), PassKind::DesignGram)?;
            Ok::<_, anyhow::Error>(gram_from_partials(plan.len(), &partials)?)
        };
        findings_from(&self.names, DEFAULT_COLLINEARITY_TOLERANCE, &ranges, gram)
    }

    fn separates(&self, theta: &[f64]) -> Result<bool> {
        Ok(self.partials(theta, PassKind::Separates)?.iter().all(|p| p.first() == Some(&1.0)))
    }
}
