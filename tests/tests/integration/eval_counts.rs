//! Every kernel's reported cost against the evaluations it actually made.
//!
//! Each test runs a short chain of one kernel on [`Counting`]`<M>`, which counts every per-datum
//! evaluation the kernel asks the model for, and checks that the sum of the kernel's reported
//! [`EvalCounts`] (every warmup and sampling step, which include the set-up evaluations the
//! kernels report with their first step) equals the wrapper's count, kind by kind. The drivers
//! run two chains in parallel, so the counters are also exercised across threads.
//!
//! Kernels that build their control variates outside the kernel (the stochastic-gradient
//! kernels with a [`ControlVariateGradient`]) are checked from after that construction: the
//! construction's cost is returned to the caller, not reported by a step.

use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, ExactTest,
};
use tallmc_core::Kernel;
use tallmc_core::{Counting, EvalCounts};
use tallmc_estimators::{ControlVariate, ControlVariateGradient, CvOrder, HessianProducts};
use tallmc_models::{DesignOptions, GaussianMean, LogisticRegression, ThreeWayMrf, synthetic};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, ApproximateGibbs, AutoBoundConfig, Bps,
    BpsConfig, Budget, ContinuousRunConfig, ControlVariates, EcsDynamics, GibbsConfig, Hmc,
    HmcConfig, HmcEcs, HmcEcsConfig, InMemoryOptions, LipSbps, LipSbpsConfig, MinibatchMh,
    NewtonOptions, Nuts, NutsConfig, ProxyConfig, ProxyMinibatchMh, RandomWalkConfig,
    RandomWalkMetropolis, RandomWalkProposal, RandomWalkProposalConfig, RunConfig, Sbps,
    SbpsConfig, SgHmc, SgHmcConfig, Sgld, SgldConfig, SgldProposal, SgldProposalConfig, Sgnht,
    SgnhtConfig, SignedHmcEcs, SignedHmcEcsConfig, Thermostat, ThetaIntegrator, ZigZag,
    ZigZagConfig, ZigZagSubsampling, laplace_approximation, sample_in_memory,
    sample_trajectories_in_memory,
};
use tallmc_tests::seed;

const N: usize = 300;

/// y ~ N(1, 2²), n = N, with known σ = 2 and a N(0, 10²) prior on μ: every capability but
/// bounded gradients.
fn gaussian_mean() -> Counting<GaussianMean> {
    let data = synthetic::normal_sample(N, 1.0, 2.0, 5).unwrap();
    Counting::new(GaussianMean::new(data, 2.0, 0.0, 10.0).unwrap())
}

/// Logistic regression with d = 2 covariates on the SBPS paper's synthetic design, n = N.
fn logistic() -> Counting<LogisticRegression> {
    let s = synthetic::sbps_logistic(N, 2, 3).unwrap();
    Counting::new(LogisticRegression::new(s.data, DesignOptions::default(), 5.0).unwrap())
}

fn mode(model: &Counting<GaussianMean>) -> f64 {
    model.inner().posterior_mean_sd().0
}

/// Runs `num_chains = 2` chains of 150 warmup and 250 sampling steps from `init`, and returns
/// the kernels' reported evaluations summed over every step of every chain.
fn run_discrete<M, K>(model: &Counting<M>, init: Vec<f64>, kernel: &K) -> EvalCounts
where
    Counting<M>: Sync,
    K: Kernel<Counting<M>>,
{
    run_discrete_for(model, init, 150, kernel)
}

/// [`run_discrete`] with `num_warmup` warmup steps.
fn run_discrete_for<M, K>(
    model: &Counting<M>, init: Vec<f64>, num_warmup: usize, kernel: &K,
) -> EvalCounts
where
    Counting<M>: Sync,
    K: Kernel<Counting<M>>,
{
    let config =
        RunConfig { num_warmup, num_draws: 250, num_chains: 2, seed: seed(11), save_warmup: false };
    let chains = sample_in_memory(model, config, &[init], kernel).unwrap();
    chains.iter().map(|c| c.report.warmup_evals + c.report.sampling_evals).sum()
}

/// Runs 2 chains of a piecewise-deterministic kernel for 100 warmup and 300 sampling events,
/// returning the reported evaluations summed over every segment.
fn run_pdmp<M, K>(model: &Counting<M>, init: Vec<f64>, kernel: &K) -> EvalCounts
where
    Counting<M>: Sync,
    K: tallmc_core::PdmpKernel<Counting<M>>,
{
    let config = ContinuousRunConfig {
        warmup: Budget::Events(100),
        sampling: Budget::Events(300),
        num_chains: 2,
        seed: seed(12),
        ..ContinuousRunConfig::default()
    };
    let chains =
        sample_trajectories_in_memory(model, config, &[init], kernel, InMemoryOptions::default())
            .unwrap();
    chains.iter().map(|c| c.report.warmup.evals + c.report.sampling.evals).sum()
}

/// The kernel's reported evaluations equal the wrapper's count, kind by kind, and the run did
/// evaluate something.
#[track_caller]
fn check<M>(reported: EvalCounts, model: &Counting<M>) {
    check_case(reported, model, "");
}

/// [`check`]s the evaluations of [`run_discrete`].
#[track_caller]
fn check_discrete<M, K>(model: &Counting<M>, init: Vec<f64>, kernel: &K)
where
    Counting<M>: Sync,
    K: Kernel<Counting<M>>,
{
    check(run_discrete(model, init, kernel), model);
}

/// [`check`]s the evaluations of [`run_pdmp`].
#[track_caller]
fn check_pdmp<M, K>(model: &Counting<M>, init: Vec<f64>, kernel: &K)
where
    Counting<M>: Sync,
    K: tallmc_core::PdmpKernel<Counting<M>>,
{
    check(run_pdmp(model, init, kernel), model);
}

#[track_caller]
fn check_case<M>(reported: EvalCounts, model: &Counting<M>, case: &str) {
    assert_eq!(reported, model.counts(), "{case}: reported (left) vs made (right)");
    assert!(reported.total() > 0, "{case}: the run made no per-datum evaluation");
}

fn walk(sd: f64) -> tallmc_core::Result<RandomWalkProposal> {
    RandomWalkProposal::new(RandomWalkProposalConfig {
        covariance: Some(vec![sd * sd]),
        ..Default::default()
    })
}

// ---- full-data kernels -------------------------------------------------------------------------

#[test]
fn random_walk_metropolis() {
    let model = gaussian_mean();
    check_discrete(
        &model,
        vec![0.0],
        &RandomWalkMetropolis::new(RandomWalkConfig::default()).unwrap(),
    );
}

#[test]
fn adaptive_metropolis() {
    let model = gaussian_mean();
    check_discrete(
        &model,
        vec![0.0],
        &AdaptiveMetropolis::new(AdaptiveMetropolisConfig::default()).unwrap(),
    );
}

#[test]
fn hmc() {
    let model = logistic();
    check_discrete(&model, vec![0.0; 2], &Hmc::new(HmcConfig::default()).unwrap());
}

#[test]
fn nuts() {
    let model = logistic();
    check_discrete(&model, vec![0.0; 2], &Nuts::new(NutsConfig::default()).unwrap());
}

#[test]
fn laplace_approximation_reports_its_newton_iterations() {
    let model = logistic();
    let laplace = laplace_approximation(&model, &[0.0; 2], NewtonOptions::default()).unwrap();
    check(laplace.evals, &model);
}

// ---- minibatch Metropolis–Hastings -------------------------------------------------------------

#[test]
fn minibatch_mh_exact_test() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_discrete(&model, vec![m], &MinibatchMh::new(ExactTest::new(), walk(0.1).unwrap()));
}

#[test]
fn austerity_mh() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_discrete(&model, vec![m], &{
        let test = AusterityTest::new(AusterityConfig::new(0.05, 30)).unwrap();
        MinibatchMh::new(test, walk(0.1).unwrap())
    });
}

#[test]
fn austerity_mh_with_sgld_proposal() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_discrete(&model, vec![m], &{
        let test = AusterityTest::new(AusterityConfig::new(0.05, 30)).unwrap();
        let proposal =
            SgldProposal::new(SgldProposalConfig { step_size: 1e-3, batch: 20 }).unwrap();
        MinibatchMh::new(test, proposal)
    });
}

#[test]
fn confidence_sampler() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_discrete(&model, vec![m], &{
        let test =
            ConfidenceTest::new(ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, 0.05))
                .unwrap();
        MinibatchMh::new(test, walk(0.1).unwrap()).with_term_bounds()
    });
}

#[test]
fn confidence_sampler_with_proxies() {
    let model = logistic();
    check_discrete(&model, vec![0.0; 2], &{
        let test =
            ConfidenceTest::new(ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, 0.05))
                .unwrap();
        let walk = RandomWalkProposal::new(RandomWalkProposalConfig {
            covariance: Some(vec![0.01, 0.0, 0.0, 0.01]),
            ..Default::default()
        })
        .unwrap();
        ProxyMinibatchMh::new(test, walk, ProxyConfig::new(vec![0.0; 2])).unwrap()
    });
}

#[test]
fn approximate_gibbs() {
    let model = Counting::new(ThreeWayMrf::random(8, 0.5, 3).unwrap());
    let init = [vec![0.0; 8]];
    let config = RunConfig::new(20, 50, 2, seed(13));
    for austerity in [false, true] {
        model.reset();
        let chains = if austerity {
            sample_in_memory(&model, config, &init, &{
                let test = AusterityTest::new(AusterityConfig::new(0.1, 5)).unwrap();
                ApproximateGibbs::new(GibbsConfig::default(), test).unwrap()
            })
        } else {
            sample_in_memory(
                &model,
                config,
                &init,
                &ApproximateGibbs::new(GibbsConfig::default(), ExactTest::new()).unwrap(),
            )
        }
        .unwrap();
        let reported: EvalCounts =
            chains.iter().map(|c| c.report.warmup_evals + c.report.sampling_evals).sum();
        check_case(reported, &model, if austerity { "austerity" } else { "exact" });
    }
}

// ---- energy-conserving subsampling -------------------------------------------------------------

// θ* = None: Newton's method at `init` (reported with the first step); 450 warmup steps
// re-centre the control variates at iteration 200 (the default schedule; 400 is too close to
// the end of warmup), reported by the step that re-centres.

/// Both θ-steps: fixed-length HMC, and NUTS, whose every leapfrog step of every tree (discarded
/// subtrees included) is one estimate with gradient, reported as made.
fn theta_steps() -> [(&'static str, ThetaIntegrator); 2] {
    [("hmc", ThetaIntegrator::Hmc), ("nuts", ThetaIntegrator::Nuts { max_depth: 6 })]
}

#[test]
fn perturbed_hmc_ecs() {
    for (name, integrator) in theta_steps() {
        let model = gaussian_mean();
        let config = HmcEcsConfig {
            subsample_size: Some(40),
            blocks: 10,
            dynamics: EcsDynamics::default().with_integrator(integrator),
            ..HmcEcsConfig::default()
        };
        let kernel = HmcEcs::with_engine(config, HessianProducts::with_lanes(1, 1, 40)).unwrap();
        let reported = run_discrete_for(&model, vec![0.0], 450, &kernel);
        check_case(reported, &model, name);
    }
}

#[test]
fn signed_hmc_ecs() {
    for (name, integrator) in theta_steps() {
        let model = gaussian_mean();
        let config = SignedHmcEcsConfig {
            block_size: 10,
            lambda: 10,
            dynamics: EcsDynamics::default().with_integrator(integrator),
            ..SignedHmcEcsConfig::default()
        };
        let kernel =
            SignedHmcEcs::with_engine(config, HessianProducts::with_lanes(1, 10, 80)).unwrap();
        let reported = run_discrete_for(&model, vec![0.0], 450, &kernel);
        check_case(reported, &model, name);
    }
}

// ---- stochastic-gradient kernels ---------------------------------------------------------------

#[test]
fn sgld() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_discrete(&model, vec![m], &Sgld::new(SgldConfig::new(1e-3, 20).unwrap()).unwrap());
}

/// An order-2 control-variate gradient estimator around the posterior mode for minibatches of
/// 20, built (and its construction pass forgotten) before the run.
fn cv_estimator(model: &Counting<GaussianMean>) -> ControlVariateGradient<HessianProducts> {
    let (cv, _) = ControlVariate::new(model, &[mode(model)], CvOrder::Two).unwrap();
    let estimator =
        ControlVariateGradient::new(model, cv, HessianProducts::with_lanes(1, 1, 20), 20).unwrap();
    model.reset();
    estimator
}

#[test]
fn sg_kernels_with_control_variates() {
    let model = gaussian_mean();
    let (m, estimator) = (mode(&model), cv_estimator(&model));
    let reported = run_discrete(
        &model,
        vec![m],
        &Sgld::with_estimator(SgldConfig::new(1e-3, 20).unwrap(), estimator).unwrap(),
    );
    check_case(reported, &model, "SGLD-CV");

    let estimator = cv_estimator(&model);
    let reported = run_discrete(
        &model,
        vec![m],
        &SgHmc::with_estimator(SgHmcConfig::new(1e-3, 5, 20).unwrap(), estimator).unwrap(),
    );
    check_case(reported, &model, "SG-HMC-CV");

    let estimator = cv_estimator(&model);
    let reported = run_discrete(
        &model,
        vec![m],
        &Sgnht::with_estimator(SgnhtConfig::new(1e-3, 20, Thermostat::Scalar).unwrap(), estimator)
            .unwrap(),
    );
    check_case(reported, &model, "SGNHT-CV");
}

#[test]
fn sghmc() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_discrete(&model, vec![m], &SgHmc::new(SgHmcConfig::new(1e-3, 5, 20).unwrap()).unwrap());
}

#[test]
fn sgnht_and_msgnht() {
    for thermostat in [Thermostat::Scalar, Thermostat::ElementWise] {
        let model = logistic();
        let reported = run_discrete(
            &model,
            vec![0.0; 2],
            &Sgnht::new(SgnhtConfig::new(1e-3, 20, thermostat).unwrap()).unwrap(),
        );
        check_case(reported, &model, &format!("{thermostat:?}"));
    }
}

// ---- piecewise-deterministic kernels -----------------------------------------------------------

fn logistic_mode(model: &Counting<LogisticRegression>) -> Vec<f64> {
    laplace_approximation(model.inner(), &[0.0; 2], NewtonOptions::default()).unwrap().mode
}

#[test]
fn bps_with_model_bound() {
    // Exact inversion (Gaussian terms, constant Hessian) and thinning (logistic).
    let model = gaussian_mean();
    check_pdmp(&model, vec![0.0], &Bps::new(BpsConfig::default()).unwrap());
    let model = logistic();
    check_pdmp(&model, vec![0.0; 2], &Bps::new(BpsConfig::default()).unwrap());
}

#[test]
fn bps_with_automatic_bound() {
    let model = logistic();
    let kernel = Bps::automatic(BpsConfig::default(), AutoBoundConfig::default()).unwrap();
    check_pdmp(&model, vec![0.0; 2], &kernel);
}

#[test]
fn zigzag_with_model_bound() {
    let model = gaussian_mean();
    check_pdmp(&model, vec![0.0], &ZigZag::new(ZigZagConfig::default()));
    let model = logistic();
    check_pdmp(&model, vec![0.0; 2], &ZigZag::new(ZigZagConfig::default()));
}

#[test]
fn zigzag_with_automatic_bound() {
    let model = logistic();
    let kernel = ZigZag::automatic(ZigZagConfig::default(), AutoBoundConfig::default()).unwrap();
    check_pdmp(&model, vec![0.0; 2], &kernel);
}

#[test]
fn sbps() {
    let model = logistic();
    check_pdmp(&model, vec![0.0; 2], &Sbps::new(SbpsConfig::with_batch(30)).unwrap());
}

#[test]
fn psbps() {
    let model = logistic();
    check_pdmp(
        &model,
        vec![0.0; 2],
        &Sbps::new(SbpsConfig::with_batch(30).preconditioned()).unwrap(),
    );
}

#[test]
fn lipsbps_bounded_gradients() {
    let model = logistic();
    check_pdmp(&model, vec![0.0; 2], &LipSbps::new(LipSbpsConfig::default()).unwrap());
}

#[test]
fn lipsbps_lipschitz_gradients() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_pdmp(&model, vec![m], &LipSbps::lipschitz(LipSbpsConfig::default(), vec![m]).unwrap());
}

#[test]
fn zigzag_subsampling_bounded_gradients() {
    let model = logistic();
    check_pdmp(&model, vec![0.0; 2], &ZigZagSubsampling::new());
}

#[test]
fn zigzag_subsampling_lipschitz_gradients() {
    let model = gaussian_mean();
    let m = mode(&model);
    check_pdmp(&model, vec![m], &ZigZagSubsampling::lipschitz(vec![m]).unwrap());
}

#[test]
fn zigzag_control_variates() {
    // The Hessian-vector engine: the rank-one engine evaluates through `LinearPredictor`, whose
    // calls the wrapper cannot classify (see `tallmc_core::counting`).
    let model = logistic();
    let reference = logistic_mode(&model);
    let engine = HessianProducts::with_lanes(2, 1, 1);
    let cv = ControlVariates::with_engine(reference.clone(), engine).unwrap();
    check_pdmp(&model, reference.clone(), &ZigZagSubsampling::with_estimator(cv));
}

// ---- the rank-one engine -----------------------------------------------------------------------

/// With the rank-one engine a kernel evaluates differences through `LinearPredictor`: one call
/// of `predictor_derivatives` per index returns φ_i, φ_i′ and φ_i″ at once, and the engine counts
/// it as one term (plus a gradient or Hessian when it uses φ′ or φ″, which the wrapper cannot
/// see). So only the terms can be checked exactly: those made through the per-datum traits
/// (set-up passes) plus one per index handed to `predictor_derivatives`.
#[track_caller]
fn check_rank_one_terms<M>(reported: EvalCounts, model: &Counting<M>, case: &str) {
    let made = model.counts().terms + model.predictor_derivatives();
    assert_eq!(reported.terms, made, "{case}: reported terms (left) vs made (right)");
    assert!(model.predictor_derivatives() > 0, "{case}: the rank-one engine was not used");
}

#[test]
fn rank_one_engine_terms() {
    let model = gaussian_mean();
    let config = HmcEcsConfig { subsample_size: Some(40), blocks: 10, ..HmcEcsConfig::default() };
    let reported = run_discrete_for(&model, vec![0.0], 450, &HmcEcs::new(config).unwrap());
    check_rank_one_terms(reported, &model, "perturbed HMC-ECS");

    let model = gaussian_mean();
    let config = SignedHmcEcsConfig { block_size: 10, lambda: 10, ..SignedHmcEcsConfig::default() };
    let reported = run_discrete_for(&model, vec![0.0], 450, &SignedHmcEcs::new(config).unwrap());
    check_rank_one_terms(reported, &model, "signed HMC-ECS");

    let model = logistic();
    let reference = logistic_mode(&model);
    let cv = ControlVariates::rank_one(reference.clone()).unwrap();
    let reported = run_pdmp(&model, reference.clone(), &ZigZagSubsampling::with_estimator(cv));
    check_rank_one_terms(reported, &model, "Zig-Zag with control variates");
}
