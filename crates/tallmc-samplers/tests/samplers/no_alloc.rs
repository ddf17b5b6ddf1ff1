//! Kernel steps allocate nothing: scratch is built at `init`. Counted with a global allocator
//! that tallies allocations made by the current thread (sequential full-data sums, so all work
//! happens on this thread).

use crate::common::LinearGaussian;
use tallmc_core::rng::chain_rng;
use tallmc_core::{Chain, Kernel, Parallelism};
use tallmc_integrators::{Metric, MetricKind};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, Hmc, HmcConfig, Nuts, NutsConfig,
    RandomWalkConfig, RandomWalkMetropolis, SgHmc, SgHmcConfig, Sgld, SgldConfig, Sgnht,
    SgnhtConfig, Subsampling, Thermostat,
};
use tallmc_testkit::assert_allocation_free;

fn steps_allocate_nothing<K: Kernel<LinearGaussian>>(name: &str, kernel: K) {
    let model = LinearGaussian::new(5_000, 3, 1);
    let mut rng = chain_rng(1, 0);
    let mut chain = kernel.build_chain(&model, &model.posterior().0, &mut rng).unwrap();
    // Sampling phase (no adaptation): warm up the chain's scratch, then count.
    chain.begin_warmup(0);
    chain.end_warmup();
    assert_allocation_free(&format!("{name} steps"), 1, 50, || {
        chain.step(&model, &mut rng).unwrap();
    });
}

#[test]
fn kernel_steps_do_not_allocate() {
    let seq = Parallelism::Sequential;
    steps_allocate_nothing(
        "RWM",
        RandomWalkMetropolis::new(RandomWalkConfig { parallelism: seq, ..Default::default() })
            .unwrap(),
    );
    steps_allocate_nothing(
        "AM",
        AdaptiveMetropolis::new(AdaptiveMetropolisConfig {
            parallelism: seq,
            ..Default::default()
        })
        .unwrap(),
    );
    for kind in [MetricKind::Diagonal, MetricKind::Dense] {
        let metric = Metric::unit(kind, 3);
        let cfg = HmcConfig { parallelism: seq, ..HmcConfig::with_fixed_metric(metric.clone()) };
        steps_allocate_nothing("HMC", Hmc::new(cfg).unwrap());
        let cfg = NutsConfig { parallelism: seq, ..NutsConfig::with_fixed_metric(metric) };
        steps_allocate_nothing("NUTS", Nuts::new(cfg).unwrap());
    }
    for sub in [Subsampling::WithoutReplacement, Subsampling::WithReplacement] {
        let dense = Metric::dense(vec![2.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0], 3).unwrap();
        let cfg = SgldConfig { step_size: 1e-5, batch: 50, subsampling: sub, preconditioner: None };
        steps_allocate_nothing("SGLD", Sgld::new(cfg.clone()).unwrap());
        let pre = SgldConfig { preconditioner: Some(dense.clone()), ..cfg };
        steps_allocate_nothing("SGLD (dense preconditioner)", Sgld::new(pre).unwrap());
        let cfg = SgHmcConfig {
            subsampling: sub,
            metric: Some(dense),
            ..SgHmcConfig::new(1e-3, 5, 50).unwrap()
        };
        steps_allocate_nothing("SG-HMC", SgHmc::new(cfg).unwrap());
        for t in [Thermostat::Scalar, Thermostat::ElementWise] {
            let cfg = SgnhtConfig {
                subsampling: sub,
                num_steps: 3,
                ..SgnhtConfig::new(1e-4, 50, t).unwrap()
            };
            steps_allocate_nothing("SGNHT", Sgnht::new(cfg).unwrap());
        }
    }
}
