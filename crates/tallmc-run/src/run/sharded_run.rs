//! A run whose data stay in shards elsewhere (a Dask cluster's workers): the set-up's passes
//! run next to the shards ([`setup_on_shards`](super::setup_on_shards)'s path) and the chains
//! read only the rows they declared ahead, fetched from the shards in batches while they
//! sample ([`Served`]). Over the same shards the draws are those of a local run, bit for bit.
//!
//! What runs this way: perturbed HMC-ECS with its subsample size m given (the subsample's
//! indices come from a stream of their own, so its rows are known ahead). The other samplers
//! read all rows per iteration, or draw their subsamples with the kernel's random numbers, or
//! tune m with passes of their own: they are refused, naming what to use.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};

use super::confidence::{ConfidenceRun, RunConfidence};
use super::design::DesignWarnings;
use super::ecs::{ServedEngine, WithEngine};
use super::outputs::Outputs;
use super::pdmp::{PdmpOutputs, PdmpRun, RunPdmp};
use super::progress::{ProgressTo, RunProgress, SetupSpinner};
use super::served::{Servable, Served};
use super::sharded_setup::{
    ShardSource, SourcePasses, WarmRows, WithServed, on_served, standardized_on_shards,
};
use super::{RunResult, SpecModel, execute, prepare, run_model};
use crate::spec::{ModelSpec, RunSpec, SamplerSettings};

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
        SamplerSettings::HmcEcs(_) => bail!(
            "hmc-ecs over shards needs its subsample size: give --subsample M (tuning m reads \
             every row at four points, a pass not yet run on the shards)"
        ),
        other => bail!(
            "{} over shards elsewhere is not built yet: use hmc-ecs with --subsample M (its \
             rows are fetched ahead from the shards), or read the data into memory",
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

/// Refused before any work by [`check_on_shards`]; kept as an error all the same.
impl<M: ServedEngine> RunPdmp for Served<'_, M> {
    fn run_pdmp(&self, _run: &PdmpRun<'_>) -> Result<PdmpOutputs> {
        bail!("the piecewise-deterministic samplers over shards elsewhere are not built yet")
    }
}

/// The design's checks read every row (constant and collinear columns, separation): not run
/// over shards elsewhere yet, which the run says among its warnings.
impl<M: Servable> DesignWarnings for Served<'_, M> {
    fn design_warnings(&self, _mode: &[f64], _prior_sd: f64) -> Result<Vec<String>> {
        Ok(vec![
            "The design was not checked for constant, collinear or separating columns: those \
             checks read every row, and the rows stayed on the cluster (check the data where \
             they are, or sample a subset here)"
                .to_string(),
        ])
    }
}
