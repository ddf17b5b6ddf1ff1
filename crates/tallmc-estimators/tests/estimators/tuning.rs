//! Verifies the tuning formulas of REFERENCES §3 by simulation (several are tagged UNCONF there):
//! the block-Poisson V[log|L̂_B|], E log|L̂_B| and P(L̂_B ≥ 0) under d̂ ~ N(μ, σ²), and the
//! perturbed-estimator variance γ/m + γ²/(2m³) under normal differences.

// The tests print the measured numbers they check (shown with --nocapture).
#![allow(clippy::print_stderr)]

use crate::common::*;
use rand_distr::{Distribution, StandardNormal};
use tallmc_estimators::tuning::{
    block_poisson_moments, digamma, normal_cdf, perturbed_variance, subsample_size_for_variance,
    trigamma, tune_block_poisson,
};
use tallmc_testkit::Z_MAX;

const REPS: usize = 100_000;

#[test]
fn polygamma_values() {
    let euler = 0.577_215_664_901_532_9;
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    assert!((digamma(1.0) + euler).abs() < 1e-13);
    assert!((digamma(0.5) + euler + 2.0 * std::f64::consts::LN_2).abs() < 1e-13);
    assert!((digamma(10.5) - (digamma(9.5) + 1.0 / 9.5)).abs() < 1e-13);
    assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-13);
    assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-12);
    assert!((trigamma(30.5) - (trigamma(31.5) + 1.0 / (30.5 * 30.5))).abs() < 1e-14);
    // Reference values from mpmath (30 digits).
    assert!((digamma(3.7) - 1.167_153_539_361_511_4).abs() < 1e-13);
    assert!((trigamma(3.7) - 0.310_037_857_670_038_3).abs() < 1e-13);
    assert!((digamma(40.5) - 3.688_905_492_933_233_6).abs() < 1e-13);
    assert!((trigamma(40.5) - 0.024_998_698_201_356_74).abs() < 1e-14);
    let p = normal_cdf(-1.959_963_984_540_054);
    assert!((p - 0.025).abs() < 1e-10, "Φ(−1.96) = {p}");
}

/// Simulates log|L̂_B| − Σq (and its sign) with d̂ ~ N(μ, σ²) drawn directly.
fn simulate(mu: f64, sd: f64, lambda: usize, a: f64, seed: u64) -> (Moments, f64) {
    let mut r = rng(seed);
    let mut logs = Moments::default();
    let mut positive = 0usize;
    let lam = lambda as f64;
    for _ in 0..REPS {
        let mut total = a + lam;
        let mut negative = 0;
        for _ in 0..lambda {
            // χ ~ Poisson(1) by inversion.
            let u: f64 = rand::RngExt::random(&mut r);
            let (mut k, mut p, mut cdf) = (0u32, (-1.0f64).exp(), (-1.0f64).exp());
            while u > cdf {
                k += 1;
                p /= f64::from(k);
                cdf += p;
            }
            for _ in 0..k {
                let z: f64 = StandardNormal.sample(&mut r);
                let gap = mu + sd * z - a;
                negative += usize::from(gap < 0.0);
                total += (gap.abs() / lam).ln();
            }
        }
        logs.push(total);
        positive += usize::from(negative % 2 == 0);
    }
    (logs, positive as f64 / REPS as f64)
}

#[test]
fn block_poisson_variance_mean_and_sign_formulas_hold_for_normal_blocks() {
    // (μ, σ, λ, a): a small-λ case with many negatives, the paper's a = −λ style, a large λ.
    let cases =
        [(0.0, 1.0, 2, -2.5), (0.3, 0.5, 10, -10.0), (-1.0, 2.0, 5, -9.0), (0.0, 1.0, 30, -30.0)];
    for (c, &(mu, sd, lambda, a)) in cases.iter().enumerate() {
        let mo = block_poisson_moments(mu, sd, lambda, a).unwrap();
        let (logs, p_pos) = simulate(mu, sd, lambda, a, 300 + c as u64);
        let mean_pred = a + lambda as f64 + lambda as f64 * mo.eta;
        let z_mean = logs.z_mean(mean_pred);
        let z_var = logs.z_var(mo.var_log_abs);
        let se_p = (mo.prob_positive * (1.0 - mo.prob_positive) / REPS as f64).sqrt().max(1e-9);
        let z_p = (p_pos - mo.prob_positive) / se_p;
        eprintln!(
            "μ={mu} σ={sd} λ={lambda} a={a}: V pred {:.4} sim {:.4} (z {z_var:.2}); E pred {mean_pred:.4} sim {:.4} (z {z_mean:.2}); P+ pred {:.5} sim {p_pos:.5} (z {z_p:.2})",
            mo.var_log_abs,
            logs.var(),
            logs.mean(),
            mo.prob_positive
        );
        assert!(z_var.abs() < Z_MAX, "V[log|L̂_B|] formula off: z = {z_var}");
        assert!(z_mean.abs() < Z_MAX, "E[log|L̂_B|] formula off: z = {z_mean}");
        assert!(z_p.abs() < Z_MAX, "P(L̂_B ≥ 0) formula off: z = {z_p}");
    }
}

#[test]
fn perturbed_variance_formula_under_normal_differences() {
    // ℓ̂ − σ̂²/2 with d_i ~ N(0, σ²_d) i.i.d.: exactly V = γ/m + γ²(m − 1)/(2m⁴) (normal theory,
    // divisor m); the REFERENCES approximation γ/m + γ²/(2m³) drops the factor (m − 1)/m.
    let n = 1000.0f64;
    for (c, &(m, target)) in [(10usize, 10.0f64), (200, 1.0)].iter().enumerate() {
        let gamma = target * m as f64;
        let sd_d = (gamma / (n * n)).sqrt();
        let mut r = rng(400 + c as u64);
        let mut est = Moments::default();
        let mut d = vec![0.0; m];
        for _ in 0..REPS {
            for x in d.iter_mut() {
                let z: f64 = StandardNormal.sample(&mut r);
                *x = sd_d * z;
            }
            let mean = d.iter().sum::<f64>() / m as f64;
            let s2 = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / m as f64;
            est.push(n * mean - 0.5 * n * n / m as f64 * s2);
        }
        let mf = m as f64;
        let exact = gamma / mf + gamma * gamma * (mf - 1.0) / (2.0 * mf.powi(4));
        let approx = perturbed_variance(gamma, m);
        let z = est.z_var(exact);
        eprintln!(
            "m={m} γ={gamma}: V sim {:.4}, normal-theory {exact:.4} (z {z:.2}), approximation {approx:.4} (z {:.2})",
            est.var(),
            est.z_var(approx)
        );
        assert!(z.abs() < Z_MAX, "z = {z}");
        assert!((approx - exact).abs() <= gamma * gamma / (2.0 * mf.powi(4)) + 1e-12);
    }
}

#[test]
fn subsample_size_and_block_poisson_tuning_helpers() {
    assert_eq!(subsample_size_for_variance(1300.2, 1.0).unwrap(), 1301);
    assert_eq!(subsample_size_for_variance(0.0, 1.0).unwrap(), 1);
    assert!(subsample_size_for_variance(f64::NAN, 1.0).is_err());
    assert!(subsample_size_for_variance(1.0, 0.0).is_err());
    let t = tune_block_poisson(0.2, 1.0, 1.0, 0.99, 100).unwrap().unwrap();
    assert!(t.moments.var_log_abs <= 1.0 && t.moments.prob_positive >= 0.99, "{t:?}");
    let again = block_poisson_moments(0.2, 1.0, t.lambda, t.a).unwrap();
    assert_eq!(again, t.moments);
    // λ − 1 cannot reach the target under the constraint (smallest λ).
    if t.lambda > 1 {
        let smaller = tune_block_poisson(0.2, 1.0, 1.0, 0.99, t.lambda - 1).unwrap();
        assert!(smaller.is_none());
    }
    eprintln!(
        "tuned for σ = 1: λ = {}, a = {:.3}, V = {:.3}, P+ = {:.5}",
        t.lambda, t.a, t.moments.var_log_abs, t.moments.prob_positive
    );
    assert!(tune_block_poisson(0.0, 1.0, 1.0, 0.3, 10).is_err());
}
