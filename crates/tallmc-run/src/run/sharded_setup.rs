//! The set-up every run makes before its chains — the posterior mode (Newton's method, warm
//! started on evenly spaced rows), the Laplace covariance there and the control variates' sums
//! at θ* — over data cut into shards: here ([`setup_local`]), or where the shards live
//! ([`setup_on_shards`]: a cluster's workers, reached through a [`ShardSource`]).
//!
//! On shards elsewhere the driver holds only Newton's warm-start rows (fetched by global
//! index: the same rows a local warm start reads, 100,000 of them on tall data) and the small
//! partial sums of each pass; every pass over all rows is one per-shard kernel per shard
//! ([`shard_sums`](super::shard_sums)) added in shard order. So the two give the same numbers
//! bit for bit as long as the data and the shards are the same.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use tallmc_core::{FirstFailure, PassKind, ShardLayout, ShardPasses};
use tallmc_estimators::{ControlVariate, CvOrder};
use tallmc_models::{ColumnMoments, Dataset, means_from_shard_sums};
use tallmc_samplers::{Laplace, NewtonOptions, laplace_approximation, warm_start_indices};

use super::context::RunModel;
use super::served::{HeldRows, Served, shared_rows};
pub use super::shard_source::ShardSource;
use super::{SpecModel, WithModel, build_model};
use crate::spec::{ModelSpec, OffsetSpec};

/// The control variates' sums at θ* (the mode): Σℓ_i(θ*), Σ∇ℓ_i(θ*) and, at order 2,
/// Σ∇²ℓ_i(θ*) (d × d, row-major).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlVariateSums {
    /// The Taylor order, 0, 1 or 2.
    pub order: u32,
    /// Σℓ_i(θ*).
    pub value: f64,
    /// Σ∇ℓ_i(θ*) (zeros at order 0).
    pub gradient: Vec<f64>,
    /// Σ∇²ℓ_i(θ*) (empty below order 2).
    pub hessian: Vec<f64>,
}

/// What the set-up found, and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardedSetup {
    /// The parameters' names, in θ's order.
    pub parameter_names: Vec<String>,
    /// The posterior mode θ*.
    pub mode: Vec<f64>,
    /// The Laplace covariance (−∇²log π(θ*))⁻¹, d × d row-major.
    pub covariance: Vec<f64>,
    /// log π(θ*) (up to the normalizing constant).
    pub log_density: f64,
    /// Newton iterations, warm start included.
    pub newton_iterations: usize,
    /// Per-datum evaluations: terms, gradients, Hessians (the control variates' pass included).
    pub evaluations: [u64; 3],
    /// The control variates' sums at θ*, when asked for.
    pub control_variate: Option<ControlVariateSums>,
    /// The column means and sds a standardizing model divided its covariates by, computed
    /// over all the shards (`None` without standardization).
    pub column_moments: Option<ColumnMoments>,
    /// Rows the driver held (fetched for the warm start; all of them for a local set-up).
    pub rows_on_driver: usize,
    /// Shards the passes reduced over.
    pub shards: usize,
    /// Wall-clock seconds of the set-up.
    pub seconds: f64,
}

/// Newton's options of every run: warm-started on 100,000 evenly spaced rows (on tall data
/// this saves most of the passes over all rows; the mode is still the full-data one, to
/// Newton's tolerance).
pub(crate) fn run_newton_options() -> NewtonOptions {
    NewtonOptions { warm_start_rows: Some(NewtonOptions::WARM_START_ROWS), ..Default::default() }
}

/// The set-up of `model` on `data`, here, reduced over the data's shards
/// ([`Dataset::with_shard_lengths`]; one shard when it has none): the numbers
/// [`setup_on_shards`] gives over the same shards elsewhere.
///
/// # Errors
/// The model cannot be built on the data, Newton's method fails, a bad `cv_order`.
pub fn setup_local(
    model: &ModelSpec, data: Dataset, cv_order: Option<u32>,
) -> Result<ShardedSetup> {
    let started = Instant::now();
    let rows = data.len();
    let shards = data.shard_layout().map_or(1, ShardLayout::num_shards);
    let model = &standardized_here(model, &data)?;
    let mut setup = build_model(model, data, Local { cv_order })?;
    setup.column_moments = column_moments_of(model);
    setup.rows_on_driver = rows;
    setup.shards = shards;
    setup.seconds = started.elapsed().as_secs_f64();
    Ok(setup)
}

/// The set-up of `model` on shards that live elsewhere: the warm-start rows fetched from
/// `source`, every pass over all rows computed per shard by `source` and added here in shard
/// order. The driver never holds more than the warm-start rows.
///
/// A model that standardizes its covariates first gets their means and sds over all the shards
/// (two passes: their column sums, then their squared deviations and extremes).
///
/// # Errors
/// A source with no rows or more than 2³² − 1, a failed pass or fetch (its message), a constant
/// column of a standardizing model, Newton's method failing.
pub fn setup_on_shards(
    model: &ModelSpec, source: &dyn ShardSource, cv_order: Option<u32>,
) -> Result<ShardedSetup> {
    let started = Instant::now();
    let warm = WarmRows::fetch(source)?;
    let model = &standardized_on_shards(model, source, &warm)?;
    let shards = warm.layout.num_shards();
    let passes = SourcePasses::new(source, model);
    let mut setup = on_served(model, source, &passes, warm, SetupOn { cv_order })?;
    setup.column_moments = column_moments_of(model);
    setup.shards = shards;
    setup.seconds = started.elapsed().as_secs_f64();
    Ok(setup)
}

/// The shards' layout and Newton's warm-start rows, fetched: what a run over shards elsewhere
/// starts from.
pub(crate) struct WarmRows {
    pub(crate) layout: ShardLayout,
    globals: Vec<u32>,
    rows: Dataset,
}

impl WarmRows {
    /// Checks the shards and fetches the rows Newton's warm start reads (or, without a warm
    /// start on short data, the first row: the model built on the fetched rows gives the
    /// dimension, the names and the prior).
    pub(crate) fn fetch(source: &dyn ShardSource) -> Result<Self> {
        let lengths = source.shard_lengths();
        let layout = ShardLayout::from_lengths(&lengths)?;
        let n = layout.num_rows();
        if n == 0 {
            bail!("the shards hold no rows; expected at least one");
        }
        let globals = warm_start_indices(n, &run_newton_options()).unwrap_or_else(|| vec![0]);
        let rows = source
            .take_rows(&globals)
            .context("cannot fetch the warm-start rows from the shards")?;
        if rows.len() != globals.len() {
            bail!("asked the shards for {} rows and got {}", globals.len(), rows.len());
        }
        Ok(Self { layout, globals, rows })
    }
}

/// Something done with the model of a run over shards elsewhere ([`on_served`]).
pub(crate) trait WithServed {
    /// What it gives.
    type Out;
    /// Does it with `model`.
    fn with<M: SpecModel>(self, model: &Served<'_, M>) -> Result<Self::Out>;
}

/// Builds the spec's model on the warm-start rows, serves it ([`Served`]) and hands it to
/// `w`; a failed pass over the shards is reported as such.
pub(crate) fn on_served<W: WithServed>(
    spec: &ModelSpec, source: &dyn ShardSource, passes: &SourcePasses<'_>, warm: WarmRows, w: W,
) -> Result<W::Out> {
    struct Build<'a, W> {
        spec: &'a ModelSpec,
        source: &'a dyn ShardSource,
        passes: &'a SourcePasses<'a>,
        layout: ShardLayout,
        globals: Vec<u32>,
        x: Arc<Vec<f64>>,
        y: Arc<Vec<f64>>,
        columns: Vec<String>,
        w: W,
    }
    impl<W: WithServed> WithModel for Build<'_, W> {
        type Out = W::Out;
        fn with<M: SpecModel>(self, model: &M) -> Result<W::Out> {
            let rows =
                HeldRows { globals: self.globals, x: self.x, y: self.y, columns: self.columns };
            let served = Served::new(self.spec, self.source, self.passes, self.layout, model, rows);
            self.w.with(&served)
        }
    }
    let WarmRows { layout, globals, rows } = warm;
    // The rows are held once, shared by the served model's cache and its data set.
    let (x, y) = (Arc::new(rows.x().to_vec()), Arc::new(rows.y().to_vec()));
    let columns = rows.covariate_names().to_vec();
    drop(rows);
    let data = shared_rows(&x, &y, &columns)?;
    let build = Build { spec, source, passes, layout, globals, x, y, columns, w };
    build_model(spec, data, build).map_err(|e| match passes.failure() {
        Some(failure) => anyhow::anyhow!("a pass over the shards failed: {failure}"),
        None => e,
    })
}

/// The spec with the column means and sds of its covariates over all the shards `source`
/// holds ([`RegressionSpec::column_moments`](crate::RegressionSpec::column_moments)), when it
/// standardizes and has none; the spec as it is otherwise. Two passes over every shard: the
/// column sums, then the squared deviations from the means and the extremes
/// ([`ColumnMoments`]); the same bits as a local design over the same shards.
///
/// # Errors
/// A failed pass (its message), partials of the wrong length, a constant column (named).
pub(crate) fn standardized_on_shards(
    model: &ModelSpec, source: &dyn ShardSource, warm: &WarmRows,
) -> Result<ModelSpec> {
    if !needs_moments(model) {
        return Ok(model.clone());
    }
    let skip = offset_position(model, &warm.rows);
    let names: Vec<String> = (warm.rows.covariate_names().iter().enumerate())
        .filter(|&(j, _)| Some(j) != skip)
        .map(|(_, c)| c.clone())
        .collect();
    let fail = |e: String| anyhow::anyhow!("a pass over the shards failed: {e}");
    let sums = source.partials(model, &[], PassKind::ColumnSums).map_err(fail)?;
    let n = warm.layout.num_rows();
    let mean = means_from_shard_sums(n, &sums, names.len())?;
    let deviations = source.partials(model, &mean, PassKind::ColumnDeviations).map_err(fail)?;
    let moments = ColumnMoments::from_shard_partials(n, &sums, &deviations, &names)?;
    Ok(with_moments(model, moments))
}

/// [`standardized_on_shards`] on rows here: the moments of `data`'s covariates over its
/// shards, set in the spec.
fn standardized_here(model: &ModelSpec, data: &Dataset) -> Result<ModelSpec> {
    if !needs_moments(model) {
        return Ok(model.clone());
    }
    let moments = ColumnMoments::of_all_but(data, offset_position(model, data))?;
    Ok(with_moments(model, moments))
}

/// Where the offset or exposure column the model reads sits among `data`'s columns, if it
/// does (a missing one is reported when the model is built).
fn offset_position(model: &ModelSpec, data: &Dataset) -> Option<usize> {
    let (name, _) = model.offset().and_then(OffsetSpec::column)?;
    data.covariate_names().iter().position(|c| c == name)
}

fn needs_moments(model: &ModelSpec) -> bool {
    model.regression().is_some_and(|r| r.standardize && r.column_moments.is_none())
}

fn with_moments(model: &ModelSpec, moments: ColumnMoments) -> ModelSpec {
    let mut model = model.clone();
    if let Some(r) = model.regression_mut() {
        r.column_moments = Some(moments);
    }
    model
}

fn column_moments_of(model: &ModelSpec) -> Option<ColumnMoments> {
    model.regression().and_then(|r| r.column_moments.clone())
}

/// A [`ShardSource`]'s passes for the spec's model, as the model's [`ShardPasses`].
pub(crate) struct SourcePasses<'a> {
    source: &'a dyn ShardSource,
    model: &'a ModelSpec,
    failure: FirstFailure,
}

impl<'a> SourcePasses<'a> {
    pub(crate) fn new(source: &'a dyn ShardSource, model: &'a ModelSpec) -> Self {
        Self { source, model, failure: FirstFailure::default() }
    }
}

impl ShardPasses for SourcePasses<'_> {
    fn shard_partials(&self, theta: &[f64], kind: PassKind) -> Result<Vec<Vec<f64>>, String> {
        self.source.partials(self.model, theta, kind)
    }
    fn note_failure(&self, message: String) {
        self.failure.note(message);
    }
    fn failure(&self) -> Option<String> {
        self.failure.get()
    }
}

/// [`setup_local`] on a built model.
struct Local {
    cv_order: Option<u32>,
}

impl WithModel for Local {
    type Out = ShardedSetup;
    fn with<M: SpecModel>(self, model: &M) -> Result<ShardedSetup> {
        setup_of(model, self.cv_order)
    }
}

/// [`setup_on_shards`] on the served model.
struct SetupOn {
    cv_order: Option<u32>,
}

impl WithServed for SetupOn {
    type Out = ShardedSetup;
    fn with<M: SpecModel>(self, model: &Served<'_, M>) -> Result<ShardedSetup> {
        let rows = model.rows_here();
        let mut setup = setup_of(model, self.cv_order)?;
        setup.rows_on_driver = rows;
        Ok(setup)
    }
}

/// Newton's method from θ = 0 with the run's options, then the control variates at the mode.
fn setup_of<M: RunModel>(model: &M, cv_order: Option<u32>) -> Result<ShardedSetup> {
    let d = model.dim();
    let laplace: Laplace = laplace_approximation(model, &vec![0.0; d], run_newton_options())
        .context("cannot find the posterior mode (Newton's method)")?;
    let mut evals = laplace.evals;
    let control_variate = match cv_order {
        None => None,
        Some(order) => {
            let order = CvOrder::from_number(order)?;
            let (cv, counts) = ControlVariate::new_on_all_cores(model, &laplace.mode, order)
                .context("cannot build the control variates at the mode")?;
            evals += counts;
            Some(ControlVariateSums {
                order: order.number(),
                value: cv.sum_at_center(),
                gradient: cv.gradient_sum().to_vec(),
                hessian: cv.hessian_sum().to_vec(),
            })
        }
    };
    Ok(ShardedSetup {
        parameter_names: model.parameter_names(),
        mode: laplace.mode,
        covariance: laplace.covariance,
        log_density: laplace.log_density,
        newton_iterations: laplace.iterations,
        evaluations: [evals.terms, evals.gradients, evals.hessians],
        control_variate,
        column_moments: None,
        rows_on_driver: 0,
        shards: 1,
        seconds: 0.0,
    })
}
