//! Generalized linear models: one generic model [`Glm`] over a scalar family ([`GlmFamily`]).
//!
//! With x̃_i the i-th row of a [`DesignMatrix`] (covariates, optional intercept, optional
//! standardization) and an independent N(0, s²) prior on every coefficient,
//!
//! ```text
//! ℓ_i(θ)   = φ_{y_i}(η_i),   η_i = x̃_iᵀθ
//! ∇ℓ_i(θ)  = φ′_{y_i}(η_i) x̃_i
//! ∇²ℓ_i(θ) = φ″_{y_i}(η_i) x̃_i x̃_iᵀ                (rank one: H_i v costs O(d))
//! log p(θ) = −‖θ‖²/(2s²) − (d/2) log(2πs²)
//! ```
//!
//! The family supplies φ and its derivatives; the model supplies every trait of
//! `tallmc_core` once, for all families (`Terms`, `TermGradients`, `TermHessians`,
//! `LinearPredictor`, `LogPrior`, `LogPriorHessian`, `LogPriorCurvature`, `ParameterNames`),
//! and the bound capabilities where the family has the bound they need ([`BoundedScore`],
//! [`BoundedCurvature`], [`BoundedThirdDerivative`]; see `bounds.rs` and
//! `docs/methods/glm.md`, `docs/methods/gradient-bounds.md`).
//!
//! | family | φ_y(η) | responses | c₁ ≥ \|φ′\| | c₂ ≥ \|φ″\| | c₃ ≥ \|φ‴\| | model |
//! |---|---|---|---|---|---|---|
//! | [`LogisticFamily`] | yη − log(1 + e^η) | 0 or 1 | 1 | ¼ | 1/(6√3) | [`LogisticRegression`] |
//! | [`GaussianFamily`] | −½ log(2πσ²) − (y − η)²/(2σ²) | finite | — | 1/σ² (φ″ ≡ −1/σ²) | 0 | [`GaussianRegression`] |
//! | [`ProbitFamily`] | log Φ((2y − 1)η) | 0 or 1 | — | 1 | 0.2958 | [`ProbitRegression`] |
//! | [`PoissonFamily`] | yη − e^η − log y! | counts | — | — | — | [`PoissonRegression`] |
//!
//! A design with an offset ([`DesignMatrix::with_offset`]) evaluates every family at
//! η_i = x̃_iᵀθ + o_i; the bounds, which depend on x̃_i only, are unchanged.
//!
//! A new family is a type implementing [`GlmFamily`] (a few dozen lines; see the Poisson
//! example in `tests/models/glm_family.rs`), used through [`Glm::with_family`].

mod batch;
mod bounds;
mod family;
mod fast_math;
mod gaussian;
mod hessian;
mod logistic;
mod poisson;
mod probit;
pub(crate) mod special;
mod terms;
pub(crate) mod wide;

use rayon::prelude::*;

use crate::data::{Dataset, DesignBounds, DesignMatrix, PASS_CHUNK_ROWS, Rows, with_rows};
use crate::error::{Error, Result};
use crate::prior::NormalPrior;

pub use family::{
    BoundedCurvature, BoundedScore, BoundedThirdDerivative, GlmFamily, QuadraticForm,
};
pub use gaussian::{GaussianFamily, GaussianRegression};
pub use logistic::{
    FastLogisticFamily, FastLogisticRegression, LogisticFamily, LogisticRegression,
};
pub(crate) use poisson::is_count;

pub use poisson::{PoissonFamily, PoissonRegression};
pub use probit::{ProbitFamily, ProbitRegression};

/// A generalized linear model ℓ_i(θ) = φ_{y_i}(x̃_iᵀθ) with family `F` and an independent
/// N(0, s²) prior on every coefficient (see the [module docs](self)).
///
/// The design's extreme values ([`DesignBounds`]: max_i ‖x̃_i‖₂, max_{i,j} |x̃_ij| and the
/// per-column maxima the bounds need) are computed once, in the construction pass.
///
/// **Cost**: one term, gradient or Hessian-vector product is O(d) (one dot product, plus one
/// row update for gradients); `sum_hessian` is O(d²) per datum. Batches allocate nothing.
///
/// ```
/// use tallmc_core::{TermGradients, Terms};
/// use tallmc_models::glm::{Glm, LogisticFamily};
/// use tallmc_models::{Dataset, DesignMatrix, DesignOptions};
///
/// let x = vec![0.5, -1.0, 2.0, 0.1, -0.3, 0.7];
/// let data = Dataset::with_default_names(x, vec![1.0, 0.0, 1.0], 2)?;
/// let design = DesignMatrix::new(data, DesignOptions::default().with_intercept(true))?;
/// let model = Glm::with_family(LogisticFamily, design, 10.0)?;
/// let mut grad = [0.0; 3];
/// let ll = model.sum_log_terms_grad_range(&[0.1, 0.2, -0.3], 0, 3, &mut grad);
/// assert!(ll < 0.0);
/// # Ok::<(), tallmc_models::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Glm<F> {
    family: F,
    design: DesignMatrix,
    prior: NormalPrior,
    bounds: DesignBounds,
}

impl<F: GlmFamily> Glm<F> {
    /// The model of `design.y()` on `design` with family `family` and prior sd `prior_sd`.
    ///
    /// Errors: `prior_sd` not finite and > 0; more than u32::MAX rows; a design with no
    /// columns; a response the family does not accept (naming the file, the row and, for CSV
    /// data, the line, and the value: [`Error::NonFinite`] for NaN or ±∞,
    /// [`Error::InvalidResponse`] otherwise); a NaN or infinite covariate (naming its row and
    /// column — memory-mapped data may skip the loader's check); a row whose squared norm
    /// overflows ([`Error::RowNormOverflow`], naming the first such row, its file and line, and
    /// its largest entry's column). Cost: one pass over y and one over X̃ (the
    /// [`DesignBounds`] pass).
    pub fn with_family(family: F, design: DesignMatrix, prior_sd: f64) -> Result<Self> {
        let prior = NormalPrior::new(prior_sd)?;
        design.check_regression_shape()?;
        check_responses(design.data(), |v| family.accepts_response(v), family.response_domain())?;
        let bounds = design.bound_statistics();
        if !bounds.finite {
            design.data().check_finite()?;
            return Err(row_norm_overflow(&design));
        }
        Ok(Self { family, design, prior, bounds })
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

    /// The design's extreme values (precomputed at construction).
    pub fn design_bounds(&self) -> &DesignBounds {
        &self.bounds
    }

    /// max_i ‖x̃_i‖₂ (precomputed).
    pub fn max_row_norm(&self) -> f64 {
        self.bounds.max_row_norm
    }

    /// max_{i,j} |x̃_ij| = max_i ‖x̃_i‖_∞ (precomputed).
    pub fn max_abs_entry(&self) -> f64 {
        self.bounds.max_abs_entry
    }

    /// ℓ_i(θ) for one datum.
    pub fn log_term(&self, theta: &[f64], i: usize) -> f64 {
        self.family.value(self.design.y()[i], self.design.predictor(i, theta))
    }
}

impl<F: BoundedScore> Glm<F> {
    /// c₁‖x̃_i‖₂: the Lipschitz constant of ℓ_i in θ
    /// (|ℓ_i(θ′) − ℓ_i(θ)| ≤ c₁‖x̃_i‖₂ ‖θ′ − θ‖₂, c₁ = [`BoundedScore::score_bound`]).
    pub fn lipschitz_constant(&self, i: usize) -> f64 {
        self.family.score_bound() * self.design.row_norm(i)
    }
}

/// Errors on the first response `accepts` refuses (one parallel pass over y); `expected` says
/// what it accepts. Every regression model checks its responses with it.
pub(crate) fn check_responses(
    data: &Dataset, accepts: impl Fn(f64) -> bool + Sync, expected: &'static str,
) -> Result<()> {
    let y = data.y();
    let bad = y.par_chunks(PASS_CHUNK_ROWS).enumerate().find_map_first(|(c, chunk)| {
        chunk.iter().position(|&v| !accepts(v)).map(|k| (c * PASS_CHUNK_ROWS + k, chunk[k]))
    });
    match bad {
        Some((row, value)) if !value.is_finite() => Err(Error::NonFinite {
            source_name: data.response_source_name(),
            row,
            column: "y".to_string(),
            value,
        }),
        Some((row, value)) => {
            Err(Error::InvalidResponse { at: data.response_location(row), value, expected })
        }
        None => Ok(()),
    }
}

/// The error for a design whose [`DesignBounds`] pass found a row with ‖x̃_i‖₂² = ∞ (all
/// entries finite): names the first such row (its file and line), and its largest entry. One
/// parallel pass over the rows, stopping at the first.
fn row_norm_overflow(design: &DesignMatrix) -> Error {
    fn first_row<R: Rows>(r: &R) -> Option<usize> {
        let n = r.len();
        (0..n.div_ceil(PASS_CHUNK_ROWS)).into_par_iter().find_map_first(|c| {
            let lo = c * PASS_CHUNK_ROWS;
            (lo..(lo + PASS_CHUNK_ROWS).min(n)).find(|&i| !r.row_norm_sq(i).is_finite())
        })
    }
    let row = with_rows!(design, r => first_row(&r)).unwrap_or(0);
    let (mut column, mut max_abs) = (0, 0.0_f64);
    for j in 0..design.dim() {
        let a = design.get(row, j).abs();
        if a > max_abs {
            (column, max_abs) = (j, a);
        }
    }
    Error::RowNormOverflow {
        at: design.data().location(row),
        norm_sq: with_rows!(design, r => r.row_norm_sq(row)),
        column: design.column_names().swap_remove(column),
        max_abs,
    }
}
