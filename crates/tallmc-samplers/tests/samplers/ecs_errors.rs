//! Recoverable and fatal estimator errors in HMC-ECS.
//!
//! An estimator's [`Error::NonFiniteEstimate`] is recoverable ([`Error::is_recoverable`]): the
//! kernel rejects the move (a divergent θ-step or a rejected u-step) and the chain goes on. Any
//! other error is fatal: the chain stops with exactly that error, matchable by its variant,
//! never turned into a string on its way up. Both θ-steps (fixed-length HMC and NUTS).

use tallmc_core::Error;
use tallmc_core::subsample::BlockSubsample;
use tallmc_estimators::{
    ControlVariate, CvOrder, DifferenceEstimate, DifferenceEstimator, RankOne,
};
use tallmc_models::GaussianMean;
use tallmc_models::synthetic::normal_sample;
use tallmc_samplers::{
    EcsDynamics, EcsEstimator, HmcEcsWithEstimator, RunConfig, SamplerError, ThetaIntegrator,
    sample_in_memory,
};
use tallmc_testkit::seed;

/// The perturbed difference estimator, failing with `error` on every call from `fail_from` on
/// (calls counted per chain: each chain clones the estimator).
#[derive(Debug, Clone)]
struct Failing {
    inner: DifferenceEstimator<RankOne>,
    calls: usize,
    fail_from: usize,
    error: Error,
}

impl<M: ?Sized> EcsEstimator<M> for Failing
where
    DifferenceEstimator<RankOne>:
        EcsEstimator<M, Subsample = BlockSubsample, Estimate = DifferenceEstimate>,
{
    type Subsample = BlockSubsample;
    type Estimate = DifferenceEstimate;

    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &BlockSubsample, grad: &mut [f64],
    ) -> tallmc_core::Result<DifferenceEstimate> {
        self.calls += 1;
        if self.calls >= self.fail_from {
            return Err(self.error.clone());
        }
        self.inner.estimate_log_target(model, theta, u, grad)
    }

    fn center(&self) -> &[f64] {
        self.inner.center()
    }

    fn recenter(
        &mut self, model: &M, center: &[f64],
    ) -> tallmc_core::Result<Option<tallmc_core::EvalCounts>> {
        self.inner.recenter(model, center)
    }

    fn hessian_sum(&self) -> Option<&[f64]> {
        self.inner.hessian_sum()
    }
}

const N: usize = 2_000;
const M: usize = 50;

fn model() -> GaussianMean {
    let data = normal_sample(N, 1.3, 2.0, seed(5)).unwrap();
    GaussianMean::new(data, 2.0, 0.0, 10.0).unwrap()
}

const INTEGRATORS: [ThetaIntegrator; 2] =
    [ThetaIntegrator::Hmc, ThetaIntegrator::Nuts { max_depth: 10 }];

/// Two chains of 20 + 20 iterations with an estimator failing from call `fail_from` on.
fn run(fail_from: usize, error: Error, integrator: ThetaIntegrator) -> Result<usize, SamplerError> {
    let model = model();
    let center = [1.3];
    let (cv, _) = ControlVariate::new(&model, &center, CvOrder::Two).unwrap();
    let inner = DifferenceEstimator::new(&model, cv, RankOne::new(M), M).unwrap();
    let estimator = Failing { inner, calls: 0, fail_from, error };
    let mut subsample = BlockSubsample::new(N, M, 5).unwrap();
    subsample.draw_all(&mut tallmc_core::rng::chain_rng(seed(2), 0));
    let dynamics = EcsDynamics::default().with_integrator(integrator);
    let kernel = HmcEcsWithEstimator::new(dynamics, estimator, subsample).unwrap();
    let config = RunConfig {
        num_warmup: 20,
        num_draws: 20,
        num_chains: 2,
        seed: seed(1),
        ..RunConfig::default()
    };
    let out = sample_in_memory(&model, config, &[vec![1.0], vec![1.5]], &kernel)?;
    Ok(out.iter().map(|c| c.report.warmup_divergences + c.report.divergences).sum())
}

#[test]
fn a_non_finite_estimate_is_a_divergence_and_the_chain_goes_on() {
    let nan = Error::NonFiniteEstimate { what: "difference estimate ℓ̂", value: f64::NAN };
    assert!(nan.is_recoverable());
    for integrator in INTEGRATORS {
        // Failing from call 30 on: every later θ-step diverges and every u-step is rejected.
        let divergent =
            run(30, nan.clone(), integrator).expect("a recoverable error does not stop the chain");
        assert!(divergent > 20, "{integrator:?}: divergent iterations: {divergent}");
    }
}

#[test]
fn any_other_estimator_error_stops_the_chain_with_that_error() {
    let fatal = Error::invalid("stratum size", 0, "at least 1");
    assert!(!fatal.is_recoverable());
    for integrator in INTEGRATORS {
        match run(30, fatal.clone(), integrator) {
            Err(SamplerError::Chain { source, .. }) => assert_eq!(source, fatal),
            other => {
                panic!("{integrator:?}: expected the chain to stop with {fatal}, got {other:?}")
            }
        }
        // At the start, too: the chain cannot start.
        match run(1, fatal.clone(), integrator) {
            Err(SamplerError::Init { source, .. }) => assert_eq!(source, fatal),
            other => panic!("{integrator:?}: expected the chain not to start, got {other:?}"),
        }
    }
}
