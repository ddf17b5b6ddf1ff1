//! Inefficiency factor, computing time (CT) and relative computing time (RCT): the cost
//! metrics of Dang, Quiroz, Kohn, Tran & Villani (2019), *Hamiltonian Monte Carlo with
//! energy conserving subsampling*, JMLR 20(100), §6 (Tables 1 and 3).
//!
//! * **Inefficiency factor** IF = S / ESS, with S the number of draws the ESS was computed
//!   from (all chains): the number of draws that are worth one independent draw, i.e. the
//!   integrated autocorrelation time τ. For a stationary AR(1) chain with coefficient ρ,
//!   IF = (1 + ρ)/(1 − ρ).
//! * **Computing time** CT = IF × (per-datum evaluations per draw): the number of per-datum
//!   density and gradient evaluations spent per *independent* draw. Evaluations are counted by
//!   the kernels (`tallmc_core::EvalCounts`), never timed, so CT is machine-independent.
//! * **Relative computing time** of method A with respect to method B: RCT = CT_A / CT_B; the
//!   paper reports competitors relative to perturbed HMC-ECS, so RCT > 1 means A is slower.
//!
//! Which ESS goes into IF is the caller's choice: the HMC-ECS paper used R coda's
//! `effectiveSize` ([`ess_coda`](crate::ess_coda)); [`ess_bulk`](crate::ess_bulk) is the modern
//! default.

use crate::error::{Error, Result};

/// Inefficiency factor IF = `n_draws` / `ess` (see the [module docs](self)).
///
/// # Errors
/// `n_draws` = 0, or `ess` not a finite number > 0.
///
/// # Example
/// ```
/// let r#if = tallmc_diagnostics::inefficiency_factor(4000, 1000.0).unwrap();
/// assert_eq!(r#if, 4.0);
/// ```
pub fn inefficiency_factor(n_draws: usize, ess: f64) -> Result<f64> {
    if n_draws == 0 {
        return Err(Error::invalid("n_draws", n_draws, "at least one draw"));
    }
    check_positive("ess", ess)?;
    Ok(n_draws as f64 / ess)
}

/// Computing time CT = `inefficiency` × `evals_per_draw`: per-datum evaluations per
/// independent draw (see the [module docs](self)).
///
/// `evals_per_draw` is the total number of per-datum density and gradient evaluations of the
/// run divided by the number of draws (a method that evaluates n terms per iteration at m
/// iterations per draw has n·m).
///
/// # Errors
/// `inefficiency` not a finite number > 0, or `evals_per_draw` not a finite number ≥ 0.
///
/// # Example
/// ```
/// // IF = 4, 1,000 evaluations per draw: 4,000 evaluations per independent draw.
/// assert_eq!(tallmc_diagnostics::computing_time(4.0, 1000.0).unwrap(), 4000.0);
/// ```
pub fn computing_time(inefficiency: f64, evals_per_draw: f64) -> Result<f64> {
    check_positive("inefficiency", inefficiency)?;
    if !(evals_per_draw.is_finite() && evals_per_draw >= 0.0) {
        return Err(Error::invalid("evals_per_draw", evals_per_draw, "a finite number >= 0"));
    }
    Ok(inefficiency * evals_per_draw)
}

/// Relative computing time RCT = CT_A / CT_B of method A with respect to method B
/// (see the [module docs](self)); > 1 means A needs more evaluations per independent draw.
///
/// # Errors
/// `ct_a` not a finite number ≥ 0, or `ct_b` not a finite number > 0.
///
/// # Example
/// ```
/// assert_eq!(tallmc_diagnostics::relative_computing_time(3000.0, 1500.0).unwrap(), 2.0);
/// ```
pub fn relative_computing_time(ct_a: f64, ct_b: f64) -> Result<f64> {
    if !(ct_a.is_finite() && ct_a >= 0.0) {
        return Err(Error::invalid("ct_a", ct_a, "a finite number >= 0"));
    }
    check_positive("ct_b", ct_b)?;
    Ok(ct_a / ct_b)
}

fn check_positive(name: &'static str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(name, v, "a finite number > 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input() {
        assert!(inefficiency_factor(0, 1.0).is_err());
        assert!(inefficiency_factor(10, 0.0).is_err());
        assert!(inefficiency_factor(10, f64::NAN).is_err());
        assert!(computing_time(-1.0, 1.0).is_err());
        assert!(computing_time(1.0, f64::INFINITY).is_err());
        assert!(relative_computing_time(1.0, 0.0).is_err());
        let e = inefficiency_factor(10, -2.0).unwrap_err();
        assert_eq!(e.to_string(), "invalid ess = -2: expected a finite number > 0");
    }
}
