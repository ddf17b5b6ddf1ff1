//! Pieces shared by the piecewise-deterministic kernels: velocity draws and reflections, the
//! full-data potential, the curvature bound of the potential, the particle state of the
//! full-data kernels, and how a chain's clocks are simulated, as its tuning reports it.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, FullData, LogPrior, LogPriorCurvature, LogPriorHessian,
    Parallelism, Result, SegmentStats, TermCurvatureBound, TermGradients, TermHessians, Terms,
    Trajectory,
};
use tallmc_integrators::earliest;

/// How a chain's bounce (or flip) clocks are simulated, as its tuning reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum ClockTuning {
    /// The rate is affine along the line (quadratic potential): its arrivals are inverted
    /// exactly.
    ExactInversion,
    /// Thinning against the model's curvature bound.
    CurvatureBound,
    /// Thinning against the automatic piecewise envelope.
    Automatic {
        /// Grid intervals per band.
        intervals: usize,
        /// The envelope's current horizon.
        horizon: f64,
    },
}

impl ClockTuning {
    pub(crate) fn of_curvature(exact: bool) -> Self {
        if exact { Self::ExactInversion } else { Self::CurvatureBound }
    }

    /// A short description, as in the CSV comments.
    pub fn describe(&self) -> String {
        match self {
            Self::ExactInversion => "exact inversion (quadratic potential)".into(),
            Self::CurvatureBound => "thinning against the model's curvature bound".into(),
            Self::Automatic { intervals, horizon } => format!(
                "automatic piecewise bound, {intervals} intervals, current horizon {horizon}"
            ),
        }
    }
}

/// The reference distribution of a BPS-type velocity (drawn at the start and at refreshments).
///
/// BPS leaves π(x)·ψ(v) invariant for any rotation-invariant ψ; the two usual choices are the
/// standard normal (Bouchard-Côté, Vollmer & Doucet 2018) and the uniform distribution on the
/// unit sphere (Pakman et al. 2017). With the sphere every segment moves at speed 1, so the
/// trajectory time is the distance travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum VelocityDistribution {
    /// v ~ N(0, I_d).
    #[default]
    Gaussian,
    /// v uniform on the unit sphere S^{d−1} (a normalized standard normal draw).
    Sphere,
}

impl VelocityDistribution {
    /// Overwrites `v` with a draw.
    pub fn draw<R: Rng + ?Sized>(self, rng: &mut R, v: &mut [f64]) {
        loop {
            for x in v.iter_mut() {
                *x = StandardNormal.sample(rng);
            }
            if self == Self::Gaussian {
                return;
            }
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
                return;
            }
        }
    }
}

/// Reflects `v` off the hyperplane orthogonal to `g`: v ← v − 2⟨g, v⟩ g/‖g‖² (BPS's bounce;
/// ⟨g, v⟩ changes sign and ‖v‖ is kept). A zero `g` leaves v unchanged.
pub fn reflect(v: &mut [f64], g: &[f64]) {
    let gg: f64 = g.iter().map(|x| x * x).sum();
    if gg == 0.0 || !gg.is_finite() {
        return;
    }
    let c = 2.0 * dot(g, v) / gg;
    for (vi, gi) in v.iter_mut().zip(g) {
        *vi -= c * gi;
    }
}

/// ⟨a, b⟩.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The velocity a cached quantity was computed for. A PDMP's velocity changes only at its
/// events (bounces, flips, refreshments), so what depends on v alone (vᵀHv, a data rate B(v),
/// the image Lv of a whitened velocity) is recomputed only when [`VelocityKey::changed`] says
/// so, with the same bits as recomputing it every step.
#[derive(Debug, Clone, Default)]
pub(crate) struct VelocityKey(Vec<f64>);

impl VelocityKey {
    /// Whether `v` differs (entry by entry) from the recorded velocity; records `v` if so.
    /// O(d), no allocation after the first call.
    pub(crate) fn changed(&mut self, v: &[f64]) -> bool {
        if self.0 == v {
            return false;
        }
        self.0.clear();
        self.0.extend_from_slice(v);
        true
    }

    /// Forgets the recorded velocity (the next [`VelocityKey::changed`] is true).
    pub(crate) fn forget(&mut self) {
        self.0.clear();
    }
}

/// Whether every entry is finite.
pub(crate) fn all_finite(x: &[f64]) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// The full-data potential U(x) = −log p(x) − Σ_{i<N} ℓ_i(x): its gradient and Hessian-vector
/// products on all cores, with the deterministic reduction of [`FullData`].
#[derive(Debug, Clone)]
pub(crate) struct FullPotential {
    full: FullData,
    n: usize,
}

impl FullPotential {
    pub(crate) fn new<M: Terms + ?Sized>(model: &M, parallelism: Parallelism) -> Self {
        Self { full: FullData::for_model(model, parallelism), n: model.num_terms() }
    }

    /// Overwrites `out` with ∇U(x). Cost: N terms and N gradients.
    pub(crate) fn gradient<M: TermGradients + LogPrior + ?Sized>(
        &mut self, model: &M, x: &[f64], out: &mut [f64],
    ) -> EvalCounts {
        self.full.log_posterior_grad(model, x, out);
        out.iter_mut().for_each(|g| *g = -*g);
        EvalCounts::terms_and_gradients(self.n)
    }

    /// Overwrites `out` with ∇²U(x)·v (`scratch`: d × d for the prior Hessian). Cost: N Hessians.
    pub(crate) fn hessian_vector<M: TermHessians + LogPriorHessian + ?Sized>(
        &mut self, model: &M, x: &[f64], v: &[f64], out: &mut [f64], prior_hessian: &mut [f64],
    ) -> EvalCounts {
        self.full.hessian_vector(model, x, v, out);
        prior_hessian.fill(0.0);
        model.add_log_prior_hessian(x, prior_hessian);
        let d = v.len();
        for (j, o) in out.iter_mut().enumerate() {
            *o = -(*o + dot(&prior_hessian[j * d..(j + 1) * d], v));
        }
        EvalCounts::hessians(self.n)
    }
}

/// Bounds on the curvature of the whole potential U, from the model's
/// [`TermCurvatureBound`] and the prior's [`LogPriorCurvature`]:
///
/// ```text
/// vᵀ∇²U(x)v ≤ vᵀ K_U v,        K_U = K + κI           (BPS: slope of ⟨∇U(x + vt), v⟩)
/// Σ_k |∂²U(x)/∂x_j∂x_k| ≤ r_j,  r_j = Σ_k K^abs_jk + κ  (Zig-Zag: slope of θ_j ∂_jU(x + θt))
/// ```
///
/// When the terms are quadratic (K exact) and the prior Hessian constant, ∇²U = K − ∇²log p is
/// the same everywhere: `exact` is set and `quadratic` holds ∇²U itself, so the rates along a
/// line are exactly affine (exact inversion, no thinning).
#[derive(Debug, Clone)]
pub(crate) struct PotentialCurvature {
    pub(crate) quadratic: Vec<f64>,
    pub(crate) rows: Vec<f64>,
    pub(crate) exact: bool,
    pub(crate) evals: EvalCounts,
}

impl PotentialCurvature {
    /// One pass over the data (the model's curvature bound). Errors if the model's bound has
    /// the wrong size or non-finite entries.
    pub(crate) fn new<M>(model: &M) -> Result<Self>
    where
        M: TermCurvatureBound + LogPriorCurvature + LogPriorHessian + ?Sized,
    {
        let d = model.dim();
        let cb = model.curvature_bound();
        if cb.quadratic.len() != d * d || cb.absolute.len() != d * d {
            return Err(Error::dimension("curvature bound (d × d)", d * d, cb.quadratic.len()));
        }
        tallmc_core::error::check_finite("curvature bound K", &cb.quadratic)?;
        tallmc_core::error::check_finite("curvature bound K^abs", &cb.absolute)?;
        let kappa = model.prior_curvature_bound();
        if !(kappa.is_finite() && kappa >= 0.0) {
            return Err(Error::invalid("prior curvature bound", kappa, "a finite number >= 0"));
        }
        let exact = cb.exact && model.prior_hessian_is_constant();
        let mut quadratic = cb.quadratic;
        if exact {
            let mut prior = vec![0.0; d * d];
            model.add_log_prior_hessian(&vec![0.0; d], &mut prior);
            for (q, p) in quadratic.iter_mut().zip(&prior) {
                *q -= p;
            }
        } else {
            for j in 0..d {
                quadratic[j * d + j] += kappa;
            }
        }
        let rows =
            (0..d).map(|j| cb.absolute[j * d..(j + 1) * d].iter().sum::<f64>() + kappa).collect();
        Ok(Self { quadratic, rows, exact, evals: cb.evals })
    }

    /// Writes K_U v into `out` and returns vᵀK_U v. O(d²).
    pub(crate) fn apply(&self, v: &[f64], out: &mut [f64]) -> f64 {
        let d = v.len();
        for (j, o) in out.iter_mut().enumerate() {
            *o = dot(&self.quadratic[j * d..(j + 1) * d], v);
        }
        dot(v, out)
    }
}

/// State of a full-data BPS or Zig-Zag chain: the particle and ∇U at its position (cached, so
/// that each rate along the next line starts from it without touching the data).
#[derive(Debug, Clone, PartialEq)]
pub struct ParticleState {
    /// Position, velocity, time and last segment.
    pub trajectory: Trajectory,
    /// ∇U(x) at the current position.
    pub gradient: Vec<f64>,
}

impl ParticleState {
    /// Starts a particle at `position`: checks it, computes ∇U there with `potential` (N terms
    /// and N gradients, returned) and draws the velocity with `velocity`.
    pub(crate) fn start<M, R>(
        model: &M, position: &[f64], potential: &mut FullPotential, rng: &mut R,
        velocity: impl FnOnce(&mut R, &mut [f64]),
    ) -> Result<(Self, EvalCounts)>
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let d = model.dim();
        check_position(position, d)?;
        let mut gradient = vec![0.0; d];
        let evals = potential.gradient(model, position, &mut gradient);
        tallmc_core::error::check_finite(
            "gradient of the potential at the initial position",
            &gradient,
        )?;
        let mut v = vec![0.0; d];
        velocity(rng, &mut v);
        Ok((Self { trajectory: Trajectory::new(position.to_vec(), v), gradient }, evals))
    }

    /// Moves the particle by `tau` along its velocity and installs `gradient`, ∇U there.
    pub(crate) fn move_to(&mut self, tau: f64, gradient: &[f64]) {
        self.trajectory.advance(tau);
        self.gradient.copy_from_slice(gradient);
    }
}

/// The stats of a new segment, carrying the evaluations made since the last one (set-up
/// evaluations are reported with the first step).
pub(crate) fn segment_with(pending: &mut EvalCounts) -> SegmentStats {
    SegmentStats { evals: std::mem::take(pending), ..SegmentStats::NONE }
}

/// Ends a zero-length segment in a divergence: the particle stays where its gradient was
/// finite and its velocity is reversed, so it leaves the way it came (not π-invariant: it
/// reports numerical trouble, as HMC's divergences do).
pub(crate) fn diverge(trajectory: &mut Trajectory, mut stats: SegmentStats) -> SegmentStats {
    trajectory.advance(0.0);
    trajectory.velocity_mut().iter_mut().for_each(|v| *v = -*v);
    trajectory.set_end(EventKind::Divergence);
    stats.divergences = 1;
    stats
}

/// The earliest of the clocks' first arrivals `times` (index and time, [`earliest`]), or, when
/// no clock can ever fire along the current line (every time infinite), an error naming the
/// `clocks` and what would make one fire (`fires_when`).
pub(crate) fn first_event(
    times: impl IntoIterator<Item = f64>, clocks: &'static str, fires_when: &'static str,
) -> Result<(usize, f64)> {
    earliest(times).ok_or_else(|| Error::invalid(clocks, "no event ever", fires_when))
}

/// Checks a refresh rate: finite and ≥ 0.
pub(crate) fn check_refresh_rate(rate: f64) -> Result<()> {
    if rate.is_finite() && rate >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid("refresh rate", rate, "a finite number >= 0"))
    }
}

/// Checks an initial position's length and finiteness.
pub(crate) fn check_position(position: &[f64], dim: usize) -> Result<()> {
    tallmc_core::error::check_finite_vector("initial position", position, dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_flips_the_normal_component_and_keeps_the_norm() {
        let mut v = [1.0, 2.0, -0.5];
        let g = [0.3, -1.0, 2.0];
        let before = dot(&g, &v);
        let norm = dot(&v, &v);
        reflect(&mut v, &g);
        assert!((dot(&g, &v) + before).abs() < 1e-14);
        assert!((dot(&v, &v) - norm).abs() < 1e-14);
        let mut w = [1.0, 1.0];
        reflect(&mut w, &[0.0, 0.0]);
        assert_eq!(w, [1.0, 1.0]);
    }

    #[test]
    fn sphere_velocities_have_unit_norm() {
        let mut rng = tallmc_core::rng::chain_rng(3, 0);
        let mut v = [0.0; 5];
        for _ in 0..100 {
            VelocityDistribution::Sphere.draw(&mut rng, &mut v);
            assert!((dot(&v, &v) - 1.0).abs() < 1e-14);
        }
    }
}
