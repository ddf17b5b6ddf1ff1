//! A model written in Python ([`PyModel`]): the Python package's `CustomModel`, whose per-datum
//! log terms, gradients and Hessians are Python functions of θ and a batch of rows. The kernels
//! call back with the GIL held only for the call (the chains run with it released); the batch
//! is gathered on the Python side from the rows' indices (or a contiguous range, a slice).
//!
//! **Failures.** A Python exception in the user's function stops the run: it is kept (the first
//! one, with its traceback), the run's stop flag is raised so every chain ends after its current
//! iteration, the terms of that call and of every later one are NaN (rejected as for a
//! non-finite built-in term), and [`PyModel::take_failure`] hands it back to be raised. A
//! non-finite value the function returns is not a failure: the kernels treat it as for a
//! built-in model (a rejected proposal, a divergence).
//!
//! **Without gradients or Hessians**, they are central differences: ∂ℓ_i/∂θ_j by
//! (ℓ_i(θ + h e_j) − ℓ_i(θ − h e_j))/2h (2d calls per gradient), H_i v by differences of
//! gradients along v, h = 10⁻⁵(1 + |θ_j|). Second-order control variates are refused then
//! (`exact_hessians` is false).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use tallmc_core::{LogPrior, LogPriorHessian, ParameterNames, TermGradients, TermHessians, Terms};
use tallmc_run::CustomModel;

/// At most this many numbers come back from one call (rows are split into calls to stay under
/// it): 32 MB.
const MAX_NUMBERS_PER_CALL: usize = 1 << 22;

/// At most this many numbers of per-row Hessians are kept (256 MB); beyond, the cache starts
/// afresh.
const MAX_CACHED_NUMBERS: usize = 1 << 25;

/// Per-row Hessians ∇²ℓ_i(θ) at one θ: HMC-ECS and the SG kernels' second-order control
/// variates ask for products H_i(θ*) v at the same centre θ* on every step, for a subsample
/// that changes by a few rows per iteration, so each row's Hessian is asked of Python once.
#[derive(Default)]
struct HessianCache {
    theta: Vec<f64>,
    /// Row → its d × d block's position in `blocks`.
    at: HashMap<u32, usize>,
    blocks: Vec<f64>,
}

/// Rows of one call: indices, or a contiguous range.
#[derive(Clone, Copy)]
enum Rows<'a> {
    Indices(&'a [u32]),
    Range(u32, u32),
}

impl Rows<'_> {
    fn len(&self) -> usize {
        match *self {
            Rows::Indices(idx) => idx.len(),
            Rows::Range(a, b) => b.saturating_sub(a) as usize,
        }
    }

    /// The rows in calls of at most `per_call` rows.
    fn split(self, per_call: usize, mut f: impl FnMut(Rows<'_>, usize)) {
        let per_call = per_call.max(1);
        match self {
            Rows::Indices(idx) => {
                for (c, chunk) in idx.chunks(per_call).enumerate() {
                    f(Rows::Indices(chunk), c * per_call);
                }
            }
            Rows::Range(a, b) => {
                let mut start = a;
                while start < b {
                    let end = b.min(start.saturating_add(per_call as u32));
                    f(Rows::Range(start, end), (start - a) as usize);
                    start = end;
                }
            }
        }
    }
}

/// What one call evaluates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// ℓ_i (m values).
    Terms,
    /// ℓ_i and ∇ℓ_i (m and m × d values).
    Gradients,
    /// ∇²ℓ_i (m × d × d values).
    Hessians,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Terms => "terms",
            Kind::Gradients => "gradients",
            Kind::Hessians => "hessians",
        }
    }
}

/// A model whose terms are Python functions (see the [module docs](self)).
pub(crate) struct PyModel {
    /// `evaluate(kind, theta, rows)`: the Python side's bridge, returning a tuple of float64
    /// C-contiguous arrays (`terms`: (ℓ,); `gradients`: (ℓ, ∇ℓ); `hessians`: (∇²ℓ,)).
    evaluate: Py<PyAny>,
    n: usize,
    dim: usize,
    names: Vec<String>,
    gradients: bool,
    hessians: bool,
    prior_mean: Vec<f64>,
    prior_sd: Vec<f64>,
    failure: Mutex<Option<PyErr>>,
    stop: Arc<AtomicBool>,
    cache: Mutex<HessianCache>,
}

/// What the Python side says of its model.
pub(crate) struct PyModelParts {
    pub(crate) evaluate: Py<PyAny>,
    pub(crate) n: usize,
    pub(crate) names: Vec<String>,
    pub(crate) gradients: bool,
    pub(crate) hessians: bool,
    pub(crate) prior_mean: Vec<f64>,
    pub(crate) prior_sd: Vec<f64>,
}

impl PyModel {
    /// The model; `stop` is the run's stop flag, raised when a call fails.
    pub(crate) fn new(parts: PyModelParts, stop: Arc<AtomicBool>) -> PyResult<Self> {
        let dim = parts.names.len();
        if dim == 0 {
            return Err(PyValueError::new_err("dim = 0: expected at least one parameter"));
        }
        if parts.n == 0 || parts.n > u32::MAX as usize {
            return Err(PyValueError::new_err(format!(
                "the data have {} rows; expected 1 to {} rows",
                parts.n,
                u32::MAX
            )));
        }
        for (what, v) in [("prior mean", &parts.prior_mean), ("prior sd", &parts.prior_sd)] {
            if v.len() != dim {
                return Err(PyValueError::new_err(format!(
                    "{what} has {} values; expected {dim} (one per parameter)",
                    v.len()
                )));
            }
        }
        if let Some(j) = parts.prior_sd.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(PyValueError::new_err(format!(
                "prior sd of {} = {}: expected a finite number > 0",
                parts.names[j], parts.prior_sd[j]
            )));
        }
        if let Some(j) = parts.prior_mean.iter().position(|m| !m.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "prior mean of {} = {}: expected a finite number",
                parts.names[j], parts.prior_mean[j]
            )));
        }
        Ok(Self {
            evaluate: parts.evaluate,
            n: parts.n,
            dim,
            names: parts.names,
            gradients: parts.gradients,
            hessians: parts.hessians,
            prior_mean: parts.prior_mean,
            prior_sd: parts.prior_sd,
            failure: Mutex::new(None),
            stop,
            cache: Mutex::new(HessianCache::default()),
        })
    }

    /// The first Python exception a call raised, if any (taken: asked once).
    pub(crate) fn take_failure(&self) -> Option<PyErr> {
        self.failure.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn failed(&self) -> bool {
        self.failure.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    fn fail(&self, e: PyErr) {
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Rows per call of `kind`, so that one call returns at most [`MAX_NUMBERS_PER_CALL`].
    fn rows_per_call(&self, kind: Kind) -> usize {
        let per_row = match kind {
            Kind::Terms => 1,
            Kind::Gradients => 1 + self.dim,
            Kind::Hessians => self.dim * self.dim,
        };
        (MAX_NUMBERS_PER_CALL / per_row).max(1)
    }

    /// One call of the bridge: `outs[k]` receives the k-th array (its length checked against
    /// `outs[k].len()`). `false` after a failure (this one or an earlier one).
    fn call(&self, kind: Kind, theta: &[f64], rows: Rows<'_>, outs: &mut [&mut [f64]]) -> bool {
        if self.failed() {
            return false;
        }
        let result = Python::attach(|py| -> PyResult<()> {
            let theta = PyArray1::from_slice(py, theta);
            let which = match rows {
                Rows::Indices(idx) => PyArray1::from_slice(py, idx).into_any(),
                Rows::Range(a, b) => PySlice::new(py, a as isize, b as isize, 1).into_any(),
            };
            let answer = self.evaluate.call1(py, (kind.name(), theta, which))?;
            let answer = answer.bind(py).cast::<PyTuple>().map_err(PyErr::from)?;
            if answer.len() != outs.len() {
                return Err(PyValueError::new_err(format!(
                    "the model's bridge returned {} arrays for {}; expected {}",
                    answer.len(),
                    kind.name(),
                    outs.len()
                )));
            }
            for (k, out) in outs.iter_mut().enumerate() {
                let item = answer.get_item(k)?;
                let array = item.cast::<numpy::PyArrayDyn<f64>>().map_err(PyErr::from)?;
                let array = array.try_readonly()?;
                if array.len() != out.len() {
                    return Err(PyValueError::new_err(format!(
                        "the model's {} returned {} numbers for {} rows; expected {}",
                        kind.name(),
                        array.len(),
                        rows.len(),
                        out.len()
                    )));
                }
                out.copy_from_slice(array.as_slice()?);
            }
            Ok(())
        });
        match result {
            Ok(()) => true,
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    /// ℓ_i for `rows` into `out`; NaN after a failure.
    fn terms(&self, theta: &[f64], rows: Rows<'_>, out: &mut [f64]) {
        rows.split(self.rows_per_call(Kind::Terms), |chunk, at| {
            let out = &mut out[at..at + chunk.len()];
            if !self.call(Kind::Terms, theta, chunk, &mut [out]) {
                out.fill(f64::NAN);
            }
        });
    }

    /// ℓ_i into `out` and ∇ℓ_i into `grads` (row-major m × d), the model's own or by central
    /// differences of ℓ; NaN after a failure.
    fn gradients(&self, theta: &[f64], rows: Rows<'_>, out: &mut [f64], grads: &mut [f64]) {
        let d = self.dim;
        if self.gradients {
            rows.split(self.rows_per_call(Kind::Gradients), |chunk, at| {
                let m = chunk.len();
                let (o, g) = (&mut out[at..at + m], &mut grads[at * d..(at + m) * d]);
                if !self.call(Kind::Gradients, theta, chunk, &mut [&mut *o, &mut *g]) {
                    o.fill(f64::NAN);
                    g.fill(f64::NAN);
                }
            });
            return;
        }
        self.terms(theta, rows, out);
        let m = rows.len();
        let (mut plus, mut minus) = (vec![0.0; m], vec![0.0; m]);
        let mut shifted = theta.to_vec();
        for j in 0..d {
            let h = 1e-5 * (1.0 + theta[j].abs());
            shifted[j] = theta[j] + h;
            self.terms(&shifted, rows, &mut plus);
            shifted[j] = theta[j] - h;
            self.terms(&shifted, rows, &mut minus);
            shifted[j] = theta[j];
            for k in 0..m {
                grads[k * d + j] = (plus[k] - minus[k]) / (2.0 * h);
            }
        }
    }

    /// ∇²ℓ_i (m × d × d) into `hess`, the model's own or by central differences of gradients.
    fn hessians(&self, theta: &[f64], rows: Rows<'_>, hess: &mut [f64]) {
        let d = self.dim;
        if self.hessians {
            rows.split(self.rows_per_call(Kind::Hessians), |chunk, at| {
                let m = chunk.len();
                let h = &mut hess[at * d * d..(at + m) * d * d];
                if !self.call(Kind::Hessians, theta, chunk, &mut [&mut *h]) {
                    h.fill(f64::NAN);
                }
            });
            return;
        }
        let m = rows.len();
        let mut values = vec![0.0; m];
        let (mut plus, mut minus) = (vec![0.0; m * d], vec![0.0; m * d]);
        let mut shifted = theta.to_vec();
        for j in 0..d {
            let h = 1e-5 * (1.0 + theta[j].abs());
            shifted[j] = theta[j] + h;
            self.gradients(&shifted, rows, &mut values, &mut plus);
            shifted[j] = theta[j] - h;
            self.gradients(&shifted, rows, &mut values, &mut minus);
            shifted[j] = theta[j];
            for k in 0..m {
                for i in 0..d {
                    hess[k * d * d + i * d + j] = (plus[k * d + i] - minus[k * d + i]) / (2.0 * h);
                }
            }
        }
    }
}

impl Terms for PyModel {
    fn dim(&self) -> usize {
        self.dim
    }

    fn num_terms(&self) -> usize {
        self.n
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        self.terms(theta, Rows::Indices(indices), &mut out[..indices.len()]);
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let mut out = vec![0.0; indices.len()];
        self.terms(theta, Rows::Indices(indices), &mut out);
        out.iter().sum()
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let rows = Rows::Range(start, end);
        let mut out = vec![0.0; rows.len()];
        self.terms(theta, rows, &mut out);
        out.iter().sum()
    }
}

impl TermGradients for PyModel {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let m = indices.len();
        let mut grads = vec![0.0; m * self.dim];
        self.gradients(theta, Rows::Indices(indices), &mut out[..m], &mut grads);
        add_rows(&grads, self.dim, grad_sum);
        out[..m].iter().sum()
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let m = indices.len();
        self.gradients(theta, Rows::Indices(indices), &mut out[..m], &mut grads[..m * self.dim]);
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let rows = Rows::Range(start, end);
        let m = rows.len();
        let (mut out, mut grads) = (vec![0.0; m], vec![0.0; m * self.dim]);
        self.gradients(theta, rows, &mut out, &mut grads);
        add_rows(&grads, self.dim, grad_sum);
        out.iter().sum()
    }
}

/// out += Σ_k row k of `rows` (row-major, `d` columns).
fn add_rows(rows: &[f64], d: usize, out: &mut [f64]) {
    for row in rows.chunks_exact(d) {
        for (o, g) in out.iter_mut().zip(row) {
            *o += g;
        }
    }
}

impl TermHessians for PyModel {
    /// H_i v from the rows' Hessians at θ, each asked of Python once per θ (see
    /// [`HessianCache`]).
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let d = self.dim;
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let same = cache.theta.len() == d
            && cache.theta.iter().zip(theta).all(|(a, b)| a.to_bits() == b.to_bits());
        if !same || cache.blocks.len() + indices.len() * d * d > MAX_CACHED_NUMBERS {
            *cache = HessianCache { theta: theta.to_vec(), ..HessianCache::default() };
        }
        let mut missing: Vec<u32> =
            indices.iter().copied().filter(|i| !cache.at.contains_key(i)).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let mut fresh = vec![0.0; missing.len() * d * d];
            self.hessians(theta, Rows::Indices(&missing), &mut fresh);
            if self.failed() {
                out[..indices.len() * d].fill(f64::NAN);
                return;
            }
            for (k, &i) in missing.iter().enumerate() {
                let at = cache.blocks.len();
                cache.blocks.extend_from_slice(&fresh[k * d * d..(k + 1) * d * d]);
                cache.at.insert(i, at);
            }
        }
        for (&i, o) in indices.iter().zip(out.chunks_exact_mut(d)) {
            let at = cache.at[&i];
            let h = &cache.blocks[at..at + d * d];
            for (r, oi) in o.iter_mut().enumerate() {
                *oi = h[r * d..(r + 1) * d].iter().zip(v).map(|(a, b)| a * b).sum();
            }
        }
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        self.add_hessians(theta, Rows::Indices(indices), hess);
    }

    /// In large contiguous calls (the default goes through small index batches).
    fn sum_hessian_range(&self, theta: &[f64], start: u32, end: u32, hess: &mut [f64]) {
        self.add_hessians(theta, Rows::Range(start, end), hess);
    }

    /// Σ_i H_i v over the range: from the Hessians in large contiguous calls, or (without
    /// them) by central differences of the summed gradient along v, two gradient passes.
    fn sum_hessian_vector_range(
        &self, theta: &[f64], start: u32, end: u32, v: &[f64], out: &mut [f64],
    ) {
        let d = self.dim;
        if self.hessians {
            let mut sum = vec![0.0; d * d];
            self.add_hessians(theta, Rows::Range(start, end), &mut sum);
            for (i, o) in out.iter_mut().enumerate() {
                *o += sum[i * d..(i + 1) * d].iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
            }
            return;
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm == 0.0 {
            return;
        }
        let scale = theta.iter().map(|t| t.abs()).fold(0.0, f64::max);
        let h = 1e-5 * (1.0 + scale) / norm;
        let at = |sign: f64| {
            let shifted: Vec<f64> = theta.iter().zip(v).map(|(t, x)| t + sign * h * x).collect();
            let mut g = vec![0.0; d];
            self.sum_log_terms_grad_range(&shifted, start, end, &mut g);
            g
        };
        let (plus, minus) = (at(1.0), at(-1.0));
        for ((o, p), m) in out.iter_mut().zip(plus).zip(minus) {
            *o += (p - m) / (2.0 * h);
        }
    }
}

impl PyModel {
    /// hess += Σ_i ∇²ℓ_i(θ) over `rows`: the rows' Hessians in calls of at most
    /// [`MAX_NUMBERS_PER_CALL`] numbers, or (without them) central differences of the summed
    /// gradients, 2d gradient passes in large calls.
    fn add_hessians(&self, theta: &[f64], rows: Rows<'_>, hess: &mut [f64]) {
        let d = self.dim;
        if self.hessians {
            rows.split(self.rows_per_call(Kind::Hessians), |chunk, _| {
                let mut each = vec![0.0; chunk.len() * d * d];
                self.hessians(theta, chunk, &mut each);
                add_rows(&each, d * d, hess);
            });
            return;
        }
        let summed = |t: &[f64]| {
            let mut g = vec![0.0; d];
            rows.split(self.rows_per_call(Kind::Gradients), |chunk, _| {
                let m = chunk.len();
                let (mut out, mut grads) = (vec![0.0; m], vec![0.0; m * d]);
                self.gradients(t, chunk, &mut out, &mut grads);
                add_rows(&grads, d, &mut g);
            });
            g
        };
        let mut shifted = theta.to_vec();
        for j in 0..d {
            let h = 1e-5 * (1.0 + theta[j].abs());
            shifted[j] = theta[j] + h;
            let plus = summed(&shifted);
            shifted[j] = theta[j] - h;
            let minus = summed(&shifted);
            shifted[j] = theta[j];
            for i in 0..d {
                hess[i * d + j] += (plus[i] - minus[i]) / (2.0 * h);
            }
        }
    }
}

/// Independent normal priors θ_j ~ N(μ_j, s_j²).
impl LogPrior for PyModel {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        let mut lp = 0.0;
        for ((t, m), s) in theta.iter().zip(&self.prior_mean).zip(&self.prior_sd) {
            let z = (t - m) / s;
            lp += -0.5 * z * z - s.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
        }
        lp
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        for (((g, t), m), s) in grad.iter_mut().zip(theta).zip(&self.prior_mean).zip(&self.prior_sd)
        {
            *g += -(t - m) / (s * s);
        }
        self.log_prior(theta)
    }
}

impl LogPriorHessian for PyModel {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        let d = self.dim;
        for (j, s) in self.prior_sd.iter().enumerate() {
            hess[j * d + j] -= 1.0 / (s * s);
        }
    }
}

impl ParameterNames for PyModel {
    fn parameter_names(&self) -> Vec<String> {
        self.names.clone()
    }
}

impl CustomModel for PyModel {
    fn exact_hessians(&self) -> bool {
        self.hessians
    }
}
