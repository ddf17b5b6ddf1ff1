//! Sign-corrected posterior summaries for chains on a signed (unbiased but possibly negative)
//! likelihood estimator, as signed HMC-ECS produces (Dang et al. 2019, §5; Lyne et al. 2015).
//!
//! A chain that targets π̃(θ, u) ∝ |L̂(θ; u)| p(θ) p(u) and records the sign s = sign L̂(θ; u) of
//! each draw gives, for any function ψ,
//!
//! ```text
//! E_π[ψ] = E_π̃[ψ s] / E_π̃[s]   ≈   R̂ = Σ_t ψ(θ_t) s_t / Σ_t s_t ,
//! ```
//!
//! a ratio of two ergodic averages, consistent for the exact posterior π. Its Monte Carlo
//! standard error follows from the delta method: with w_t = s_t (ψ(θ_t) − R̂) and
//! s̄ = (1/T) Σ_t s_t,
//!
//! ```text
//! R̂ − E_π[ψ] ≈ w̄ / s̄ ,   so   MCSE(R̂) = MCSE(w̄) / |s̄| ,
//! ```
//!
//! where MCSE(w̄) is the ESS-based MCSE of the mean of the series w ([`mcse_mean`]), so the
//! autocorrelation of both the draws and the signs is taken into account. The sign-corrected
//! sd is √(R̂(ψ²) − R̂(ψ)²). τ̂, the fraction of positive signs, estimates
//! τ = P_π̃(L̂ ≥ 0); the variance of R̂ grows like 1/(2τ − 1)² relative to an unsigned chain.

use crate::chains::validate;
use crate::error::{Error, Result};
use crate::ess::MIN_DRAWS;
use crate::mcse::mcse_mean;

/// Sign-corrected summary of one scalar quantity (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SignCorrected {
    /// R̂ = Σ ψ_t s_t / Σ s_t.
    pub mean: f64,
    /// √(R̂(ψ²) − R̂(ψ)²) (NaN if the sign-corrected second moment falls below the squared
    /// mean, which can happen with few positive signs).
    pub sd: f64,
    /// Delta-method MCSE of `mean`: MCSE(w̄)/|s̄| with w_t = s_t(ψ_t − R̂).
    pub mcse_mean: f64,
    /// Fraction of draws with a positive sign.
    pub tau: f64,
    /// Mean sign s̄ = 2τ̂ − 1 for ±1 signs.
    pub mean_sign: f64,
}

/// The sign-corrected summary of `values` (chains of ψ(θ_t)) with the signs `signs` (chains of
/// the same shape, each entry +1 or −1).
///
/// # Errors
/// No chains, unequal lengths (also between `values` and `signs`), fewer than [`MIN_DRAWS`]
/// draws per chain, a non-finite value, a sign other than ±1, or signs summing to zero (no
/// sign-corrected estimate exists: τ̂ = ½).
///
/// # Example
/// ```
/// use tallmc_diagnostics::signed::sign_corrected;
/// let values = [[1.0, 2.0, 3.0, 2.0, 1.0, 2.0]];
/// let signs = [[1.0, 1.0, -1.0, 1.0, 1.0, 1.0]];
/// let s = sign_corrected(&values, &signs).unwrap();
/// assert!((s.mean - (1.0 + 2.0 - 3.0 + 2.0 + 1.0 + 2.0) / 4.0).abs() < 1e-15);
/// assert!((s.tau - 5.0 / 6.0).abs() < 1e-15);
/// ```
pub fn sign_corrected<C: AsRef<[f64]>, S: AsRef<[f64]>>(
    values: &[C], signs: &[S],
) -> Result<SignCorrected> {
    let (chains, len) = validate(values, "sign_corrected", MIN_DRAWS)?;
    validate(signs, "sign_corrected", MIN_DRAWS)?;
    if signs.len() != chains {
        return Err(Error::dimension("chains of signs".to_owned(), chains, signs.len()));
    }
    let (mut sum_s, mut sum_ps, mut sum_pps, mut positive) = (0.0, 0.0, 0.0, 0usize);
    for (v, s) in values.iter().zip(signs) {
        let (v, s) = (v.as_ref(), s.as_ref());
        if s.len() != len {
            return Err(Error::dimension("draws of signs per chain".to_owned(), len, s.len()));
        }
        for (&x, &sign) in v.iter().zip(s) {
            if sign != 1.0 && sign != -1.0 {
                return Err(Error::invalid("sign", sign, "+1 or −1"));
            }
            sum_s += sign;
            sum_ps += sign * x;
            sum_pps += sign * x * x;
            positive += usize::from(sign > 0.0);
        }
    }
    if sum_s == 0.0 {
        return Err(Error::invalid(
            "sum of signs",
            0.0,
            "a non-zero sum (τ̂ = ½: the sign-corrected ratio is undefined)",
        ));
    }
    let total = (chains * len) as f64;
    let mean = sum_ps / sum_s;
    let second = sum_pps / sum_s;
    let var = second - mean * mean;
    let w: Vec<Vec<f64>> = values
        .iter()
        .zip(signs)
        .map(|(v, s)| v.as_ref().iter().zip(s.as_ref()).map(|(x, s)| s * (x - mean)).collect())
        .collect();
    let mean_sign = sum_s / total;
    Ok(SignCorrected {
        mean,
        sd: if var >= 0.0 { var.sqrt() } else { f64::NAN },
        mcse_mean: mcse_mean(&w)? / mean_sign.abs(),
        tau: positive as f64 / total,
        mean_sign,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_positive_signs_give_the_plain_summary() {
        let x = [vec![0.3, -1.2, 0.8, 0.1, -0.4, 1.5, -0.7, 0.2]];
        let s = [vec![1.0; 8]];
        let r = sign_corrected(&x, &s).unwrap();
        assert!((r.mean - crate::mean(&x).unwrap()).abs() < 1e-15);
        assert!((r.mcse_mean - mcse_mean(&x).unwrap()).abs() < 1e-12);
        let sd_pop = crate::sd(&x).unwrap() * (7.0f64 / 8.0).sqrt();
        assert!((r.sd - sd_pop).abs() < 1e-12);
        assert_eq!(r.tau, 1.0);
    }

    #[test]
    fn bad_input_names_the_problem() {
        let x = [vec![1.0; 6]];
        let half = [vec![1.0, -1.0, 1.0, -1.0, 1.0, -1.0]];
        assert!(sign_corrected(&x, &half).unwrap_err().to_string().contains("sum of signs"));
        let odd = [vec![1.0, 0.5, 1.0, 1.0, 1.0, 1.0]];
        assert!(sign_corrected(&x, &odd).unwrap_err().to_string().contains("sign"));
        let short = [vec![1.0; 5]];
        assert!(sign_corrected(&x, &short).is_err());
        let two = [vec![1.0; 6], vec![1.0; 6]];
        assert!(sign_corrected(&x, &two).unwrap_err().to_string().contains("chains of signs"));
    }
}
