//! Zig-Zag with control variates of order two, importance-sampled data and whitened
//! coordinates: the [`SwitchingRateEstimator`] [`TaylorControlVariates`], which makes
//! [`ZigZagSubsampling`](super::ZigZagSubsampling) cost O(1) thinning proposals per flip on a
//! tall generalized linear model (issue 29; Bierkens, Fearnhead & Roberts 2019, §4 and §6 for
//! the first-order scheme it extends).
//!
//! **Coordinates.** The process runs in z = L⁻¹(θ − θ*) ([`WhiteningFrame`]): θ* the posterior
//! mode and L L ᵀ the Laplace covariance, so the posterior of z is close to N(0, I). The rows of
//! the model become x̃_J = Lᵀx_J and the velocity v ∈ {−1, +1}^d is a velocity in z (Lv in θ).
//!
//! **Estimator.** With η_J = x_Jᵀθ, η*_J = x_Jᵀθ*, U = U₀ − Σ_J ℓ_J (U₀ = −log p) and the
//! second-order Taylor expansion of every ℓ_J around θ*,
//!
//! ```text
//! ∂_{z_i}U(z) = (G₀ + B z)_i − Σ_J x̃_Ji ρ_J(z),
//! ρ_J = φ_J′(η_J) − φ_J′(η*_J) − φ_J″(η*_J)(η_J − η*_J)            (the remainder's score)
//! G₀ = −Lᵀ∇log p(θ*) − Σ_J φ_J′(η*_J) x̃_J,    B = LᵀPL − Σ_J φ_J″(η*_J) x̃_J x̃_Jᵀ,
//! ```
//!
//! P = −∇²log p (constant: Gaussian or flat priors). The first part is exact and costs O(d) per
//! coordinate; the sum of remainders is estimated from one datum J drawn for coordinate i with
//! probability p_iJ = w_iJ / W_i, w_iJ = c₃|x̃_Ji|‖x̃_J‖₂² ([`AliasTable`], one per coordinate):
//!
//! ```text
//! ∂_iÊ^J(z) = (G₀ + Bz)_i − x̃_Ji ρ_J / p_iJ,      E_J[∂_iÊ^J] = ∂_{z_i}U(z)   (unbiased).
//! ```
//!
//! With many rows the d tables (12 bytes per row and coordinate) would not fit: above
//! [`PER_COORDINATE_TABLE_BYTES`] (or with [`DatumSampling::Shared`]) one table serves every
//! coordinate, p_J = w_J / W with w_J = c₃‖x̃_J‖₂³ ≥ w_iJ, and the bound below holds with W in
//! place of W_i (looser by about ‖x̃_J‖/|x̃_Ji| ≈ √d, which the larger N more than repays).
//!
//! **Bound.** |ρ_J| ≤ (c₃/2)(x̃_Jᵀz)² ≤ (c₃/2)‖x̃_J‖²‖z‖² ([`BoundedPredictorThirdDerivative`]),
//! so |x̃_Ji ρ_J / p_iJ| ≤ (W_i/2)‖z‖² for every J, and along z + vt (‖v‖ = √d)
//!
//! ```text
//! v_i ∂_iÊ^J(z + vt) ≤ v_i(G₀ + Bz)_i + t v_i(Bv)_i + (W_i/2)(‖z‖ + √d t)²,
//! ```
//!
//! an affine part (a_i, b_i) and a quadratic part (c_i = W_i/2, r = ‖z‖, s = √d). The affine
//! part is the switching rate of the Gaussian (Laplace) approximation itself, so in the
//! posterior's bulk the bound exceeds the rate by about c_i‖z‖², which shrinks like N^(−1/2) on
//! a tall data set (W_i = O(N · N^(−3/2))): the number of thinning proposals per flip tends to 1
//! as N grows. On a Gaussian family (c₃ = 0) there is no remainder: the rates are the exact
//! affine ones and a proposal reads no datum.
//!
//! **Cost.** Set-up (in [`TaylorControlVariates::new`], before any chain): one pass over the N
//! rows at θ* (N gradients and N Hessians of the predictor functions, O(N d²) arithmetic), d
//! alias tables over the N rows (12 bytes per row and coordinate, shared by every chain) and
//! ‖x̃_J‖² per row. Per flip: O(d) arithmetic for the bounds (Bz and Bv follow the line and the
//! flipped coordinate, computed in full, O(d²), every 32 flips). Per proposal: O(d)
//! arithmetic and — when c₃ > 0 — one row: φ′ at η_J and φ′, φ″ at η*_J (counted as 2
//! gradients and 1 Hessian).

use std::sync::Arc;

use rand::Rng;
use tallmc_core::{
    AliasTable, BoundedPredictorThirdDerivative, Error, EvalCounts, LinearPredictor,
    LogPriorCurvature, LogPriorHessian, Result, WhiteningFrame,
};
use tallmc_estimators::SwitchingRateEstimator;

use super::common::dot;
use super::datum_bounds::checked_num_terms;
use super::frame_rows::whitened_row;

/// What the set-up pass needs from a model: rows and predictor derivatives, c₃, and a prior
/// with a (constant) Hessian. Implemented for every model that has them.
pub trait TaylorModel:
    LinearPredictor + BoundedPredictorThirdDerivative + LogPriorHessian + LogPriorCurvature
{
}

impl<M> TaylorModel for M where
    M: LinearPredictor
        + BoundedPredictorThirdDerivative
        + LogPriorHessian
        + LogPriorCurvature
        + ?Sized
{
}

/// Rows per block of the set-up pass.
const PASS_ROWS: usize = 256;

/// The largest memory [`DatumSampling::Automatic`] gives the per-coordinate alias tables
/// (12 bytes per row and coordinate): 1 GiB, e.g. 10⁶ rows × 89 coordinates.
pub const PER_COORDINATE_TABLE_BYTES: usize = 1 << 30;

/// How a proposal's datum is drawn (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DatumSampling {
    /// One table per coordinate (p_iJ ∝ |x̃_Ji|‖x̃_J‖²) when they take at most
    /// [`PER_COORDINATE_TABLE_BYTES`], else one shared table.
    #[default]
    Automatic,
    /// One table per coordinate, whatever the memory.
    PerCoordinate,
    /// One table for every coordinate (p_J ∝ ‖x̃_J‖³).
    Shared,
}

/// The ZZ-CV estimator of order two, importance-sampled, in a whitened frame (module docs).
///
/// ```
/// use tallmc_core::rng::chain_rng;
/// use tallmc_core::{PdmpChain, PdmpKernel, WhiteningFrame};
/// use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
/// use tallmc_samplers::{
///     NewtonOptions, TaylorControlVariates, ZigZagSubsampling, laplace_approximation,
/// };
///
/// let data = synthetic::two_class_2d(10_000, 1)?.data;
/// let model = LogisticRegression::new(data, DesignOptions::default(), 10.0)?;
/// let laplace = laplace_approximation(&model, &[0.0, 0.0], NewtonOptions::default())?;
/// let frame = WhiteningFrame::new(laplace.mode.clone(), &laplace.covariance)?;
/// let cv = TaylorControlVariates::new(&model, frame)?;
/// assert_eq!(cv.setup_evals().gradients, 10_000);
/// let kernel = ZigZagSubsampling::with_estimator(cv);
/// let mut rng = chain_rng(7, 0);
/// let mut chain = kernel.build_chain(&model, &laplace.mode, &mut rng)?;
/// let (mut integral, mut proposals, mut flips) = (0.0, 0, 0);
/// while chain.trajectory().time() < 400.0 {
///     let stats = chain.step(&model, &mut rng)?;
///     proposals += stats.proposals;
///     flips += stats.bounces;
///     let seg = chain.trajectory().last_segment();
///     integral += seg.duration * (seg.position[0] + 0.5 * seg.duration * seg.velocity[0]);
/// }
/// let mean = integral / chain.trajectory().time();
/// assert!((mean - laplace.mode[0]).abs() < 4.0 * laplace.sds()[0]);
/// // Nearly every proposal is a flip: the bound is the Laplace rate plus a small remainder.
/// assert!(proposals < 2 * flips, "{proposals} proposals for {flips} flips");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TaylorControlVariates {
    fixed: Arc<Fixed>,
    scratch: Scratch,
}

/// What the set-up pass computes, shared by every chain.
#[derive(Debug)]
struct Fixed {
    frame: WhiteningFrame,
    num_terms: usize,
    /// G₀ (length d).
    g0: Vec<f64>,
    /// B (d × d, row-major).
    b: Vec<f64>,
    /// c₃.
    c3: f64,
    /// The tables the data are drawn from.
    tables: Tables,
    /// c_i = W_i / 2.
    half_totals: Vec<f64>,
    /// ‖x̃_J‖² per row.
    row_norm_sq: Vec<f64>,
    /// Per-datum evaluations of the pass.
    evals: EvalCounts,
}

/// Where a coordinate's datum is drawn from.
#[derive(Debug)]
enum Tables {
    /// Per coordinate i: the table of w_iJ = c₃|x̃_Ji|‖x̃_J‖², `None` when W_i = 0.
    PerCoordinate(Vec<Option<AliasTable>>),
    /// One table of w_J = c₃‖x̃_J‖³ for all (`None` when W = 0).
    Shared(Option<AliasTable>),
}

impl Tables {
    /// The table coordinate i draws from, `None` when it has no remainder.
    fn of(&self, i: usize) -> Option<&AliasTable> {
        match self {
            Self::PerCoordinate(t) => t[i].as_ref(),
            Self::Shared(t) => t.as_ref(),
        }
    }

    /// Whether coordinate i's weights are per coordinate.
    fn per_coordinate(&self) -> bool {
        matches!(self, Self::PerCoordinate(_))
    }
}

/// Bound rebuilds between two full computations of Bz and Bv: the incremental updates in
/// between ([`Scratch::update_along_line`]) each add a rounding error of order 10⁻¹⁶·‖B‖‖z‖,
/// which a full computation every 32 rebuilds keeps far below the thinning's relative slack
/// (10⁻⁹).
const FULL_PRODUCTS_EVERY: u32 = 32;

/// Per-chain scratch (no allocation in a step).
#[derive(Debug, Clone)]
struct Scratch {
    /// Bv for the velocity `cached_v`.
    bv: Vec<f64>,
    cached_v: Vec<f64>,
    /// Bz for the point `cached_z`.
    bz: Vec<f64>,
    cached_z: Vec<f64>,
    /// Incremental updates of `bz` and `bv` since they were last computed in full.
    updates: u32,
    /// θ of a point (for [`SwitchingRateEstimator::estimate`] without one).
    theta: Vec<f64>,
    /// x_J in θ.
    row: Vec<f64>,
}

impl Scratch {
    /// Empty scratch in dimension `d`: nothing cached, so the first
    /// [`products`](Self::products) computes in full.
    fn new(d: usize) -> Self {
        Self {
            bv: vec![0.0; d],
            cached_v: vec![f64::NAN; d],
            bz: vec![0.0; d],
            cached_z: vec![f64::NAN; d],
            updates: FULL_PRODUCTS_EVERY,
            theta: vec![0.0; d],
            row: vec![0.0; d],
        }
    }

    /// Makes `bz` = Bz and `bv` = Bv (B symmetric, row-major d × d): updated in O(d) when z
    /// lies on the line `cached_z` + τ·`cached_v` (to 10⁻¹² relative in every coordinate) and
    /// v differs from `cached_v` in at most one coordinate, computed in full otherwise (and
    /// after [`FULL_PRODUCTS_EVERY`] updates).
    fn products(&mut self, b: &[f64], z: &[f64], v: &[f64]) {
        let d = z.len();
        if self.updates < FULL_PRODUCTS_EVERY && self.update_along_line(b, z, v) {
            self.updates += 1;
        } else {
            for ((bz, bv), row) in self.bz.iter_mut().zip(&mut self.bv).zip(b.chunks_exact(d)) {
                *bz = dot(row, z);
                *bv = dot(row, v);
            }
            self.updates = 0;
        }
        self.cached_z.copy_from_slice(z);
        self.cached_v.copy_from_slice(v);
    }

    /// The O(d) update of [`Scratch::products`], or `false` (nothing changed) when z is not on
    /// the cached line or more than one velocity coordinate changed.
    fn update_along_line(&mut self, b: &[f64], z: &[f64], v: &[f64]) -> bool {
        let d = z.len();
        let (cz, cv) = (&self.cached_z, &self.cached_v);
        let speed_sq = dot(cv, cv);
        if !(speed_sq > 0.0 && speed_sq.is_finite()) {
            return false;
        }
        // τ by least squares along the old velocity, then every coordinate checked.
        let tau = z.iter().zip(cz).zip(cv).map(|((z, c), u)| (z - c) * u).sum::<f64>() / speed_sq;
        let on_line = tau.is_finite()
            && z.iter().zip(cz).zip(cv).all(|((&z, &c), &u)| {
                (z - (c + tau * u)).abs() <= 1e-12 * (z.abs() + c.abs() + (tau * u).abs())
            });
        let mut changed = v.iter().zip(cv).enumerate().filter(|(_, (x, y))| x != y);
        let flipped = match (changed.next(), changed.next()) {
            (None, _) => None,
            (Some((k, _)), None) => Some(k),
            _ => return false,
        };
        if !on_line {
            return false;
        }
        for (bz, bv) in self.bz.iter_mut().zip(&self.bv) {
            *bz += tau * bv;
        }
        if let Some(k) = flipped {
            let step = v[k] - self.cached_v[k];
            for (bv, row) in self.bv.iter_mut().zip(b.chunks_exact(d)) {
                *bv += step * row[k];
            }
        }
        true
    }
}

impl TaylorControlVariates {
    /// The estimator on `model` in `frame` (θ* its centre, which should be the mode; L from the
    /// Laplace covariance to whiten, or the identity), with its set-up pass (module docs).
    ///
    /// # Errors
    /// A frame of another dimension than the model's; no data; a prior whose Hessian is not
    /// constant; c₃ not finite or negative; a non-finite φ′ or φ″ at θ* (naming the datum) or
    /// a non-finite G₀ or B.
    pub fn new<M>(model: &M, frame: WhiteningFrame) -> Result<Self>
    where
        M: TaylorModel + ?Sized,
    {
        Self::with_sampling(model, frame, DatumSampling::Automatic)
    }

    /// [`TaylorControlVariates::new`] with the data drawn as `sampling` says.
    ///
    /// # Errors
    /// As [`TaylorControlVariates::new`].
    pub fn with_sampling<M>(
        model: &M, frame: WhiteningFrame, sampling: DatumSampling,
    ) -> Result<Self>
    where
        M: TaylorModel + ?Sized,
    {
        let fixed = Fixed::compute(model, frame, sampling)?;
        let d = fixed.frame.dim();
        Ok(Self { fixed: Arc::new(fixed), scratch: Scratch::new(d) })
    }

    /// The frame θ = θ* + Lz.
    pub fn whitening_frame(&self) -> &WhiteningFrame {
        &self.fixed.frame
    }

    /// The per-datum evaluations of the set-up pass (N gradients and N Hessians): made once,
    /// in [`TaylorControlVariates::new`], not by the chains.
    pub fn setup_evals(&self) -> EvalCounts {
        self.fixed.evals
    }

    /// G₀ = ∇_zU at z = 0 under the expansion (≈ 0 when θ* is the mode).
    pub fn gradient_at_center(&self) -> &[f64] {
        &self.fixed.g0
    }

    /// B (d × d, row-major): the Hessian of U in z under the expansion (≈ I when L whitens the
    /// Laplace covariance at the same θ*).
    pub fn hessian(&self) -> &[f64] {
        &self.fixed.b
    }

    /// c_i = W_i / 2 = (c₃/2) Σ_J |x̃_Ji| ‖x̃_J‖²: the quadratic bound's coefficients.
    pub fn remainder_coefficients(&self) -> &[f64] {
        &self.fixed.half_totals
    }
}

impl Fixed {
    fn compute<M>(model: &M, frame: WhiteningFrame, sampling: DatumSampling) -> Result<Self>
    where
        M: TaylorModel + ?Sized,
    {
        let d = model.dim();
        if frame.dim() != d {
            return Err(Error::dimension("Taylor control variates' frame θ* + Lz", d, frame.dim()));
        }
        let n = checked_num_terms(model)? as usize;
        if !model.prior_hessian_is_constant() {
            return Err(Error::invalid(
                "prior of Zig-Zag with Taylor control variates",
                "a prior whose Hessian changes with θ",
                "a Gaussian or flat prior (constant Hessian)",
            ));
        }
        let c3 = model.predictor_third_derivative_bound();
        if !(c3.is_finite() && c3 >= 0.0) {
            return Err(Error::invalid(
                "predictor third-derivative bound c₃",
                c3,
                "a finite number >= 0",
            ));
        }
        let center = frame.center().to_vec();
        let mut g_sum = vec![0.0; d]; // Σ φ′(η*) x̃
        let mut h_sum = vec![0.0; d * d]; // Σ φ″(η*) x̃x̃ᵀ (upper triangle)
        let per_coordinate = match sampling {
            DatumSampling::PerCoordinate => true,
            DatumSampling::Shared => false,
            DatumSampling::Automatic => {
                n.saturating_mul(d).saturating_mul(12) <= PER_COORDINATE_TABLE_BYTES
            }
        };
        let columns = match (c3 > 0.0, per_coordinate) {
            (false, _) => 0,
            (true, true) => d,
            (true, false) => 1,
        };
        let mut weights: Vec<Vec<f64>> = vec![vec![0.0; n]; columns];
        let mut row_norm_sq = vec![0.0; n];
        let (mut idx, mut eta) = ([0u32; PASS_ROWS], [0.0; PASS_ROWS]);
        let (mut d1, mut d2) = ([0.0; PASS_ROWS], [0.0; PASS_ROWS]);
        let (mut row, mut xt) = (vec![0.0; d], vec![0.0; d]);
        let mut lo = 0usize;
        while lo < n {
            let k = PASS_ROWS.min(n - lo);
            for (j, slot) in idx[..k].iter_mut().enumerate() {
                *slot = (lo + j) as u32;
            }
            model.linear_predictors(&center, &idx[..k], &mut eta[..k]);
            model.predictor_scores(&idx[..k], &eta[..k], &mut d1[..k], Some(&mut d2[..k]));
            for r in 0..k {
                let datum = lo + r;
                if !(d1[r].is_finite() && d2[r].is_finite()) {
                    return Err(Error::NonFinite {
                        what: format!(
                            "score or curvature of datum {datum} at the reference point θ*"
                        ),
                        index: 0,
                        value: if d1[r].is_finite() { d2[r] } else { d1[r] },
                    });
                }
                whitened_row(model, &frame, idx[r], &mut row, &mut xt);
                let nsq = dot(&xt, &xt);
                row_norm_sq[datum] = nsq;
                for i in 0..d {
                    g_sum[i] += d1[r] * xt[i];
                    let hi = d2[r] * xt[i];
                    for j in i..d {
                        h_sum[i * d + j] += hi * xt[j];
                    }
                }
                if per_coordinate {
                    for (w, x) in weights.iter_mut().zip(&xt) {
                        w[datum] = c3 * x.abs() * nsq;
                    }
                } else if let Some(w) = weights.first_mut() {
                    w[datum] = c3 * nsq * nsq.sqrt();
                }
            }
            lo += k;
        }
        // B = LᵀPL − Σ φ″ x̃x̃ᵀ, P = −∇²log p (constant).
        let mut prior_hessian = vec![0.0; d * d];
        model.add_log_prior_hessian(&center, &mut prior_hessian);
        let precision: Vec<f64> = prior_hessian.iter().map(|h| -h).collect();
        let mut b = vec![0.0; d * d];
        frame.congruence(&precision, &mut b);
        for i in 0..d {
            for j in i..d {
                let h = h_sum[i * d + j];
                b[i * d + j] -= h;
                if j != i {
                    b[j * d + i] -= h;
                }
            }
        }
        // G₀ = −Lᵀ∇log p(θ*) − Σ φ′(η*) x̃.
        let mut prior_grad = vec![0.0; d];
        model.log_prior_grad(&center, &mut prior_grad);
        let mut g0 = vec![0.0; d];
        frame.gradient_to_coordinates(&prior_grad, &mut g0);
        for (g, s) in g0.iter_mut().zip(&g_sum) {
            *g = -*g - s;
        }
        tallmc_core::error::check_finite("Taylor control variates' gradient G₀ at θ*", &g0)?;
        tallmc_core::error::check_finite("Taylor control variates' Hessian B at θ*", &b)?;
        let mut built = Vec::with_capacity(columns);
        let mut half_totals = vec![0.0; d];
        for (i, w) in weights.iter().enumerate() {
            let total: f64 = w.iter().sum();
            if total > 0.0 {
                let table = AliasTable::new(w)?;
                half_totals[i] = table.total() / 2.0;
                built.push(Some(table));
            } else {
                built.push(None);
            }
        }
        drop(weights);
        let tables = if per_coordinate || c3 == 0.0 {
            built.resize_with(d, || None);
            Tables::PerCoordinate(built)
        } else {
            let shared = built.pop().flatten();
            let half = shared.as_ref().map_or(0.0, |t| t.total() / 2.0);
            half_totals.fill(half);
            Tables::Shared(shared)
        };
        let evals = EvalCounts { terms: 0, gradients: n as u64, hessians: n as u64 };
        Ok(Self { frame, num_terms: n, g0, b, c3, tables, half_totals, row_norm_sq, evals })
    }
}

impl<M> SwitchingRateEstimator<M> for TaylorControlVariates
where
    M: LinearPredictor + BoundedPredictorThirdDerivative + ?Sized,
{
    /// Checks that the chain's model is the one of the set-up pass (dimension and N). No
    /// evaluation: the pass was made once, in [`TaylorControlVariates::new`].
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        let f = &self.fixed;
        if model.dim() != f.frame.dim() {
            return Err(Error::dimension(
                "Taylor control variates' model",
                f.frame.dim(),
                model.dim(),
            ));
        }
        if model.num_terms() != f.num_terms {
            return Err(Error::dimension(
                "rows of the model the Taylor control variates were built on",
                f.num_terms,
                model.num_terms(),
            ));
        }
        Ok(EvalCounts::ZERO)
    }

    /// a_i = v_i(G₀ + Bz)_i, b_i = v_i(Bv)_i. O(d) after a flip (the chain moved along the
    /// line of the last call, then one velocity coordinate changed: Bz += τ·Bv_old and
    /// Bv += (v_k − v_old,k)·B_{·k}), O(d²) otherwise and every 32nd call.
    fn bounds(&mut self, _model: &M, z: &[f64], v: &[f64], a: &mut [f64], b: &mut [f64]) {
        let f = &*self.fixed;
        self.scratch.products(&f.b, z, v);
        let s = &self.scratch;
        for i in 0..z.len() {
            a[i] = v[i] * (f.g0[i] + s.bz[i]);
            b[i] = v[i] * s.bv[i];
        }
    }

    /// c_i = W_i/2, r = ‖z‖, s = √d; `None` without remainders (c₃ = 0).
    fn quadratic_bounds(
        &mut self, _model: &M, z: &[f64], _v: &[f64], c: &mut [f64],
    ) -> Option<(f64, f64)> {
        let f = &*self.fixed;
        if f.c3 == 0.0 {
            return None;
        }
        c.copy_from_slice(&f.half_totals);
        Some((dot(z, z).sqrt(), (z.len() as f64).sqrt()))
    }

    /// J with probability w_iJ / W_i (0 when coordinate i has no remainder: the estimate then
    /// reads no datum).
    fn draw_datum<R: Rng + ?Sized>(
        &mut self, _num_terms: u32, coordinate: usize, rng: &mut R,
    ) -> u32 {
        match self.fixed.tables.of(coordinate) {
            Some(table) => table.sample(rng),
            None => 0,
        }
    }

    fn frame(&self) -> Option<&WhiteningFrame> {
        Some(&self.fixed.frame)
    }

    fn estimate(
        &mut self, model: &M, y: &[f64], datum: u32, coordinate: usize,
    ) -> (f64, EvalCounts) {
        let mut theta = std::mem::take(&mut self.scratch.theta);
        self.fixed.frame.to_theta(y, &mut theta);
        let out = self.estimate_at(model, y, &theta, datum, coordinate);
        self.scratch.theta = theta;
        out
    }

    /// (G₀ + By)_i − x̃_Ji ρ_J / p_iJ (module docs).
    fn estimate_at(
        &mut self, model: &M, y: &[f64], y_theta: &[f64], datum: u32, coordinate: usize,
    ) -> (f64, EvalCounts) {
        let f = &*self.fixed;
        let (d, i) = (y.len(), coordinate);
        let linear = f.g0[i] + dot(&f.b[i * d..(i + 1) * d], y);
        let Some(table) = f.tables.of(i) else {
            return (linear, EvalCounts::ZERO);
        };
        let idx = [datum];
        let (mut eta, mut eta_star) = ([0.0], [0.0]);
        model.linear_predictor_pairs(y_theta, f.frame.center(), &idx, &mut eta, &mut eta_star);
        let (mut d1, mut d2) = ([0.0; 2], [0.0; 2]);
        model.predictor_scores(&[datum, datum], &[eta[0], eta_star[0]], &mut d1, Some(&mut d2));
        let row = &mut self.scratch.row;
        row.fill(0.0);
        model.add_weighted_rows(&idx, &[1.0], row);
        // x̃_Ji = (Lᵀx_J)_i, summed as WhiteningFrame::gradient_to_coordinates does (the same
        // bits as the weight of the table).
        let l = f.frame.lower();
        let mut xt_i = 0.0;
        for (k, x) in row.iter().enumerate().skip(i) {
            xt_i += l[k * d + i] * x;
        }
        let counts = EvalCounts { terms: 0, gradients: 2, hessians: 1 };
        let nsq = f.row_norm_sq[datum as usize];
        let weight = if f.tables.per_coordinate() {
            f.c3 * xt_i.abs() * nsq
        } else {
            f.c3 * nsq * nsq.sqrt()
        };
        if weight.is_nan() || weight <= 0.0 || xt_i == 0.0 {
            // Probability 0 (never drawn by the table: only a caller's own index lands here),
            // or a row without coordinate i, whose remainder term is 0.
            return (linear, counts);
        }
        let rho = d1[0] - d1[1] - d2[1] * (eta[0] - eta_star[0]);
        (linear - xt_i * rho * table.total() / weight, counts)
    }

    fn describe(&self) -> String {
        let (draw, sum) = if self.fixed.tables.per_coordinate() {
            ("J ∝ |x̃_Ji|‖x̃_J‖²", "(c₃/2)Σ_J|x̃_Ji|‖x̃_J‖²")
        } else {
            ("J ∝ ‖x̃_J‖³", "(c₃/2)Σ_J‖x̃_J‖³")
        };
        format!(
            "ZZ-CV of order 2 in whitened coordinates z = L⁻¹(θ − θ*), {draw} (a_i = \
             v_i(G₀ + Bz)_i, b_i = v_i(Bv)_i, plus {sum} (‖z‖ + √d t)²)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(b: &[f64], x: &[f64]) -> Vec<f64> {
        b.chunks_exact(x.len()).map(|row| dot(row, x)).collect()
    }

    fn close(a: &[f64], b: &[f64], scale: f64) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12 * scale)
    }

    /// Along a Zig-Zag path (lines, one flip at a time) the O(d) updates stay within 10⁻¹²
    /// of the full products, the full products are redone every FULL_PRODUCTS_EVERY calls, and
    /// a point off the line or two flipped coordinates fall back to the full products.
    #[test]
    fn incremental_products_follow_the_path_and_fall_back_off_it() {
        let d = 5;
        let mut b = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                b[i * d + j] = 1.0 / (1.0 + (i + j) as f64) + if i == j { 2.0 } else { 0.0 };
            }
        }
        let scale = b.iter().map(|x| x.abs()).sum::<f64>() * 10.0;
        let mut s = Scratch::new(d);
        let mut z = vec![0.3, -0.2, 0.1, 0.0, -0.5];
        let mut v = vec![1.0, -1.0, 1.0, 1.0, -1.0];
        s.products(&b, &z, &v);
        assert_eq!(s.updates, 0, "the first call computes in full");
        for step in 0..100usize {
            let tau = 0.01 + 0.37 * ((step * 7919) % 13) as f64 / 13.0;
            for (zi, vi) in z.iter_mut().zip(&v) {
                *zi += tau * vi;
            }
            let k = (step * 3) % d;
            v[k] = -v[k];
            s.products(&b, &z, &v);
            assert_eq!(s.updates, (step as u32 + 1) % (FULL_PRODUCTS_EVERY + 1));
            assert!(close(&s.bz, &full(&b, &z), scale), "Bz at step {step}");
            assert!(close(&s.bv, &full(&b, &v), scale), "Bv at step {step}");
        }
        s.updates = 0;
        z[2] += 0.5; // off the line
        s.products(&b, &z, &v);
        assert_eq!(s.updates, 0);
        assert_eq!(s.bz, full(&b, &z));
        v[0] = -v[0];
        v[1] = -v[1]; // two coordinates at once
        s.products(&b, &z, &v);
        assert_eq!((s.updates, &s.bv), (0, &full(&b, &v)));
    }
}
