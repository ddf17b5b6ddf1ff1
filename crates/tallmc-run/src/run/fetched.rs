//! The driver's view of a model whose rows live elsewhere (a cluster's workers): the rows it
//! fetched, addressed by their global index, and the full-data passes delegated to the shards.
//!
//! [`Fetched`] is a model of N terms of which only a few rows are here (Newton's warm-start
//! rows): per-datum calls at a fetched global index go to the inner model, built on the fetched
//! rows, at that row's local position, so each term is computed by the same code on the same
//! numbers as in a local run; full-data passes ([`Terms::shard_passes`]) go to the shards. A
//! per-datum call at a row that was not fetched is a bug in the caller (the driver fetches
//! what it will read first) and panics, naming the row.

use tallmc_core::{
    LogPrior, LogPriorHessian, ParameterNames, ShardLayout, ShardPasses, TermGradients,
    TermHessians, Terms,
};

/// A model of `num_terms` rows of which `globals` (ascending) are here, as the inner model's
/// rows 0, 1, …, with the full-data passes on `passes`.
pub(crate) struct Fetched<'a, M> {
    inner: &'a M,
    /// The global index of the inner model's row k, ascending.
    globals: Vec<u32>,
    num_terms: usize,
    layout: ShardLayout,
    passes: &'a dyn ShardPasses,
}

impl<'a, M: Terms> Fetched<'a, M> {
    /// The view: `inner` is built on the rows at `globals` (ascending, in that order) of a data
    /// set cut into `layout`'s shards, whose passes `passes` computes.
    pub(crate) fn new(
        inner: &'a M, globals: Vec<u32>, layout: ShardLayout, passes: &'a dyn ShardPasses,
    ) -> Self {
        debug_assert!(globals.windows(2).all(|w| w[0] < w[1]), "global indices ascend");
        debug_assert_eq!(inner.num_terms(), globals.len());
        let num_terms = layout.num_rows();
        Self { inner, globals, num_terms, layout, passes }
    }

    /// The inner model's indices of the global `indices`.
    fn local(&self, indices: &[u32]) -> Vec<u32> {
        indices
            .iter()
            .map(|&i| match self.globals.binary_search(&i) {
                Ok(k) => k as u32,
                Err(_) => panic!(
                    "row {i} is read on the driver but was not fetched from its shard (a bug in \
                     tallmc: the driver fetches every row it reads first); please report it"
                ),
            })
            .collect()
    }
}

impl<M: Terms> Terms for Fetched<'_, M> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn num_terms(&self) -> usize {
        self.num_terms
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        self.inner.log_terms(theta, &self.local(indices), out);
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        self.inner.sum_log_terms(theta, &self.local(indices))
    }

    fn shard_layout(&self) -> Option<&ShardLayout> {
        Some(&self.layout)
    }

    fn shard_passes(&self) -> Option<&dyn ShardPasses> {
        Some(self.passes)
    }
}

impl<M: TermGradients> TermGradients for Fetched<'_, M> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        self.inner.log_terms_grad_sum(theta, &self.local(indices), out, grad_sum)
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        self.inner.log_terms_grads(theta, &self.local(indices), out, grads);
    }
}

impl<M: TermHessians> TermHessians for Fetched<'_, M> {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        self.inner.hessian_vector_products(theta, &self.local(indices), v, out);
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        self.inner.sum_hessian(theta, &self.local(indices), hess);
    }
}

impl<M: LogPrior> LogPrior for Fetched<'_, M> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.inner.log_prior(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.inner.log_prior_grad(theta, grad)
    }
}

impl<M: LogPriorHessian> LogPriorHessian for Fetched<'_, M> {
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]) {
        self.inner.add_log_prior_hessian(theta, hess);
    }
}

impl<M: ParameterNames> ParameterNames for Fetched<'_, M> {
    fn parameter_names(&self) -> Vec<String> {
        self.inner.parameter_names()
    }
}
