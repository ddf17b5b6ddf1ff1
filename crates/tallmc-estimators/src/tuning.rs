//! Tuning helpers: the subsample size m of the difference estimator for a target variance,
//! and the number of factors λ and lower bound a of the block-Poisson estimator.
//!
//! **Difference estimator** (Dang et al. 2019 §3.3, following Pitt, Silva, Giordani & Kohn 2012):
//! with σ²_d the population variance of d_k = ℓ_k − q_k at θ and γ = n²σ²_d,
//!
//! ```text
//! V[ℓ̂_m] = γ/m,      V[ℓ̂_m − σ̂²_m/2] ≈ γ/m + γ²/(2m³)
//! ```
//!
//! and the authors choose m so that V[ℓ̂_m] ≈ 1 at θ*.
//!
//! **Block-Poisson** (Quiroz et al. 2021; REFERENCES §3): if d̂ ~ N(μ, σ²) then
//! (d̂ − a)²/σ² is non-central χ²₁ with non-centrality c² = (μ − a)²/σ², a Poisson(c²/2)
//! mixture of χ²_{1+2J}. Hence log|d̂ − a| = log σ + ½ log 2 + ½ log G with
//! G | J ~ Gamma(½ + J), and, with J ~ Poisson((μ − a)²/(2σ²)),
//!
//! ```text
//! η  = E log|(d̂ − a)/λ| = log(σ/λ) + ½{log 2 + E ψ₀(½ + J)}
//! ν² = V log|d̂ − a|     = ¼{E ψ₁(½ + J) + V ψ₀(½ + J)}
//! V[log|L̂_B|] = λ(ν² + η²)                                (compound Poisson, Σ_l χ_l ~ Poisson(λ))
//! P(L̂_B ≥ 0) = ½ + ½ exp(−2λ Φ((a − μ)/σ))               (negatives ~ Poisson(λ Φ((a−μ)/σ)))
//! ```
//!
//! Both are verified by simulation in the crate's tests and in `docs/methods/estimators.md`.

use statrs::function::erf::erfc;
use statrs::function::gamma::ln_gamma;
use tallmc_core::EvalCounts;

use crate::control_variate::ControlVariate;
use crate::differences::DifferenceTerms;
use crate::error::{Error, Result};

/// ψ₀(x), the digamma function, for x > 0 (recurrence to x ≥ 10, then the asymptotic series;
/// absolute error < 10⁻¹³).
pub fn digamma(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    acc + x.ln()
        - 0.5 / x
        - r * (1.0 / 12.0 - r * (1.0 / 120.0 - r * (1.0 / 252.0 - r * (1.0 / 240.0 - r / 132.0))))
}

/// ψ₁(x), the trigamma function, for x > 0 (recurrence to x ≥ 10, then the asymptotic series;
/// absolute error < 10⁻¹³).
pub fn trigamma(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < 10.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    acc + 1.0 / x
        + r / 2.0
        + r / x
            * (1.0 / 6.0 - r * (1.0 / 30.0 - r * (1.0 / 42.0 - r * (1.0 / 30.0 - r * 5.0 / 66.0))))
}

/// Φ(x), the standard normal distribution function.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The population mean and variance (divisor N) of d_k(θ) = ℓ_k(θ) − q_k(θ) over all N data,
/// with the evaluations made: one pass, N terms plus the N control variates at θ*. Uses lane 0
/// of `engine` (its cache is overwritten).
pub fn population_differences<M: ?Sized, E: DifferenceTerms<M>>(
    model: &M, cv: &ControlVariate, engine: &mut E, theta: &[f64],
) -> Result<(f64, f64, EvalCounts)> {
    Error::check_len("θ", theta.len(), cv.dim())?;
    const CHUNK: usize = 4096;
    let n = cv.num_terms();
    let mut idx = vec![0u32; CHUNK];
    let mut d = vec![0.0; CHUNK];
    let mut counts = EvalCounts::ZERO;
    let (mut mean, mut m2, mut seen) = (0.0f64, 0.0f64, 0usize);
    let mut lo = 0usize;
    while lo < n {
        let hi = n.min(lo + CHUNK);
        let k = hi - lo;
        for (j, slot) in idx[..k].iter_mut().enumerate() {
            *slot = (lo + j) as u32;
        }
        counts += engine.differences(model, cv, theta, 0, &idx[..k], &mut d[..k], false);
        // Chan et al.'s pairwise update of (mean, M2) with this chunk.
        let cm = d[..k].iter().sum::<f64>() / k as f64;
        let cm2: f64 = d[..k].iter().map(|x| (x - cm) * (x - cm)).sum();
        let total = seen + k;
        let delta = cm - mean;
        mean += delta * k as f64 / total as f64;
        m2 += cm2 + delta * delta * (seen as f64) * (k as f64) / total as f64;
        seen = total;
        lo = hi;
    }
    Error::check_finite_estimate_value("population mean of d_k", mean)?;
    Error::check_finite_estimate_value("population variance of d_k", m2)?;
    Ok((mean, m2 / n as f64, counts))
}

/// γ/m: the variance of ℓ̂_m, γ = n²σ²_d.
pub fn difference_variance(gamma: f64, m: usize) -> f64 {
    gamma / m as f64
}

/// γ/m + γ²/(2m³): the approximate variance of the perturbed ℓ̂_m − σ̂²_m/2.
pub fn perturbed_variance(gamma: f64, m: usize) -> f64 {
    let m = m as f64;
    gamma / m + gamma * gamma / (2.0 * m * m * m)
}

/// The smallest m ≥ 1 with V[ℓ̂_m] = γ/m ≤ `target` (the authors use target 1), γ = n²σ²_d.
///
/// Errors: γ not finite and ≥ 0, target not finite and > 0.
pub fn subsample_size_for_variance(gamma: f64, target: f64) -> Result<usize> {
    if !(gamma.is_finite() && gamma >= 0.0) {
        return Err(Error::invalid("γ = n²σ²_d", gamma, "a finite number ≥ 0"));
    }
    if !(target.is_finite() && target > 0.0) {
        return Err(Error::invalid("target variance", target, "a finite number > 0"));
    }
    Ok(((gamma / target).ceil() as usize).max(1))
}

/// The moments of log|L̂_B| under the normal approximation d̂ ~ N(μ, σ²) (module docs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BlockPoissonMoments {
    /// η = E log|(d̂ − a)/λ|.
    pub eta: f64,
    /// ν² = V log|d̂ − a|.
    pub nu2: f64,
    /// V[log|L̂_B|] = λ(ν² + η²).
    pub var_log_abs: f64,
    /// P(L̂_B ≥ 0) = ½ + ½ exp(−2λ Φ((a − μ)/σ)).
    pub prob_positive: f64,
}

/// The block-Poisson moments for d̂ ~ N(`mu`, `sd`²), `lambda` factors and lower bound `a`
/// (module docs). Errors: sd not finite > 0, λ = 0, μ or a not finite.
pub fn block_poisson_moments(
    mu: f64, sd: f64, lambda: usize, a: f64,
) -> Result<BlockPoissonMoments> {
    if !(sd.is_finite() && sd > 0.0) {
        return Err(Error::invalid("sd of d̂", sd, "a finite number > 0"));
    }
    if lambda == 0 {
        return Err(Error::invalid("number of factors λ", 0, "at least 1"));
    }
    if !mu.is_finite() || !a.is_finite() {
        return Err(Error::invalid("μ and a", format!("{mu}, {a}"), "finite numbers"));
    }
    let rate = (mu - a) * (mu - a) / (2.0 * sd * sd);
    // E over J ~ Poisson(rate) of ψ₀(½ + J), ψ₀², ψ₁, summing ±(12 sd + 30) around the mean.
    // A wide window (rate ≳ 1,000) is summed at every `stride`-th J: the summand is smooth on the
    // scale of the Poisson sd √rate, and the ratios below are then exact up to aliasing of
    // order exp(−2π²(√rate/stride)²) < e⁻⁶⁰⁰ (Poisson summation), while a tuning's grid of
    // a far from μ (rates of 10⁹ and more) stays at most MAX_TERMS terms per call.
    const MAX_TERMS: u64 = 400;
    let spread = 12.0 * rate.sqrt() + 30.0;
    let lo = (rate - spread).max(0.0).floor() as u64;
    let hi = (rate + spread).ceil() as u64;
    let stride = ((hi - lo) / MAX_TERMS).max(1);
    let (mut e0, mut e00, mut e1, mut mass) = (0.0, 0.0, 0.0, 0.0);
    for j in (lo..=hi).step_by(stride as usize) {
        let jf = j as f64;
        let logp = if rate > 0.0 {
            -rate + jf * rate.ln() - ln_gamma(jf + 1.0)
        } else if j == 0 {
            0.0
        } else {
            f64::NEG_INFINITY
        };
        let p = logp.exp();
        if p == 0.0 {
            continue;
        }
        let p0 = digamma(0.5 + jf);
        e0 += p * p0;
        e00 += p * p0 * p0;
        e1 += p * trigamma(0.5 + jf);
        mass += p;
    }
    let (e0, e00, e1) = (e0 / mass, e00 / mass, e1 / mass);
    let lam = lambda as f64;
    let eta = (sd / lam).ln() + 0.5 * (std::f64::consts::LN_2 + e0);
    let nu2 = 0.25 * (e1 + (e00 - e0 * e0).max(0.0));
    Ok(BlockPoissonMoments {
        eta,
        nu2,
        var_log_abs: lam * (nu2 + eta * eta),
        prob_positive: 0.5 + 0.5 * (-2.0 * lam * normal_cdf((a - mu) / sd)).exp(),
    })
}

/// A block-Poisson configuration chosen by [`tune_block_poisson`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BlockPoissonTuning {
    /// Number of factors λ.
    pub lambda: usize,
    /// Lower bound a.
    pub a: f64,
    /// Its predicted moments.
    pub moments: BlockPoissonMoments,
}

/// The smallest λ ≤ `max_lambda` for which some lower bound a gives V[log|L̂_B|] ≤ `target_var`
/// with P(L̂_B ≥ 0) ≥ `min_prob_positive`, and, for that λ, the a of least variance among those
/// meeting the sign constraint (searched on a grid of 401 values of t = (μ − a)/σ in
/// [0, 4λ/min(σ, 1) + 10]). Returns `None` when no λ up to `max_lambda` reaches the target.
/// μ and σ are the mean and sd of a block estimate d̂ at θ* (d̂ = (n/m)Σ_i d_{u_i}, so
/// μ = Σ_k d_k and σ² = n²σ²_d/m; see [`population_differences`]). Cost: O(λ_max · 401) moment
/// evaluations, no data.
///
/// Errors: as [`block_poisson_moments`]; `min_prob_positive` outside [0.5, 1); target ≤ 0.
pub fn tune_block_poisson(
    mu: f64, sd: f64, target_var: f64, min_prob_positive: f64, max_lambda: usize,
) -> Result<Option<BlockPoissonTuning>> {
    if !(0.5..1.0).contains(&min_prob_positive) {
        return Err(Error::invalid(
            "minimum P(L̂_B ≥ 0)",
            min_prob_positive,
            "a number in [0.5, 1)",
        ));
    }
    if !(target_var.is_finite() && target_var > 0.0) {
        return Err(Error::invalid("target V[log|L̂_B|]", target_var, "a finite number > 0"));
    }
    block_poisson_moments(mu, sd, 1, mu - sd)?;
    for lambda in 1..=max_lambda {
        let mut best: Option<BlockPoissonTuning> = None;
        // t = (μ − a)/σ on a grid; the variance is smooth and unimodal in t in practice.
        let t_max = 4.0 * (lambda as f64) / sd.min(1.0) + 10.0;
        let steps = 400;
        for s in 0..=steps {
            let t = t_max * f64::from(s) / f64::from(steps);
            let a = mu - t * sd;
            let mo = block_poisson_moments(mu, sd, lambda, a)?;
            if mo.prob_positive < min_prob_positive {
                continue;
            }
            if best.is_none_or(|b| mo.var_log_abs < b.moments.var_log_abs) {
                best = Some(BlockPoissonTuning { lambda, a, moments: mo });
            }
        }
        if let Some(b) = best
            && b.moments.var_log_abs <= target_var
        {
            return Ok(Some(b));
        }
    }
    Ok(None)
}
