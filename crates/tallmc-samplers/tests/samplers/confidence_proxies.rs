//! The confidence sampler with Taylor proxies (BDH 2017): exactness (δ → 0 and the exact test
//! reproduce exact minibatch MH bit for bit), correctness on logistic regression against a long
//! full-data HMC run and on the Gaussian mean against its closed form, the efficiency claim (far
//! less data per iteration than the plain confidence sampler at equilibrium), validity of the
//! remainder bound, cost accounting and bad input.
//!
//! Tolerances: 4 MCSE ([`Z_MAX`], ESS-based, combined for two chains' estimates). Seeds are
//! shifted by `TALLMC_SEED_OFFSET`.

#![allow(clippy::print_stderr)] // measured numbers are reported with --nocapture

use std::sync::OnceLock;

use tallmc_bounds::{BoundKind, ConfidenceConfig, ConfidenceTest, ExactTest};
use tallmc_core::rng::chain_rng;
use tallmc_core::{
    Chain, EvalCounts, Kernel, StepStats, TaylorRemainderBound, TermHessians, Terms,
};
use tallmc_diagnostics::summary::{Draws, summarize};
use tallmc_integrators::Metric;
use tallmc_models::synthetic::{higgs_like, normal_sample, two_class_2d};
use tallmc_models::{DesignOptions, GaussianMean, LogisticRegression};
use tallmc_samplers::{
    Hmc, HmcConfig, MinibatchMh, NewtonOptions, ProxyConfig, ProxyMinibatchMh, RandomWalkProposal,
    RandomWalkProposalConfig, RunConfig, laplace_approximation, sample_in_memory,
};
use tallmc_testkit::{Z_MAX, assert_allocation_free, seed};

/// Prior sd of the logistic models.
const PRIOR_SD: f64 = 10.0;
/// Error budget of the confidence tests (BDH's δ).
const DELTA: f64 = 0.01;
/// Required ratio (proxy data fraction) / (plain data fraction) at equilibrium.
const MAX_FRACTION_RATIO: f64 = 0.5;

struct Problem {
    model: LogisticRegression,
    mode: Vec<f64>,
    cov: Vec<f64>,
}

fn problem(n: usize, data_seed: u64) -> Problem {
    let data = two_class_2d(n, data_seed).unwrap().data;
    let model = LogisticRegression::new(data, DesignOptions::default(), PRIOR_SD).unwrap();
    let lap = laplace_approximation(&model, &[0.0, 0.0], NewtonOptions::default()).unwrap();
    Problem { model, mode: lap.mode, cov: lap.covariance }
}

/// The 2-D logistic problem of the correctness test (n = 10⁴), built once.
fn logistic_10k() -> &'static Problem {
    static P: OnceLock<Problem> = OnceLock::new();
    P.get_or_init(|| problem(10_000, 31))
}

/// Random walk N(θ, (2.38²/d) Σ_L), scale fixed (so that chains are comparable).
fn walk(cov: &[f64]) -> RandomWalkProposal {
    let d = (cov.len() as f64).sqrt();
    RandomWalkProposal::new(RandomWalkProposalConfig {
        covariance: Some(cov.to_vec()),
        initial_scale: Some(2.38 / d.sqrt()),
        adapt_scale: false,
        ..Default::default()
    })
    .unwrap()
}

fn confidence(delta: f64) -> ConfidenceTest {
    ConfidenceTest::new(ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, delta))
        .unwrap()
}

/// Per-coordinate (mean, sd, MCSE of the mean, MCSE of the sd) of in-memory chains.
fn summary(chains: &[&[f64]], d: usize) -> Vec<[f64; 4]> {
    let names: Vec<String> = (0..d).map(|j| format!("theta.{j}")).collect();
    let s = summarize(&names, &Draws::new(chains, d).unwrap()).unwrap();
    s.iter().map(|x| [x.mean, x.sd, x.mcse_mean, x.mcse_sd]).collect()
}

fn z(a: f64, mcse_a: f64, b: f64, mcse_b: f64) -> f64 {
    (a - b) / mcse_a.hypot(mcse_b)
}

// ---------------------------------------------------------------------------------------------
// 1. Exactness

#[test]
fn exact_test_and_tiny_delta_reproduce_exact_minibatch_mh_bit_for_bit() {
    let p = problem(4_000, 32);
    let n = p.model.num_terms() as u64;
    let config = RunConfig::new(100, 600, 1, seed(41));
    let inits = [p.mode.clone()];
    let plain = sample_in_memory(
        &p.model,
        config,
        &inits,
        &MinibatchMh::new(ExactTest::new(), walk(&p.cov)),
    )
    .unwrap();
    let proxy_exact = sample_in_memory(
        &p.model,
        config,
        &inits,
        &ProxyMinibatchMh::new(ExactTest::new(), walk(&p.cov), ProxyConfig::new(p.mode.clone()))
            .unwrap(),
    )
    .unwrap();
    let proxy_tiny = sample_in_memory(
        &p.model,
        config,
        &inits,
        &ProxyMinibatchMh::new(confidence(1e-300), walk(&p.cov), ProxyConfig::new(p.mode.clone()))
            .unwrap(),
    )
    .unwrap();
    let accept = plain[0].report.mean_accept_stat;
    assert!(accept > 0.1 && accept < 0.9, "acceptance {accept}");
    assert_eq!(proxy_exact[0].sink.draws, plain[0].sink.draws, "exact test with proxies");
    assert_eq!(proxy_tiny[0].sink.draws, plain[0].sink.draws, "δ = 1e-300 with proxies");
    // With the exact test every step uses all n remainders: 3n terms, n gradients, n Hessians
    // per step (the setup pass at θ* is reported by the first, warmup, step).
    let e = proxy_exact[0].report.sampling_evals;
    let steps = config.num_draws as u64;
    assert_eq!(e, EvalCounts { terms: 3 * n * steps, gradients: n * steps, hessians: n * steps });
    let used = proxy_tiny[0].sink.stat("data_used__").unwrap();
    let frac = used.iter().sum::<f64>() / (used.len() as f64 * n as f64);
    eprintln!("exactness: acceptance {accept:.3}; δ = 1e-300 proxy data fraction {frac:.3}");
}

// ---------------------------------------------------------------------------------------------
// 2. Correctness

#[test]
fn proxy_confidence_sampler_matches_full_data_hmc_on_logistic_regression() {
    let p = logistic_10k();
    let d = 2;
    let reference = {
        let cfg = HmcConfig::with_fixed_metric(Metric::dense(p.cov.clone(), d).unwrap());
        let config = RunConfig::new(200, 3000, 4, seed(51));
        let out = sample_in_memory(
            &p.model,
            config,
            &vec![p.mode.clone(); 4],
            &Hmc::new(cfg.clone()).unwrap(),
        )
        .unwrap();
        let chains: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
        summary(&chains, d)
    };
    for (k, recenter) in [(0u64, None), (1, Some(20))] {
        let config = RunConfig::new(200, 3000, 4, seed(52 + k));
        let out = sample_in_memory(&p.model, config, &vec![p.mode.clone(); 4], &{
            let mut cfg = ProxyConfig::new(p.mode.clone());
            cfg.recenter_every = recenter;
            ProxyMinibatchMh::new(confidence(DELTA), walk(&p.cov), cfg).unwrap()
        })
        .unwrap();
        let chains: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
        let s = summary(&chains, d);
        let frac: f64 = out
            .iter()
            .map(|c| c.sink.stat("data_fraction__").unwrap().iter().sum::<f64>())
            .sum::<f64>()
            / (4 * config.num_draws) as f64;
        for j in 0..d {
            let zm = z(s[j][0], s[j][2], reference[j][0], reference[j][2]);
            let zs = z(s[j][1], s[j][3], reference[j][1], reference[j][3]);
            eprintln!(
                "logistic n = 10⁴, re-centring {recenter:?}, θ{j}: mean {:.5} vs {:.5} (z = {zm:.2}), \
                 sd {:.5} vs {:.5} (z = {zs:.2}); mean data fraction {frac:.4}",
                s[j][0], reference[j][0], s[j][1], reference[j][1]
            );
            assert!(zm.abs() < Z_MAX, "θ{j} mean z = {zm:.2} (re-centring {recenter:?})");
            assert!(zs.abs() < Z_MAX, "θ{j} sd z = {zs:.2} (re-centring {recenter:?})");
        }
        if let Some(k) = recenter {
            // Every k-th step re-centred with a full pass: n Hessians each, on top of one
            // Hessian-vector product per value used.
            let stats = out[0].sink.stat("recentred__").unwrap();
            let count = stats.iter().filter(|&&r| r == 1.0).count();
            assert!(count >= config.num_draws / k - 1, "{count} re-centrings");
        }
    }
}

#[test]
fn gaussian_mean_has_exact_proxies_and_decides_on_the_first_batch() {
    let data = normal_sample(50_000, 1.3, 2.0, seed(61)).unwrap();
    let model = GaussianMean::new(data, 2.0, 0.0, 10.0).unwrap();
    assert_eq!(model.third_derivative_bound(), 0.0);
    let (mean, sd) = model.posterior_mean_sd();
    let config = RunConfig::new(500, 4000, 4, seed(62));
    let out = sample_in_memory(&model, config, &vec![vec![mean]; 4], &{
        // Centre away from the mode: the proxies are exact anywhere.
        ProxyMinibatchMh::new(
            confidence(DELTA),
            walk(&[sd * sd]),
            ProxyConfig::new(vec![mean + 3.0 * sd]),
        )
        .unwrap()
    })
    .unwrap();
    let first = ConfidenceConfig::default().first_batch as f64;
    for c in &out {
        let used = c.sink.stat("data_used__").unwrap();
        assert!(used.iter().all(|&u| u == first), "every decision on the first batch");
        let bound = c.sink.stat("remainder_bound__").unwrap();
        assert!(bound.iter().all(|&b| b == 0.0));
    }
    let chains: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
    let s = summary(&chains, 1);
    let (zm, zs) = ((s[0][0] - mean) / s[0][2], (s[0][1] - sd) / s[0][3]);
    eprintln!("Gaussian mean: z = ({zm:.2}, {zs:.2}) against the closed form");
    assert!(zm.abs() < Z_MAX && zs.abs() < Z_MAX, "z = ({zm:.2}, {zs:.2})");
}

// ---------------------------------------------------------------------------------------------
// 3. Efficiency at equilibrium

/// Mean data fraction per iteration of `num` steps from the mode, and the acceptance rate.
fn equilibrium_fraction<K>(p: &Problem, kernel: K, s: u64, num: usize) -> (f64, f64)
where
    K: Kernel<LogisticRegression>,
{
    let mut rng = chain_rng(seed(s), 1);
    let mut chain = kernel.build_chain(&p.model, &p.mode, &mut rng).unwrap();
    let n = p.model.num_terms() as f64;
    let (mut used, mut accepted) = (0.0, 0.0);
    for _ in 0..num {
        let st = chain.step(&p.model, &mut rng).unwrap();
        used += st.batch_size() as f64;
        accepted += st.accept_stat();
    }
    (used / (num as f64 * n), accepted / num as f64)
}

/// BDH 2017: with proxies the data a decision needs at equilibrium stops growing with n (O(1)
/// values), while the plain confidence sampler needs a fixed *fraction* of the data (here all of
/// it). Measured at n = 10⁴ and 10⁵ from the mode, 400 steps each, same proposals and uniforms:
/// asserted at n = 10⁵ that the proxy fraction is below half the plain one, and that the number
/// of values the proxy chain uses does not grow by more than 2× from n = 10⁴ to 10⁵.
#[test]
fn proxies_use_a_much_smaller_fraction_of_the_data_than_the_plain_confidence_sampler() {
    let steps = 400;
    let mut values = Vec::new();
    for n in [10_000, 100_000] {
        let big;
        let p = if n == 10_000 {
            logistic_10k()
        } else {
            big = problem(n, 33);
            &big
        };
        let (plain, plain_accept) = equilibrium_fraction(
            p,
            MinibatchMh::new(confidence(DELTA), walk(&p.cov)).with_term_bounds(),
            71,
            steps,
        );
        let (proxy, proxy_accept) = equilibrium_fraction(
            p,
            ProxyMinibatchMh::new(
                confidence(DELTA),
                walk(&p.cov),
                ProxyConfig::new(p.mode.clone()),
            )
            .unwrap(),
            71,
            steps,
        );
        eprintln!(
            "n = {n}: mean data fraction per iteration at equilibrium: plain {plain:.4} \
             ({:.0} values), proxies {proxy:.5} ({:.0} values), ratio {:.4}; acceptance \
             {plain_accept:.3} vs {proxy_accept:.3}",
            plain * n as f64,
            proxy * n as f64,
            proxy / plain
        );
        values.push(proxy * n as f64);
        if n == 100_000 {
            assert!(
                proxy < MAX_FRACTION_RATIO * plain,
                "n = {n}: proxy fraction {proxy} not below {MAX_FRACTION_RATIO} × plain {plain}"
            );
        }
    }
    assert!(
        values[1] < 2.0 * values[0],
        "values used by the proxy chain grew from {:.0} (n = 10⁴) to {:.0} (n = 10⁵)",
        values[0],
        values[1]
    );
}

// ---------------------------------------------------------------------------------------------
// 4. The remainder bound

/// r_i = ℓ_i(θ′) − ℓ_i(θ) − ℘_i for every i, computed directly from per-datum gradients and
/// Hessian-vector products at θ*.
fn remainders<M: TermHessians>(m: &M, c: &[f64], t: &[f64], tp: &[f64]) -> Vec<f64> {
    let (n, d) = (m.num_terms(), m.dim());
    let idx: Vec<u32> = (0..n as u32).collect();
    let (mut l, mut lp, mut l0) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut g, mut hv) = (vec![0.0; n * d], vec![0.0; n * d]);
    m.log_terms(t, &idx, &mut l);
    m.log_terms(tp, &idx, &mut lp);
    m.log_terms_grads(c, &idx, &mut l0, &mut g);
    let step: Vec<f64> = tp.iter().zip(t).map(|(a, b)| a - b).collect();
    let sum: Vec<f64> = (0..d).map(|j| tp[j] + t[j] - 2.0 * c[j]).collect();
    m.hessian_vector_products(c, &idx, &step, &mut hv);
    (0..n)
        .map(|i| {
            let lin: f64 = (0..d).map(|j| g[i * d + j] * step[j]).sum();
            let quad: f64 = (0..d).map(|j| hv[i * d + j] * sum[j]).sum();
            lp[i] - l[i] - lin - 0.5 * quad
        })
        .collect()
}

fn normal(rng: &mut impl rand::Rng) -> f64 {
    rand_distr::Distribution::sample(&rand_distr::StandardNormal, rng)
}

#[test]
fn remainder_bound_holds_for_every_datum_near_and_far_from_the_centre() {
    let mut rng = chain_rng(seed(81), 0);
    let two_d = problem(2_000, 34);
    let higgs = {
        let m = LogisticRegression::new(
            higgs_like(500, 35).unwrap().data,
            DesignOptions::default(),
            PRIOR_SD,
        )
        .unwrap();
        let d = m.dim();
        let lap = laplace_approximation(&m, &vec![0.0; d], NewtonOptions::default()).unwrap();
        Problem { model: m, mode: lap.mode, cov: lap.covariance }
    };
    for p in [&two_d, &higgs] {
        let d = p.model.dim();
        let mut tightest: f64 = 0.0;
        for scale in [1e-4, 1e-3, 1e-2, 0.1, 0.5, 2.0] {
            for _ in 0..10 {
                let t: Vec<f64> = p.mode.iter().map(|c| c + scale * normal(&mut rng)).collect();
                let tp: Vec<f64> = p.mode.iter().map(|c| c + scale * normal(&mut rng)).collect();
                let r = remainders(&p.model, &p.mode, &t, &tp);
                let bound = p.model.proxy_remainder_bound(&p.mode, &t, &tp);
                let max = r.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
                assert!(
                    max <= bound * (1.0 + 1e-9) + 1e-12,
                    "d = {d}, scale {scale}: max |r_i| = {max:e} > R_p = {bound:e}"
                );
                tightest = tightest.max(max / bound);
            }
        }
        eprintln!("d = {d}: max_i |r_i| / R_p reached {tightest:.3e} (bound valid)");
    }
}

/// The third partial derivatives of a logistic term, by central differences of
/// Hessian-vector products, are bounded by M₃ = max|x̃|³/(6√3) at random points, agree with
/// the closed form φ‴(η) x̃_j x̃_k x̃_l, and the bound is attained where σ(η) = (3 − √3)/6 on the
/// row and column of the largest |x̃_ij|.
#[test]
fn logistic_third_derivative_bound_against_finite_differences() {
    let p = problem(300, 36);
    let m = &p.model;
    let d = m.dim();
    let m3 = m.third_derivative_bound();
    let x_max = m.max_abs_entry();
    assert!((m3 - x_max.powi(3) / (6.0 * 3f64.sqrt())).abs() < 1e-14 * m3);
    let mut rng = chain_rng(seed(82), 0);
    let eps = 1e-4;
    let third = |theta: &[f64], i: u32, k: usize, l: usize| -> Vec<f64> {
        let mut e_k = vec![0.0; d];
        e_k[k] = 1.0;
        let (mut up, mut down) = (theta.to_vec(), theta.to_vec());
        up[l] += eps;
        down[l] -= eps;
        let (mut hu, mut hd) = (vec![0.0; d], vec![0.0; d]);
        m.hessian_vector_products(&up, &[i], &e_k, &mut hu);
        m.hessian_vector_products(&down, &[i], &e_k, &mut hd);
        hu.iter().zip(&hd).map(|(a, b)| (a - b) / (2.0 * eps)).collect()
    };
    let row = |i: u32| -> Vec<f64> { (0..d).map(|j| m.design().get(i as usize, j)).collect() };
    for _ in 0..200 {
        let theta: Vec<f64> = (0..d).map(|_| 3.0 * normal(&mut rng)).collect();
        let i = rand::RngExt::random_range(&mut rng, 0..300u32);
        let x = row(i);
        let eta: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
        let s = 1.0 / (1.0 + (-eta).exp());
        let phi3 = -s * (1.0 - s) * (1.0 - 2.0 * s);
        for k in 0..d {
            for l in 0..d {
                let fd = third(&theta, i, k, l);
                for j in 0..d {
                    let exact = phi3 * x[j] * x[k] * x[l];
                    assert!(
                        (fd[j] - exact).abs() < 1e-6 * (1.0 + exact.abs()),
                        "{fd:?} vs {exact}"
                    );
                    assert!(fd[j].abs() <= m3 * (1.0 + 1e-6), "|∂³ℓ| = {} > M₃ = {m3}", fd[j]);
                }
            }
        }
    }
    // Attained: on the row i* and column j* of the largest entry, with θ = t e_{j*} such that
    // σ(t x̃_{i*j*}) = (3 − √3)/6, ∂³ℓ_{i*}/∂θ_{j*}³ = ±M₃.
    let (mut i_star, mut j_star) = (0, 0);
    for i in 0..300u32 {
        for j in 0..d {
            if m.design().get(i as usize, j).abs() == x_max {
                (i_star, j_star) = (i, j);
            }
        }
    }
    let s_star: f64 = (3.0 - 3f64.sqrt()) / 6.0;
    let eta_star = (s_star / (1.0 - s_star)).ln();
    let mut theta = vec![0.0; d];
    theta[j_star] = eta_star / m.design().get(i_star as usize, j_star);
    let fd = third(&theta, i_star, j_star, j_star)[j_star];
    assert!((fd.abs() - m3).abs() < 1e-6 * m3, "{fd} vs M₃ = {m3}");
}

#[test]
fn gaussian_mean_remainders_vanish() {
    let data = normal_sample(1_000, 0.5, 1.5, seed(83)).unwrap();
    let model = GaussianMean::new(data, 1.5, 0.0, 10.0).unwrap();
    let r = remainders(&model, &[0.2], &[1.7], &[-0.4]);
    assert!(r.iter().all(|v| v.abs() < 1e-12), "{:?}", &r[..5]);
    assert_eq!(model.proxy_remainder_bound(&[0.2], &[1.7], &[-0.4]), 0.0);
}

// ---------------------------------------------------------------------------------------------
// 5. Bad input and cost accounting

#[test]
fn bad_input_is_an_error_naming_the_value() {
    let p = problem(500, 37);
    let e = ProxyMinibatchMh::new(
        ExactTest::new(),
        walk(&p.cov),
        ProxyConfig::new(vec![0.0, f64::NAN]),
    )
    .unwrap_err();
    assert!(e.to_string().contains("proxy centre θ*") && e.to_string().contains("NaN"), "{e}");
    let e = ProxyMinibatchMh::new(ExactTest::new(), walk(&p.cov), ProxyConfig::new(vec![]))
        .unwrap_err();
    assert!(e.to_string().contains("proxy centre θ*"), "{e}");
    let e = ProxyMinibatchMh::new(
        ExactTest::new(),
        walk(&p.cov),
        ProxyConfig::new(p.mode.clone()).with_recenter_every(0),
    )
    .unwrap_err();
    assert!(e.to_string().contains("re-centring interval"), "{e}");
    // Wrong length: found when a chain is built, against the model's dimension.
    let k = ProxyMinibatchMh::new(ExactTest::new(), walk(&p.cov), ProxyConfig::new(vec![0.0; 3]))
        .unwrap();
    let e = k.build_chain(&p.model, &p.mode, &mut chain_rng(1, 1)).unwrap_err();
    assert!(e.to_string().contains("proxy centre θ*") && e.to_string().contains('3'), "{e}");
    // A bad initial position.
    let k = ProxyMinibatchMh::new(ExactTest::new(), walk(&p.cov), ProxyConfig::new(p.mode.clone()))
        .unwrap();
    let e = k.build_chain(&p.model, &[f64::INFINITY, 0.0], &mut chain_rng(1, 1)).unwrap_err();
    assert!(e.to_string().contains("initial position"), "{e}");
    // δ and the test's other settings are validated by the bounds crate.
    let e = ConfidenceTest::new(ConfidenceConfig::new(BoundKind::HoeffdingSerfling, 1.5));
    assert!(e.is_err());
    // A first batch larger than N: when a chain is built.
    let test = ConfidenceTest::new(ConfidenceConfig::default().with_first_batch(501)).unwrap();
    let k = ProxyMinibatchMh::new(test, walk(&p.cov), ProxyConfig::new(p.mode.clone())).unwrap();
    let e = k
        .build_chain(&p.model, &p.mode, &mut chain_rng(1, 1))
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert!(e.unwrap_err().contains("first_batch"));
}

#[test]
fn setup_and_recentring_passes_are_counted() {
    let p = problem(2_000, 38);
    let n = p.model.num_terms() as u64;
    let k = ProxyMinibatchMh::new(
        confidence(DELTA),
        walk(&p.cov),
        ProxyConfig::new(p.mode.clone()).with_recenter_every(5),
    )
    .unwrap();
    let mut rng = chain_rng(seed(91), 1);
    let mut chain = k.build_chain(&p.model, &p.mode, &mut rng).unwrap();
    for step in 0..12u64 {
        let s = chain.step(&p.model, &mut rng).unwrap();
        let u = s.used as u64;
        let pass = EvalCounts { terms: n, gradients: n, hessians: n };
        let per_value = EvalCounts { terms: 3 * u, gradients: u, hessians: u };
        // The proposal is a random walk: no evaluations of its own.
        let expected = match step {
            0 => per_value + pass,      // the setup pass
            5 | 10 => per_value + pass, // re-centrings before steps 6 and 11
            _ => per_value,
        };
        assert_eq!(s.evals, expected, "step {step}");
        assert_eq!(s.recentred, step == 5 || step == 10, "step {step}");
        assert!(s.remainder_bound.is_finite() && s.proxy_mean.is_finite());
    }
    assert_eq!(chain.recenterings(), 2);
    let tuning = Chain::<LogisticRegression>::tuning(&chain);
    assert_eq!((tuning.recenter_every, tuning.recenterings), (Some(5), 2));
    assert_eq!(tuning.center, chain.center());
}

#[test]
fn steps_allocate_nothing() {
    let p = problem(3_000, 39);
    let k =
        ProxyMinibatchMh::new(confidence(DELTA), walk(&p.cov), ProxyConfig::new(p.mode.clone()))
            .unwrap();
    let mut rng = chain_rng(seed(92), 1);
    let mut chain = k.build_chain(&p.model, &p.mode, &mut rng).unwrap();
    Chain::<LogisticRegression>::begin_warmup(&mut chain, 0);
    Chain::<LogisticRegression>::end_warmup(&mut chain);
    assert_allocation_free("proxy steps", 1, 50, || {
        chain.step(&p.model, &mut rng).unwrap();
    });
}
