//! The three-way MRF of Austerity §6.3: factor numbering, log-ratios against the exact joint,
//! enumeration, reproducibility and bad inputs.
//!
//! Seeds are shifted by the environment variable `TALLMC_SEED_OFFSET` (u64, default 0) so the
//! randomized checks can be rerun at other seeds.

use std::collections::HashSet;

use rand::RngExt;
use tallmc_core::BinaryFactors;
use tallmc_core::rng::chain_rng;
use tallmc_models::mrf::{
    MAX_ENUMERATED_VARIABLES, MAX_VARIABLES, PAPER_LOG_POTENTIAL_SD, PAPER_VARIABLES,
    empirical_marginal, entry_index, state_index,
};
use tallmc_models::{Error, ThreeWayMrf};

/// Absolute tolerance for sums of a few hundred log-ratios of size O(1).
const SUM_TOL: f64 = 1e-10;

use tallmc_testkit::seed;

fn random_state(d: usize, rng: &mut impl RngExt) -> Vec<f64> {
    (0..d).map(|_| if rng.random::<bool>() { 1.0 } else { 0.0 }).collect()
}

fn all_factors(mrf: &ThreeWayMrf) -> Vec<u32> {
    (0..mrf.num_factors(0) as u32).collect()
}

#[test]
fn factor_numbering_is_a_bijection_onto_the_pairs_of_other_variables() {
    for d in [3, 4, 7, 12] {
        let mrf = ThreeWayMrf::random(d, 0.1, seed(1)).unwrap();
        let n = (d - 1) * (d - 2) / 2;
        assert_eq!(mrf.num_variables(), d);
        assert_eq!(mrf.num_potentials(), d * (d - 1) * (d - 2) / 6);
        for i in 0..d {
            assert_eq!(mrf.num_factors(i), n);
            let mut seen = HashSet::new();
            for p in 0..n {
                let (j, k) = mrf.factor_pair(i, p).unwrap();
                assert!(
                    j < k && k < d && j != i && k != i,
                    "D = {d}, i = {i}, p = {p}: ({j}, {k})"
                );
                assert!(seen.insert((j, k)), "pair ({j}, {k}) repeated for i = {i}");
            }
            assert_eq!(seen.len(), n);
            assert_eq!(mrf.factor_pair(i, n), None);
        }
        assert_eq!(mrf.factor_pair(d, 0), None);
    }
    // The documented colexicographic order, on D = 5, i = 2 (others 0, 1, 3, 4).
    let mrf = ThreeWayMrf::random(5, 0.1, 0).unwrap();
    let pairs: Vec<_> = (0..6).map(|p| mrf.factor_pair(2, p).unwrap()).collect();
    assert_eq!(pairs, [(0, 1), (0, 3), (1, 3), (0, 4), (1, 4), (3, 4)]);
}

#[test]
fn triple_index_is_colexicographic_and_a_bijection() {
    let d = 9;
    let mrf = ThreeWayMrf::random(d, 0.1, 0).unwrap();
    let mut t = 0;
    for c in 2..d {
        for b in 1..c {
            for a in 0..b {
                assert_eq!(mrf.triple_index(a, b, c), Some(t));
                assert_eq!(mrf.triple_index(c, a, b), Some(t));
                t += 1;
            }
        }
    }
    assert_eq!(t, mrf.num_potentials());
    assert_eq!(mrf.triple_index(1, 1, 2), None);
    assert_eq!(mrf.triple_index(0, 1, d), None);
}

#[test]
fn log_ratios_are_differences_of_the_exact_log_probability() {
    let d = 9;
    let mrf = ThreeWayMrf::random(d, 0.7, seed(2)).unwrap();
    let lp = mrf.log_potentials();
    let all = all_factors(&mrf);
    let mut ratios = vec![0.0; all.len()];
    let mut rng = chain_rng(seed(3), 0);
    for _ in 0..20 {
        let x = random_state(d, &mut rng);
        for i in 0..d {
            // Each factor: log ψ(x_i = 1, ·) − log ψ(x_i = 0, ·) read from the potentials.
            mrf.factor_log_ratios(i, &x, &all, &mut ratios);
            for (p, &r) in ratios.iter().enumerate() {
                let (j, k) = mrf.factor_pair(i, p).unwrap();
                let t = mrf.triple_index(i, j, k).unwrap();
                let mut v = [(i, true), (j, x[j] == 1.0), (k, x[k] == 1.0)];
                v.sort_unstable();
                let e1 = entry_index(v[0].1, v[1].1, v[2].1);
                v.iter_mut().for_each(|(var, val)| {
                    if *var == i {
                        *val = false;
                    }
                });
                let e0 = entry_index(v[0].1, v[1].1, v[2].1);
                assert_eq!(r, lp[8 * t + e1] - lp[8 * t + e0], "i = {i}, p = {p}");
            }
            // Their sum: log P̃(x^{i←1}) − log P̃(x^{i←0}).
            let (mut x1, mut x0) = (x.clone(), x.clone());
            x1[i] = 1.0;
            x0[i] = 0.0;
            let direct = mrf.log_unnormalized(&x1) - mrf.log_unnormalized(&x0);
            let sum: f64 = ratios.iter().sum();
            assert!((sum - direct).abs() < SUM_TOL, "i = {i}: {sum} vs {direct}");
            assert!((mrf.log_odds(i, &x) - direct).abs() < SUM_TOL);
            // x_i itself does not matter.
            assert_eq!(mrf.log_odds(i, &x1), mrf.log_odds(i, &x0));
            // Any batch of factor numbers (repeats, any order) gives the same values.
            let batch = [5u32, 0, 27, 5, 13];
            let mut out = [0.0; 5];
            mrf.factor_log_ratios(i, &x, &batch, &mut out);
            for (o, &p) in out.iter().zip(&batch) {
                assert_eq!(*o, ratios[p as usize]);
            }
        }
    }
}

#[test]
fn log_ratio_bound_is_the_exact_maximum() {
    let d = 7;
    let mrf = ThreeWayMrf::random(d, 1.3, seed(4)).unwrap();
    let lp = mrf.log_potentials();
    for i in 0..d {
        let mut max = 0.0_f64;
        for p in 0..mrf.num_factors(i) {
            let (j, k) = mrf.factor_pair(i, p).unwrap();
            let t = mrf.triple_index(i, j, k).unwrap();
            for xj in [false, true] {
                for xk in [false, true] {
                    let mut on = [(i, true), (j, xj), (k, xk)];
                    let mut off = [(i, false), (j, xj), (k, xk)];
                    on.sort_unstable_by_key(|v| v.0);
                    off.sort_unstable_by_key(|v| v.0);
                    let r = lp[8 * t + entry_index(on[0].1, on[1].1, on[2].1)]
                        - lp[8 * t + entry_index(off[0].1, off[1].1, off[2].1)];
                    max = max.max(r.abs());
                }
            }
        }
        assert_eq!(mrf.log_ratio_bound(i), max, "variable {i}");
        assert!(max > 0.0);
    }
}

#[test]
fn enumeration_matches_direct_evaluation_and_conditionals() {
    let d = 7;
    let mrf = ThreeWayMrf::random(d, 0.8, seed(5)).unwrap();
    let joint = mrf.enumerate().unwrap();
    assert_eq!(joint.num_variables(), d);
    let lps = joint.log_probs();
    assert_eq!(lps.len(), 1 << d);
    let probs = joint.probs();
    assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // Direct: log P(x) = log P̃(x) − log Z, with Z summed directly.
    let states: Vec<Vec<f64>> =
        (0..1usize << d).map(|s| (0..d).map(|v| ((s >> v) & 1) as f64).collect()).collect();
    let direct: Vec<f64> = states.iter().map(|x| mrf.log_unnormalized(x)).collect();
    let log_z = direct.iter().map(|v| v.exp()).sum::<f64>().ln();
    for (s, x) in states.iter().enumerate() {
        assert_eq!(state_index(x, d).unwrap(), s);
        assert!((lps[s] - (direct[s] - log_z)).abs() < 1e-11, "state {s}");
        for i in 0..d {
            let from_table = joint.conditional(i, x).unwrap();
            let exact = mrf.exact_conditional(i, x);
            assert!((from_table - exact).abs() < 1e-12, "state {s}, i = {i}");
        }
    }
    // The field is far from uniform at s = 0.8 (so these checks have teeth).
    let (lo, hi) = probs.iter().fold((1.0_f64, 0.0_f64), |(l, h), &p| (l.min(p), h.max(p)));
    assert!(hi / lo > 10.0, "max/min probability {}", hi / lo);
}

#[test]
fn marginals_sum_the_joint() {
    let d = 6;
    let mrf = ThreeWayMrf::random(d, 0.8, seed(6)).unwrap();
    let joint = mrf.enumerate().unwrap();
    let probs = joint.probs();
    // The marginal of all variables in order is the joint.
    let full = joint.marginal(&[0, 1, 2, 3, 4, 5]).unwrap();
    for (a, b) in full.iter().zip(&probs) {
        assert!((a - b).abs() < 1e-15);
    }
    // A permuted subset: entry c has x_{vars[m]} = bit m of c.
    let vars = [4, 1, 5];
    let m = joint.marginal(&vars).unwrap();
    assert_eq!(m.len(), 8);
    assert!((m.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    for c in 0..8usize {
        let direct: f64 = (0..1usize << d)
            .filter(|s| vars.iter().enumerate().all(|(b, &v)| (s >> v) & 1 == (c >> b) & 1))
            .map(|s| probs[s])
            .sum();
        assert!((m[c] - direct).abs() < 1e-14, "config {c}");
    }
    let empty = joint.marginal(&[]).unwrap();
    assert_eq!(empty.len(), 1);
    assert!((empty[0] - 1.0).abs() < 1e-12);
}

#[test]
fn empirical_marginal_counts_configurations() {
    let draws: Vec<Vec<f64>> =
        vec![vec![1.0, 0.0, 1.0], vec![1.0, 1.0, 1.0], vec![0.0, 0.0, 1.0], vec![1.0, 0.0, 0.0]];
    let m = empirical_marginal(draws.iter().map(Vec::as_slice), &[2, 0]).unwrap();
    // Configurations (x_2, x_0) with x_2 the low bit: (1,1) ×2, (1,0) ×1, (0,1) ×1.
    assert_eq!(m, vec![0.0, 0.25, 0.25, 0.5]);
    assert!(empirical_marginal(std::iter::empty::<&[f64]>(), &[0]).is_err());
    assert!(empirical_marginal(draws.iter().map(Vec::as_slice), &[3]).is_err());
    assert!(empirical_marginal(draws.iter().map(Vec::as_slice), &[1, 1]).is_err());
}

#[test]
fn potentials_are_reproducible_from_the_seed_with_the_requested_scale() {
    let s = seed(7);
    let a = ThreeWayMrf::random(30, 0.5, s).unwrap();
    let b = ThreeWayMrf::random(30, 0.5, s).unwrap();
    assert_eq!(a.log_potentials(), b.log_potentials());
    assert_eq!(a.log_potential_sd(), Some(0.5));
    let c = ThreeWayMrf::random(30, 0.5, s.wrapping_add(1)).unwrap();
    assert_ne!(a.log_potentials(), c.log_potentials());
    // Prefix property: the first D variables of a (D + 1)-field with the same seed.
    let small = ThreeWayMrf::random(29, 0.5, s).unwrap();
    assert_eq!(small.log_potentials(), &a.log_potentials()[..small.log_potentials().len()]);
    // Scale: entries are N(0, 0.5²); 32,480 of them, so the sample variance has sd
    // 0.25·√(2/n) ≈ 0.00196 and the mean sd 0.5/√n ≈ 0.0028; allow 5 sd.
    let v = a.log_potentials();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    assert!(mean.abs() < 5.0 * 0.5 / n.sqrt(), "mean {mean}");
    assert!((var - 0.25).abs() < 5.0 * 0.25 * (2.0 / n).sqrt(), "variance {var}");
    // Scale 0 is the uniform field.
    let flat = ThreeWayMrf::random(5, 0.0, s).unwrap();
    assert!(flat.log_potentials().iter().all(|&v| v == 0.0));
    assert_eq!(flat.exact_conditional(2, &[1.0, 0.0, 1.0, 1.0, 0.0]), 0.5);
    // Explicit potentials round-trip.
    let again = ThreeWayMrf::from_log_potentials(30, a.log_potentials().to_vec()).unwrap();
    assert_eq!(again.log_potential_sd(), None);
    let x: Vec<f64> = (0..30).map(|v| (v % 3 == 0) as u8 as f64).collect();
    assert_eq!(again.log_odds(11, &x), a.log_odds(11, &x));
}

#[test]
fn paper_settings_are_variance_0_02() {
    assert!((PAPER_LOG_POTENTIAL_SD * PAPER_LOG_POTENTIAL_SD - 0.02).abs() < 1e-16);
    let mrf = ThreeWayMrf::paper(seed(8)).unwrap();
    assert_eq!(mrf.num_variables(), PAPER_VARIABLES);
    assert_eq!(mrf.num_factors(17), 4851);
    assert_eq!(mrf.num_potentials(), 161_700);
    // Conditionals stay moderate: Σ of 4851 log-ratios with sd 0.2 each has sd ≈ 14.
    let x = vec![1.0; 100];
    let p = mrf.exact_conditional(0, &x);
    assert!(p > 0.0 && p < 1.0);
}

#[test]
fn extreme_log_odds_give_conditionals_without_overflow() {
    // One triple; log ψ(x_0 = 1, ·, ·) = +800 (then −700), log ψ(x_0 = 0, ·, ·) = 0.
    let mut lp = vec![0.0; 8];
    lp[4..].iter_mut().for_each(|v| *v = 800.0);
    let mrf = ThreeWayMrf::from_log_potentials(3, lp).unwrap();
    assert_eq!(mrf.exact_conditional(0, &[0.0, 1.0, 0.0]), 1.0);
    let mut lp = vec![0.0; 8];
    lp[4..].iter_mut().for_each(|v| *v = -700.0);
    let mrf = ThreeWayMrf::from_log_potentials(3, lp).unwrap();
    let p = mrf.exact_conditional(0, &[0.0, 1.0, 0.0]);
    assert!(p > 0.0 && p < 1e-300, "{p}");
}

#[test]
fn bad_inputs_are_errors_that_name_the_value() {
    let msg = |e: Error| e.to_string();
    let e = msg(ThreeWayMrf::random(2, 0.1, 0).unwrap_err());
    assert!(e.contains("D = 2") && e.contains("3 ≤ D ≤ 200"), "{e}");
    let e = msg(ThreeWayMrf::random(MAX_VARIABLES + 1, 0.1, 0).unwrap_err());
    assert!(e.contains("D = 201") && e.contains("MB"), "{e}");
    for sd in [f64::NAN, -0.1, f64::INFINITY] {
        let e = msg(ThreeWayMrf::random(5, sd, 0).unwrap_err());
        assert!(e.contains("log_potential_sd"), "{e}");
    }
    let e = msg(ThreeWayMrf::from_log_potentials(4, vec![0.0; 31]).unwrap_err());
    assert!(e.contains("expected 32, found 31"), "{e}");
    let mut lp = vec![0.0; 32];
    lp[9] = f64::NAN;
    let e = msg(ThreeWayMrf::from_log_potentials(4, lp).unwrap_err());
    assert!(e.contains("entry 9"), "{e}");
    let big = ThreeWayMrf::random(MAX_ENUMERATED_VARIABLES + 1, 0.1, 0).unwrap();
    let e = msg(big.enumerate().unwrap_err());
    assert!(e.contains("21") && e.contains("at most 20"), "{e}");
    let joint = ThreeWayMrf::random(4, 0.1, 0).unwrap().enumerate().unwrap();
    assert!(joint.marginal(&[0, 4]).is_err());
    assert!(joint.marginal(&[2, 2]).unwrap_err().to_string().contains("repeated"));
    assert!(joint.conditional(4, &[0.0; 4]).is_err());
    assert!(joint.conditional(0, &[0.0; 3]).is_err());
    let e = msg(state_index(&[0.0, 0.5, 1.0], 3).unwrap_err());
    assert!(e.contains("0.5 (variable 1)"), "{e}");
}
