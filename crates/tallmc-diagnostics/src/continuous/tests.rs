//! Exactness of the integrals, quadrature, merging, pooling and the batch-means calibration.

use rand::RngExt;
use rand_distr::{Exp1, StandardNormal};
use tallmc_core::rng::chain_rng;

use super::*;
use crate::error::Error;

/// Relative tolerance of "exact" integrals (rounding only).
const EXACT: f64 = 1e-12;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

fn cfg(cross: bool) -> TimeAverageConfig {
    TimeAverageConfig { cross_moments: cross, ..Default::default() }
}

#[test]
fn bouncing_particle_has_exact_uniform_moments_however_it_is_cut() {
    // Coordinate 0 sweeps [0, 1] at speed 1, coordinate 1 sweeps [−2, 2] at speed 4 (one
    // sweep each per unit of time); the sweeps are cut into uneven segments at fixed fractions.
    let cuts = [0.0, 0.13, 0.5, 0.51, 0.9, 1.0];
    let mut avg = TimeAverages::new(2, cfg(true)).unwrap();
    let mut x = [0.0, -2.0];
    let mut v = [1.0, 4.0];
    for _sweep in 0..37 {
        for w in cuts.windows(2) {
            let tau = w[1] - w[0];
            avg.add(&x, &v, tau).unwrap();
            x = [x[0] + v[0] * tau, x[1] + v[1] * tau];
        }
        x = [x[0].round(), x[1].round()]; // remove rounding drift at the walls
        v = [-v[0], -v[1]];
    }
    assert!(close(avg.total_time(), 37.0, EXACT));
    let (m, var) = (avg.mean(), avg.variance());
    assert!(close(m[0], 0.5, EXACT) && m[1].abs() < EXACT, "{m:?}");
    assert!(close(var[0], 1.0 / 12.0, EXACT), "{var:?}");
    assert!(close(var[1], 16.0 / 12.0, EXACT), "{var:?}");
    let ints = avg.integrals();
    assert!(close(ints[0], 18.5, EXACT) && ints[1].abs() < EXACT * 37.0);
    // The two coordinates move in lock-step: x₁ = 4x₀ − 2, so cov = 4 var₀.
    let cov = avg.covariance().unwrap();
    assert!(close(cov[1], 4.0 / 12.0, EXACT) && cov[1] == cov[2], "{cov:?}");
    assert_eq!(avg.segments(), 37 * 5);
}

#[test]
fn cross_moments_exact_on_a_known_path() {
    // (0,0) → (1,2) at velocity (1,2) in time 1, then (1,2) → (−1,2) at (−1,0) in time 2.
    // ∫x₁ = 1/2, ∫x₂ = 5, ∫x₁² = 1, ∫x₁x₂ = 2/3, ∫x₂² = 28/3 over T = 3.
    let mut avg = TimeAverages::new(2, cfg(true)).unwrap();
    avg.add(&[0.0, 0.0], &[1.0, 2.0], 1.0).unwrap();
    avg.add(&[1.0, 2.0], &[-1.0, 0.0], 2.0).unwrap();
    let m = avg.mean();
    assert!(close(m[0], 1.0 / 6.0, EXACT) && close(m[1], 5.0 / 3.0, EXACT));
    let cov = avg.covariance().unwrap();
    let want = [11.0 / 36.0, -1.0 / 18.0, -1.0 / 18.0, 1.0 / 3.0];
    for (c, w) in cov.iter().zip(want) {
        assert!(close(*c, w, EXACT), "{cov:?} vs {want:?}");
    }
    let var = avg.variance();
    assert!(close(var[0], want[0], EXACT) && close(var[1], want[3], EXACT));
    // Without cross moments, a clear error.
    let mut plain = TimeAverages::new(2, cfg(false)).unwrap();
    plain.add(&[0.0, 0.0], &[1.0, 2.0], 1.0).unwrap();
    let e = plain.covariance().unwrap_err().to_string();
    assert!(e.contains("cross_moments = false for chain 0"), "{e}");
}

#[test]
fn second_moments_stay_accurate_far_from_the_origin() {
    // Mean 10⁶, sd ~ 10⁻³: E[x²] − m² would lose everything; the centred sums do not.
    let mut avg = TimeAverages::new(1, cfg(false)).unwrap();
    let c = 1e6;
    for k in 0..10 {
        let (x0, v) = if k % 2 == 0 { (c, 1e-3) } else { (c + 1e-3, -1e-3) };
        avg.add(&[x0], &[v], 1.0).unwrap();
    }
    assert!(close(avg.variance()[0], 1e-6 / 12.0, 1e-6), "{}", avg.variance()[0]);
}

fn random_segments(seed: u64, n: usize, dim: usize) -> Vec<(Vec<f64>, Vec<f64>, f64)> {
    let mut rng = chain_rng(seed, 0);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..dim).map(|_| rng.sample(StandardNormal)).collect();
            let v: Vec<f64> = (0..dim).map(|_| rng.sample(StandardNormal)).collect();
            let tau: f64 = rng.sample(Exp1);
            (x, v, tau)
        })
        .collect()
}

#[test]
fn quadrature_is_exact_for_polynomials_up_to_its_degree() {
    let segs = random_segments(3, 50, 2);
    for nodes in [1usize, 2, 3, 5] {
        let degree = 2 * nodes as i32 - 1;
        let q = QuadratureConfig { nodes, max_step: 0.3 };
        for p in 0..=degree {
            let f = |x: &[f64]| x[0].powi(p) + 0.5 * x[1];
            let mut avg = TestFunctionAverage::new(2, f, q, BatchConfig::default()).unwrap();
            let mut exact = 0.0;
            for (x, v, tau) in &segs {
                avg.add(x, v, *tau).unwrap();
                let end = x[0] + v[0] * tau;
                exact += (end.powi(p + 1) - x[0].powi(p + 1)) / (f64::from(p + 1) * v[0]);
                exact += 0.5 * tau * (x[1] + 0.5 * v[1] * tau);
            }
            assert!(
                close(avg.integral(), exact, 1e-10),
                "nodes {nodes}, degree {p}: {} vs {exact}",
                avg.integral()
            );
        }
    }
    // x² by quadrature agrees with the exact second moment.
    let mut q2 = TestFunctionAverage::new(
        2,
        |x: &[f64]| x[1] * x[1],
        Default::default(),
        Default::default(),
    )
    .unwrap();
    let mut m = TimeAverages::new(2, cfg(false)).unwrap();
    for (x, v, tau) in &segs {
        q2.add(x, v, *tau).unwrap();
        m.add(x, v, *tau).unwrap();
    }
    let second = m.variance()[1] + m.mean()[1].powi(2);
    assert!(close(q2.mean(), second, EXACT), "{} vs {second}", q2.mean());
}

#[test]
fn quadrature_is_accurate_for_sin_with_short_sub_intervals() {
    let segs = random_segments(4, 200, 1);
    let run = |max_step: f64| {
        let q = QuadratureConfig { nodes: 5, max_step };
        let mut avg =
            TestFunctionAverage::new(1, |x: &[f64]| x[0].sin(), q, BatchConfig::default()).unwrap();
        for (x, v, tau) in &segs {
            avg.add(x, v, *tau).unwrap();
        }
        avg.integral()
    };
    let exact: f64 =
        segs.iter().map(|(x, v, tau)| (x[0].cos() - (x[0] + v[0] * tau).cos()) / v[0]).sum();
    let coarse = run(f64::INFINITY);
    let fine = run(0.05);
    assert!((fine - exact).abs() < 1e-11, "{fine} vs {exact}");
    assert!((coarse - exact).abs() > (fine - exact).abs());
}

#[test]
fn merging_bins_gives_the_same_integrals_as_not_merging() {
    let segs = random_segments(5, 300, 2);
    let fine = BatchConfig { max_batches: 1 << 14, initial_bin_width: 0.25 };
    let coarse = BatchConfig { max_batches: 8, initial_bin_width: 0.25 };
    let mut a =
        TimeAverages::new(2, TimeAverageConfig { batches: fine, cross_moments: true }).unwrap();
    let mut b =
        TimeAverages::new(2, TimeAverageConfig { batches: coarse, cross_moments: true }).unwrap();
    for (x, v, tau) in &segs {
        a.add(x, v, *tau).unwrap();
        b.add(x, v, *tau).unwrap();
    }
    // The totals do not depend on the bins at all.
    assert_eq!(a.integrals(), b.integrals());
    assert_eq!(a.covariance().unwrap(), b.covariance().unwrap());
    assert_eq!(a.batch_length(), 0.25, "the fine bins never merged");
    let ratio = (b.batch_length() / a.batch_length()) as usize;
    assert!(ratio >= 64 && b.num_batches() <= 8 && b.num_batches() > 4);
    let fine_bins: Vec<Vec<f64>> =
        a.bins().batches(a.total_time()).map(|(_, s)| s.to_vec()).collect();
    for (i, (d, s)) in b.bins().batches(b.total_time()).enumerate() {
        let group =
            &fine_bins[(i * ratio).min(fine_bins.len())..((i + 1) * ratio).min(fine_bins.len())];
        for j in 0..2 {
            let sum: f64 = group.iter().map(|g| g[j]).sum();
            assert!(close(s[j], sum, EXACT), "bin {i}, coordinate {j}: {} vs {sum}", s[j]);
        }
        if i + 1 < b.num_batches() {
            assert_eq!(d, b.batch_length());
        }
    }
    // Bins sum to the totals.
    for j in 0..2 {
        let sum: f64 = b.bins().batches(b.total_time()).map(|(_, s)| s[j]).sum();
        assert!(close(sum, b.centered_first()[j], EXACT));
    }
}

#[test]
fn batch_means_mcse_matches_the_spread_across_replicas() {
    // Segments with i.i.d. N(0, 1) start positions and velocities and Exp(1) durations: the
    // time average is a ratio of i.i.d. sums with true value 0. Over R independent replicas,
    // the empirical variance of the means must equal the average MCSE².
    //
    // Tolerance: the sample variance of R normal means has relative sd √(2/(R − 1)); the mean
    // of R MCSE² has relative sd √(2/(B − 1))/√R with B ≥ 21 batches; Z = 4 of their combined
    // sd. Bias: batches hold ≥ 4000/40 = 100 segments, and batch means underestimate σ²_∞ by
    // about (2 × correlation time)/(batch length) ≤ 2 × 2/100 = 4 % (the correlation time of
    // x(t) is the length-biased segment length E[τ²]/E[τ] = 2); allowed on top.
    const R: usize = 1000;
    const N: usize = 4000;
    const Z: f64 = 4.0;
    const BIAS: f64 = 0.04;
    let mut means = Vec::with_capacity(R);
    let mut mcse2 = Vec::with_capacity(R);
    let mut covered = 0;
    for r in 0..R {
        let mut rng = chain_rng(77, r);
        let mut avg = TimeAverages::new(1, cfg(false)).unwrap();
        for _ in 0..N {
            let x: f64 = rng.sample(StandardNormal);
            let v: f64 = rng.sample(StandardNormal);
            let tau: f64 = rng.sample(Exp1);
            avg.add(&[x], &[v], tau).unwrap();
        }
        let (m, se) = (avg.mean()[0], avg.mcse_mean()[0]);
        assert!(avg.num_batches() > 20 && avg.num_batches() <= 40);
        covered += usize::from(m.abs() <= 2.0 * se);
        means.push(m);
        mcse2.push(se * se);
    }
    let mean_m = means.iter().sum::<f64>() / R as f64;
    let var_m = means.iter().map(|m| (m - mean_m).powi(2)).sum::<f64>() / (R - 1) as f64;
    let avg_mcse2 = mcse2.iter().sum::<f64>() / R as f64;
    let ratio = var_m / avg_mcse2;
    let sd = (2.0 / (R - 1) as f64 + 2.0 / (20.0 * R as f64)).sqrt();
    assert!((ratio - 1.0).abs() <= Z * sd + BIAS, "var/MCSE² = {ratio} (sd {sd})");
    // Coverage of ±2 MCSE: 95.4 % for a normal, ≈ 94.5 % for t with ~30 df; binomial sd 0.7 %.
    let cover = covered as f64 / R as f64;
    let bsd = (0.95 * 0.05 / R as f64).sqrt();
    assert!((cover - 0.945).abs() <= Z * bsd + 0.01, "coverage {cover}");
}

#[test]
fn pooling_chains_equals_concatenating_them() {
    let segs = random_segments(6, 400, 2);
    let (left, right) = segs.split_at(150);
    let mut a = TimeAverages::new(2, cfg(true)).unwrap();
    let mut b = a.clone();
    let mut all = a.clone();
    for (x, v, tau) in left {
        a.add(x, v, *tau).unwrap();
        all.add(x, v, *tau).unwrap();
    }
    for (x, v, tau) in right {
        b.add(x, v, *tau).unwrap();
        all.add(x, v, *tau).unwrap();
    }
    let pooled = summarize_continuous(&["a", "b"], &[&a, &b]).unwrap();
    let single = all.summary(&["a", "b"]).unwrap();
    for (p, s) in pooled.iter().zip(&single) {
        assert!(close(p.mean, s.mean, EXACT) && close(p.sd, s.sd, EXACT));
        assert!(close(p.time, s.time, EXACT));
        assert_eq!(p.chains, 2);
        assert!(p.mcse_mean > 0.0 && p.batches == a.num_batches() + b.num_batches());
    }
    let pc = pooled_covariance(&[&a, &b]).unwrap();
    for (p, s) in pc.iter().zip(all.covariance().unwrap()) {
        assert!(close(*p, s, EXACT));
    }
    // Test functions pool the same way.
    let f = |x: &[f64]| x[0] * x[1];
    let q = QuadratureConfig::default();
    let mut fa = TestFunctionAverage::new(2, f, q, BatchConfig::default()).unwrap();
    let mut fb = TestFunctionAverage::new(2, f, q, BatchConfig::default()).unwrap();
    left.iter().for_each(|(x, v, t)| fa.add(x, v, *t).unwrap());
    right.iter().for_each(|(x, v, t)| fb.add(x, v, *t).unwrap());
    let e = pooled_estimate(&[&fa, &fb]).unwrap();
    let want = pc[1] + pooled[0].mean * pooled[1].mean;
    assert!(close(e.mean, want, 1e-10), "{} vs {want}", e.mean);
    assert_eq!(e.chains, 2);
    let json = serde_json::to_string(&pooled[0]).unwrap();
    assert!(json.starts_with("{\"name\":\"a\",\"mean\":"), "{json}");
}

#[test]
fn bad_input_is_an_error_naming_the_value() {
    assert!(TimeAverages::new(0, cfg(false)).is_err());
    let bad = TimeAverageConfig {
        batches: BatchConfig { max_batches: 7, ..Default::default() },
        ..Default::default()
    };
    let e = TimeAverages::new(1, bad).unwrap_err().to_string();
    assert!(e.contains("max_batches = 7"), "{e}");
    let mut avg = TimeAverages::new(2, cfg(false)).unwrap();
    let e = avg.add(&[0.0, 1.0], &[1.0, 1.0], -0.5).unwrap_err().to_string();
    assert!(e.contains("segment duration = -0.5 (segment 0)"), "{e}");
    let e = avg.add(&[0.0, f64::NAN], &[1.0, 1.0], 0.5).unwrap_err().to_string();
    assert!(e.contains("NaN at coordinate 1 of segment 0"), "{e}");
    assert!(matches!(
        avg.add(&[0.0], &[1.0, 1.0], 0.5),
        Err(Error::Core(tallmc_core::Error::DimensionMismatch { expected: 2, found: 1, .. }))
    ));
    assert_eq!(avg.segments(), 0);
    let e = avg.summary(&["a", "b"]).unwrap_err().to_string();
    assert!(e.contains("total time = 0"), "{e}");
    avg.add(&[0.0, 1.0], &[1.0, 1.0], 0.5).unwrap();
    assert!(avg.summary(&["a"]).is_err());
    assert!(summarize_continuous::<&str>(&[], &[]).is_err());
    let q = QuadratureConfig { max_step: 0.0, ..Default::default() };
    let e = TestFunctionAverage::new(1, |x: &[f64]| x[0], q, BatchConfig::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("max_step = 0"), "{e}");
    let mut f = TestFunctionAverage::new(
        1,
        |x: &[f64]| if x[0] > 0.5 { f64::NAN } else { x[0] },
        QuadratureConfig { nodes: 1, max_step: f64::INFINITY },
        BatchConfig::default(),
    )
    .unwrap();
    let e = f.add(&[-1.0], &[1.0], 2.0).unwrap_err().to_string();
    assert!(e.contains("test function integral = NaN on segment 0"), "{e}");
}
