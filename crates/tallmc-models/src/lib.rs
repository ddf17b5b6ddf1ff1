//! # tallmc-models
//!
//! Models for tall data, their data, and the papers' synthetic data sets.
//!
//! Each model writes its log posterior as a prior plus a sum of per-datum terms,
//! `log π(θ) = log p(θ) + Σ_{i<N} ℓ_i(θ)`, and implements the [`tallmc_core`] traits
//! ([`Terms`](tallmc_core::Terms), [`TermGradients`](tallmc_core::TermGradients),
//! [`TermHessians`](tallmc_core::TermHessians), [`LogPrior`](tallmc_core::LogPrior),
//! [`LogPriorHessian`](tallmc_core::LogPriorHessian),
//! [`LogPriorCurvature`](tallmc_core::LogPriorCurvature),
//! [`ParameterNames`](tallmc_core::ParameterNames)) and the bound capabilities where a bound
//! exists ([`TermBounds`](tallmc_core::TermBounds),
//! [`TermGradientBounds`](tallmc_core::TermGradientBounds),
//! [`TermGradientLipschitz`](tallmc_core::TermGradientLipschitz),
//! [`TermCurvatureBound`](tallmc_core::TermCurvatureBound); derivations in
//! `docs/methods/gradient-bounds.md`):
//!
//! | model | θ | ℓ_i | prior (κ) | term bound | gradient bounds |
//! |---|---|---|---|---|---|
//! | [`LogisticRegression`] | coefficients (d) | y_i η_i − log(1 + e^{η_i}) | N(0, s² I) (1/s²) | ‖θ′ − θ‖ max_i ‖x̃_i‖ | B_j, B(v); C_j, C (¼); K = ¼X̃ᵀX̃ |
//! | [`GaussianRegression`] | coefficients (d) | log N(y_i; x̃_iᵀβ, σ²), σ known | N(0, s² I) (1/s²) | none | C_j, C (1/σ²); K = X̃ᵀX̃/σ², exact |
//! | [`Glm`]`<F>` | coefficients (d) | φ_{y_i}(x̃_iᵀθ), any [`GlmFamily`] | N(0, s² I) (1/s²) | if φ′ bounded | if φ′ / φ″ bounded |
//! | [`Gaussian`] | (μ, log σ) | log N(y_i; μ, σ²) | flat (0) | exact via y_min, y_max | none |
//! | [`GaussianMean`] | μ | log N(y_i; μ, σ²), σ known | N(μ₀, τ²) (1/τ²) | exact via y_min, y_max | C = 1/σ²; K = N/σ², exact |
//! | [`LinearRegression`] | (β, log σ) | log N(y_i; x̃_iᵀβ, σ²) | N(0, s² I) (1/s²) | none | none |
//! | [`ProbitRegression`] | coefficients (d) | log Φ((2y_i − 1)η_i) | N(0, s² I) (1/s²) | none | C_j, C (1); K = X̃ᵀX̃ |
//! | [`PoissonRegression`] | coefficients (d) | y_i η_i − e^{η_i} − log y_i! | N(0, s² I) (1/s²) | none | none |
//! | [`NegativeBinomialRegression`] | (β, log φ) | NB2 log pmf, mean e^{η_i}, dispersion φ | N(0, s² I) (1/s²) | none | none |
//! | [`RobustRegression`] | (β, log σ) | log t_ν((y_i − η_i)/σ) − log σ | N(0, s² I) (1/s²) | none | none |
//! | [`SoftmaxMlp`] | weights and biases (p·h + h + h·K + K) | log softmax(W₂ tanh(W₁x_i + b₁) + b₂)_{y_i} | N(0, 1/(2c) I) (2c) | none | none (no Hessians) |
//!
//! [`LogisticRegression`] and [`GaussianRegression`] are the generalized linear model [`Glm`]
//! over the [`LogisticFamily`] and the [`GaussianFamily`] (see [`glm`] and `docs/methods/glm.md`).
//!
//! All models are `Sync`, take `&self`, evaluate contiguous ranges without index gathers, and
//! allocate nothing when evaluating batches. Regression models read their covariates through a
//! [`DesignMatrix`] (optional intercept and standardization applied on the fly, so a
//! memory-mapped 10⁹-row file is never copied).
//!
//! Data come from CSV or from the memory-mapped binary format ([`data`], specified in
//! `docs/data-format.md`), or from the generators of [`synthetic`]. Parameters are named after
//! the design's columns (`intercept`, then the data's covariate names). [`diagnose_design`]
//! finds the columns whose coefficients the data cannot identify (constant, collinear,
//! separating), and [`separates`] checks a θ for perfect separation.
//!
//! ```
//! use tallmc_core::{FullData, Parallelism, Terms};
//! use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
//!
//! let sim = synthetic::higgs_like(2_000, 1)?;
//! let model = LogisticRegression::new(sim.data, DesignOptions::default(), 10.0)?;
//! assert_eq!(model.dim(), 29);
//! let mut full = FullData::for_model(&model, Parallelism::Sequential);
//! let at_truth = full.log_posterior(&model, &sim.theta_true);
//! let at_zero = full.log_posterior(&model, &vec![0.0; 29]);
//! assert!(at_truth > at_zero);
//! # Ok::<(), tallmc_models::Error>(())
//! ```

#![warn(missing_docs)]

pub mod data;
pub mod dispersion;
pub mod error;
mod gaussian;
mod gaussian_mean;
pub mod glm;
mod linear;
pub mod mlp;
pub mod mrf;
mod prior;
pub mod synthetic;

pub use data::{
    BinaryWriter, ColumnMoments, CsvRowReader, DEFAULT_COLLINEARITY_TOLERANCE, Dataset,
    DesignBounds, DesignFinding, DesignMatrix, DesignOptions, DesignRanges, GramPlan,
    INTERCEPT_NAME, LoadOptions, SharedF64, column_deviations, column_sums, default_names,
    design_gram, diagnose_design, findings_from, gram_from_partials, load, means_from_shard_sums,
    read_binary, read_csv, read_npy, separates, write_binary, write_csv,
};
pub use dispersion::{
    DispersionFamily, DispersionGlm, NegativeBinomialFamily, NegativeBinomialRegression,
    RobustRegression, StudentTFamily,
};
pub use error::{Error, Result, RowLocation};
pub use gaussian::Gaussian;
pub use gaussian_mean::GaussianMean;
pub use glm::{
    BoundedCurvature, BoundedScore, BoundedThirdDerivative, FastLogisticFamily,
    FastLogisticRegression, GaussianFamily, GaussianRegression, Glm, GlmFamily, LogisticFamily,
    LogisticRegression, PoissonFamily, PoissonRegression, ProbitFamily, ProbitRegression,
};
pub use linear::LinearRegression;
pub use mlp::{MlpShape, SoftmaxMlp};
pub use mrf::{ExactJoint, ThreeWayMrf};
