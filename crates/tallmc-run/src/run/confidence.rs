//! The confidence sampler (Bardenet et al. 2014, 2017) per model: with the model's term
//! bounds, or with 2nd-order Taylor proxies whose remainders a bound on third derivatives
//! controls; a model without the bound it needs is a clear error naming it.

use anyhow::Result;
use tallmc_bounds::ConfidenceTest;
use tallmc_core::{TaylorRemainderBound, TermBounds};
use tallmc_models::{
    FastLogisticRegression, Gaussian, GaussianMean, LinearRegression, NegativeBinomialRegression,
    PoissonRegression, ProbitRegression, RobustRegression,
};
use tallmc_samplers::{
    Driver, MinibatchMh, ProxyConfig, ProxyMinibatchMh, RandomWalkProposal,
    RandomWalkProposalConfig,
};

use super::context::{RunModel, unbounded_because};
use super::outputs::{Outputs, Sinks, run_kernel};

/// What the confidence sampler runs with besides the model and the sinks.
pub(crate) struct ConfidenceRun<'a> {
    pub(crate) driver: &'a Driver<'a>,
    pub(crate) inits: &'a [Vec<f64>],
    pub(crate) test: &'a ConfidenceTest,
    pub(crate) walk: &'a RandomWalkProposalConfig,
    /// With `--cv`: the center of the 2nd-order Taylor proxies (the posterior mode).
    pub(crate) proxies_at: Option<&'a [f64]>,
}

/// Running the confidence sampler needs the model's term bounds (plain) or a bound on third
/// derivatives (with Taylor proxies, `--cv`): implemented per model.
pub(crate) trait RunConfidence: RunModel {
    /// Runs minibatch MH with the confidence test, with Taylor proxies (Bardenet, Doucet &
    /// Holmes 2017) if `run` has a center, or explains why the model cannot.
    fn run_confidence(&self, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs>;
}

fn confidence_with_proxies<M: RunModel + TaylorRemainderBound>(
    model: &M, run: &ConfidenceRun<'_>, center: &[f64], sinks: Vec<Sinks>,
) -> Result<Outputs> {
    let proxy = ProxyConfig::new(center.to_vec());
    let walk = RandomWalkProposal::new(run.walk.clone())?;
    let kernel = ProxyMinibatchMh::new(run.test.clone(), walk, proxy)?;
    run_kernel(run.driver, model, run.inits, &kernel, sinks)
}

fn no_third_derivative_bound(model: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "tallmc sample confidence --cv needs a bound on the third derivatives of ℓ_i and --model \
         {model} has none ({}); use austerity or an exact sampler",
        unbounded_because(model)
    )
}

fn no_term_bound(model: &str, proxies: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "tallmc sample confidence needs a bound on |ℓ_i(θ′) − ℓ_i(θ)| and --model {model} has \
         none ({}); use {proxies}austerity or an exact sampler",
        unbounded_because(model)
    )
}

fn confidence_with_bounds<M: RunModel + TermBounds>(
    model: &M, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>,
) -> Result<Outputs> {
    let walk = RandomWalkProposal::new(run.walk.clone())?;
    let kernel = MinibatchMh::new(run.test.clone(), walk).with_term_bounds();
    run_kernel(run.driver, model, run.inits, &kernel, sinks)
}

/// Implements [`RunConfidence`] for models with term bounds; `proxies` says whether the model
/// also bounds third derivatives (`TaylorRemainderBound`).
macro_rules! confidence_via_bounds {
    ($($model:ty => $name:literal, $proxies:tt);*) => {$(
        impl RunConfidence for $model {
            fn run_confidence(&self, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs> {
                match run.proxies_at {
                    None => confidence_with_bounds(self, run, sinks),
                    Some(center) => {
                        confidence_via_bounds!(@proxies $proxies, $name, self, run, center, sinks)
                    }
                }
            }
        }
    )*};
    (@proxies yes, $name:literal, $($arg:expr),*) => { confidence_with_proxies($($arg),*) };
    (@proxies no, $name:literal, $($arg:expr),*) => {{
        let _ = ($($arg),*);
        Err(no_third_derivative_bound($name))
    }};
}

confidence_via_bounds!(
    FastLogisticRegression => "logistic", yes;
    Gaussian => "gaussian", no;
    GaussianMean => "gaussian-mean", yes
);

/// Probit regression bounds third derivatives (|φ‴| ≤ 0.2958) but not its terms' differences
/// (the score grows without bound): the confidence sampler runs it with Taylor proxies only.
impl RunConfidence for ProbitRegression {
    fn run_confidence(&self, run: &ConfidenceRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs> {
        match run.proxies_at {
            Some(center) => confidence_with_proxies(self, run, center, sinks),
            None => Err(no_term_bound("probit", "confidence --cv (Taylor proxies), ")),
        }
    }
}

/// Implements [`RunConfidence`] for models with no bound at all: a message naming the bound.
macro_rules! confidence_refused {
    ($($model:ty => $name:literal),*) => {$(
        impl RunConfidence for $model {
            fn run_confidence(
                &self, run: &ConfidenceRun<'_>, _sinks: Vec<Sinks>,
            ) -> Result<Outputs> {
                if run.proxies_at.is_some() {
                    return Err(no_third_derivative_bound($name));
                }
                Err(no_term_bound($name, ""))
            }
        }
    )*};
}

confidence_refused!(
    LinearRegression => "linear",
    PoissonRegression => "poisson",
    NegativeBinomialRegression => "negative-binomial",
    RobustRegression => "robust"
);
