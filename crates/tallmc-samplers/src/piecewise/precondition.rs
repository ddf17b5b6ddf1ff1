//! pSBPS's diagonal preconditioner (Pakman et al. 2017, §5, eqs. 14–18).
//!
//! For an invertible A, the density of z = A⁻¹x is p_z(z) ∝ π(Az), with ∇_z U_z(z) = A∇U(x).
//! Running SBPS on p_z with a unit velocity v means moving x by dx/dt = Av, with rate
//! \[⟨A∇Û(x), v⟩\]⁺ and reflection v ← v − 2⟨A∇Û, v⟩A∇Û/‖A∇Û‖² (eq. 16). For a *fixed* A this is
//! SBPS on p_z, so the time averages of x = Az target π exactly as SBPS's target p_z; a good A
//! makes p_z closer to isotropic and the sampler mixes faster.
//!
//! A is diagonal, learned from the minibatch gradients g (at the per-datum scale ĝ/N, as in the
//! authors' code, whose `grad_calc` returns the minibatch mean):
//!
//! ```text
//! V ← βV + (1 − β) g ⊙ g,      A_i = 1/(√V_i + ε),      A ← A / mean(A),
//! ```
//!
//! with β = 0.99 and ε = 10⁻⁴ (the authors' `run_sampler`; the paper's eq. 17 writes the
//! weights the other way round, but β = 0.99 only makes sense on the old value). On an
//! axis-aligned Gaussian with sds s_i, E\[g_i²\] ∝ 1/s_i² (plus minibatch noise), so A_i ∝ s_i:
//! p_z is close to isotropic. The normalization by the mean keeps the speed ‖Av‖ of order 1, so
//! A does not rescale G (§5).
//!
//! **Deviation from the paper.** The paper (and the authors' code) updates A after every
//! minibatch during the whole run; then the process is not a Markov process with a fixed
//! invariant law (§5 argues the drift term it ignores is small for β ≈ 1). Here A adapts only
//! during warmup and is frozen afterwards, so the sampling phase is SBPS on a fixed p_z.
//!
//! Cost: O(d) per update, no data.

use serde::Serialize;
use tallmc_core::{Error, Result};

/// Settings of the diagonal preconditioner.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PreconditionerConfig {
    /// Forgetting factor β ∈ [0, 1) of the running mean of g ⊙ g (default 0.99).
    pub beta: f64,
    /// ε > 0 added to √V (default 10⁻⁴, at the per-datum gradient scale).
    pub epsilon: f64,
}

impl Default for PreconditionerConfig {
    /// β = 0.99, ε = 10⁻⁴ (the paper's Fig. 3 and the authors' code).
    fn default() -> Self {
        Self { beta: 0.99, epsilon: 1e-4 }
    }
}

impl PreconditionerConfig {
    /// Checks 0 ≤ β < 1 and ε finite and > 0.
    pub fn validate(&self) -> Result<()> {
        if !(self.beta >= 0.0 && self.beta < 1.0) {
            return Err(Error::invalid("preconditioner beta", self.beta, "a number in [0, 1)"));
        }
        tallmc_core::error::check_positive("preconditioner epsilon", self.epsilon)
    }
}

/// The running estimate V of E\[g ⊙ g\] and the scale A it implies (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct DiagonalPreconditioner {
    config: PreconditionerConfig,
    second_moment: Vec<f64>,
    updates: u64,
}

impl DiagonalPreconditioner {
    /// V = 0 in dimension `dim` (A = 1 until the first update).
    pub fn new(config: PreconditionerConfig, dim: usize) -> Result<Self> {
        config.validate()?;
        Ok(Self { config, second_moment: vec![0.0; dim], updates: 0 })
    }

    /// V ← βV + (1 − β)(`scale`·g)⊙(`scale`·g). O(d).
    pub fn update(&mut self, g: &[f64], scale: f64) {
        let b = self.config.beta;
        for (v, gi) in self.second_moment.iter_mut().zip(g) {
            let x = scale * gi;
            *v = b * *v + (1.0 - b) * x * x;
        }
        self.updates += 1;
    }

    /// Number of updates so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Writes A (A_i = 1/(√V_i + ε), normalized to mean 1) into `out`; all ones before the first
    /// update. O(d).
    pub fn write_scale(&self, out: &mut [f64]) {
        if self.updates == 0 {
            out.fill(1.0);
            return;
        }
        for (a, v) in out.iter_mut().zip(&self.second_moment) {
            *a = 1.0 / (v.sqrt() + self.config.epsilon);
        }
        let mean = out.iter().sum::<f64>() / out.len() as f64;
        out.iter_mut().for_each(|a| *a /= mean);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_inverse_rms_normalized_to_mean_one() {
        let cfg = PreconditionerConfig { beta: 0.0, epsilon: 1e-12 };
        let mut p = DiagonalPreconditioner::new(cfg, 2).unwrap();
        let mut a = [0.0; 2];
        p.write_scale(&mut a);
        assert_eq!(a, [1.0, 1.0]);
        p.update(&[2.0, -0.5], 1.0);
        p.write_scale(&mut a);
        // 1/2 and 2, normalized by their mean 1.25.
        assert!((a[0] - 0.4).abs() < 1e-9 && (a[1] - 1.6).abs() < 1e-9, "{a:?}");
        let bad = PreconditionerConfig { beta: 1.0, epsilon: 1e-4 };
        assert!(bad.validate().unwrap_err().to_string().contains("beta = 1"));
    }
}
