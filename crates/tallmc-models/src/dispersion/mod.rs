//! Generalized linear models with a dispersion parameter: θ = (β, τ), one linear predictor
//! η_i = x̃_iᵀβ (+ an offset) per datum and one shared scalar τ (a log dispersion or log scale):
//!
//! ```text
//! ℓ_i(θ) = f_{y_i}(η_i, τ)
//! ∇_β ℓ_i = f_η x̃_i,   ∂_τ ℓ_i = f_τ
//! ∇²ℓ_i = [ f_ηη x̃_i x̃_iᵀ   f_ητ x̃_i ]
//!         [ f_ητ x̃_iᵀ       f_ττ     ]          (H_i v costs O(p))
//! log p(θ) = −‖θ‖²/(2s²) − ((p+1)/2) log(2πs²)
//! ```
//!
//! The family ([`DispersionFamily`]) supplies f and its derivatives; [`DispersionGlm`]
//! implements the evaluation traits of `tallmc_core` once for every family. No term or gradient
//! bound exists (τ is unbounded, and so are the scores in it), so the bound-based samplers
//! refuse these models.
//!
//! | family | f_y(η, τ) | parameter τ | model |
//! |---|---|---|---|
//! | [`NegativeBinomialFamily`] | NB2: log Γ(y+φ) − log Γ(φ) − log y! + φ log(φ/(φ+μ)) + y log(μ/(φ+μ)), μ = e^η, φ = e^τ | `log_phi` | [`NegativeBinomialRegression`] |
//! | [`StudentTFamily`] | log t_ν((y − η)/σ) − τ, σ = e^τ, ν fixed | `log_sigma` | [`RobustRegression`] |
//!
//! Derivations in `docs/methods/glm-negative-binomial.md` and `docs/methods/glm-robust.md`.

mod negative_binomial;
mod student_t;
mod terms;

use std::fmt;
use std::sync::Arc;

use crate::data::{Dataset, DesignMatrix, DesignOptions};
use crate::error::{Error, Result};
use crate::glm::check_responses;
use crate::prior::NormalPrior;
pub use tallmc_core::PredictorDerivatives;

pub use negative_binomial::{NegativeBinomialFamily, NegativeBinomialRegression};
pub use student_t::{RobustRegression, StudentTFamily};

/// Data per block of the batch loops ([`DispersionFamily::value_and_scores_block`]): the
/// predictors of a block are computed first, then the family's functions over the block.
pub const BLOCK: usize = 8;

/// The per-datum function f_y(η, τ) of a [`DispersionGlm`].
///
/// What depends on τ alone (e^τ, a log-gamma of it) is computed once per batch by
/// [`DispersionFamily::at`] and handed to the per-datum functions, which must be finite for
/// every finite η, τ in the range where the model is usable and every accepted y.
pub trait DispersionFamily: Clone + fmt::Debug + Send + Sync {
    /// The τ-dependent quantities shared by a batch's terms.
    type At: Copy + fmt::Debug;
    /// The shared quantities at τ.
    fn at(&self, tau: f64) -> Self::At;
    /// f_y(η, τ).
    fn value(&self, at: &Self::At, y: f64, eta: f64) -> f64;
    /// (f, ∂f/∂η, ∂f/∂τ), the value equal bit for bit to [`DispersionFamily::value`].
    fn value_and_scores(&self, at: &Self::At, y: f64, eta: f64) -> (f64, f64, f64);
    /// Every derivative up to order two, the value and scores equal bit for bit to
    /// [`DispersionFamily::value_and_scores`].
    fn derivatives(&self, at: &Self::At, y: f64, eta: f64) -> PredictorDerivatives;
    /// (∂²f/∂η², ∂²f/∂η∂τ, ∂²f/∂τ²) alone, equal bit for bit to those of
    /// [`DispersionFamily::derivatives`]: what a Hessian-vector product needs. By default from
    /// it; families override it when the value costs more than the curvatures (NB2: a log of
    /// a product of up to 32 factors, log y!).
    #[inline(always)]
    fn curvatures(&self, at: &Self::At, y: f64, eta: f64) -> (f64, f64, f64) {
        let h = self.derivatives(at, y, eta);
        (h.eta_eta, h.eta_tau, h.tau_tau)
    }
    /// [`DispersionFamily::value_and_scores`] of a block of at most [`BLOCK`] data, into
    /// `out[k]` = (f, f_η, f_τ) of (`y[k]`, `eta[k]`), the same bits. The batch loops call it
    /// so that a family can run each of its special functions over the block in one loop
    /// (which LLVM vectorizes); by default datum by datum.
    #[inline(always)]
    fn value_and_scores_block(
        &self, at: &Self::At, y: &[f64], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        for ((o, &y), &e) in out.iter_mut().zip(y).zip(eta) {
            *o = self.value_and_scores(at, y, e);
        }
    }
    /// [`DispersionFamily::value_and_scores`] of a whole batch (`y`, `eta` and `out` of one
    /// length), the same bits: what the control-variate engine's calls at θ use. By default
    /// block by block ([`DispersionFamily::value_and_scores_block`]); families override it to
    /// share work between the batch's data (NB2: the log-gamma and digamma differences of the
    /// batch's small counts, computed once).
    fn value_and_scores_batch(
        &self, at: &Self::At, y: &[f64], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        let blocks = y.chunks(BLOCK).zip(eta.chunks(BLOCK)).zip(out.chunks_mut(BLOCK));
        for ((y, eta), out) in blocks {
            self.value_and_scores_block(at, y, eta, out);
        }
    }
    /// [`DispersionFamily::curvatures`] of a block of at most [`BLOCK`] data, the same bits;
    /// by default datum by datum.
    #[inline(always)]
    fn curvatures_block(&self, at: &Self::At, y: &[f64], eta: &[f64], out: &mut [(f64, f64, f64)]) {
        for ((o, &y), &e) in out.iter_mut().zip(y).zip(eta) {
            *o = self.curvatures(at, y, e);
        }
    }
    /// Whether `y` is a response this family accepts.
    fn accepts_response(&self, y: f64) -> bool;
    /// What [`DispersionFamily::accepts_response`] accepts, for messages.
    fn response_domain(&self) -> &'static str;
    /// The name of τ among the parameters (`log_phi`, `log_sigma`).
    fn parameter_name(&self) -> &'static str;
    /// What τ is, for messages (`the negative binomial's log dispersion log φ`).
    fn parameter_meaning(&self) -> &'static str;
}

/// A generalized linear model with a dispersion parameter (see the [module docs](self)): the
/// design's coefficients β, then τ, all with independent N(0, s²) priors.
///
/// **Cost**: one term, gradient or Hessian-vector product is O(p) (one dot product, one row
/// update); `sum_hessian` is O(p²) per datum. Batches allocate nothing (`sum_hessian` allocates
/// one row of p). Parameter names: the design's column names, then the family's
/// ([`DispersionFamily::parameter_name`]).
#[derive(Debug, Clone)]
pub struct DispersionGlm<F> {
    family: F,
    design: DesignMatrix,
    prior: NormalPrior,
}

impl<F: DispersionFamily> DispersionGlm<F> {
    /// The model of `data.y()` on the design built from `data` with `options`, prior sd
    /// `prior_sd` on every coordinate of θ.
    pub fn new(
        family: F, data: impl Into<Arc<Dataset>>, options: DesignOptions, prior_sd: f64,
    ) -> Result<Self> {
        Self::with_family(family, DesignMatrix::new(data, options)?, prior_sd)
    }

    /// The model on an existing design (which may carry an offset).
    ///
    /// Errors: `prior_sd` not finite and > 0; more than u32::MAX rows; a design with no
    /// columns; a covariate with the name of τ ([`Error::ReservedName`]); a response the family
    /// does not accept (naming its row and, for CSV data, its line).
    pub fn with_family(family: F, design: DesignMatrix, prior_sd: f64) -> Result<Self> {
        let prior = NormalPrior::new(prior_sd)?;
        design.check_regression_shape()?;
        let name = family.parameter_name();
        if design.data().covariate_names().iter().any(|n| n == name) {
            return Err(Error::ReservedName {
                source_name: design.data().source_name(),
                name: name.to_string(),
                reserved_for: family.parameter_meaning(),
                remedy: "rename the covariate",
            });
        }
        let domain = family.response_domain();
        check_responses(design.data(), |v| family.accepts_response(v), domain)?;
        Ok(Self { family, design, prior })
    }

    /// The family.
    pub fn family(&self) -> &F {
        &self.family
    }

    /// The design matrix.
    pub fn design(&self) -> &DesignMatrix {
        &self.design
    }

    /// The prior standard deviation s.
    pub fn prior_sd(&self) -> f64 {
        self.prior.sd()
    }

    /// θ split into (β, the family's shared quantities at τ).
    fn split<'t>(&self, theta: &'t [f64]) -> (&'t [f64], F::At) {
        let p = self.design.dim();
        (&theta[..p], self.family.at(theta[p]))
    }
}
