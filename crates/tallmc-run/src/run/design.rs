//! Warnings about the design before sampling: a constant or collinear column, a column that
//! separates a logistic regression's classes, or a posterior mode that separates them all.
//! Along such directions the likelihood is flat (or keeps growing), so the posterior there is
//! the prior's: the run goes on, and the warning says so.

use anyhow::Result;
use tallmc_models::{
    DEFAULT_COLLINEARITY_TOLERANCE, DesignFinding, DesignMatrix, FastLogisticRegression, Gaussian,
    GaussianMean, LinearRegression, NegativeBinomialRegression, PoissonRegression,
    ProbitRegression, RobustRegression, diagnose_design, separates,
};

use super::context::RunModel;

/// The design's warnings of a model, one sentence each (none for models without a design).
pub(crate) trait DesignWarnings: RunModel {
    /// The model's design, if it has one.
    fn design_matrix(&self) -> Option<&DesignMatrix> {
        None
    }

    /// Whether the response is 0 or 1, so that separation is checked (logistic, probit).
    fn binary_response(&self) -> bool {
        false
    }

    /// Warnings about the design, checked once the posterior `mode` is known; `prior_sd` is
    /// the coefficients' prior sd, which the messages quote.
    fn design_warnings(&self, mode: &[f64], prior_sd: f64) -> Result<Vec<String>> {
        match self.design_matrix() {
            Some(design) => warnings(&ChecksHere(design), self.binary_response(), mode, prior_sd),
            None => Ok(Vec::new()),
        }
    }
}

/// The passes of the design checks over all rows: here ([`ChecksHere`]), or over shards
/// elsewhere.
pub(crate) trait DesignChecks {
    /// The constant, collinear and separating columns ([`diagnose_design`]).
    fn findings(&self) -> Result<Vec<DesignFinding>>;
    /// Whether `theta` classifies every row ([`separates`]).
    fn separates(&self, theta: &[f64]) -> Result<bool>;
}

/// The checks over a design here.
struct ChecksHere<'a>(&'a DesignMatrix);

impl DesignChecks for ChecksHere<'_> {
    fn findings(&self) -> Result<Vec<DesignFinding>> {
        Ok(diagnose_design(self.0, DEFAULT_COLLINEARITY_TOLERANCE)?)
    }
    fn separates(&self, theta: &[f64]) -> Result<bool> {
        Ok(separates(self.0, self.0.y(), theta)?)
    }
}

/// The warnings of the checks: the design's findings (those about a 0/1 response only when
/// `binary`) and, for a binary response without a single separating column, whether the
/// posterior mode classifies every row — a separating hyperplane of several columns.
pub(crate) fn warnings(
    checks: &dyn DesignChecks, binary: bool, mode: &[f64], prior_sd: f64,
) -> Result<Vec<String>> {
    let about_response = |f: &DesignFinding| {
        matches!(f, DesignFinding::Separation { .. } | DesignFinding::SingleClass { .. })
    };
    let found: Vec<DesignFinding> =
        checks.findings()?.into_iter().filter(|f| binary || !about_response(f)).collect();
    let mut warnings: Vec<String> =
        found.iter().map(|f| capitalized(&f.message(prior_sd))).collect();
    if !binary {
        return Ok(warnings);
    }
    let single_column = found.iter().any(|f| matches!(f, DesignFinding::Separation { .. }));
    if !single_column && checks.separates(mode)? {
        warnings.push(format!(
            "The data are perfectly separated: the posterior mode classifies every row \
             correctly (xᵢᵀθ̂ > 0 exactly when yᵢ = 1), so the likelihood keeps growing along \
             a separating direction and the posterior there is driven by the prior (prior sd \
             {prior_sd})."
        ));
    }
    Ok(warnings)
}

fn capitalized(sentence: &str) -> String {
    let mut chars = sentence.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

/// Implements [`DesignWarnings`] for regressions, `binary` for a 0/1 response.
macro_rules! design_warnings {
    ($binary:expr; $($model:ty),*) => {$(
        impl DesignWarnings for $model {
            fn design_matrix(&self) -> Option<&DesignMatrix> {
                Some(self.design())
            }
            fn binary_response(&self) -> bool {
                $binary
            }
        }
    )*};
}

design_warnings!(true; FastLogisticRegression, ProbitRegression);
design_warnings!(false; LinearRegression, PoissonRegression, NegativeBinomialRegression, RobustRegression);

/// No design.
impl DesignWarnings for Gaussian {}

/// No design.
impl DesignWarnings for GaussianMean {}
