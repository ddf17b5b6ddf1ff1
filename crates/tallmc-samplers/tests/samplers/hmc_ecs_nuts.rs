//! HMC-ECS with the NUTS θ-step (`ThetaIntegrator::Nuts`): accuracy against a long full-data
//! NUTS run on a small logistic regression (perturbed and signed), the tree's mechanics and
//! evaluation counts, determinism, and bad input.
//!
//! Tolerances: |estimate − reference| < 4 combined MCSE (ESS-based MCSE of both runs; the
//! delta-method MCSE for sign-corrected means). With second-order control variates and
//! m = 200 of n = 2,000 the perturbation of the perturbed target, O(1/(n m²)), is far below the
//! Monte Carlo error, and the signed target is exact. The run lengths make the comparison
//! resolve 0.05 posterior sd, which is checked too.

#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use std::sync::OnceLock;

use tallmc_core::{StepStats, Terms};
use tallmc_diagnostics::signed::sign_corrected;
use tallmc_diagnostics::summary::{Draws, Summary, summarize};
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    EcsDynamics, HmcEcs, HmcEcsConfig, HmcEcsStats, NewtonOptions, Nuts, NutsConfig, RunConfig,
    SignedHmcEcs, SignedHmcEcsConfig, ThetaIntegrator, laplace_approximation, sample_in_memory,
};
use tallmc_testkit::{Z_MAX, seed};

const N: usize = 2_000;
/// Subsample size m and blocks G of the perturbed runs.
const M: usize = 200;
const G: usize = 20;

fn model() -> &'static LogisticRegression {
    static MODEL: OnceLock<LogisticRegression> = OnceLock::new();
    MODEL.get_or_init(|| {
        let s = synthetic::sbps_logistic(N, 3, 7).unwrap();
        LogisticRegression::new(s.data, DesignOptions::default(), 10.0).unwrap()
    })
}

fn summaries(draws: &[&[f64]], d: usize) -> Vec<Summary> {
    let names: Vec<String> = (0..d).map(|j| format!("theta.{j}")).collect();
    summarize(&names, &Draws::new(draws, d).unwrap()).unwrap()
}

struct Reference {
    mode: Vec<f64>,
    summary: Vec<Summary>,
}

/// Full-data NUTS with the Laplace covariance as fixed metric: 4 chains × (500 + 6,000).
fn reference() -> &'static Reference {
    static REF: OnceLock<Reference> = OnceLock::new();
    REF.get_or_init(|| {
        let model = model();
        let d = model.dim();
        let lap = laplace_approximation(model, &vec![0.0; d], NewtonOptions::default()).unwrap();
        let cfg = NutsConfig::with_fixed_metric(lap.dense_metric().unwrap());
        let inits = vec![lap.mode.clone(); 4];
        let out = sample_in_memory(
            model,
            RunConfig::new(500, 6000, 4, 3),
            &inits,
            &Nuts::new(cfg).unwrap(),
        )
        .unwrap();
        let draws: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
        let summary = summaries(&draws, d);
        let min_ess = summary.iter().map(|s| s.ess_bulk).fold(f64::INFINITY, f64::min);
        eprintln!("reference: full-data NUTS, n = {N}, d = {d}, min bulk ESS {min_ess:.0}");
        Reference { mode: lap.mode, summary }
    })
}

fn nuts_dynamics(max_depth: usize) -> EcsDynamics {
    EcsDynamics::default().with_integrator(ThetaIntegrator::Nuts { max_depth })
}

fn perturbed_config(dynamics: EcsDynamics) -> HmcEcsConfig {
    HmcEcsConfig {
        subsample_size: Some(M),
        blocks: G,
        center: Some(reference().mode.clone()),
        dynamics,
        ..HmcEcsConfig::default()
    }
}

/// Perturbed HMC-ECS with the NUTS θ-step, 4 chains × (1,000 + 5,000) from θ*: every mean and
/// sd within 4 combined MCSE of full-data NUTS; no divergence, the tree never at its limit,
/// the acceptance statistic near the dual-averaging target.
#[test]
fn perturbed_with_nuts_theta_step_matches_full_data_nuts_on_logistic_regression() {
    let model = model();
    let d = model.dim();
    let r = reference();
    let kernel = HmcEcs::new(perturbed_config(
        EcsDynamics::default().with_integrator(ThetaIntegrator::nuts()),
    ))
    .unwrap();
    let inits = vec![r.mode.clone(); 4];
    let out =
        sample_in_memory(model, RunConfig::new(1000, 5000, 4, seed(31)), &inits, &kernel).unwrap();
    let draws: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
    let s = summaries(&draws, d);
    let (mut worst_mean, mut worst_sd) = (0.0f64, 0.0f64);
    for (j, (a, b)) in s.iter().zip(&r.summary).enumerate() {
        let se_mean = a.mcse_mean.hypot(b.mcse_mean);
        let se_sd = a.mcse_sd.hypot(b.mcse_sd);
        assert!(Z_MAX * se_mean < 0.05 * b.sd, "coordinate {j}: MCSE too large ({se_mean})");
        let (z_mean, z_sd) = ((a.mean - b.mean) / se_mean, (a.sd - b.sd) / se_sd);
        worst_mean = worst_mean.max(z_mean.abs());
        worst_sd = worst_sd.max(z_sd.abs());
        assert!(
            z_mean.abs() < Z_MAX && z_sd.abs() < Z_MAX,
            "coordinate {j}: ECS-NUTS mean {} sd {} vs NUTS mean {} sd {} (z = {z_mean:.2}, {z_sd:.2})",
            a.mean,
            a.sd,
            b.mean,
            b.sd
        );
    }
    let stats: Vec<&HmcEcsStats> = out.iter().flat_map(|c| &c.sink.stats).collect();
    let k = stats.len() as f64;
    let depth = stats.iter().map(|s| s.tree_depth as f64).sum::<f64>() / k;
    let leapfrog = stats.iter().map(|s| s.n_leapfrog as f64).sum::<f64>() / k;
    let accept = stats.iter().map(|s| s.accept_stat).sum::<f64>() / k;
    let min_ess = s.iter().map(|x| x.ess_bulk).fold(f64::INFINITY, f64::min);
    eprintln!(
        "perturbed ECS-NUTS: max |z| mean {worst_mean:.2}, sd {worst_sd:.2}; min ESS {min_ess:.0}; mean tree depth {depth:.2}, n_leapfrog {leapfrog:.2}, accept_stat {accept:.3}, step size {:.3}",
        out[0].report.tuning.step_size
    );
    for c in &out {
        assert_eq!((c.report.divergences, c.report.length_limit_hits), (0, 0));
    }
    assert!((0.7..0.95).contains(&accept), "mean accept_stat {accept} (target 0.8)");
    // Kept doublings k: 2^k − 1 steps, plus at most 2^k of a discarded last subtree.
    assert!(stats.iter().all(|s| s.tree_depth >= 1 && s.n_leapfrog < (2 << s.tree_depth)));
}

/// Signed HMC-ECS with the NUTS θ-step (λ = 20 factors of m = 30, second-order control
/// variates), 4 chains × (1,000 + 4,000): every sign-corrected mean within 4 combined MCSE of
/// full-data NUTS.
#[test]
fn signed_with_nuts_theta_step_matches_full_data_nuts_on_logistic_regression() {
    let model = model();
    let r = reference();
    let cfg = SignedHmcEcsConfig {
        lambda: 20,
        center: Some(r.mode.clone()),
        dynamics: nuts_dynamics(10),
        ..SignedHmcEcsConfig::default()
    };
    let inits = vec![r.mode.clone(); 4];
    let out = sample_in_memory(
        model,
        RunConfig::new(1000, 4000, 4, seed(32)),
        &inits,
        &SignedHmcEcs::new(cfg).unwrap(),
    )
    .unwrap();
    let signs: Vec<Vec<f64>> = out.iter().map(|c| c.sink.stat("sign__").unwrap()).collect();
    let negative = signs.iter().flatten().filter(|s| **s < 0.0).count();
    let mut worst = 0.0f64;
    for (j, b) in r.summary.iter().enumerate() {
        let coord: Vec<Vec<f64>> = out.iter().map(|c| c.sink.coordinate(j)).collect();
        let sc = sign_corrected(&coord, &signs).unwrap();
        let se = sc.mcse_mean.hypot(b.mcse_mean);
        let z = (sc.mean - b.mean) / se;
        worst = worst.max(z.abs());
        assert!(
            z.abs() < Z_MAX,
            "coordinate {j}: sign-corrected {} vs {} (z = {z:.2}, MCSE {})",
            sc.mean,
            b.mean,
            sc.mcse_mean
        );
    }
    let depth: f64 =
        out.iter().flat_map(|c| c.sink.stats.iter().map(|s| s.tree_depth as f64)).sum::<f64>()
            / signs.iter().map(Vec::len).sum::<usize>() as f64;
    eprintln!(
        "signed ECS-NUTS: max |z| {worst:.2}, {negative} negative signs, mean tree depth {depth:.2}"
    );
    for c in &out {
        assert_eq!(c.report.divergences, 0);
    }
}

/// Per-step stats of one perturbed ECS-NUTS chain at a step size of 10⁻⁵ (not adapted): every
/// tree is far too short to turn, so it runs to `max_depth`.
fn tiny_step_stats(max_depth: usize) -> Vec<HmcEcsStats> {
    let dynamics = EcsDynamics {
        initial_step_size: Some(1e-5),
        adapt_step_size: false,
        recenter: None,
        ..nuts_dynamics(max_depth)
    };
    let kernel = HmcEcs::new(perturbed_config(dynamics)).unwrap();
    let inits = vec![reference().mode.clone()];
    let out =
        sample_in_memory(model(), RunConfig::new(0, 40, 1, seed(33)), &inits, &kernel).unwrap();
    let chain = out.into_iter().next().unwrap();
    assert_eq!(chain.report.length_limit_hits, 40, "the driver counts every limit hit");
    chain.sink.stats
}

/// A tiny step size: every tree reaches `max_depth` (2^D − 1 leapfrog steps, accept_stat ≈ 1,
/// `hit_length_limit`), and the evaluations of a step are the u-step's plus exactly
/// `n_leapfrog` estimates with gradient (m terms + m gradients each): the same u-step cost at
/// depths 3 and 5, the difference 24·m of each.
#[test]
fn tiny_step_size_runs_every_tree_to_the_depth_limit_and_counts_every_leapfrog_step() {
    let shallow = tiny_step_stats(3);
    let deep = tiny_step_stats(5);
    let m = M as u64;
    for (stats, depth) in [(&shallow, 3usize), (&deep, 5)] {
        let steps = (1usize << depth) - 1;
        for (k, s) in stats.iter().enumerate().skip(1) {
            assert_eq!((s.tree_depth, s.n_leapfrog, s.divergent), (depth, steps, false), "{s:?}");
            assert!(s.hit_max_depth && s.hit_length_limit(), "{s:?}");
            assert!(s.accept_stat > 0.999, "{s:?}");
            // u-step: one estimate (m terms, m gradients) plus the control variates of the
            // refreshed block (m/G indices); θ-step: one estimate per leapfrog step.
            let u_step = m + m / G as u64;
            let expected = u_step + steps as u64 * m;
            assert_eq!((s.evals.terms, s.evals.gradients), (expected, expected), "step {k}");
        }
    }
    for (a, b) in shallow.iter().zip(&deep).skip(1) {
        assert_eq!(b.evals.gradients - a.evals.gradients, 24 * m);
        assert_eq!(b.evals.terms - a.evals.terms, 24 * m);
        assert_eq!(b.evals.hessians, a.evals.hessians);
    }
}

fn short_run(integrator: ThetaIntegrator, seed_: u64) -> (Vec<f64>, Vec<HmcEcsStats>) {
    let dynamics = EcsDynamics::default().with_integrator(integrator);
    let inits = vec![reference().mode.clone(), vec![0.0; model().dim()]];
    let out = sample_in_memory(
        model(),
        RunConfig::new(150, 100, 2, seed_),
        &inits,
        &HmcEcs::new(perturbed_config(dynamics)).unwrap(),
    )
    .unwrap();
    let draws = out.iter().flat_map(|c| c.sink.draws.iter().copied()).collect();
    let stats = out.into_iter().flat_map(|c| c.sink.stats).collect();
    (draws, stats)
}

#[test]
fn same_seed_gives_identical_draws_and_the_nuts_step_differs_from_fixed_length() {
    let (a, sa) = short_run(ThetaIntegrator::nuts(), 9);
    let (b, sb) = short_run(ThetaIntegrator::nuts(), 9);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    assert!(a.iter().any(|x| *x != a[0]));
    let (c, sc) = short_run(ThetaIntegrator::Hmc, 9);
    assert_ne!(a, c);
    assert!(sc.iter().all(|s| s.tree_depth == 0 && !s.hit_max_depth));
}

#[test]
fn max_depth_out_of_range_is_rejected_with_a_message_naming_it() {
    for depth in [0, 31, 1000] {
        let dynamics = nuts_dynamics(depth);
        let err = HmcEcs::new(HmcEcsConfig { dynamics: dynamics.clone(), ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_depth") && err.contains(&depth.to_string()), "{err}");
        assert!(err.contains("1 to 30"), "{err}");
        let err = SignedHmcEcs::new(SignedHmcEcsConfig { dynamics, ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_depth") && err.contains(&depth.to_string()), "{err}");
    }
    for depth in [1, 30] {
        assert!(nuts_dynamics(depth).validate().is_ok());
    }
}
