//! Any piecewise-deterministic kernel in whitened coordinates (issue 29): the process runs in
//!
//! ```text
//! z = L⁻¹(θ − θ*),        θ = θ* + L z,
//! ```
//!
//! θ* the posterior mode and L the Cholesky factor of the Laplace covariance Σ = LLᵀ
//! ([`WhiteningFrame`]), and its output stays in θ.
//!
//! **The model in z** ([`InFrame`]): the terms and prior of the model composed with the affine
//! map, so that by the chain rule
//!
//! ```text
//! ℓ̃_i(z) = ℓ_i(θ* + Lz),    ∇ℓ̃_i(z) = Lᵀ∇ℓ_i(θ),    ∇²ℓ̃_i(z)·v = Lᵀ∇²ℓ_i(θ)(Lv),
//! log p̃(z) = log p(θ* + Lz),  ∇²log p̃(z) = Lᵀ∇²log p(θ)L.
//! ```
//!
//! The density of z is π(θ* + Lz)·|det L|; the constant |det L| is dropped, which changes no
//! gradient, rate or Hessian. When Σ is close to the posterior covariance the posterior of z is
//! close to N(0, I): every direction has the same scale, so a particle moving at unit speed
//! crosses the posterior in about the same time along every direction. A full-data BPS or
//! Zig-Zag on a correlated posterior then needs far fewer events (and full-data gradients) per
//! effective sample (docs/methods/bps.md and zigzag.md, "Whitened coordinates").
//!
//! **The kernel** ([`Whitened`]): the inner kernel's chain runs on the model in z; after each
//! of its steps the chain's trajectory in θ moves along the same segment, mapped: start
//! θ* + Lz, velocity Lv, the same duration and the same event. A straight line in z is a
//! straight line in θ, so the θ-trajectory is exactly the image of the z-trajectory and time
//! averages, grid draws and skeletons are in θ. Positions are mapped afresh at each step (no
//! drift from adding Lv·τ).
//!
//! **Cost.** The same per-datum evaluations as the inner kernel in θ: one full-data gradient in
//! z is one in θ. Per call of a model method, O(d²) arithmetic to map z and the gradient
//! (triangular products; a full-data pass maps once per chunk of rows, not per row), O(d³) per
//! prior Hessian (one per band of the automatic envelope); per step, O(d²) to map the
//! trajectory's position (its velocity only when it changed). Per-datum gradients (SBPS's
//! minibatches, one datum per lipSBPS / ZZ-SS proposal) would cost O(d²) each to map; for a
//! linear-predictor model
//! [`Whitened::precompute_rows`] stores the rows in z once ([`FrameRows`]) and they cost O(d),
//! as in θ. No allocation in a step: the model view's scratch is a per-thread buffer that
//! grows once.

use std::cell::Cell;
use std::sync::Arc;

use rand::Rng;
use serde::Serialize;
use tallmc_core::{
    Error, LogPrior, LogPriorHessian, PdmpChain, PdmpKernel, Result, SegmentStats, TermGradients,
    TermHessians, Terms, Trajectory, Tuning, WhiteningFrame,
};

use super::common::VelocityKey;
use super::frame_rows::{FRAME_ROWS_BYTES, FrameRows};

/// The model `M` seen in the coordinates z of a [`WhiteningFrame`] (module docs): every
/// method maps z to θ = θ* + Lz, calls `M`, and maps the derivatives back (Lᵀ on the left,
/// L on the right). Counts of evaluations are unchanged.
///
/// Rows are the model's, so [`Terms::shard_layout`] and [`Terms::row_service`] are
/// forwarded; passes over shards elsewhere ([`Terms::shard_passes`]) are not, and
/// [`InFrame::new`] refuses a model that has them.
#[derive(Debug)]
pub struct InFrame<'a, M: ?Sized> {
    pub(super) model: &'a M,
    pub(super) frame: &'a WhiteningFrame,
    pub(super) rows: Option<&'a FrameRows>,
}

impl<M: ?Sized> Clone for InFrame<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: ?Sized> Copy for InFrame<'_, M> {}

impl<'a, M: Terms + ?Sized> InFrame<'a, M> {
    /// `model` in the coordinates of `frame`.
    ///
    /// # Errors
    /// A frame whose dimension is not the model's (the error names both), or a model whose
    /// full-data passes run on shards elsewhere.
    pub fn new(model: &'a M, frame: &'a WhiteningFrame) -> Result<Self> {
        check_frame(model, frame)?;
        Ok(Self { model, frame, rows: None })
    }

    /// `model` in the coordinates of `frame`, its per-datum gradients taken in O(d) from
    /// `rows` ([`FrameRows`], built from this model and frame) when the model is a
    /// [`LinearPredictor`](tallmc_core::LinearPredictor)
    /// ([`Terms::as_linear_predictor`]).
    ///
    /// # Errors
    /// Those of [`InFrame::new`], and rows of another dimension or number of data points.
    pub fn with_rows(model: &'a M, frame: &'a WhiteningFrame, rows: &'a FrameRows) -> Result<Self> {
        check_frame(model, frame)?;
        check_rows(model, rows)?;
        Ok(Self { model, frame, rows: Some(rows) })
    }

    /// The model's rank-one view and its rows in z, when both are there.
    fn linear(&self) -> Option<(&'a dyn tallmc_core::LinearPredictor, &'a FrameRows)> {
        Some((self.model.as_linear_predictor()?, self.rows?))
    }

    /// The model in θ.
    pub fn model(&self) -> &'a M {
        self.model
    }

    /// The frame.
    pub fn frame(&self) -> &'a WhiteningFrame {
        self.frame
    }
}

/// Checks that `rows` were built for a model of `model`'s shape.
fn check_rows<M: Terms + ?Sized>(model: &M, rows: &FrameRows) -> Result<()> {
    if rows.dim() != model.dim() {
        return Err(Error::dimension(
            "whitened rows (the model's dimension)",
            model.dim(),
            rows.dim(),
        ));
    }
    if rows.num_terms() != model.num_terms() {
        return Err(Error::dimension(
            "whitened rows (the model's number of data points)",
            model.num_terms(),
            rows.num_terms(),
        ));
    }
    Ok(())
}

/// Checks that `frame` fits `model` (module docs of [`InFrame::new`]).
fn check_frame<M: Terms + ?Sized>(model: &M, frame: &WhiteningFrame) -> Result<()> {
    if frame.dim() != model.dim() {
        return Err(Error::dimension(
            "whitening frame θ = θ* + Lz (the model's dimension)",
            model.dim(),
            frame.dim(),
        ));
    }
    if model.shard_passes().is_some() {
        return Err(Error::invalid(
            "whitened coordinates",
            "a model whose full-data passes run on shards elsewhere",
            "a model whose rows are in this process (or the original coordinates)",
        ));
    }
    Ok(())
}

thread_local! {
    /// The model view's per-thread scratch (taken while in use, so a nested view allocates its
    /// own instead of sharing it).
    static SCRATCH: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
}

/// Calls `f` with a per-thread scratch buffer of `len` entries (contents unspecified).
pub(super) fn with_scratch<T>(len: usize, f: impl FnOnce(&mut [f64]) -> T) -> T {
    let mut buf = SCRATCH.take();
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    let out = f(&mut buf[..len]);
    SCRATCH.set(buf);
    out
}

/// `out` += Lᵀ `g` for L row-major lower triangular (d × d). O(d²/2).
fn add_upper(l: &[f64], g: &[f64], out: &mut [f64]) {
    let d = g.len();
    for (k, &gk) in g.iter().enumerate() {
        if gk != 0.0 {
            for (o, lk) in out[..=k].iter_mut().zip(&l[k * d..k * d + k + 1]) {
                *o += lk * gk;
            }
        }
    }
}

/// `rows` ← rows · L, i.e. each row r (a gradient in θ) becomes Lᵀr, with `tmp` of length d.
fn rows_to_coordinates(frame: &WhiteningFrame, rows: &mut [f64], tmp: &mut [f64]) {
    let d = frame.dim();
    for row in rows.chunks_exact_mut(d) {
        frame.gradient_to_coordinates(row, tmp);
        row.copy_from_slice(tmp);
    }
}

/// `out` += Lᵀ H L for H (d × d, row-major) with `t` (d × d) as scratch. O(d³).
fn add_congruence(l: &[f64], h: &[f64], t: &mut [f64], out: &mut [f64], d: usize) {
    // t = H L: t_ij = Σ_{k ≥ j} H_ik L_kj.
    for i in 0..d {
        for j in 0..d {
            t[i * d + j] = (j..d).map(|k| h[i * d + k] * l[k * d + j]).sum();
        }
    }
    // out_ij += Σ_{k ≥ i} L_ki t_kj.
    for i in 0..d {
        for k in i..d {
            let lki = l[k * d + i];
            if lki != 0.0 {
                for (o, tk) in out[i * d..(i + 1) * d].iter_mut().zip(&t[k * d..(k + 1) * d]) {
                    *o += lki * tk;
                }
            }
        }
    }
}

impl<M: Terms + ?Sized> Terms for InFrame<'_, M> {
    fn dim(&self) -> usize {
        self.frame.dim()
    }

    fn num_terms(&self) -> usize {
        self.model.num_terms()
    }

    fn log_terms(&self, z: &[f64], indices: &[u32], out: &mut [f64]) {
        with_scratch(self.dim(), |theta| {
            self.frame.to_theta(z, theta);
            self.model.log_terms(theta, indices, out);
        });
    }

    fn sum_log_terms(&self, z: &[f64], indices: &[u32]) -> f64 {
        with_scratch(self.dim(), |theta| {
            self.frame.to_theta(z, theta);
            self.model.sum_log_terms(theta, indices)
        })
    }

    fn sum_log_terms_range(&self, z: &[f64], start: u32, end: u32) -> f64 {
        with_scratch(self.dim(), |theta| {
            self.frame.to_theta(z, theta);
            self.model.sum_log_terms_range(theta, start, end)
        })
    }

    fn shard_layout(&self) -> Option<&tallmc_core::ShardLayout> {
        self.model.shard_layout()
    }

    fn row_service(&self) -> Option<&dyn tallmc_core::RowService> {
        self.model.row_service()
    }
}

impl<M: TermGradients + ?Sized> TermGradients for InFrame<'_, M> {
    fn log_terms_grad_sum(
        &self, z: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        self.summed_gradient(z, grad_sum, |theta, g| {
            self.model.log_terms_grad_sum(theta, indices, out, g)
        })
    }

    /// O(d) per index from the precomputed rows when the view has them
    /// ([`InFrame::with_rows`]); otherwise the model's gradients in θ mapped by Lᵀ, O(d²) each.
    fn log_terms_grads(&self, z: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        if let Some((model, rows)) = self.linear() {
            rows.log_terms_grads(model, z, indices, out, grads);
            return;
        }
        let d = self.dim();
        with_scratch(2 * d, |s| {
            let (theta, tmp) = s.split_at_mut(d);
            self.frame.to_theta(z, theta);
            self.model.log_terms_grads(theta, indices, out, grads);
            rows_to_coordinates(self.frame, &mut grads[..indices.len() * d], tmp);
        });
    }

    fn sum_log_terms_grad_range(
        &self, z: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        self.summed_gradient(z, grad_sum, |theta, g| {
            self.model.sum_log_terms_grad_range(theta, start, end, g)
        })
    }
}

impl<M: TermGradients + ?Sized> InFrame<'_, M> {
    /// Calls `f(θ, g)` at θ = θ* + Lz with g zeroed, **adds** Lᵀg into `grad_sum`, and returns
    /// f's value: a summed gradient of the model in z.
    fn summed_gradient(
        &self, z: &[f64], grad_sum: &mut [f64], f: impl FnOnce(&[f64], &mut [f64]) -> f64,
    ) -> f64 {
        let d = self.dim();
        with_scratch(2 * d, |s| {
            let (theta, g) = s.split_at_mut(d);
            self.frame.to_theta(z, theta);
            g.fill(0.0);
            let value = f(theta, g);
            add_upper(self.frame.lower(), g, grad_sum);
            value
        })
    }
}

impl<M: TermHessians + ?Sized> TermHessians for InFrame<'_, M> {
    fn hessian_vector_products(&self, z: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let d = self.dim();
        with_scratch(3 * d, |s| {
            let (theta, rest) = s.split_at_mut(d);
            let (lv, tmp) = rest.split_at_mut(d);
            self.frame.to_theta(z, theta);
            self.frame.direction_to_theta(v, lv);
            self.model.hessian_vector_products(theta, indices, lv, out);
            rows_to_coordinates(self.frame, &mut out[..indices.len() * d], tmp);
        });
    }

    fn sum_hessian(&self, z: &[f64], indices: &[u32], hess: &mut [f64]) {
        let d = self.dim();
        with_scratch(d + 2 * d * d, |s| {
            let (theta, rest) = s.split_at_mut(d);
            let (h, t) = rest.split_at_mut(d * d);
            self.frame.to_theta(z, theta);
            h.fill(0.0);
            self.model.sum_hessian(theta, indices, h);
            add_congruence(self.frame.lower(), h, t, hess, d);
        });
    }

    fn sum_hessian_vector_range(
        &self, z: &[f64], start: u32, end: u32, v: &[f64], out: &mut [f64],
    ) {
        let d = self.dim();
        with_scratch(3 * d, |s| {
            let (theta, rest) = s.split_at_mut(d);
            let (lv, hv) = rest.split_at_mut(d);
            self.frame.to_theta(z, theta);
            self.frame.direction_to_theta(v, lv);
            hv.fill(0.0);
            self.model.sum_hessian_vector_range(theta, start, end, lv, hv);
            add_upper(self.frame.lower(), hv, out);
        });
    }

    fn sum_hessian_range(&self, z: &[f64], start: u32, end: u32, hess: &mut [f64]) {
        let d = self.dim();
        with_scratch(d + 2 * d * d, |s| {
            let (theta, rest) = s.split_at_mut(d);
            let (h, t) = rest.split_at_mut(d * d);
            self.frame.to_theta(z, theta);
            h.fill(0.0);
            self.model.sum_hessian_range(theta, start, end, h);
            add_congruence(self.frame.lower(), h, t, hess, d);
        });
    }
}

impl<M: LogPrior + ?Sized> LogPrior for InFrame<'_, M> {
    /// log p(θ* + Lz) (the constant log |det L| dropped).
    fn log_prior(&self, z: &[f64]) -> f64 {
        with_scratch(z.len(), |theta| {
            self.frame.to_theta(z, theta);
            self.model.log_prior(theta)
        })
    }

    fn log_prior_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let d = z.len();
        with_scratch(2 * d, |s| {
            let (theta, g) = s.split_at_mut(d);
            self.frame.to_theta(z, theta);
            g.fill(0.0);
            let value = self.model.log_prior_grad(theta, g);
            add_upper(self.frame.lower(), g, grad);
            value
        })
    }
}

impl<M: LogPriorHessian + ?Sized> LogPriorHessian for InFrame<'_, M> {
    fn add_log_prior_hessian(&self, z: &[f64], hess: &mut [f64]) {
        let d = z.len();
        with_scratch(d + 2 * d * d, |s| {
            let (theta, rest) = s.split_at_mut(d);
            let (h, t) = rest.split_at_mut(d * d);
            self.frame.to_theta(z, theta);
            h.fill(0.0);
            self.model.add_log_prior_hessian(theta, h);
            add_congruence(self.frame.lower(), h, t, hess, d);
        });
    }
}

/// A piecewise-deterministic kernel `K` run in the coordinates of a [`WhiteningFrame`], with
/// its trajectory reported in θ (module docs). `K` is any kernel that runs on the model in z,
/// [`InFrame`]; e.g. `Whitened::new(Bps::automatic(…)?, frame)`.
///
/// ```
/// use tallmc_core::rng::chain_rng;
/// use tallmc_core::{PdmpChain, PdmpKernel, WhiteningFrame};
/// use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
/// use tallmc_samplers::{
///     AutoBoundConfig, NewtonOptions, Whitened, ZigZag, ZigZagConfig, laplace_approximation,
/// };
///
/// let data = synthetic::two_class_2d(1_000, 1)?.data;
/// let model = LogisticRegression::new(data, DesignOptions::default(), 10.0)?;
/// let laplace = laplace_approximation(&model, &[0.0, 0.0], NewtonOptions::default())?;
/// let frame = WhiteningFrame::new(laplace.mode.clone(), &laplace.covariance)?;
/// let zz = ZigZag::automatic(ZigZagConfig::default(), AutoBoundConfig::default())?;
/// let kernel = Whitened::new(zz, frame);
/// let mut chain = kernel.build_chain(&model, &laplace.mode, &mut chain_rng(7, 0))?;
/// let mut rng = chain_rng(7, 1);
/// let (mut time, mut integral) = (0.0, [0.0; 2]);
/// while time < 200.0 {
///     chain.step(&model, &mut rng)?;
///     let s = chain.trajectory().last_segment(); // in θ
///     for j in 0..2 {
///         integral[j] += s.duration * (s.position[j] + 0.5 * s.duration * s.velocity[j]);
///     }
///     time += s.duration;
/// }
/// for j in 0..2 {
///     let sd = laplace.covariance[j * 2 + j].sqrt();
///     assert!((integral[j] / time - laplace.mode[j]).abs() < sd);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Whitened<K> {
    inner: K,
    frame: Arc<WhiteningFrame>,
    rows: Option<Arc<FrameRows>>,
}

impl<K> Whitened<K> {
    /// `inner` run in the coordinates of `frame`. The frame is checked against the model when a
    /// chain is built.
    pub fn new(inner: K, frame: WhiteningFrame) -> Self {
        Self { inner, frame: Arc::new(frame), rows: None }
    }

    /// Precomputes the rows of `model` in z ([`FrameRows`]: O(N d²) once, N(d + 1) numbers
    /// shared by every chain) when it pays and is possible, so that every per-datum gradient
    /// in z costs O(d) instead of O(d²): when `model` is a
    /// [`LinearPredictor`](tallmc_core::LinearPredictor) ([`Terms::as_linear_predictor`]),
    /// all its rows are in this process, and the rows take at most [`FRAME_ROWS_BYTES`].
    /// Otherwise the kernel is returned as it was (the general path, also exact).
    ///
    /// Worth it for kernels that take per-datum gradients (SBPS's minibatches, lipSBPS and
    /// ZZ-SS's one datum per proposal); full-data kernels sum gradients, mapped once per call.
    /// Chains must then be built and stepped on this `model`; a model with another number of
    /// data points or dimension is refused when a chain is built.
    ///
    /// # Errors
    /// A frame whose dimension is not the model's, or non-finite rows ([`FrameRows::new`]).
    pub fn precompute_rows<M: Terms + ?Sized>(mut self, model: &M) -> Result<Self> {
        let Some(linear) = model.as_linear_predictor() else {
            return Ok(self);
        };
        let bytes = 8.0 * model.num_terms() as f64 * (model.dim() as f64 + 1.0);
        let here = model.row_service().is_none() && model.shard_passes().is_none();
        if here && model.num_terms() > 0 && bytes <= FRAME_ROWS_BYTES as f64 {
            self.rows = Some(Arc::new(FrameRows::new(linear, &self.frame)?));
        }
        Ok(self)
    }

    /// The precomputed rows, when [`Whitened::precompute_rows`] built them.
    pub fn rows(&self) -> Option<&FrameRows> {
        self.rows.as_deref()
    }

    /// The kernel that runs in z.
    pub fn inner(&self) -> &K {
        &self.inner
    }

    /// The frame.
    pub fn frame(&self) -> &WhiteningFrame {
        &self.frame
    }
}

/// A running [`Whitened`] chain: the inner chain in z and its trajectory mapped to θ.
#[derive(Debug, Clone)]
pub struct WhitenedChain<C> {
    inner: C,
    frame: Arc<WhiteningFrame>,
    rows: Option<Arc<FrameRows>>,
    trajectory: Trajectory,
    /// The velocity in z whose image Lv the θ-trajectory carries: Lv is recomputed (O(d²)) only
    /// when the inner chain's velocity changed, which a rejected proposal does not do.
    mapped_velocity: VelocityKey,
}

impl<C> WhitenedChain<C> {
    /// The chain in z (its trajectory is in z).
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// The particle in θ: position, velocity, time and last segment.
    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }
}

/// Writes the image in θ of the particle of `z` (position θ* + Lz, velocity Lv) into `theta`'s
/// current position and velocity; `mapped` is the z-velocity whose image `theta` carries, and
/// Lv is recomputed only when the velocity differs from it (same bits either way).
fn map_particle(
    frame: &WhiteningFrame, z: &Trajectory, theta: &mut Trajectory, mapped: &mut VelocityKey,
) {
    let (position, velocity) = theta.position_velocity_mut();
    frame.to_theta(z.position(), position);
    if mapped.changed(z.velocity()) {
        frame.direction_to_theta(z.velocity(), velocity);
    }
}

impl<M, K, C, T> PdmpKernel<M> for Whitened<K>
where
    M: Terms + ?Sized,
    K: for<'a> PdmpKernel<InFrame<'a, M>, Chain = C>,
    C: for<'a> PdmpChain<InFrame<'a, M>, Tuning = T>,
    T: Tuning,
{
    type Chain = WhitenedChain<C>;

    /// Maps `position` to z and builds the inner chain there.
    ///
    /// # Errors
    /// A frame whose dimension is not the model's, a model whose passes run on shards
    /// elsewhere ([`InFrame::new`]), precomputed rows of another model's shape
    /// ([`InFrame::with_rows`]), a position of the wrong length or not finite, and the inner
    /// kernel's errors.
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let view = match self.rows.as_deref() {
            Some(rows) => InFrame::with_rows(model, &self.frame, rows)?,
            None => InFrame::new(model, &self.frame)?,
        };
        let d = view.dim();
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let mut z = vec![0.0; d];
        self.frame.to_coordinates(position, &mut z);
        let inner = self.inner.build_chain(&view, &z, rng)?;
        let (mut theta, mut velocity) = (vec![0.0; d], vec![0.0; d]);
        self.frame.to_theta(inner.trajectory().position(), &mut theta);
        self.frame.direction_to_theta(inner.trajectory().velocity(), &mut velocity);
        let trajectory = Trajectory::new(theta, velocity);
        let (frame, rows) = (Arc::clone(&self.frame), self.rows.clone());
        let mut mapped_velocity = VelocityKey::default();
        mapped_velocity.changed(inner.trajectory().velocity());
        Ok(WhitenedChain { inner, frame, rows, trajectory, mapped_velocity })
    }
}

impl<M, C, T> PdmpChain<M> for WhitenedChain<C>
where
    M: Terms + ?Sized,
    C: for<'a> PdmpChain<InFrame<'a, M>, Tuning = T>,
    T: Tuning,
{
    type Tuning = WhitenedTuning<T>;

    fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    /// One step of the inner chain in z; the θ-trajectory travels the mapped segment.
    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let view = InFrame { model, frame: &self.frame, rows: self.rows.as_deref() };
        let stats = self.inner.step(&view, rng)?;
        let segment = self.inner.trajectory().last_segment();
        let (duration, end) = (segment.duration, segment.end);
        self.trajectory.advance(duration);
        self.trajectory.set_end(end);
        map_particle(
            &self.frame,
            self.inner.trajectory(),
            &mut self.trajectory,
            &mut self.mapped_velocity,
        );
        Ok(stats)
    }

    fn begin_warmup(&mut self) {
        <C as PdmpChain<InFrame<'_, M>>>::begin_warmup(&mut self.inner);
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self, model: &M, stats: &SegmentStats, rng: &mut R,
    ) -> Result<()> {
        let view = InFrame { model, frame: &self.frame, rows: self.rows.as_deref() };
        self.inner.adapt(&view, stats, rng)
    }

    fn end_warmup(&mut self) {
        <C as PdmpChain<InFrame<'_, M>>>::end_warmup(&mut self.inner);
    }

    fn tuning(&self) -> Self::Tuning {
        WhitenedTuning {
            coordinates: Coordinates::Whitened { dim: self.frame.dim() },
            inner: <C as PdmpChain<InFrame<'_, M>>>::tuning(&self.inner),
        }
    }
}

/// The coordinates a chain runs in, as its tuning reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coordinates {
    /// z = L⁻¹(θ − θ*) of a [`WhiteningFrame`] of dimension `dim`.
    Whitened {
        /// d.
        dim: usize,
    },
}

impl Coordinates {
    /// A short description, as in the CSV comments.
    pub fn describe(&self) -> String {
        match self {
            Self::Whitened { dim } => {
                format!(
                    "whitened z = L⁻¹(θ − θ*), θ* the mode, LLᵀ the Laplace covariance (d = {dim})"
                )
            }
        }
    }
}

/// The tuning of a [`WhitenedChain`]: the frame, then the inner chain's tuning (its fields
/// beside `coordinates` in the JSON form when it is a struct).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhitenedTuning<T> {
    /// The coordinates.
    pub coordinates: Coordinates,
    /// The inner chain's tuning.
    #[serde(flatten)]
    pub inner: T,
}

impl<T: Tuning> Tuning for WhitenedTuning<T> {
    /// `coordinates = …`, then the inner chain's lines.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("coordinates = {}", self.coordinates.describe())];
        lines.extend(self.inner.comment_lines());
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense reference: Lᵀ g and Lᵀ H L by explicit sums.
    #[test]
    fn triangular_helpers_match_dense_products() {
        let cov = [4.0, 1.0, 0.5, 1.0, 2.0, 0.3, 0.5, 0.3, 1.5];
        let f = WhiteningFrame::new(vec![0.0; 3], &cov).unwrap();
        let l = f.lower();
        let g = [0.3, -1.2, 2.0];
        let mut out = [1.0; 3];
        add_upper(l, &g, &mut out);
        for i in 0..3 {
            let want: f64 = 1.0 + (0..3).map(|k| l[k * 3 + i] * g[k]).sum::<f64>();
            assert!((out[i] - want).abs() < 1e-14);
        }
        let h = [2.0, 0.1, -0.4, 0.1, 1.0, 0.2, -0.4, 0.2, 3.0];
        let (mut t, mut w) = ([0.0; 9], [0.5; 9]);
        add_congruence(l, &h, &mut t, &mut w, 3);
        let mut dense = [0.0; 9];
        f.congruence(&h, &mut dense);
        for k in 0..9 {
            assert!((w[k] - 0.5 - dense[k]).abs() < 1e-13, "{w:?} vs {dense:?}");
        }
    }

    #[test]
    fn nested_scratch_does_not_share_the_buffer() {
        let total = with_scratch(3, |a| {
            a.fill(1.0);
            let inner = with_scratch(2, |b| {
                b.fill(5.0);
                b.iter().sum::<f64>()
            });
            a.iter().sum::<f64>() + inner
        });
        assert_eq!(total, 13.0);
    }
}
