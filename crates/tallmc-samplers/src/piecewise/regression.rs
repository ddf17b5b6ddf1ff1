//! SBPS's proposal band: a Bayesian local linear regression of the noisy bounce rate along the
//! current line, its upper predictive band, and the band's chord interpolation on knots
//! (Pakman et al. 2017, §4, eqs. 9–13).
//!
//! **Observations.** Since the last velocity change, the sampler has observed at trajectory
//! times t_j (measured from that change) the noisy directional derivatives
//! G_j = ⟨∇Û(x(t_j)), u⟩ with standard deviations σ_j (see [`Sbps`](super::Sbps)). It models
//!
//! ```text
//! G_j = β₀ + β₁ t_j + ε_j,   ε_j ~ N(0, σ_j²),   flat prior on β₀,   β₁ ~ N(μ_β, s_β²).
//! ```
//!
//! **Posterior, in closed form.** With weights w_j = σ_j⁻², W = Σ_j w_j, the weighted means
//! t̄ = Σ w_j t_j / W, Ḡ = Σ w_j G_j / W and the centred sums S_tt = Σ w_j (t_j − t̄)²,
//! S_tG = Σ w_j (t_j − t̄)(G_j − Ḡ), write β₀ + β₁ t = α + β₁ (t − t̄). The Gaussian log posterior
//! then separates (the cross terms Σ w_j (G_j − Ḡ) and Σ w_j (t_j − t̄) vanish):
//!
//! ```text
//! α  ~ N(Ḡ, 1/W)                                   independent of β₁,
//! β₁ ~ N(m₁, V₁),   V₁ = 1/(S_tt + s_β⁻²),   m₁ = V₁ (S_tG + μ_β/s_β²),
//! β̂ = (Ḡ − m₁ t̄, m₁),   Σ = [[1/W + V₁ t̄², −V₁ t̄], [−V₁ t̄, V₁]],
//! ```
//!
//! which is Σ = (Σ_j w_j x_j x_jᵀ + diag(0, s_β⁻²))⁻¹, β̂ = Σ (Σ_j w_j G_j x_j + (0, μ_β/s_β²))ᵀ
//! with x_j = (1, t_j) (REFERENCES §5), without forming or inverting the normal equations. The
//! centred sums are kept by West's (1979) weighted online update, so adding an observation is
//! O(1), nothing grows with the number of observations, and there is no cancellation of the kind
//! Σ w t² − (Σ w t)²/W has when the times are far from 0 relative to their spread.
//!
//! **Band.** The predictive mean of G(t) is β̂₀ + β̂₁ t = Ḡ + m₁ (t − t̄), the variance of that
//! mean is x(t)ᵀΣx(t) = 1/W + V₁ (t − t̄)², and the paper adds the last observation's noise σ²_last
//! (eq. 12). The proposal band (eq. 13) is
//!
//! ```text
//! f(t) = Ḡ + m₁ (t − t̄) + k √(q(t)),   q(t) = q₀ + V₁ (t − t̄)²,   q₀ = 1/W + σ²_last,
//! λ⁺(t) = [f(t)]⁺.
//! ```
//!
//! **Convexity, and why the chords are upper bounds.** √q(t) = ‖(√q₀, √V₁ (t − t̄))‖₂ is the
//! Euclidean norm of an affine function of t, hence convex; k > 0 and the linear part keep f
//! convex. A chord of a convex function lies above it between its ends, so the piecewise-linear
//! interpolation γ of f at any knots satisfies γ ≥ f on every piece, and \[γ\]⁺ ≥ \[f\]⁺ = λ⁺. The
//! sampler proposes from \[γ\]⁺ (its first arrival is exact, [`PiecewiseLinearRate`]) and keeps a
//! proposal at t with probability λ⁺(t)/γ(t) before looking at any data: together this is an exact
//! simulation of the Poisson process of rate λ⁺ (thinning), whatever the knots.
//!
//! **Knots.** f's curvature is k·√q's, concentrated within a few h = √(q₀/V₁) of the vertex t̄:
//! with t = t̄ + h sinh(u) one has √q = √q₀ cosh(u), and the knots are uniform in u with spacing
//! Δu. The chord gap is then at most a fixed fraction of the band's spread:
//!
//! ```text
//! 0 ≤ γ(t) − f(t) ≤ (cosh(Δu/2) − 1) · k√q(t)  ≈ (Δu²/8) · k√q(t).
//! ```
//!
//! (Scaled, the curve is the hyperbola y² − x² = 1, (x, y) = (sinh u, cosh u). A boost maps it to
//! itself and a chord over \[u₁, u₂\] to the chord over \[u₁ − c, u₂ − c\]; the symmetric chord has
//! y = cosh(Δu/2) and |x| ≤ sinh(Δu/2), so every chord point has Minkowski norm
//! m = √(y² − x²) ≤ cosh(Δu/2), boost-invariantly; then y = √(m² + x²) ≤ cosh(Δu/2)·√(1 + x²).)
//! The number of knots grows only like log(horizon/h), and the stage-one rejection rate is at
//! most about Δu²/8 ([`BandConfig`]).
//!
//! Cost: O(1) per observation, O(knots) per band, no data.

use serde::Serialize;
use tallmc_core::{Error, Result};
use tallmc_integrators::PiecewiseLinearRate;

/// σ_j is floored at [`SIGMA_FLOOR_REL`] × (a scale of G_j): relative part.
///
/// With a full batch (n = N) the finite-population factor makes σ_j = 0, and with n = 1 the
/// minibatch variance is not defined (taken as 0); a zero σ would give an infinite regression
/// weight. The floor keeps the weights finite while widening the band by only k × 10⁻⁹ of G's
/// scale, far above rounding (so exact linear rates, as for Gaussian targets, are never
/// "violated" by rounding) and far below any real noise.
pub const SIGMA_FLOOR_REL: f64 = 1e-9;

/// Absolute floor on σ_j (keeps w_j = σ_j⁻² ≤ 10²⁰⁰, so sums of weights cannot overflow).
pub const SIGMA_FLOOR_ABS: f64 = 1e-100;

/// The prior on the slope β₁ of the local regression: N(μ_β, s_β²).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlopePrior {
    /// s_β² > 0. Default 10⁵, as in the authors' code (`prior_var = 1e5` in SBPS-public's
    /// `SBPS` class). The slope has the units of G per unit time (N × curvature along the
    /// line), so the same s_β² is more informative on larger data sets; with μ_β learned from
    /// past slopes this matters little in practice.
    pub variance: f64,
    /// μ_β: `None` (default) for the running mean of every slope fitted so far in the run (0
    /// before the first fit), as in the authors' code; `Some(μ)` to fix it.
    pub mean: Option<f64>,
}

impl Default for SlopePrior {
    /// s_β² = 10⁵, μ_β the running mean of past fitted slopes.
    fn default() -> Self {
        Self { variance: 1e5, mean: None }
    }
}

impl SlopePrior {
    /// Checks s_β² finite and > 0, and μ_β finite when fixed.
    pub fn validate(&self) -> Result<()> {
        tallmc_core::error::check_positive("slope prior variance s_beta^2", self.variance)?;
        match self.mean {
            Some(m) if !m.is_finite() => {
                Err(Error::invalid("slope prior mean mu_beta", m, "a finite number"))
            }
            _ => Ok(()),
        }
    }
}

/// Knot placement and horizon of the proposal band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BandConfig {
    /// Knot spacing Δu > 0 in the hyperbolic parameter u of t = t̄ + h sinh(u) (module docs):
    /// the chords over-estimate the band's k√q part by at most cosh(Δu/2) − 1 ≈ Δu²/8 of it.
    /// Default 0.2 (≤ 0.5 %).
    pub knot_spacing: f64,
    /// Largest number of pieces per band (≥ 1; default 256). When the spacing would need more,
    /// the pieces are wider: still an upper bound, only more stage-one rejections.
    pub max_pieces: usize,
    /// Band horizon H before the first velocity change (trajectory time, > 0; default 1).
    pub initial_horizon: f64,
    /// After that, H = `horizon_factor` × the mean time between velocity changes so far (> 0;
    /// default 1). If the band does not fire before H, the particle moves there, observes a
    /// fresh minibatch and rebuilds the band ([`EventKind::Horizon`](tallmc_core::EventKind)).
    ///
    /// A short horizon matters when the linear model is wrong: where G(t) is sigmoid along the
    /// line (logistic tails, where the potential is nearly linear), a band fitted on the flat
    /// part stays negative across the posterior's bulk, and without an observation there the
    /// particle overshoots into the opposite tail. Measured on the logistic test posterior
    /// (d = 5, N = 1000, n = 100): with factor 10, k = 1 and k = 0.5 lock into tail-to-tail
    /// orbits (time-averaged squared distance 10–10⁴ posterior variances, growing further as
    /// H feeds on the longer segments), with factor 1 they stay in the bulk (2 and 5); at
    /// k = 3 both are exact to MCSE and factor 1 costs about 1 % more evaluations.
    pub horizon_factor: f64,
}

impl Default for BandConfig {
    /// Δu = 0.2, at most 256 pieces, H = 1 at first, then the mean time between velocity
    /// changes.
    fn default() -> Self {
        Self { knot_spacing: 0.2, max_pieces: 256, initial_horizon: 1.0, horizon_factor: 1.0 }
    }
}

impl BandConfig {
    /// Checks every field's range (errors name the value).
    pub fn validate(&self) -> Result<()> {
        tallmc_core::error::check_positive("band knot spacing", self.knot_spacing)?;
        if self.max_pieces == 0 {
            return Err(Error::invalid("band max_pieces", 0, "at least 1"));
        }
        tallmc_core::error::check_positive("band initial horizon", self.initial_horizon)?;
        tallmc_core::error::check_positive("band horizon factor", self.horizon_factor)
    }
}

/// The floored observation noise: max(σ, [`SIGMA_FLOOR_REL`] × `scale`, [`SIGMA_FLOOR_ABS`]).
pub fn floor_sigma(sigma: f64, scale: f64) -> f64 {
    sigma.max(SIGMA_FLOOR_REL * scale.abs()).max(SIGMA_FLOOR_ABS)
}

/// Observations (t_j, G_j, σ_j) since the last velocity change, kept as weighted centred sums
/// (module docs): O(1) memory and time per observation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LocalRegression {
    count: usize,
    weight: f64,
    t_mean: f64,
    g_mean: f64,
    s_tt: f64,
    s_tg: f64,
    last: (f64, f64, f64),
}

impl LocalRegression {
    /// No observations.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every observation.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Number of observations.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is no observation.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The last observation (t, G, σ).
    pub fn last(&self) -> Option<(f64, f64, f64)> {
        (self.count > 0).then_some(self.last)
    }

    /// Adds the observation (t, G, σ): weight w = σ⁻², then West's update
    ///
    /// ```text
    /// W' = W + w,  δt = t − t̄,  δG = G − Ḡ,  t̄ += (w/W') δt,  Ḡ += (w/W') δG,
    /// S_tt += w (W/W') δt²,  S_tG += w (W/W') δt δG.
    /// ```
    ///
    /// Errors unless t and G are finite and σ is finite and > 0 (floor it with [`floor_sigma`]).
    pub fn push(&mut self, t: f64, g: f64, sigma: f64) -> Result<()> {
        if !t.is_finite() {
            return Err(Error::invalid("observation time t_j", t, "a finite number"));
        }
        if !g.is_finite() {
            return Err(Error::invalid("observed rate G_j", g, "a finite number"));
        }
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(Error::invalid("observation sd sigma_j", sigma, "a finite number > 0"));
        }
        let w = 1.0 / (sigma * sigma);
        let total = self.weight + w;
        let (dt, dg) = (t - self.t_mean, g - self.g_mean);
        let frac = w / total;
        self.t_mean += frac * dt;
        self.g_mean += frac * dg;
        let cross = w * (self.weight / total);
        self.s_tt += cross * dt * dt;
        self.s_tg += cross * dt * dg;
        self.weight = total;
        self.count += 1;
        self.last = (t, g, sigma);
        Ok(())
    }

    /// The posterior of (β₀, β₁) under the prior N(`slope_mean`, `slope_variance`) on the slope
    /// and a flat prior on the intercept (module docs); `None` without observations.
    pub fn posterior(&self, slope_mean: f64, slope_variance: f64) -> Option<RegressionPosterior> {
        if self.count == 0 {
            return None;
        }
        let precision = 1.0 / slope_variance;
        let slope_var = 1.0 / (self.s_tt + precision);
        let slope = slope_var * (self.s_tg + slope_mean * precision);
        Some(RegressionPosterior {
            t_mean: self.t_mean,
            g_mean: self.g_mean,
            weight: self.weight,
            slope,
            slope_var,
        })
    }
}

/// The Gaussian posterior of (β₀, β₁) in its centred form: α = β₀ + β₁t̄ ~ N(Ḡ, 1/W)
/// independent of β₁ ~ N(m₁, V₁) (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegressionPosterior {
    /// t̄, the weighted mean observation time.
    pub t_mean: f64,
    /// Ḡ, the weighted mean observation.
    pub g_mean: f64,
    /// W = Σ σ_j⁻².
    pub weight: f64,
    /// m₁ = E\[β₁\].
    pub slope: f64,
    /// V₁ = Var\[β₁\].
    pub slope_var: f64,
}

impl RegressionPosterior {
    /// β̂ = (Ḡ − m₁t̄, m₁).
    pub fn mean(&self) -> [f64; 2] {
        [self.g_mean - self.slope * self.t_mean, self.slope]
    }

    /// `Σ = [[1/W + V₁t̄², −V₁t̄], [−V₁t̄, V₁]]`.
    pub fn covariance(&self) -> [[f64; 2]; 2] {
        let (v, t) = (self.slope_var, self.t_mean);
        [[1.0 / self.weight + v * t * t, -v * t], [-v * t, v]]
    }

    /// The predictive mean β̂₀ + β̂₁t = Ḡ + m₁(t − t̄) and its variance x(t)ᵀΣx(t) =
    /// 1/W + V₁(t − t̄)², x(t) = (1, t).
    pub fn predict(&self, t: f64) -> (f64, f64) {
        let dt = t - self.t_mean;
        (self.g_mean + self.slope * dt, 1.0 / self.weight + self.slope_var * dt * dt)
    }
}

/// The proposal band f(t) = β̂₀ + β̂₁t + k√(x(t)ᵀΣx(t) + σ²_last), λ⁺ = \[f\]⁺ (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProposalBand {
    posterior: RegressionPosterior,
    k: f64,
    q0: f64,
}

impl ProposalBand {
    /// The band of `posterior` with multiple `k` > 0 and last observation noise `sigma_last`.
    pub fn new(posterior: RegressionPosterior, k: f64, sigma_last: f64) -> Self {
        let q0 = 1.0 / posterior.weight + sigma_last * sigma_last;
        Self { posterior, k, q0 }
    }

    /// f(t), before the positive part (convex in t).
    pub fn curve(&self, t: f64) -> f64 {
        let p = &self.posterior;
        let dt = t - p.t_mean;
        p.g_mean + p.slope * dt + self.k * (self.q0 + p.slope_var * dt * dt).sqrt()
    }

    /// λ⁺(t) = \[f(t)\]⁺.
    pub fn rate(&self, t: f64) -> f64 {
        self.curve(t).max(0.0)
    }

    /// Writes into `out` the chord interpolation γ of f on [`start`, `start` + `horizon`], as a
    /// rate in the time τ = t − `start` since the particle's position (knots from τ = 0 to
    /// `horizon`, uniform in u = asinh((t − t̄)/h), h = √(q₀/V₁), at most `config.max_pieces`
    /// pieces; module docs). Since f is convex, γ ≥ f on [0, `horizon`].
    ///
    /// Errors when a knot value is not finite (the caller treats it as numerical trouble).
    pub fn chords(
        &self, start: f64, horizon: f64, config: &BandConfig, out: &mut PiecewiseLinearRate,
    ) -> Result<()> {
        out.clear();
        let p = &self.posterior;
        let h = (self.q0 / p.slope_var).sqrt();
        let u_of = |t: f64| ((t - p.t_mean) / h).clamp(-1e300, 1e300).asinh();
        let (ua, ub) = (u_of(start), u_of(start + horizon));
        let span = ub - ua;
        let pieces = if span.is_finite() && h.is_finite() && h > 0.0 {
            ((span / config.knot_spacing).ceil() as usize).clamp(1, config.max_pieces)
        } else {
            config.max_pieces
        };
        out.push(0.0, self.curve(start))?;
        let mut prev = 0.0;
        for j in 1..pieces {
            let tau = if span.is_finite() && h.is_finite() && h > 0.0 {
                let u = ua + span * (j as f64 / pieces as f64);
                p.t_mean + h * u.sinh() - start
            } else {
                horizon * (j as f64 / pieces as f64)
            };
            let tau = tau.clamp(prev, horizon);
            out.push(tau, self.curve(start + tau))?;
            prev = tau;
        }
        out.push(horizon, self.curve(start + horizon))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_observation_gives_the_prior_slope() {
        let mut r = LocalRegression::new();
        r.push(0.0, -2.0, 0.5).unwrap();
        let p = r.posterior(1.5, 10.0).unwrap();
        let m = p.mean();
        assert!((m[0] + 2.0).abs() < 1e-15 && (m[1] - 1.5).abs() < 1e-15, "{m:?}");
        let c = p.covariance();
        assert!((c[0][0] - 0.25).abs() < 1e-15 && (c[1][1] - 10.0).abs() < 1e-12);
        assert!(r.push(0.0, f64::NAN, 1.0).is_err());
        assert!(r.push(0.0, 1.0, 0.0).unwrap_err().to_string().contains("sigma_j = 0"));
    }

    #[test]
    fn chords_stay_within_the_predicted_gap() {
        let mut r = LocalRegression::new();
        for (t, g) in [(0.0, -1.0), (0.3, -0.2), (0.7, 0.4)] {
            r.push(t, g, 0.3).unwrap();
        }
        let band = ProposalBand::new(r.posterior(0.0, 1e5).unwrap(), 3.0, 0.3);
        let mut rate = PiecewiseLinearRate::new();
        let cfg = BandConfig::default();
        band.chords(0.7, 20.0, &cfg, &mut rate).unwrap();
        let (kn, vals) = (rate.knots(), rate.values());
        for w in 0..kn.len() - 1 {
            for s in 1..20 {
                let tau = kn[w] + (kn[w + 1] - kn[w]) * s as f64 / 20.0;
                let chord = vals[w] + (vals[w + 1] - vals[w]) * s as f64 / 20.0;
                let f = band.curve(0.7 + tau);
                assert!(chord >= f - 1e-12 * f.abs().max(1.0), "τ = {tau}");
            }
        }
    }
}
