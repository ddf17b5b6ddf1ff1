//! The diagnostics against closed forms, on seeded chains (ChaCha8, `tallmc_core::rng`).
//!
//! Tolerances are Monte Carlo ones: each check runs R independent replications, and the mean
//! estimate must lie within `Z_SCORE` standard errors (estimated from the replications) of the
//! theoretical value, plus an explicit allowance for the estimator's known bias where it has
//! one. All tolerances are named below.

use rand::RngExt;
use rand_distr::StandardNormal;
use tallmc_core::rng::chain_rng;
use tallmc_diagnostics as diag;

/// Standard errors allowed between a replicated mean and its theoretical value.
const Z_SCORE: f64 = 4.0;
/// Independent replications per check.
const REPLICATIONS: usize = 16;
/// Draws per replication in the AR(1) checks.
const AR1_DRAWS: usize = 100_000;
/// Master seed of this file.
const SEED: u64 = 20_240_601;

/// Multiple of τ √(τ/S) allowed for the upward bias of Geyer's initial-sequence estimator.
///
/// The initial positive sequence keeps summing autocorrelation pairs until one is negative, so
/// at lags where the true autocorrelation has died out it still adds pairs of noise that
/// happened to be positive: τ̂ is biased *upward* by a multiple of the noise level of ρ̂(k),
/// √(τ/S) (Bartlett), times τ. Replications measured the multiple at ≈ 1.5 for i.i.d. draws
/// (IF 1.0147 at S = 10⁴, 1.0047 at S = 10⁵) and ≈ 1.2 for AR(1) with ρ = 0.9 (IF 19.31 at
/// S = 10⁵); we allow 2.
const GEYER_BIAS_MULTIPLE: f64 = 2.0;

/// R̂ threshold of Vehtari et al. (2021).
const RHAT_OK: f64 = 1.01;

fn normal(rng: &mut tallmc_core::rng::ChainRng) -> f64 {
    rng.sample::<f64, _>(StandardNormal)
}

/// A stationary AR(1) chain: x₀ ~ N(0, 1/(1 − ρ²)), x_t = ρ x_{t−1} + ε_t, ε_t ~ N(0, 1).
fn ar1(seed: u64, stream: usize, n: usize, rho: f64) -> Vec<f64> {
    let mut rng = chain_rng(seed, stream);
    let mut x = normal(&mut rng) / (1.0 - rho * rho).sqrt();
    (0..n)
        .map(|_| {
            x = rho * x + normal(&mut rng);
            x
        })
        .collect()
}

/// Mean and standard error of the mean of replicated estimates.
fn mean_and_se(v: &[f64]) -> (f64, f64) {
    let r = v.len() as f64;
    let m = v.iter().sum::<f64>() / r;
    let var = v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (r - 1.0);
    (m, (var / r).sqrt())
}

/// Checks that the replicated IF has mean within Z_SCORE·SE + `bias` of `theory`.
fn assert_if_close(label: &str, ifs: &[f64], theory: f64, bias: f64) {
    let (m, se) = mean_and_se(ifs);
    let tol = Z_SCORE * se + bias;
    assert!(
        (m - theory).abs() <= tol,
        "{label}: mean IF {m:.4} ± {se:.4} (SE), theory {theory:.4}, tolerance {tol:.4}"
    );
}

#[test]
fn ar1_inefficiency_factor_matches_theory() {
    for rho in [0.5, 0.9] {
        let tau = (1.0 + rho) / (1.0 - rho);
        let s = AR1_DRAWS as f64;
        let (mut basic, mut bulk, mut coda) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..REPLICATIONS {
            let x = ar1(SEED, r, AR1_DRAWS, rho);
            let chains = [&x[..]];
            let if_of = |ess: f64| diag::inefficiency_factor(AR1_DRAWS, ess).unwrap();
            basic.push(if_of(diag::ess_mean(&chains).unwrap()));
            bulk.push(if_of(diag::ess_bulk(&chains).unwrap()));
            coda.push(if_of(diag::ess_coda(&chains).unwrap()));
        }
        let geyer_bias = GEYER_BIAS_MULTIPLE * tau * (tau / s).sqrt();
        assert_if_close(&format!("ess_mean, rho {rho}"), &basic, tau, geyer_bias);
        assert_if_close(&format!("ess_bulk, rho {rho}"), &bulk, tau, geyer_bias);
        // coda fits the true model family: the Yule–Walker bias of φ̂ is ≈ −(1 + 3ρ)/S, and
        // dIF/dρ = 2/(1 − ρ)²; allow twice that.
        let coda_bias = 2.0 * 2.0 / (1.0 - rho).powi(2) * (1.0 + 3.0 * rho) / s;
        assert_if_close(&format!("ess_coda, rho {rho}"), &coda, tau, coda_bias);
    }
}

#[test]
fn iid_normal_ess_is_close_to_the_number_of_draws() {
    let (chains_per_rep, n) = (4, 2_500);
    let s = (chains_per_rep * n) as f64;
    let (mut bulk, mut basic, mut coda) = (vec![], vec![], vec![]);
    let (mut q05, mut q95) = (vec![], vec![]);
    for r in 0..REPLICATIONS {
        let chains: Vec<Vec<f64>> = (0..chains_per_rep)
            .map(|c| {
                let mut rng = chain_rng(SEED + 1, r * chains_per_rep + c);
                (0..n).map(|_| normal(&mut rng)).collect()
            })
            .collect();
        bulk.push(diag::ess_bulk(&chains).unwrap() / s);
        let (a, b) = (
            diag::ess_quantile(&chains, 0.05).unwrap(),
            diag::ess_quantile(&chains, 0.95).unwrap(),
        );
        q05.push(a / s);
        q95.push(b / s);
        // The tail ESS is the smaller of the two (so it is biased low by ~σ/√π for two noisy,
        // independent estimates of sd σ: its components are what is compared with theory).
        assert_eq!(diag::ess_tail(&chains).unwrap(), a.min(b));
        basic.push(diag::ess_mean(&chains).unwrap() / s);
        coda.push(diag::ess_coda(&chains).unwrap() / s);
    }
    // Relative ESS (ESS/S) ≈ 1/IF ≈ 1, with the same Geyer bias (downward for ESS/S); coda has
    // no such bias, the allowance is only looser for it.
    let geyer_bias = GEYER_BIAS_MULTIPLE * (1.0 / s).sqrt();
    assert_if_close("ess_bulk/S", &bulk, 1.0, geyer_bias);
    assert_if_close("ess_quantile(0.05)/S", &q05, 1.0, geyer_bias);
    assert_if_close("ess_quantile(0.95)/S", &q95, 1.0, geyer_bias);
    assert_if_close("ess_mean/S", &basic, 1.0, geyer_bias);
    assert_if_close("ess_coda/S", &coda, 1.0, geyer_bias);
}

#[test]
fn mcse_of_the_mean_matches_the_spread_of_chain_means() {
    // The MCSE of the mean of one AR(1) chain should be the sd of the mean across replicates:
    // check that the replicated mean of MCSE² is within sampling error of the variance of x̄
    // implied by theory, Var(x̄) ≈ τ σ²/S with σ² = 1/(1 − ρ²).
    let (rho, n) = (0.5, 20_000);
    let tau = (1.0 + rho) / (1.0 - rho);
    let theory = tau / (1.0 - rho * rho) / n as f64;
    let mut mcse2 = Vec::new();
    for r in 0..REPLICATIONS {
        let x = ar1(SEED + 2, r, n, rho);
        mcse2.push(diag::mcse_mean(&[&x[..]]).unwrap().powi(2));
    }
    let bias = GEYER_BIAS_MULTIPLE * theory * (tau / n as f64).sqrt();
    assert_if_close("mcse_mean²", &mcse2, theory, bias);
}

#[test]
fn rhat_is_near_one_for_mixed_chains_and_large_for_disagreeing_ones() {
    let n = 2_000;
    let mixed: Vec<Vec<f64>> = (0..4).map(|c| ar1(SEED + 3, c, n, 0.5)).collect();
    // Under stationarity R̂ − 1 = O(1/n): here about 1e-3.
    assert!(diag::rhat(&mixed).unwrap() < RHAT_OK);
    assert!(diag::rhat_split(&mixed).unwrap() < RHAT_OK);

    // One chain's mean shifted by one marginal sd (√(4/3) for ρ = 0.5).
    let mut shifted = mixed.clone();
    for v in &mut shifted[3] {
        *v += (4.0f64 / 3.0).sqrt();
    }
    assert!(diag::rhat(&shifted).unwrap() > 1.05);
    assert!(diag::rhat_split(&shifted).unwrap() > 1.05);

    // One chain three times as wide, same mean: invisible to the means (split R̂ ≈ 1) but
    // caught by the folded (tail) part of rank-normalized R̂.
    let mut wide = mixed.clone();
    for v in &mut wide[3] {
        *v *= 3.0;
    }
    assert!(diag::rhat_split(&wide).unwrap() < 1.02);
    assert!(diag::rhat(&wide).unwrap() > RHAT_OK);

    // A trend within each chain (non-stationarity) is caught by splitting.
    let trending: Vec<Vec<f64>> = mixed
        .iter()
        .map(|c| c.iter().enumerate().map(|(t, v)| v + 2.0 * t as f64 / n as f64).collect())
        .collect();
    assert!(diag::rhat_split(&trending).unwrap() > 1.05);
}

#[test]
fn summary_of_iid_draws_agrees_with_the_distribution() {
    let chains: Vec<Vec<f64>> = (0..4)
        .map(|c| {
            let mut rng = chain_rng(SEED + 4, c);
            (0..5_000).map(|_| 2.0 + 3.0 * normal(&mut rng)).collect()
        })
        .collect();
    let s = diag::Summary::from_chains("mu", &chains).unwrap();
    // S = 20,000 i.i.d. N(2, 9) draws: mean within 4 MCSE, sd within 4 MCSE(sd).
    assert!((s.mean - 2.0).abs() < Z_SCORE * s.mcse_mean, "{s:?}");
    assert!((s.sd - 3.0).abs() < Z_SCORE * s.mcse_sd, "{s:?}");
    // Quantiles of N(2, 9) at 5 % / 50 % / 95 %: 2 ∓ 1.6449·3; MCSE of a quantile is at most
    // a few times the sd/√S, so allow 4·(mcse of the quantile).
    let z95 = 1.644_853_626_951_472_2;
    for (q, prob, exact) in
        [(s.q5, 0.05, 2.0 - 3.0 * z95), (s.q50, 0.5, 2.0), (s.q95, 0.95, 2.0 + 3.0 * z95)]
    {
        let se = diag::mcse_quantile(&chains, prob).unwrap();
        assert!((q - exact).abs() < Z_SCORE * se, "q{prob}: {q} vs {exact} (mcse {se})");
    }
    assert!(s.rhat < RHAT_OK);
    assert!(s.ess_bulk > 0.9 * 20_000.0 && s.ess_tail > 0.9 * 20_000.0, "{s:?}");
}

#[test]
fn computing_time_chain() {
    // IF from ESS, CT from evaluations per draw, RCT of two methods.
    let x = ar1(SEED + 5, 0, 50_000, 0.5);
    let ess = diag::ess_bulk(&[&x[..]]).unwrap();
    let r#if = diag::inefficiency_factor(x.len(), ess).unwrap();
    let ct_a = diag::computing_time(r#if, 1_000.0).unwrap();
    let ct_b = diag::computing_time(1.0, 100_000.0).unwrap();
    let rct = diag::relative_computing_time(ct_a, ct_b).unwrap();
    assert!((rct - r#if * 1_000.0 / 100_000.0).abs() < 1e-12);
    assert!(rct < 1.0);
}
