//! Exactness, decision for decision: on a logistic regression, minibatch MH with Austerity at
//! ε = 0 and with the confidence test at δ → 0 gives *the same chain* as minibatch MH with the
//! exact test (same seed → identical draws, bit for bit). The kernel draws subsample indices from
//! a separate stream, so the tests cannot shift the proposals or the uniforms; these two tests use
//! every value whenever the decision is close, so each decision equals the exact one.

use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, ExactTest,
};
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    MinibatchMh, NewtonOptions, RandomWalkProposal, RandomWalkProposalConfig, RunConfig,
    laplace_approximation, sample_in_memory,
};
use tallmc_tests::seed;

#[test]
fn austerity_at_zero_and_confidence_at_tiny_delta_reproduce_exact_mh() {
    let sim = synthetic::higgs_like(5_000, 3).unwrap();
    let model = LogisticRegression::new(sim.data, DesignOptions::default(), 10.0).unwrap();
    let laplace = laplace_approximation(&model, &[0.0; 29], NewtonOptions::default()).unwrap();
    let walk = RandomWalkProposalConfig {
        covariance: Some(laplace.covariance.clone()),
        adapt_covariance: true,
        ..Default::default()
    };
    let inits = laplace.dispersed_positions(2, 2.0, seed(1)).unwrap();
    let config = RunConfig::new(200, 400, 2, seed(1));
    let rw = || RandomWalkProposal::new(walk.clone());
    let exact = sample_in_memory(
        &model,
        config,
        &inits,
        &MinibatchMh::new(ExactTest::new(), rw().unwrap()),
    )
    .unwrap();
    let austerity = sample_in_memory(&model, config, &inits, &{
        let test = AusterityTest::new(AusterityConfig::new(0.0, 500)).unwrap();
        MinibatchMh::new(test, rw().unwrap())
    })
    .unwrap();
    let confidence = sample_in_memory(&model, config, &inits, &{
        let cfg = ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, 1e-300);
        let test = ConfidenceTest::new(cfg).unwrap();
        MinibatchMh::new(test, rw().unwrap()).with_term_bounds()
    })
    .unwrap();
    for c in 0..2 {
        let accepted: f64 = exact[c].sink.stat("accept_stat__").unwrap().iter().sum();
        assert!(accepted > 20.0, "the chain must move for the comparison to mean anything");
        assert_eq!(exact[c].sink.draws, austerity[c].sink.draws, "Austerity ε = 0, chain {c}");
        assert_eq!(exact[c].sink.draws, confidence[c].sink.draws, "confidence δ → 0, chain {c}");
    }
}
