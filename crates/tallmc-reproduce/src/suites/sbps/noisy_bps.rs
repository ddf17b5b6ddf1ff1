//! BPS with independent Gaussian noise on every gradient evaluation, simulated by the
//! Δt-discretization of Pakman et al. (2017), eq. (1) — the process of their Theorem 1 and
//! Fig. 1.
//!
//! **Process.** The particle moves on x(t) = x + vt with v on the unit sphere. Every Δt of
//! trajectory time (t = kΔt, k = 1, 2, …) it evaluates the full-data gradient of the potential
//! U = −log π at x(t), adds independent noise n ~ N(0, s² I) (fresh at every evaluation: the
//! noise at distinct points is independent, the hypothesis of Theorem 1), and bounces with
//! probability Δt [⟨ĝ, v⟩]⁺ off the noisy gradient ĝ = ∇U + n: v ← v − 2⟨ĝ, v⟩ĝ/‖ĝ‖².
//! Independently, the velocity is refreshed uniformly on the sphere at rate λ_ref (exactly, at
//! an exponential time). As Δt → 0 this is the Cox process of rate [⟨∇U + n_t, v⟩]⁺; for finite
//! Δt the bounce decision lags by at most Δt, an O(Δt) error (at Δt = 10⁻³ and rates of order
//! 5–20, far below the Monte Carlo error of the suite's runs). The probability Δt \[G\]⁺ is capped
//! at 1 (never reached at these Δt: it would need G > 1000).
//!
//! **Segments.** A step runs the Δt-clock until a bounce or the refreshment and reports one
//! segment (straight between velocity changes), so the process flows into the same sinks as the
//! exact kernels. `SegmentStats::proposals` counts the Δt-checks.
//!
//! **Cost.** One full-data gradient (N terms and N gradients) per Δt-check. Fine for the 2-D
//! toy of Fig. 1; not a practical sampler.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal};
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, FullData, LogPrior, Parallelism, PdmpChain, PdmpKernel, Result,
    SegmentStats, TermGradients, Trajectory, Tuning,
};
use tallmc_samplers::piecewise::{VelocityDistribution, reflect};

/// Settings of [`NoisyBps`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoisyBpsConfig {
    /// Noise sd s per gradient component (the paper's Fig. 1: 5).
    pub noise_sd: f64,
    /// Step Δt of the bounce clock (> 0).
    pub dt: f64,
    /// Refresh rate λ_ref ≥ 0.
    pub refresh_rate: f64,
}

/// BPS with noisy gradients (module docs): settings that build a [`NoisyBpsChain`].
#[derive(Debug, Clone)]
pub struct NoisyBps {
    config: NoisyBpsConfig,
}

impl NoisyBps {
    /// A kernel with checked settings: s ≥ 0 finite, Δt > 0 finite, λ_ref ≥ 0 finite.
    pub fn new(config: NoisyBpsConfig) -> Result<Self> {
        if !(config.noise_sd.is_finite() && config.noise_sd >= 0.0) {
            return Err(Error::invalid("noise sd", config.noise_sd, "a finite number ≥ 0"));
        }
        tallmc_core::error::check_positive("bounce clock step dt", config.dt)?;
        if !(config.refresh_rate.is_finite() && config.refresh_rate >= 0.0) {
            return Err(Error::invalid("refresh rate", config.refresh_rate, "a finite number ≥ 0"));
        }
        Ok(Self { config })
    }
}

/// A running noisy-BPS chain: the particle, the full-data gradient and scratch.
#[derive(Debug, Clone)]
pub struct NoisyBpsChain {
    config: NoisyBpsConfig,
    trajectory: Trajectory,
    full: FullData,
    grad: Vec<f64>,
    y: Vec<f64>,
}

/// The settings of a [`NoisyBpsChain`] (nothing adapts), for the CSV comments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NoisyBpsTuning {
    /// Noise sd s.
    pub noise_sd: f64,
    /// Step Δt of the bounce clock.
    pub dt: f64,
    /// Refresh rate λ_ref.
    pub refresh_rate: f64,
}

impl Tuning for NoisyBpsTuning {
    fn comment_lines(&self) -> Vec<String> {
        vec![format!(
            "noisy BPS: noise sd = {}, dt = {}, refresh rate = {}",
            self.noise_sd, self.dt, self.refresh_rate
        )]
    }
}

impl<M> PdmpKernel<M> for NoisyBps
where
    M: TermGradients + LogPrior + ?Sized,
{
    type Chain = NoisyBpsChain;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<NoisyBpsChain> {
        let d = model.dim();
        if position.len() != d {
            return Err(Error::dimension("initial position", d, position.len()));
        }
        tallmc_core::error::check_finite("initial position", position)?;
        let mut v = vec![0.0; d];
        VelocityDistribution::Sphere.draw(rng, &mut v);
        Ok(NoisyBpsChain {
            config: self.config,
            trajectory: Trajectory::new(position.to_vec(), v),
            full: FullData::for_model(model, Parallelism::Sequential),
            grad: vec![0.0; d],
            y: vec![0.0; d],
        })
    }
}

impl<M> PdmpChain<M> for NoisyBpsChain
where
    M: TermGradients + LogPrior + ?Sized,
{
    type Tuning = NoisyBpsTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { config: c, trajectory: t, full, grad, y } = self;
        let c = *c;
        let tau_r = if c.refresh_rate > 0.0 {
            let e: f64 = Exp1.sample(rng);
            e / c.refresh_rate
        } else {
            f64::INFINITY
        };
        let mut stats = SegmentStats::NONE;
        let n = model.num_terms();
        let mut k = 1u64;
        loop {
            let tau = k as f64 * c.dt;
            if tau >= tau_r {
                t.advance(tau_r);
                VelocityDistribution::Sphere.draw(rng, t.velocity_mut());
                t.set_end(EventKind::Refresh);
                stats.refreshes = 1;
                return Ok(stats);
            }
            for ((y, x), v) in y.iter_mut().zip(t.position()).zip(t.velocity()) {
                *y = x + tau * v;
            }
            full.log_posterior_grad(model, &*y, &mut *grad);
            stats.evals += EvalCounts::terms_and_gradients(n);
            stats.proposals += 1;
            // ĝ = ∇U + noise = −∇log π + s·z.
            let mut rate = 0.0;
            for (g, v) in grad.iter_mut().zip(t.velocity()) {
                let z: f64 = StandardNormal.sample(rng);
                *g = -*g + c.noise_sd * z;
                rate += *g * v;
            }
            if !rate.is_finite() {
                return Err(Error::NonFiniteEstimate { what: "noisy rate", value: rate }
                    .context(format!("time {tau}")));
            }
            let u: f64 = rng.random();
            if u < c.dt * rate.max(0.0) {
                t.advance(tau);
                reflect(t.velocity_mut(), &*grad);
                t.set_end(EventKind::Bounce);
                stats.bounces = 1;
                return Ok(stats);
            }
            k += 1;
        }
    }

    fn tuning(&self) -> NoisyBpsTuning {
        let c = self.config;
        NoisyBpsTuning { noise_sd: c.noise_sd, dt: c.dt, refresh_rate: c.refresh_rate }
    }
}
