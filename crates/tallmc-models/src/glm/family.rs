//! The scalar family of a generalized linear model: the per-datum function φ_y(η) of the linear
//! predictor, its derivatives, the responses it accepts, and the optional bounds that give the
//! model its bound capabilities.

use std::fmt;

/// The per-datum function of a generalized linear model [`Glm`](super::Glm):
///
/// ```text
/// ℓ_i(θ) = φ_{y_i}(η_i),   η_i = x̃_iᵀθ,
/// ∇ℓ_i(θ) = φ′_{y_i}(η_i) x̃_i,   ∇²ℓ_i(θ) = φ″_{y_i}(η_i) x̃_i x̃_iᵀ.
/// ```
///
/// A family supplies φ_y(η) and its first two derivatives in η, evaluated stably for every
/// finite η and every accepted y; which responses it accepts; and, through the sub-traits
/// [`BoundedScore`], [`BoundedCurvature`] and [`BoundedThirdDerivative`], the uniform bounds
/// that make [`Glm`](super::Glm) implement the bound capabilities of `tallmc_core`.
///
/// The model calls the family once per datum in its hot loops, so implementations should be
/// small `#[inline]` functions that allocate nothing. A family holds its fixed parameters (e.g.
/// a known noise sd) and must be cheap to clone.
///
/// ```
/// use tallmc_models::glm::GlmFamily;
///
/// /// Poisson regression with the log link: φ_y(η) = yη − e^η (dropping −log y!).
/// #[derive(Debug, Clone, Copy)]
/// struct PoissonLog;
///
/// impl GlmFamily for PoissonLog {
///     fn value(&self, y: f64, eta: f64) -> f64 {
///         y * eta - eta.exp()
///     }
///     fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64) {
///         let m = eta.exp();
///         (y * eta - m, y - m, -m)
///     }
///     fn accepts_response(&self, y: f64) -> bool {
///         y >= 0.0 && y.fract() == 0.0
///     }
///     fn response_domain(&self) -> &'static str {
///         "a non-negative integer"
///     }
/// }
/// assert_eq!(PoissonLog.derivatives(2.0, 0.0), (-1.0, 1.0, -1.0));
/// ```
pub trait GlmFamily: Clone + fmt::Debug + Send + Sync {
    /// φ_y(η), finite for every finite η and accepted y.
    fn value(&self, y: f64, eta: f64) -> f64;

    /// (φ_y(η), φ′_y(η), φ″_y(η)). The value must equal [`GlmFamily::value`] bit for bit (the
    /// model mixes the two in one batch).
    fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64);

    /// (φ_y(η), φ′_y(η)); by default from [`GlmFamily::derivatives`].
    #[inline(always)]
    fn value_and_score(&self, y: f64, eta: f64) -> (f64, f64) {
        let (v, d1, _) = self.derivatives(y, eta);
        (v, d1)
    }

    /// φ′_y(η) alone, equal bit for bit to the second entry of [`GlmFamily::derivatives`]; by
    /// default from it. Families override it when φ costs more than φ′ (logistic: a `log1p`):
    /// gradient-only paths (the control-variate gradient of the SG kernels) call it.
    #[inline(always)]
    fn score(&self, y: f64, eta: f64) -> f64 {
        self.derivatives(y, eta).1
    }

    /// (φ′_y(η), φ″_y(η)), equal bit for bit to the last two entries of
    /// [`GlmFamily::derivatives`]; by default from it.
    #[inline(always)]
    fn score_and_curvature(&self, y: f64, eta: f64) -> (f64, f64) {
        let (_, d1, d2) = self.derivatives(y, eta);
        (d1, d2)
    }

    /// φ″_y(η); by default from [`GlmFamily::derivatives`].
    #[inline(always)]
    fn curvature(&self, y: f64, eta: f64) -> f64 {
        self.derivatives(y, eta).2
    }

    /// Whether `y` is a response this family accepts (e.g. exactly 0 or 1). Called once per
    /// row at construction; the model's error names the first row that fails.
    fn accepts_response(&self, y: f64) -> bool;

    /// What [`GlmFamily::accepts_response`] accepts, for error messages (e.g. `"0 or 1"`).
    fn response_domain(&self) -> &'static str;

    /// `Some(c)` when φ″_y(η) = c for every y and η (quadratic families, e.g. Gaussian with
    /// known σ: c = −1/σ²). Hessian products then skip computing η. Default `None`.
    #[inline(always)]
    fn constant_curvature(&self) -> Option<f64> {
        None
    }

    /// `Some(q)` when φ_y(η) = q.log_norm − ½ q.precision (y − η)² (see [`QuadraticForm`]): the
    /// model then sums terms as n·log_norm − ½·precision·Σ(y − η)² in its summing methods
    /// (one multiply per batch instead of one per term). [`GlmFamily::value`] and the score
    /// must equal [`QuadraticForm::value`] and [`QuadraticForm::score`]. Default `None`.
    #[inline(always)]
    fn quadratic_form(&self) -> Option<QuadraticForm> {
        None
    }
}

/// A family whose score is bounded: c₁ ≥ sup_{y, η} |φ′_y(η)| (logistic: 1).
///
/// Then ℓ_i is c₁‖x̃_i‖₂-Lipschitz in θ, |∂_jℓ_i| ≤ c₁|x̃_ij| and |⟨∇ℓ_i, v⟩| ≤ c₁|x̃_iᵀv|, which
/// gives [`Glm`](super::Glm) the capabilities `TermBounds` and `TermGradientBounds`.
pub trait BoundedScore: GlmFamily {
    /// c₁ ≥ sup_{y, η} |φ′_y(η)|, finite and ≥ 0.
    fn score_bound(&self) -> f64;
}

/// A family whose curvature is bounded: c₂ ≥ sup_{y, η} |φ″_y(η)| (logistic: ¼; Gaussian with
/// known σ: 1/σ²).
///
/// Then ∇ℓ_i is c₂‖x̃_i‖₂²-Lipschitz and |vᵀ∇²ℓ v| ≤ c₂ vᵀX̃ᵀX̃v, which gives
/// [`Glm`](super::Glm) the capabilities `TermGradientLipschitz` and `TermCurvatureBound`. The
/// curvature bound is exact when [`GlmFamily::constant_curvature`] is `Some(−c₂)`.
pub trait BoundedCurvature: GlmFamily {
    /// c₂ ≥ sup_{y, η} |φ″_y(η)|, finite and ≥ 0.
    fn curvature_bound(&self) -> f64;
}

/// A family whose third derivative is bounded: c₃ ≥ sup_{y, η} |φ‴_y(η)| (logistic:
/// 1/(6√3); quadratic families: 0).
///
/// Then |∂³ℓ_i/∂θ_j∂θ_k∂θ_l| ≤ c₃ |x̃_ij x̃_ik x̃_il| ≤ c₃ max_{i,j}|x̃_ij|³, which gives
/// [`Glm`](super::Glm) the capability `TaylorRemainderBound`.
pub trait BoundedThirdDerivative: GlmFamily {
    /// c₃ ≥ sup_{y, η} |φ‴_y(η)|, finite and ≥ 0.
    fn third_derivative_bound(&self) -> f64;
}

/// A quadratic per-datum function φ_y(η) = log_norm − ½ · precision · (y − η)² (the Gaussian
/// log density with known precision 1/σ²), evaluated in a fixed operation order so that every
/// model summing such terms gives the same bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuadraticForm {
    /// The constant log_norm (Gaussian: −½ log(2πσ²)).
    pub log_norm: f64,
    /// The precision w = 1/σ² > 0.
    pub precision: f64,
}

impl QuadraticForm {
    /// φ_y(η) = log_norm − ½ w (y − η)², computed as `log_norm − 0.5·r·r·w` with r = y − η.
    #[inline(always)]
    pub fn value(&self, y: f64, eta: f64) -> f64 {
        let r = y - eta;
        self.log_norm - 0.5 * r * r * self.precision
    }

    /// φ′_y(η) = (y − η) w.
    #[inline(always)]
    pub fn score(&self, y: f64, eta: f64) -> f64 {
        (y - eta) * self.precision
    }

    /// Σ_k φ_{y_k}(η_k) for `count` terms with Σ_k (y_k − η_k)² = `sum_sq`:
    /// `log_norm·count − 0.5·sum_sq·w`.
    #[inline(always)]
    pub fn total(&self, count: f64, sum_sq: f64) -> f64 {
        self.log_norm * count - 0.5 * sum_sq * self.precision
    }
}
