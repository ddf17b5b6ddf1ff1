//! Minibatch MH with the exact test is exact MH: it samples the closed-form posterior, with a
//! random-walk proposal and with the SGLD proposal (whose reverse density must be conditioned on
//! the same minibatch for this to hold). Uncorrected SGLD with the same large step size is
//! measurably biased. Tolerances: 4 MCSE (ESS-based).

use crate::common::LinearGaussian;
use rand::Rng;
use tallmc_bounds::{Decision, ExactTest, MeanTest, Population};
use tallmc_core::Kernel;
use tallmc_diagnostics::{Draws, summarize};
use tallmc_samplers::{
    MinibatchMh, RandomWalkProposal, RandomWalkProposalConfig, RunConfig, Sgld, SgldConfig,
    SgldProposal, SgldProposalConfig, sample_in_memory,
};

use tallmc_testkit::seed_offset as offset;

/// (mean z, sd z) per coordinate against the closed form.
fn z_scores<K>(model: &LinearGaussian, draws: usize, seed: u64, kernel: &K) -> Vec<(f64, f64)>
where
    K: Kernel<LinearGaussian>,
{
    let (mean, cov) = model.posterior();
    let d = model.d;
    let config =
        RunConfig { num_warmup: 1000, num_draws: draws, num_chains: 4, seed, save_warmup: false };
    let out = sample_in_memory(model, config, std::slice::from_ref(&mean), kernel).unwrap();
    let chains: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
    let names: Vec<String> = (0..d).map(|j| format!("t{j}")).collect();
    let s = summarize(&names, &Draws::new(&chains, d).unwrap()).unwrap();
    (0..d)
        .map(|j| {
            (
                (s[j].mean - mean[j]) / s[j].mcse_mean,
                (s[j].sd - cov[j * d + j].sqrt()) / s[j].mcse_sd,
            )
        })
        .collect()
}

fn random_walk(model: &LinearGaussian) -> RandomWalkProposal {
    let cfg =
        RandomWalkProposalConfig { covariance: Some(model.posterior().1), ..Default::default() };
    RandomWalkProposal::new(cfg).unwrap()
}

#[test]
fn minibatch_mh_with_the_exact_test_samples_the_posterior() {
    let model = LinearGaussian::new(1_000, 2, 21);
    for seed in [1, 2] {
        let z = z_scores(
            &model,
            4000,
            seed + offset(),
            &MinibatchMh::new(ExactTest::new(), random_walk(&model)),
        );
        for (j, (zm, zs)) in z.iter().enumerate() {
            assert!(zm.abs() < 4.0 && zs.abs() < 4.0, "seed {seed}, θ{j}: z = ({zm:.2}, {zs:.2})");
        }
    }
}

#[test]
fn mh_corrected_sgld_is_exact_and_uncorrected_sgld_is_biased() {
    // Posterior sds are ~0.03; a step size of 2e-3 (noise sd 0.045) makes plain SGLD inflate the
    // variance badly, while the MH-corrected chain must stay exact.
    let model = LinearGaussian::new(1_000, 2, 22);
    let cfg = SgldProposalConfig { step_size: 2e-3, batch: 50 };
    let z = z_scores(
        &model,
        4000,
        3 + offset(),
        &MinibatchMh::new(ExactTest::new(), SgldProposal::new(cfg).unwrap()),
    );
    for (j, (zm, zs)) in z.iter().enumerate() {
        assert!(zm.abs() < 4.0 && zs.abs() < 4.0, "corrected SGLD θ{j}: z = ({zm:.2}, {zs:.2})");
    }
    let plain = SgldConfig::new(2e-3, 50).unwrap();
    let z = z_scores(&model, 4000, 3 + offset(), &Sgld::new(plain).unwrap());
    assert!(z.iter().any(|(_, zs)| zs.abs() > 10.0), "plain SGLD should be visibly biased: {z:?}");
}

/// The exact decision, computed in looks of a fixed odd size: uses every value like ExactTest
/// but draws differently from the subsample stream.
#[derive(Clone)]
struct ExactInOddLooks;

impl MeanTest for ExactInOddLooks {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, p: &mut P, threshold: f64, rng: &mut R,
    ) -> tallmc_bounds::Result<Decision> {
        let (mut sum, mut looks) = (0.0, 0);
        let mut buf = [0.0; 37];
        while p.drawn() < p.size() {
            let k = (p.size() - p.drawn()).min(37);
            p.draw(&mut buf[..k], rng);
            sum += buf[..k].iter().sum::<f64>();
            looks += 1;
        }
        let mean = sum / p.size() as f64;
        Ok(Decision { above: mean > threshold, used: p.size(), looks, mean, half_width: 0.0 })
    }
    fn check_population_size(&self, _n: usize) -> tallmc_bounds::Result<()> {
        Ok(())
    }
    fn needs_range(&self) -> bool {
        false
    }
    fn describe(&self) -> Vec<(String, String)> {
        vec![("test".into(), "exact in looks of 37".into())]
    }
}

#[test]
fn the_test_does_not_shift_proposals_or_uniforms() {
    let model = LinearGaussian::new(500, 2, 23);
    let config =
        RunConfig { num_warmup: 100, num_draws: 300, num_chains: 1, seed: 5, save_warmup: false };
    let a = sample_in_memory(
        &model,
        config,
        &[model.posterior().0],
        &MinibatchMh::new(ExactTest::new(), random_walk(&model)),
    )
    .unwrap();
    let b = sample_in_memory(
        &model,
        config,
        &[model.posterior().0],
        &MinibatchMh::new(ExactInOddLooks, random_walk(&model)),
    )
    .unwrap();
    assert_eq!(a[0].sink.draws, b[0].sink.draws);
    // Every step evaluated 2N terms (θ and θ′) and used all N values.
    let used = a[0].sink.stat("data_used__").unwrap();
    assert!(used.iter().all(|&u| u == 500.0));
    assert_eq!(a[0].report.sampling_evals.terms, 300 * 2 * 500);
}

/// A test that claims to need a range.
#[derive(Clone)]
struct NeedsRange;

impl MeanTest for NeedsRange {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, _p: &mut P, _t: f64, _r: &mut R,
    ) -> tallmc_bounds::Result<Decision> {
        Err(tallmc_bounds::Error::MissingRange { test: "needs-range test" })
    }
    fn check_population_size(&self, _n: usize) -> tallmc_bounds::Result<()> {
        Ok(())
    }
    fn needs_range(&self) -> bool {
        true
    }
    fn describe(&self) -> Vec<(String, String)> {
        vec![("test".into(), "needs-range".into())]
    }
}

#[test]
fn bad_settings_are_errors_at_init() {
    let model = LinearGaussian::new(100, 2, 24);
    let config =
        RunConfig { num_warmup: 10, num_draws: 10, num_chains: 1, seed: 1, save_warmup: false };
    let e = sample_in_memory(
        &model,
        config,
        &[vec![0.0; 2]],
        &MinibatchMh::new(NeedsRange, random_walk(&model)),
    )
    .unwrap_err();
    assert!(e.to_string().contains("needs a bound on the range"), "{e}");
    let cfg = SgldProposalConfig { step_size: 1e-3, batch: 101 };
    let e = sample_in_memory(
        &model,
        config,
        &[vec![0.0; 2]],
        &MinibatchMh::new(ExactTest::new(), SgldProposal::new(cfg).unwrap()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("SGLD batch size = 101"), "{e}");
    assert!(SgldProposal::new(SgldProposalConfig { step_size: -1.0, batch: 5 }).is_err());
    assert!(Sgld::new(SgldConfig { step_size: 1e-3, batch: 0, ..Default::default() }).is_err());
}
