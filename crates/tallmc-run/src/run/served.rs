//! The driver's model when the rows live elsewhere (a cluster's workers): the rows its readers
//! declared, fetched by global index, and the full-data passes delegated to the shards.
//!
//! [`Served`] is a model of N terms of which only some rows are here: Newton's warm-start rows
//! during the set-up, then the rows each chain declared ahead ([`RowService`]: its subsample u
//! and the coming proposals). Per-datum calls at a global index go to the spec's model built on
//! the rows here, at that row's position, so every term is computed by the same code on the same
//! numbers as in a local run (and the gathered batches of the difference engines are the
//! same copies); full-data passes ([`Terms::shard_passes`]) go to the shards. When rows arrive
//! the model is rebuilt on the rows still declared (a copy of a few thousand rows, once per
//! window of iterations). A per-datum call at a row nobody declared is a bug in the caller and
//! panics, naming the row. The per-datum constants of the exact minibatch MH kernels
//! (`tallmc_core::termwise_bounds`) are fetched for every row by one pass each, before a kernel
//! that needs them is built: 8 bytes per row here, where a row is 8 bytes per column.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use anyhow::{Context as _, Result};
use tallmc_core::{
    DispersionPredictor, LinearPredictor, LogPrior, LogPriorHessian, ParameterNames, PassKind,
    PredictorDerivatives, RowBatch, RowService, ShardLayout, ShardPasses, TermConstant,
    TermCurvatureConstants, TermGradients, TermHessians, TermLipschitz,
    TermThirdDerivativeConstants, Terms,
};
use tallmc_models::{Dataset, SharedF64};

use super::context::RunModel;
use super::shard_source::ShardSource;
use super::{SpecModel, WithModel, build_model};
use crate::spec::ModelSpec;

/// What a model needs to be served: the run's traits, and being the one type its spec builds
/// (so it can be rebuilt on other rows).
pub(crate) trait Servable: RunModel + Clone + Send + 'static {}
impl<M: RunModel + Clone + Send + 'static> Servable for M {}

/// The rows here: their global indices (ascending), raw covariates (row-major, the data's
/// columns) and responses, and the spec's model built on them.
struct Cache<M> {
    globals: Vec<u32>,
    /// Shared with the model's data set: the rows are held once.
    x: Arc<Vec<f64>>,
    y: Arc<Vec<f64>>,
    model: M,
}

/// Rows held on the driver: their global indices (ascending), raw covariates (row-major, under
/// `columns`) and responses, shared with the data set the model is built on.
pub(crate) struct HeldRows {
    pub(crate) globals: Vec<u32>,
    pub(crate) x: Arc<Vec<f64>>,
    pub(crate) y: Arc<Vec<f64>>,
    pub(crate) columns: Vec<String>,
}

/// A data set on shared rows (no copy): what the model on the rows here is built on.
pub(crate) fn shared_rows(
    x: &Arc<Vec<f64>>, y: &Arc<Vec<f64>>, columns: &[String],
) -> Result<Dataset> {
    let (x, y) = (SharedF64::from_arc(x.clone()), SharedF64::from_arc(y.clone()));
    // Finite: checked where the rows were read (the shards), and again when first fetched.
    Ok(Dataset::from_shared(x, y, columns.to_vec(), None, false)?)
}

/// Who declared what: each reader's rows, its fetch under way (a ticket and its rows).
#[derive(Default)]
struct Readers {
    pins: Vec<Vec<u32>>,
    pending: Vec<Option<(u64, Vec<u32>)>>,
    /// The set-up's reader (Newton's warm-start rows), dropped when the first chain registers.
    setup: Option<usize>,
}

/// A model whose rows live in `source`'s shards; see the [module](self) docs.
pub(crate) struct Served<'a, M> {
    spec: &'a ModelSpec,
    source: &'a dyn ShardSource,
    passes: &'a dyn ShardPasses,
    layout: ShardLayout,
    num_terms: usize,
    /// The raw rows' column names (covariates, offset or exposure).
    columns: Vec<String>,
    state: RwLock<Arc<Cache<M>>>,
    readers: Mutex<Readers>,
    /// Every datum's per-datum constants ([`TermConstant`], in its order), each fetched from the
    /// shards by one pass before a kernel that needs it is built
    /// ([`Served::fetch_constants`]).
    constants: [OnceLock<Vec<f64>>; TermConstant::ALL.len()],
}

impl<'a, M: Servable> Served<'a, M> {
    /// The model on `rows` (the rows at `globals`, ascending), built as `model` was, with the
    /// full-data passes on `passes`; the rows are the set-up's (dropped when the first chain
    /// registers).
    pub(crate) fn new(
        spec: &'a ModelSpec, source: &'a dyn ShardSource, passes: &'a dyn ShardPasses,
        layout: ShardLayout, model: &M, rows: HeldRows,
    ) -> Self {
        let HeldRows { globals, x, y, columns } = rows;
        debug_assert!(globals.windows(2).all(|w| w[0] < w[1]), "global indices ascend");
        let cache = Cache { globals: globals.clone(), x, y, model: model.clone() };
        let readers = Readers { pins: vec![globals], pending: vec![None], setup: Some(0) };
        Self {
            spec,
            source,
            passes,
            num_terms: layout.num_rows(),
            layout,
            columns,
            state: RwLock::new(Arc::new(cache)),
            readers: Mutex::new(readers),
            constants: Default::default(),
        }
    }
}

impl<M> Served<'_, M> {
    /// The rows here now.
    fn cache(&self) -> Arc<Cache<M>> {
        self.state.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Rows held here now (for the memory figures).
    pub(crate) fn rows_here(&self) -> usize {
        self.cache().globals.len()
    }

    /// `f` of the model on the rows here now.
    pub(crate) fn with_model<T>(&self, f: impl FnOnce(&M) -> T) -> T {
        f(&self.cache().model)
    }
}

impl<M> Served<'_, M> {
    /// Fetches every datum's `constant` from the shards (one pass, each shard's rows' constants
    /// computed where it lives), unless fetched already.
    ///
    /// # Errors
    /// The pass failed (the model has no such constant: its message), or a shard gave a number
    /// of constants other than its rows.
    pub(crate) fn fetch_constants(&self, constant: TermConstant) -> Result<()> {
        let slot = &self.constants[constant.index()];
        if slot.get().is_some() {
            return Ok(());
        }
        let partials =
            self.source.partials(self.spec, &[], PassKind::TermConstants { constant }).map_err(
                |e| anyhow::anyhow!("the {}s over the shards: {e}", constant.describe()),
            )?;
        let lengths = self.source.shard_lengths();
        if partials.len() != lengths.len() {
            anyhow::bail!(
                "the {}s over the shards: {} shards answered, of {}",
                constant.describe(),
                partials.len(),
                lengths.len()
            );
        }
        for (s, (p, &len)) in partials.iter().zip(&lengths).enumerate() {
            if p.len() as u64 != len {
                anyhow::bail!(
                    "the {}s over the shards: shard {s} gave {} numbers for its {len} rows",
                    constant.describe(),
                    p.len()
                );
            }
        }
        // Another chain may have set it meanwhile: the same numbers.
        let _ = slot.set(partials.concat());
        Ok(())
    }

    /// Datum `i`'s `constant`, fetched before.
    fn constant(&self, constant: TermConstant, i: usize) -> f64 {
        match self.constants[constant.index()].get() {
            Some(all) => all[i],
            None => panic!(
                "the {}s were read before they were fetched from the shards (a bug in tallmc); \
                 please report it",
                constant.describe()
            ),
        }
    }
}

impl<M: Servable> TermLipschitz for Served<'_, M> {
    fn term_lipschitz(&self, i: usize) -> f64 {
        self.constant(TermConstant::Lipschitz, i)
    }
}

impl<M: Servable> TermCurvatureConstants for Served<'_, M> {
    fn term_second_derivative_bound(&self, i: usize) -> f64 {
        self.constant(TermConstant::SecondDerivativeBound, i)
    }

    fn term_gradient_lipschitz(&self, i: usize) -> f64 {
        self.constant(TermConstant::GradientLipschitz, i)
    }
}

impl<M: Servable> TermThirdDerivativeConstants for Served<'_, M> {
    fn term_third_derivative_bound(&self, i: usize) -> f64 {
        self.constant(TermConstant::ThirdDerivativeBound, i)
    }

    fn term_hessian_lipschitz(&self, i: usize) -> f64 {
        self.constant(TermConstant::HessianLipschitz, i)
    }
}

impl<M> Cache<M> {
    /// The position of global row `i` here.
    fn slot(&self, i: u32) -> u32 {
        match self.globals.binary_search(&i) {
            Ok(k) => k as u32,
            Err(_) => panic!(
                "row {i} is read on the driver but nobody declared it (a bug in tallmc: the \
                 kernels declare every row they read ahead); please report it"
            ),
        }
    }

    fn local(&self, indices: &[u32]) -> Vec<u32> {
        indices.iter().map(|&i| self.slot(i)).collect()
    }
}

/// The spec's model built on `rows`, of type `M` (the type the run built on the warm-start
/// rows: the same spec gives the same type).
fn rebuild<M: Servable>(spec: &ModelSpec, rows: Dataset) -> Result<M> {
    struct Same<M>(PhantomData<M>);
    impl<M: Clone + 'static> WithModel for Same<M> {
        type Out = M;
        fn with<N: SpecModel>(self, model: &N) -> Result<M> {
            (model as &dyn Any)
                .downcast_ref::<M>()
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("internal error: the model's type changed"))
        }
    }
    build_model(spec, rows, Same::<M>(PhantomData))
}

impl<M: Servable> Served<'_, M> {
    /// Rebuilds the cache on the rows some reader pins, with `arrived` rows (at ascending
    /// global indices `at`) added.
    fn install(&self, readers: &Readers, arrived: &[(Vec<u32>, Dataset)]) -> Result<()> {
        let old = self.cache();
        let mut wanted: Vec<u32> = readers.pins.iter().flatten().copied().collect();
        wanted.sort_unstable();
        wanted.dedup();
        let p = self.columns.len();
        let (mut x, mut y) =
            (Vec::with_capacity(wanted.len() * p), Vec::with_capacity(wanted.len()));
        let mut globals = Vec::with_capacity(wanted.len());
        for &i in &wanted {
            let row = match old.globals.binary_search(&i) {
                Ok(k) => Some((&old.x[k * p..(k + 1) * p], old.y[k])),
                Err(_) => arrived.iter().find_map(|(at, rows)| {
                    at.binary_search(&i).ok().map(|k| (rows.row(k), rows.y()[k]))
                }),
            };
            // A row pinned ahead whose fetch is still under way is not here yet.
            if let Some((row, value)) = row {
                x.extend_from_slice(row);
                y.push(value);
                globals.push(i);
            }
        }
        let (x, y) = (Arc::new(x), Arc::new(y));
        let data =
            shared_rows(&x, &y, &self.columns).context("the rows fetched from the shards")?;
        let model = rebuild::<M>(self.spec, data)?;
        let cache = Arc::new(Cache { globals, x, y, model });
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = cache;
        Ok(())
    }
}

impl<M: Servable> RowService for Served<'_, M> {
    fn register(&self) -> usize {
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(setup) = readers.setup.take() {
            readers.pins[setup].clear();
        }
        readers.pins.push(Vec::new());
        readers.pending.push(None);
        readers.pins.len() - 1
    }

    fn declare(&self, reader: usize, now: &[u32], ahead: &[u32]) -> tallmc_core::Result<()> {
        let shard_error = |e: anyhow::Error| tallmc_core::Error::ShardPass(format!("{e:#}"));
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        let sorted = |v: &[u32]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        };
        let mut arrived = Vec::new();
        if let Some((ticket, at)) = readers.pending[reader].take() {
            arrived.push((at, self.source.collect_rows(ticket).map_err(shard_error)?));
        }
        // Rows needed now that are neither here nor arrived: fetched now (the first window).
        let here = self.cache();
        let missing: Vec<u32> = sorted(now)
            .into_iter()
            .filter(|&i| {
                here.globals.binary_search(&i).is_err()
                    && !arrived.iter().any(|(at, _)| at.binary_search(&i).is_ok())
            })
            .collect();
        if !missing.is_empty() {
            let rows = self.source.take_rows(&missing).map_err(shard_error)?;
            arrived.push((missing, rows));
        }
        let mut pins = sorted(now);
        pins.extend_from_slice(ahead);
        readers.pins[reader] = sorted(&pins);
        self.install(&readers, &arrived).map_err(shard_error)?;
        // Start fetching the rows of the window after this one that are not here.
        let here = self.cache();
        let to_fetch: Vec<u32> = sorted(ahead)
            .into_iter()
            .filter(|&i| here.globals.binary_search(&i).is_err())
            .collect();
        if !to_fetch.is_empty() {
            let ticket = self.source.request_rows(&to_fetch).map_err(shard_error)?;
            readers.pending[reader] = Some((ticket, to_fetch));
        }
        Ok(())
    }
}

impl<M: Servable> Terms for Served<'_, M> {
    fn dim(&self) -> usize {
        self.cache().model.dim()
    }

    fn num_terms(&self) -> usize {
        self.num_terms
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let c = self.cache();
        c.model.log_terms(theta, &c.local(indices), out);
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let c = self.cache();
        c.model.sum_log_terms(theta, &c.local(indices))
    }

    fn shard_layout(&self) -> Option<&ShardLayout> {
        Some(&self.layout)
    }

    fn shard_passes(&self) -> Option<&dyn ShardPasses> {
        Some(self.passes)
    }

    fn row_service(&self) -> Option<&dyn RowService> {
        Some(self)
    }
}

/// Forwards each method to the model on the rows here, at the rows' positions.
macro_rules! mapped {
    ($self:ident, $c:ident, $indices:expr) => {{
        let $c = $self.cache();
        let local = $c.local($indices);
        (local, $c)
    }};
}

impl<M: Servable> TermGradients for Served<'_, M> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let (local, c) = mapped!(self, c, indices);
        c.model.log_terms_grad_sum(theta, &local, out, grad_sum)
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.log_terms_grads(theta, &local, out, grads);
    }
}

impl<M: Servable> TermHessians for Served<'_, M> {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.hessian_vector_products(theta, &local, v, out);
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.sum_hessian(theta, &local, hess);
    }
}

impl<M: Servable> LogPrior for Served<'_, M> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.cache().model.log_prior(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.cache().model.log_prior_grad(theta, grad)
    }
}

impl<M: Servable> LogPriorHessian for Served<'_, M> {
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]) {
        self.cache().model.add_log_prior_hessian(theta, hess);
    }
}

impl<M: Servable> ParameterNames for Served<'_, M> {
    fn parameter_names(&self) -> Vec<String> {
        self.cache().model.parameter_names()
    }
}

/// Every method forwarded, so that each gives the bits the model gives on all the rows (a
/// model's own versions of the provided methods included). A gathered batch keeps global
/// indices; the model's copy of the rows in it does not depend on where they sit here.
impl<M: Servable + LinearPredictor> LinearPredictor for Served<'_, M> {
    fn linear_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.linear_predictors(theta, &local, eta);
    }

    fn predictor_derivatives(
        &self, indices: &[u32], eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        let (local, c) = mapped!(self, c, indices);
        c.model.predictor_derivatives(&local, eta, phi, d1, d2);
    }

    fn add_weighted_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.add_weighted_rows(&local, weights, out);
    }

    fn linear_predictor_pairs(
        &self, theta: &[f64], theta_other: &[f64], indices: &[u32], eta: &mut [f64],
        eta_other: &mut [f64],
    ) {
        let (local, c) = mapped!(self, c, indices);
        c.model.linear_predictor_pairs(theta, theta_other, &local, eta, eta_other);
    }

    fn predictor_scores(
        &self, indices: &[u32], eta: &[f64], d1: &mut [f64], d2: Option<&mut [f64]>,
    ) {
        let (local, c) = mapped!(self, c, indices);
        c.model.predictor_scores(&local, eta, d1, d2);
    }

    fn add_score_differences(
        &self, theta: &[f64], indices: &[u32], offsets: &[f64], weight: f64, out: &mut [f64],
    ) {
        let (local, c) = mapped!(self, c, indices);
        c.model.add_score_differences(theta, &local, offsets, weight, out);
    }

    fn gather_rows(&self, indices: &[u32], batch: &mut RowBatch) {
        let (local, c) = mapped!(self, c, indices);
        c.model.gather_rows(&local, batch);
        batch.indices.clear();
        batch.indices.extend_from_slice(indices);
    }

    fn regather_rows(&self, positions: &[usize], indices: &[u32], batch: &mut RowBatch) {
        let c = self.cache();
        for i in &mut batch.indices {
            *i = c.slot(*i);
        }
        c.model.regather_rows(positions, &c.local(indices), batch);
        for i in &mut batch.indices {
            *i = c.globals[*i as usize];
        }
    }

    fn gathered_predictors(&self, batch: &RowBatch, theta: &[f64], eta: &mut [f64]) {
        if !batch.copied {
            return self.linear_predictors(theta, &batch.indices, eta);
        }
        self.cache().model.gathered_predictors(batch, theta, eta);
    }

    fn gathered_derivatives(
        &self, batch: &RowBatch, eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        if !batch.copied {
            return self.predictor_derivatives(&batch.indices, eta, phi, d1, d2);
        }
        self.cache().model.gathered_derivatives(batch, eta, phi, d1, d2);
    }

    fn gathered_scores(&self, batch: &RowBatch, theta: &[f64], eta: &mut [f64], d1: &mut [f64]) {
        if !batch.copied {
            self.linear_predictors(theta, &batch.indices, eta);
            return self.predictor_scores(&batch.indices, eta, d1, None);
        }
        self.cache().model.gathered_scores(batch, theta, eta, d1);
    }

    fn add_score_differences_gathered(
        &self, batch: &RowBatch, theta: &[f64], offsets: &[f64], weight: f64, out: &mut [f64],
    ) {
        if !batch.copied {
            return self.add_score_differences(theta, &batch.indices, offsets, weight, out);
        }
        self.cache().model.add_score_differences_gathered(batch, theta, offsets, weight, out);
    }

    fn add_weighted_gathered_rows(&self, batch: &RowBatch, weights: &[f64], out: &mut [f64]) {
        if !batch.copied {
            return self.add_weighted_rows(&batch.indices, weights, out);
        }
        self.cache().model.add_weighted_gathered_rows(batch, weights, out);
    }
}

impl<M: Servable + DispersionPredictor> DispersionPredictor for Served<'_, M> {
    fn dispersion_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.dispersion_predictors(theta, &local, eta);
    }

    fn predictor_scores_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        let (local, c) = mapped!(self, c, indices);
        c.model.predictor_scores_at(tau, &local, eta, out);
    }

    fn predictor_derivatives_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [PredictorDerivatives],
    ) {
        let (local, c) = mapped!(self, c, indices);
        c.model.predictor_derivatives_at(tau, &local, eta, out);
    }

    fn add_weighted_predictor_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        let (local, c) = mapped!(self, c, indices);
        c.model.add_weighted_predictor_rows(&local, weights, out);
    }
}
