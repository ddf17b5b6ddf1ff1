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
use tallmc_core::{
    Error, EvalCounts, EventKind, FullData, LogPrior, Parallelism, PdmpKernel, Result,
    SegmentStats, TermGradients, Trajectory,
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

/// BPS with noisy gradients (module docs).
#[derive(Debug, Clone)]
pub struct NoisyBps {
    config: NoisyBpsConfig,
    full: Option<FullData>,
    grad: Vec<f64>,
    y: Vec<f64>,
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
        Ok(Self { config, full: None, grad: Vec::new(), y: Vec::new() })
    }
}

impl<M> PdmpKernel<M> for NoisyBps
where
    M: TermGradients + LogPrior + ?Sized,
{
    type State = Trajectory;

    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        rng: &mut R,
    ) -> Result<Trajectory> {
        let d = model.dim();
        if position.len() != d {
            return Err(Error::dimension("initial position", d, position.len()));
        }
        tallmc_core::error::check_finite("initial position", position)?;
        self.full = Some(FullData::for_model(model, Parallelism::Sequential));
        self.grad = vec![0.0; d];
        self.y = vec![0.0; d];
        let mut v = vec![0.0; d];
        VelocityDistribution::Sphere.draw(rng, &mut v);
        Ok(Trajectory::new(position.to_vec(), v))
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        t: &mut Trajectory,
        rng: &mut R,
    ) -> Result<SegmentStats> {
        let c = self.config;
        let full =
            self.full.as_mut().ok_or_else(|| Error::Other("NoisyBps step before init".into()))?;
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
            for ((y, x), v) in self.y.iter_mut().zip(t.position()).zip(t.velocity()) {
                *y = x + tau * v;
            }
            full.log_posterior_grad(model, &self.y, &mut self.grad);
            stats.evals += EvalCounts::terms_and_gradients(n);
            stats.proposals += 1;
            // ĝ = ∇U + noise = −∇log π + s·z.
            let mut rate = 0.0;
            for (g, v) in self.grad.iter_mut().zip(t.velocity()) {
                let z: f64 = StandardNormal.sample(rng);
                *g = -*g + c.noise_sd * z;
                rate += *g * v;
            }
            if !rate.is_finite() {
                return Err(Error::Other(format!("non-finite noisy rate at time {tau}")));
            }
            let u: f64 = rng.random();
            if u < c.dt * rate.max(0.0) {
                t.advance(tau);
                reflect(t.velocity_mut(), &self.grad);
                t.set_end(EventKind::Bounce);
                stats.bounces = 1;
                return Ok(stats);
            }
            k += 1;
        }
    }

    fn adaptation_report(&self) -> Vec<String> {
        let c = self.config;
        vec![format!(
            "noisy BPS: noise sd = {}, dt = {}, refresh rate = {}",
            c.noise_sd, c.dt, c.refresh_rate
        )]
    }
}
