//! Where the per-datum bounds of the subsampling piecewise-deterministic samplers come from:
//! [`BoundedGradients`] and [`LipschitzGradients`], shared by [`LipSbps`](super::LipSbps) and
//! [`ZigZagSubsampling`](super::ZigZagSubsampling).
//!
//! Both samplers thin a superposition of N per-datum rates against one bound that holds for
//! *every* datum, so they need sup_J of a datum's gradient along the line x + vt:
//!
//! * **bounded gradients** ([`TermGradientBounds`], e.g. logistic regression): the per-datum
//!   gradients are bounded uniformly in θ, |∂_jℓ_J| ≤ B_j and |⟨∇ℓ_J, v⟩| ≤ B(v), so the bound
//!   is a constant along the line. Set-up costs nothing.
//! * **Lipschitz gradients** ([`TermGradientLipschitz`], e.g. Gaussian regression, whose
//!   gradients grow without bound): around a reference point x* (the mode),
//!   ```text
//!   ‖∇ℓ_J(y)‖₂ ≤ ‖∇ℓ_J(x*)‖₂ + C ‖y − x*‖₂,      |∂_jℓ_J(y) − ∂_jℓ_J(x*)| ≤ C_j ‖y − x*‖₂,
//!   ‖x + vt − x*‖₂ ≤ ‖x − x*‖₂ + ‖v‖₂ t,
//!   ```
//!   so the bound is affine in t. The constants at x* — G* = max_J ‖∇ℓ_J(x*)‖₂ and, per
//!   coordinate, max_J and min_J of ∂_jℓ_J(x*) — take one pass over the data at set-up
//!   (N terms and N gradients, counted in the first step's stats).
//!
//! Each kernel turns these into its own rates (see [`LipSbps`](super::LipSbps) and
//! [`ZigZagSubsampling`](super::ZigZagSubsampling)); the prior enters through
//! [`LogPriorCurvature`]'s κ.

use tallmc_core::{Error, EvalCounts, LogPrior, LogPriorCurvature, Result, TermGradients, Terms};

use super::common::dot;

/// Rounding slack of an exact bound, relative to the size of the bound's terms: a rate up to
/// (a + bτ) + 10⁻⁹(|a| + |b|τ) is not a violation.
const RELATIVE_SLACK: f64 = 1e-9;

/// Rows per block of the set-up pass.
const PASS_ROWS: usize = 256;

/// Per-datum gradients bounded uniformly in θ, from the model's [`TermGradientBounds`]
/// (module docs). Needs no set-up pass.
///
/// [`TermGradientBounds`]: tallmc_core::TermGradientBounds
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundedGradients {
    /// B_j, filled when a chain is built (Zig-Zag only).
    pub(crate) coordinate: Vec<f64>,
    /// κ, filled when a chain is built (Zig-Zag only).
    pub(crate) kappa: f64,
    pub(crate) scratch: DatumScratch,
}

impl BoundedGradients {
    /// The bound source; its constants are read from the model when a chain starts.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Per-datum gradients Lipschitz in θ, from the model's [`TermGradientLipschitz`], expanded
/// around a reference point x* (module docs). One pass over the data at set-up.
///
/// [`TermGradientLipschitz`]: tallmc_core::TermGradientLipschitz
#[derive(Debug, Clone, PartialEq)]
pub struct LipschitzGradients {
    reference: Vec<f64>,
    /// Quantities at x*, filled when a chain is built.
    pub(crate) at_reference: ReferenceGradients,
    /// C (whole gradient), filled when a chain is built (lipSBPS).
    pub(crate) lipschitz: f64,
    /// C_j, filled when a chain is built (Zig-Zag).
    pub(crate) coordinate: Vec<f64>,
    /// κ, filled when a chain is built.
    pub(crate) kappa: f64,
    pub(crate) scratch: DatumScratch,
}

impl LipschitzGradients {
    /// The bound source around `reference` (x*, e.g. the posterior mode from
    /// [`laplace_approximation`](crate::laplace_approximation)); errors if an entry is not
    /// finite (its length is checked against the model when a chain starts).
    pub fn new(reference: Vec<f64>) -> Result<Self> {
        tallmc_core::error::check_finite("reference point x*", &reference)?;
        Ok(Self {
            reference,
            at_reference: ReferenceGradients::default(),
            lipschitz: 0.0,
            coordinate: Vec::new(),
            kappa: 0.0,
            scratch: DatumScratch::default(),
        })
    }

    /// The reference point x*.
    pub fn reference(&self) -> &[f64] {
        &self.reference
    }

    /// G* = max_J ‖∇ℓ_J(x*)‖₂ (NaN before a chain started).
    pub fn max_reference_gradient_norm(&self) -> f64 {
        if self.at_reference.coord_max.is_empty() { f64::NAN } else { self.at_reference.max_norm }
    }
}

/// Scratch of one per-datum evaluation (allocated when a chain starts).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DatumScratch {
    /// ∇log p at a point.
    pub(crate) prior: Vec<f64>,
    /// ∇ℓ_J at a point.
    pub(crate) grad: Vec<f64>,
    pub(crate) value: [f64; 1],
}

impl DatumScratch {
    pub(crate) fn new(d: usize) -> Self {
        Self { prior: vec![0.0; d], grad: vec![0.0; d], value: [0.0] }
    }

    /// Overwrites `prior` with ∇log p(y). O(d), no per-datum evaluation.
    pub(crate) fn prior_gradient<M: LogPrior + ?Sized>(&mut self, model: &M, y: &[f64]) {
        self.prior.fill(0.0);
        model.log_prior_grad(y, &mut self.prior);
    }

    /// Overwrites `grad` with ∇ℓ_J(y). One term and one gradient.
    pub(crate) fn datum_gradient<M: TermGradients + ?Sized>(
        &mut self, model: &M, y: &[f64], datum: u32,
    ) -> EvalCounts {
        model.log_terms_grads(y, &[datum], &mut self.value, &mut self.grad);
        EvalCounts::terms_and_gradients(1)
    }
}

/// Per-datum gradients at the reference point x*, from one pass over the data.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ReferenceGradients {
    /// G* = max_J ‖∇ℓ_J(x*)‖₂.
    pub(crate) max_norm: f64,
    /// max_J ∂_jℓ_J(x*).
    pub(crate) coord_max: Vec<f64>,
    /// min_J ∂_jℓ_J(x*).
    pub(crate) coord_min: Vec<f64>,
    /// ∇log p(x*).
    pub(crate) prior: Vec<f64>,
}

impl ReferenceGradients {
    /// One pass over the N data at `reference` (checked: length d, finite). Cost: N terms and
    /// N gradients (returned). Errors if a gradient is not finite there.
    pub(crate) fn compute<M: TermGradients + LogPrior + ?Sized>(
        model: &M, reference: &[f64],
    ) -> Result<(Self, EvalCounts)> {
        Self::compute_with_norms(model, reference, None)
    }

    /// [`compute`](Self::compute), also writing every datum's ‖∇ℓ_J(x*)‖₂ into `norms` (cleared
    /// first) when one is given.
    pub(crate) fn compute_with_norms<M: TermGradients + LogPrior + ?Sized>(
        model: &M, reference: &[f64], mut norms: Option<&mut Vec<f64>>,
    ) -> Result<(Self, EvalCounts)> {
        let d = model.dim();
        tallmc_core::error::check_finite_vector("reference point x*", reference, d)?;
        let n = checked_num_terms(model)?;
        let mut out = Self {
            max_norm: 0.0,
            coord_max: vec![f64::NEG_INFINITY; d],
            coord_min: vec![f64::INFINITY; d],
            prior: vec![0.0; d],
        };
        model.log_prior_grad(reference, &mut out.prior);
        tallmc_core::error::check_finite("prior gradient at the reference point", &out.prior)?;
        let mut idx = [0u32; PASS_ROWS];
        let mut values = vec![0.0; PASS_ROWS];
        let mut grads = vec![0.0; PASS_ROWS * d];
        if let Some(norms) = norms.as_deref_mut() {
            norms.clear();
            norms.reserve(n as usize);
        }
        let mut lo = 0u32;
        while lo < n {
            let hi = n.min(lo.saturating_add(PASS_ROWS as u32));
            let k = (hi - lo) as usize;
            for (j, slot) in idx[..k].iter_mut().enumerate() {
                *slot = lo + j as u32;
            }
            model.log_terms_grads(reference, &idx[..k], &mut values[..k], &mut grads[..k * d]);
            for (r, row) in grads[..k * d].chunks_exact(d).enumerate() {
                if let Some(j) = row.iter().position(|g| !g.is_finite()) {
                    return Err(Error::NonFinite {
                        what: format!(
                            "gradient of datum {} at the reference point x*",
                            lo as usize + r
                        ),
                        index: j,
                        value: row[j],
                    });
                }
                let norm = dot(row, row).sqrt();
                out.max_norm = out.max_norm.max(norm);
                if let Some(norms) = norms.as_deref_mut() {
                    norms.push(norm);
                }
                for ((g, mx), mn) in row.iter().zip(&mut out.coord_max).zip(&mut out.coord_min) {
                    *mx = mx.max(*g);
                    *mn = mn.min(*g);
                }
            }
            lo = hi;
        }
        Ok((out, EvalCounts::terms_and_gradients(n as usize)))
    }
}

/// N as u32, checked: at least 1 and at most 2³² − 1.
pub(crate) fn checked_num_terms<M: Terms + ?Sized>(model: &M) -> Result<u32> {
    let n = model.num_terms();
    if n == 0 {
        return Err(Error::invalid("number of terms N", 0, "at least 1"));
    }
    u32::try_from(n).map_err(|_| Error::invalid("number of terms N", n, "at most 2^32 - 1"))
}

/// A model constant (a bound), checked finite and ≥ 0. `coordinate` names j when it is one of
/// a per-coordinate family (shown 1-based).
pub(crate) fn checked_constant(
    name: &'static str, coordinate: Option<usize>, value: f64,
) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        return Ok(value);
    }
    let shown = match coordinate {
        Some(j) => format!("{value} (coordinate {})", j + 1),
        None => value.to_string(),
    };
    Err(Error::invalid(name, shown, "a finite number >= 0"))
}

/// κ from the prior, checked finite and ≥ 0.
pub(crate) fn prior_kappa<M: LogPriorCurvature + ?Sized>(model: &M) -> Result<f64> {
    checked_constant("prior curvature bound κ", None, model.prior_curvature_bound())
}

/// Whether `rate` exceeds the bound a + bτ beyond rounding (see [`RELATIVE_SLACK`]).
pub(crate) fn exceeds(rate: f64, a: f64, b: f64, tau: f64) -> bool {
    exceeds_with(rate, a, b, tau, 0.0)
}

/// Whether `rate` exceeds the bound a + bτ + q (q ≥ 0 a quadratic part) beyond rounding.
pub(crate) fn exceeds_with(rate: f64, a: f64, b: f64, tau: f64, q: f64) -> bool {
    rate > a + b * tau + q + RELATIVE_SLACK * (a.abs() + b.abs() * tau + q)
}

/// ‖x − y‖₂.
pub(crate) fn distance(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt()
}

/// y ← x + τv.
pub(crate) fn point_on_line(x: &[f64], v: &[f64], tau: f64, y: &mut [f64]) {
    for ((yi, xi), vi) in y.iter_mut().zip(x).zip(v) {
        *yi = xi + tau * vi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_checked_and_named() {
        assert_eq!(checked_constant("B_j", Some(0), 2.0).unwrap(), 2.0);
        let e = checked_constant("coordinate gradient bound B_j", Some(2), -1.0).unwrap_err();
        assert!(e.to_string().contains("-1 (coordinate 3)"), "{e}");
        assert!(checked_constant("κ", None, f64::NAN).is_err());
        assert!(LipschitzGradients::new(vec![0.0, f64::INFINITY]).is_err());
    }

    #[test]
    fn slack_is_relative_to_the_bound_terms() {
        assert!(!exceeds(1.0 + 1e-12, 1.0, 0.0, 0.0));
        assert!(exceeds(1.01, 1.0, 0.0, 0.0));
        // A bound that is nearly zero after cancellation: a + bτ = 1e-6 with |a| = 10³.
        assert!(!exceeds(1e-6 + 1e-8, -1e3, 1.0, 1e3 + 1e-6));
        assert!(exceeds(1e-3, -1e3, 1.0, 1e3 + 1e-6));
    }
}
