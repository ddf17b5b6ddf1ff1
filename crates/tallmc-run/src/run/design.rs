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
    /// Warnings about the design, checked once the posterior `mode` is known; `prior_sd` is
    /// the coefficients' prior sd, which the messages quote.
    fn design_warnings(&self, mode: &[f64], prior_sd: f64) -> Result<Vec<String>>;
}

/// The findings of one pass over `design`; `binary` keeps the findings about a 0/1 response
/// (separation), which only a logistic regression has.
fn findings(design: &DesignMatrix, binary: bool) -> Result<Vec<DesignFinding>> {
    let found = diagnose_design(design, DEFAULT_COLLINEARITY_TOLERANCE)?;
    let about_response = |f: &DesignFinding| {
        matches!(f, DesignFinding::Separation { .. } | DesignFinding::SingleClass { .. })
    };
    Ok(found.into_iter().filter(|f| binary || !about_response(f)).collect())
}

/// The findings as sentences quoting the prior sd.
fn sentences(found: &[DesignFinding], prior_sd: f64) -> Vec<String> {
    found.iter().map(|f| capitalized(&f.message(prior_sd))).collect()
}

fn capitalized(sentence: &str) -> String {
    let mut chars = sentence.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

/// The warnings of a binary regression (logistic, probit): the design's, and separation —
/// one column that separates the classes, or a posterior mode that classifies every row.
fn binary_warnings(design: &DesignMatrix, mode: &[f64], prior_sd: f64) -> Result<Vec<String>> {
    let found = findings(design, true)?;
    let mut warnings = sentences(&found, prior_sd);
    // One column that separates is reported above; a separating hyperplane of several
    // columns shows at the mode, which then classifies every row correctly.
    let single_column = found.iter().any(|f| matches!(f, DesignFinding::Separation { .. }));
    if !single_column && separates(design, design.y(), mode)? {
        warnings.push(format!(
            "The data are perfectly separated: the posterior mode classifies every row \
             correctly (xᵢᵀθ̂ > 0 exactly when yᵢ = 1), so the likelihood keeps growing along \
             a separating direction and the posterior there is driven by the prior (prior sd \
             {prior_sd})."
        ));
    }
    Ok(warnings)
}

/// Implements [`DesignWarnings`] for binary regressions.
macro_rules! binary_design {
    ($($model:ty),*) => {$(
        impl DesignWarnings for $model {
            fn design_warnings(&self, mode: &[f64], prior_sd: f64) -> Result<Vec<String>> {
                binary_warnings(self.design(), mode, prior_sd)
            }
        }
    )*};
}

/// Implements [`DesignWarnings`] for regressions of other responses: constant and collinear
/// columns.
macro_rules! columns_design {
    ($($model:ty),*) => {$(
        impl DesignWarnings for $model {
            fn design_warnings(&self, _mode: &[f64], prior_sd: f64) -> Result<Vec<String>> {
                Ok(sentences(&findings(self.design(), false)?, prior_sd))
            }
        }
    )*};
}

binary_design!(FastLogisticRegression, ProbitRegression);
columns_design!(LinearRegression, PoissonRegression, NegativeBinomialRegression, RobustRegression);

impl DesignWarnings for Gaussian {
    fn design_warnings(&self, _mode: &[f64], _prior_sd: f64) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}

impl DesignWarnings for GaussianMean {
    fn design_warnings(&self, _mode: &[f64], _prior_sd: f64) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}
