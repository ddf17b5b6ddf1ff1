//! A one-hidden-layer softmax network for classification (the d = 192 network of Pakman et
//! al. 2017, §7.3).

mod net;

use std::sync::Arc;

use rayon::prelude::*;
use tallmc_core::{
    LogPrior, LogPriorCurvature, LogPriorHessian, ParameterNames, TermGradients, Terms,
};

use crate::data::{Dataset, PASS_CHUNK_ROWS};
use crate::error::{Error, Result, check_positive};
use crate::prior::NormalPrior;
use net::{Params, Scratch};

/// Largest number of hidden units h (the per-datum scratch lives on the stack).
pub const MAX_HIDDEN: usize = 64;
/// Largest number of classes K (the per-datum scratch lives on the stack).
pub const MAX_CLASSES: usize = 32;
/// The L2 weight c of Pakman et al. (2017, §7.3): log p(θ) = −c‖θ‖² + const, i.e. an
/// independent N(0, 1/(2c)) = N(0, 500) prior on every weight and bias.
pub const PAKMAN_L2: f64 = 0.001;

/// The layer sizes of a [`SoftmaxMlp`]: p inputs, h hidden units, K classes.
///
/// θ ∈ ℝ^d, d = p·h + h + h·K + K, is laid out as
///
/// ```text
/// θ = ( W₁ (h × p, row-major: unit u's weights W₁_u1 … W₁_up),  b₁ (h),
///       W₂ (K × h, row-major: class k's weights W₂_k1 … W₂_kh),  b₂ (K) ).
/// ```
///
/// The network of Pakman et al. (2017, §7.3) is p = 42, h = 4, K = 4: d = 168 + 4 + 16 + 4 = 192.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlpShape {
    /// Number of inputs p.
    pub inputs: usize,
    /// Number of hidden units h.
    pub hidden: usize,
    /// Number of classes K.
    pub classes: usize,
}

impl MlpShape {
    /// d = p·h + h + h·K + K.
    pub fn dim(&self) -> usize {
        self.inputs * self.hidden + self.hidden + self.hidden * self.classes + self.classes
    }
}

/// A one-hidden-layer network with a softmax output, biases on both layers, tanh hidden units,
/// the cross-entropy likelihood and an independent Gaussian prior (the L2 penalty of Pakman et
/// al. 2017, §7.3):
///
/// ```text
/// a_u = b₁_u + Σ_j W₁_uj x_ij,   z_u = tanh(a_u)                    (u < h)
/// o_k = b₂_k + Σ_u W₂_ku z_u                                        (k < K)
/// ℓ_i(θ) = log softmax(o)_{y_i} = o_{y_i} − log Σ_k e^{o_k}          y_i ∈ {0, …, K − 1}
/// log p(θ) = −c‖θ‖² − (d/2) log(π/c)                                (θ_j ~ N(0, 1/(2c)) i.i.d.)
/// ```
///
/// The paper writes the potential as U = −Σ_i log p_i + c Σ_j w_j² with c = 0.001
/// ([`PAKMAN_L2`]): that is this likelihood with the prior N(0, 1/(2c)) = N(0, 500) on every
/// weight and bias (normalized here, which changes nothing but a constant).
///
/// **Activation.** The paper does not name one. We use tanh: it is smooth (C^∞), so ℓ_i and its
/// gradient are continuous along the straight lines of the piecewise-deterministic samplers
/// and their event rates have no jumps (ReLU's gradient jumps wherever a unit switches), it is
/// bounded (|z_u| < 1, so the output layer's gradient is bounded by 1 per weight), and it is
/// the classic choice for small Bayesian networks (Neal 1996).
///
/// **Gradient** (back-propagation, `TermGradients`): with g_k = ∂ℓ_i/∂o_k = 1{k = y_i} −
/// softmax(o)_k,
///
/// ```text
/// ∂ℓ_i/∂b₂_k = g_k,   ∂ℓ_i/∂W₂_ku = g_k z_u,
/// ∂ℓ_i/∂b₁_u = (1 − z_u²) Σ_k g_k W₂_ku,   ∂ℓ_i/∂W₁_uj = ∂ℓ_i/∂b₁_u · x_ij.
/// ```
///
/// **Stability.** log softmax is computed as (o_y − m) − log1p(Σ_{k≠k*} e^{o_k − m}) with
/// m = max_k o_k attained at k*, so ℓ_i is finite for all finite logits (e.g. ±10⁶) and keeps
/// its relative accuracy when ℓ_i ≈ 0; the gradient's g_y is Σ_{k≠y} softmax_k (no cancellation).
///
/// **Prior curvature** (`LogPriorCurvature`): ∇² log p = −2c I, κ = 2c, constant. No Hessians
/// and no gradient bounds: the likelihood's curvature is bounded but depends on the weights
/// (Pakman et al. note that the L2 term makes the log-posterior gradient unbounded, so ZZ-SS and
/// local BPS do not apply).
///
/// **Cost**: one term is O(h(p + K)); its gradient the same again. Batches allocate nothing:
/// each call keeps one stack scratch of (2·[`MAX_HIDDEN`] + 2·[`MAX_CLASSES`]) f64, reused for
/// every datum, and gradients are accumulated directly into the caller's buffer. Parameter
/// names: `w1.u.j`, `b1.u`, `w2.k.u`, `b2.k` (1-based).
///
/// ```
/// use tallmc_core::{Terms, TermGradients};
/// use tallmc_models::{Dataset, SoftmaxMlp, mlp::PAKMAN_L2};
///
/// // Three 2-pixel inputs with labels in {0, 1, 2}; 4 hidden units.
/// let data = Dataset::with_default_names(vec![0.1, 0.9, 0.8, 0.2, 0.5, 0.5], vec![0.0, 1.0, 2.0], 2)?;
/// let model = SoftmaxMlp::new(data, 4, 3, PAKMAN_L2)?;
/// assert_eq!(model.dim(), 2 * 4 + 4 + 4 * 3 + 3);
/// let theta = vec![0.1; model.dim()];
/// let mut grad = vec![0.0; model.dim()];
/// let ll = model.sum_log_terms_grad_range(&theta, 0, 3, &mut grad);
/// // All logits are equal at this θ: every ℓ_i = −log 3.
/// assert!((ll + 3.0 * 3f64.ln()).abs() < 1e-12);
/// # Ok::<(), tallmc_models::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SoftmaxMlp {
    data: Arc<Dataset>,
    shape: MlpShape,
    prior: NormalPrior,
    l2: f64,
}

impl SoftmaxMlp {
    /// The network on `data` (p = `data.num_covariates()` inputs, used as they are; labels in
    /// `data.y()`) with `hidden` tanh units, `classes` output classes and L2 weight `l2` = c
    /// (prior N(0, 1/(2c)) on every coordinate; the paper's c is [`PAKMAN_L2`]).
    ///
    /// Errors: no covariates; `hidden` not in 1..=[`MAX_HIDDEN`]; `classes` not in
    /// 2..=[`MAX_CLASSES`]; `l2` not finite and > 0; more than u32::MAX rows; a NaN or infinite
    /// input (naming its row and column); a label that is not an integer in 0..K
    /// ([`Error::InvalidLabel`], naming the row). Cost: one pass over the data.
    pub fn new(
        data: impl Into<Arc<Dataset>>, hidden: usize, classes: usize, l2: f64,
    ) -> Result<Self> {
        let data = data.into();
        if data.num_covariates() == 0 {
            return Err(Error::invalid("inputs", 0, "at least one input column"));
        }
        if !(1..=MAX_HIDDEN).contains(&hidden) {
            return Err(Error::invalid("hidden", hidden, format!("1 ≤ hidden ≤ {MAX_HIDDEN}")));
        }
        if !(2..=MAX_CLASSES).contains(&classes) {
            return Err(Error::invalid("classes", classes, format!("2 ≤ classes ≤ {MAX_CLASSES}")));
        }
        check_positive("l2", l2)?;
        let prior = NormalPrior::new((0.5 / l2).sqrt())?;
        crate::data::check_indexable(data.len())?;
        data.check_finite()?;
        check_labels(&data, classes)?;
        let shape = MlpShape { inputs: data.num_covariates(), hidden, classes };
        Ok(Self { data, shape, prior, l2 })
    }

    /// The layer sizes.
    pub fn shape(&self) -> MlpShape {
        self.shape
    }

    /// The data set.
    pub fn data(&self) -> &Arc<Dataset> {
        &self.data
    }

    /// The L2 weight c (log p = −c‖θ‖² + const).
    pub fn l2(&self) -> f64 {
        self.l2
    }

    /// The prior standard deviation √(1/(2c)).
    pub fn prior_sd(&self) -> f64 {
        self.prior.sd()
    }

    /// **Overwrites** `out[..K]` with the logits o(x) of input `x` (length p) at `theta`.
    pub fn logits(&self, theta: &[f64], x: &[f64], out: &mut [f64]) {
        let mut s = Scratch::new();
        net::logits(&self.shape, &Params::new(&self.shape, theta), x, &mut s);
        out[..self.shape.classes].copy_from_slice(&s.logits()[..self.shape.classes]);
    }

    /// The predicted class argmax_k o_k(x) of input `x` (length p) at `theta`.
    pub fn predict(&self, theta: &[f64], x: &[f64]) -> usize {
        let mut s = Scratch::new();
        net::logits(&self.shape, &Params::new(&self.shape, theta), x, &mut s);
        let o = &s.logits()[..self.shape.classes];
        (1..o.len()).fold(0, |best, k| if o[k] > o[best] { k } else { best })
    }

    /// Row i of the inputs and its label.
    #[inline(always)]
    fn datum<'a>(&self, x: &'a [f64], y: &[f64], i: u32) -> (&'a [f64], usize) {
        let (i, p) = (i as usize, self.shape.inputs);
        (&x[i * p..(i + 1) * p], y[i] as usize)
    }
}

/// Errors on the first label that is not an integer in 0..K (one parallel pass).
fn check_labels(data: &Dataset, classes: usize) -> Result<()> {
    let y = data.y();
    let ok = |v: f64| v >= 0.0 && v < classes as f64 && v.fract() == 0.0;
    let bad = y.par_chunks(PASS_CHUNK_ROWS).enumerate().find_map_first(|(c, chunk)| {
        chunk.iter().position(|&v| !ok(v)).map(|k| (c * PASS_CHUNK_ROWS + k, chunk[k]))
    });
    match bad {
        Some((row, value)) => {
            Err(Error::InvalidLabel { at: data.response_location(row), value, classes })
        }
        None => Ok(()),
    }
}

impl Terms for SoftmaxMlp {
    fn dim(&self) -> usize {
        self.shape.dim()
    }

    fn num_terms(&self) -> usize {
        self.data.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let (x, y) = (self.data.x(), self.data.y());
        let p = Params::new(&self.shape, theta);
        let mut s = Scratch::new();
        for (o, &i) in out.iter_mut().zip(indices) {
            let (xi, yi) = self.datum(x, y, i);
            *o = net::value(&self.shape, &p, xi, yi, &mut s);
        }
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let (x, y) = (self.data.x(), self.data.y());
        let p = Params::new(&self.shape, theta);
        let mut s = Scratch::new();
        let mut total = 0.0;
        for &i in indices {
            let (xi, yi) = self.datum(x, y, i);
            total += net::value(&self.shape, &p, xi, yi, &mut s);
        }
        total
    }
}

impl TermGradients for SoftmaxMlp {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let (x, y) = (self.data.x(), self.data.y());
        let p = Params::new(&self.shape, theta);
        let mut s = Scratch::new();
        let mut total = 0.0;
        for (o, &i) in out.iter_mut().zip(indices) {
            let (xi, yi) = self.datum(x, y, i);
            let ll = net::value_grad(&self.shape, &p, xi, yi, &mut s, grad_sum);
            *o = ll;
            total += ll;
        }
        total
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let (x, y) = (self.data.x(), self.data.y());
        let d = self.shape.dim();
        let p = Params::new(&self.shape, theta);
        let mut s = Scratch::new();
        for ((o, &i), g) in out.iter_mut().zip(indices).zip(grads.chunks_exact_mut(d)) {
            let (xi, yi) = self.datum(x, y, i);
            g.fill(0.0);
            *o = net::value_grad(&self.shape, &p, xi, yi, &mut s, g);
        }
    }
}

impl LogPrior for SoftmaxMlp {
    /// −c‖θ‖² − (d/2) log(π/c).
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
}

impl LogPriorHessian for SoftmaxMlp {
    /// ∇² log p = −2c I.
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        self.prior.add_hessian(self.shape.dim(), hess);
    }
}

/// κ = 2c = 1/s², constant.
impl LogPriorCurvature for SoftmaxMlp {
    fn prior_curvature_bound(&self) -> f64 {
        self.prior.precision()
    }

    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

impl ParameterNames for SoftmaxMlp {
    fn parameter_names(&self) -> Vec<String> {
        let MlpShape { inputs, hidden, classes } = self.shape;
        let mut names = Vec::with_capacity(self.shape.dim());
        for u in 1..=hidden {
            names.extend((1..=inputs).map(|j| format!("w1.{u}.{j}")));
        }
        names.extend((1..=hidden).map(|u| format!("b1.{u}")));
        for k in 1..=classes {
            names.extend((1..=hidden).map(|u| format!("w2.{k}.{u}")));
        }
        names.extend((1..=classes).map(|k| format!("b2.{k}")));
        names
    }
}
