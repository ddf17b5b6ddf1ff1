//! Deterministic checks: finite differences at a fixed subsample, exactness on the whole data,
//! σ̂² = 0 for quadratic terms, agreement of the two engines, counts, and bad input.

use crate::common::*;
use rand::RngExt;
use tallmc_core::{EvalCounts, FullData, Parallelism, Terms};
use tallmc_estimators::{
    BlockPoissonEstimator, BlockPoissonSubsample, ControlVariate, ControlVariateGradient, CvOrder,
    DifferenceEstimator, DifferenceTerms, Error, GradientEstimator, HessianProducts, RankOne,
};

const ORDERS: [CvOrder; 3] = [CvOrder::Zero, CvOrder::One, CvOrder::Two];

/// Relative tolerance of central differences with step 1e-5 on O(1)-curvature functions
/// (truncation ~1e-10 · third derivative, rounding ~1e-16 · |f| / 1e-5).
const FD_REL: f64 = 1e-6;

fn indices(n: usize, m: usize, seed: u64) -> Vec<u32> {
    let mut r = rng(seed);
    (0..m).map(|_| r.random_range(0..n as u32)).collect()
}

#[test]
fn control_variates_built_on_all_cores_match_the_single_running_sum() {
    // 200,003 rows: three full PARALLEL_CHUNK chunks and a ragged one.
    let model = logistic(200_003, 3);
    let center = [0.2, 0.4, 0.0, -0.5];
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for order in ORDERS {
        let (seq, seq_counts) = ControlVariate::new(&model, &center, order).unwrap();
        let on = |pool: &rayon::ThreadPool| {
            pool.install(|| ControlVariate::new_on_all_cores(&model, &center, order)).unwrap()
        };
        let ((a, a_counts), (b, _)) = (on(&one), on(&two));
        // The same bits on any number of threads…
        assert_eq!(a.sum_at_center().to_bits(), b.sum_at_center().to_bits());
        assert_eq!(a.gradient_sum(), b.gradient_sum());
        assert_eq!(a.hessian_sum(), b.hessian_sum());
        // …and the single running sum's value up to summation order (a sum of 2·10⁵ terms
        // rounds to ~1e-16·√N relative; 1e-12 leaves room).
        assert_close(&[a.sum_at_center()], &[seq.sum_at_center()], 1e-12, "Σℓ(θ*)");
        assert_close(a.gradient_sum(), seq.gradient_sum(), 1e-12, "Σ∇ℓ(θ*)");
        assert_close(a.hessian_sum(), seq.hessian_sum(), 1e-12, "Σ∇²ℓ(θ*)");
        assert_eq!(a_counts, seq_counts, "order {order:?}: one pass, counted the same");
    }
    for order in [CvOrder::Zero, CvOrder::One] {
        let (seq, _) = ControlVariate::without_hessians(&model, &center, order).unwrap();
        let (par, _) =
            ControlVariate::without_hessians_on_all_cores(&model, &center, order).unwrap();
        assert_close(par.gradient_sum(), seq.gradient_sum(), 1e-12, "Σ∇ℓ(θ*), gradients only");
        assert!(par.hessian_sum().is_empty());
    }
    assert!(matches!(
        ControlVariate::without_hessians_on_all_cores(&model, &center, CvOrder::Two),
        Err(Error::HessiansRequired)
    ));
    // A bad centre is the same error as the sequential builder's.
    assert!(ControlVariate::new_on_all_cores(&model, &[0.0; 3], CvOrder::Two).is_err());
}

#[test]
fn difference_gradients_match_finite_differences_rank_one_and_generic() {
    let model = logistic(500, 3);
    let center = [0.2, 0.4, 0.0, -0.5];
    let theta = [0.35, 0.1, 0.2, -0.3];
    let idx = indices(500, 40, 1);
    for order in ORDERS {
        let (cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let mut r1 = DifferenceEstimator::new(&model, cv.clone(), RankOne::new(40), 40).unwrap();
        let mut gen_ =
            DifferenceEstimator::new(&model, cv.clone(), HessianProducts::new(4, 40), 40).unwrap();
        let (mut gl, mut gv, mut gp) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        let e = r1.estimate_grad(&model, &theta, &idx, &mut gl, &mut gv).unwrap();
        let ep = r1.perturbed_grad(&model, &theta, &idx, &mut gp).unwrap();
        assert_eq!(e.log_likelihood, ep.log_likelihood);
        let mut val = |t: &[f64]| r1.estimate(&model, t, &idx).unwrap();
        let fd_l = finite_difference(&theta, 1e-5, |t| val(t).log_likelihood);
        let fd_v = finite_difference(&theta, 1e-5, |t| val(t).variance);
        let fd_p = finite_difference(&theta, 1e-5, |t| val(t).perturbed());
        assert_close(&gl, &fd_l, FD_REL, &format!("∇ℓ̂ order {order:?}"));
        assert_close(&gv, &fd_v, FD_REL, &format!("∇σ̂² order {order:?}"));
        assert_close(&gp, &fd_p, FD_REL, &format!("∇(ℓ̂ − σ̂²/2) order {order:?}"));
        // The generic engine gives the same values and gradients.
        let (mut hl, mut hv) = ([0.0; 4], [0.0; 4]);
        let eg = gen_.estimate_grad(&model, &theta, &idx, &mut hl, &mut hv).unwrap();
        assert!((eg.log_likelihood - e.log_likelihood).abs() < 1e-9 * e.log_likelihood.abs());
        assert!((eg.variance - e.variance).abs() < 1e-8 * e.variance.abs().max(1.0));
        assert_close(&hl, &gl, 1e-10, "generic ∇ℓ̂");
        assert_close(&hv, &gv, 1e-8, "generic ∇σ̂²");
    }
}

#[test]
fn generic_engine_gradients_match_finite_differences_on_linear_regression() {
    let model = linear(300, 2);
    let center = [0.9, 0.6, 0.7, -0.6];
    let theta = [1.0, 0.75, 0.65, -0.7];
    let idx = indices(300, 30, 2);
    for order in ORDERS {
        let (cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let mut est =
            DifferenceEstimator::new(&model, cv, HessianProducts::new(4, 30), 30).unwrap();
        let (mut gl, mut gv) = ([0.0; 4], [0.0; 4]);
        est.estimate_grad(&model, &theta, &idx, &mut gl, &mut gv).unwrap();
        let fd_l = finite_difference(&theta, 1e-5, |t| {
            est.estimate(&model, t, &idx).unwrap().log_likelihood
        });
        let fd_v =
            finite_difference(&theta, 1e-5, |t| est.estimate(&model, t, &idx).unwrap().variance);
        assert_close(&gl, &fd_l, FD_REL, &format!("∇ℓ̂ order {order:?}"));
        assert_close(&gv, &fd_v, FD_REL, &format!("∇σ̂² order {order:?}"));
    }
}

#[test]
fn block_poisson_gradient_matches_finite_differences() {
    let model = logistic(400, 2);
    let center = [0.3, 0.5, 0.2];
    let theta = [0.35, 0.45, 0.25];
    let (cv, _) = ControlVariate::new(&model, &center, CvOrder::Two).unwrap();
    let mut sub = BlockPoissonSubsample::new(400, 8, 12, 2).unwrap();
    sub.draw_all(&mut rng(3));
    let mut est = BlockPoissonEstimator::new(&model, cv, RankOne::new(8), 8, 12, -30.0).unwrap();
    let mut g = [0.0; 3];
    let e = est.estimate_grad(&model, &theta, &sub, &mut g).unwrap();
    assert!(e.log_abs_likelihood.is_finite());
    let fd = finite_difference(&theta, 1e-5, |t| {
        est.estimate(&model, t, &sub).unwrap().log_abs_likelihood
    });
    assert_close(&g, &fd, FD_REL, "∇log|L̂_B|");
    // Same with the generic engine.
    let (cv, _) = ControlVariate::new(&model, &center, CvOrder::One).unwrap();
    let mut est =
        BlockPoissonEstimator::new(&model, cv, HessianProducts::new(3, 8), 8, 12, -30.0).unwrap();
    est.estimate_grad(&model, &theta, &sub, &mut g).unwrap();
    let fd = finite_difference(&theta, 1e-5, |t| {
        est.estimate(&model, t, &sub).unwrap().log_abs_likelihood
    });
    assert_close(&g, &fd, FD_REL, "∇log|L̂_B| (generic)");
}

#[test]
fn control_variate_gradient_equals_the_difference_estimator_gradient() {
    let model = logistic(500, 3);
    let center = [0.2, 0.4, 0.0, -0.5];
    let theta = [0.3, 0.3, 0.1, -0.4];
    let idx = indices(500, 25, 4);
    for order in ORDERS {
        let (cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let mut sg = ControlVariateGradient::new(&model, cv.clone(), RankOne::new(25), 25).unwrap();
        let mut de = DifferenceEstimator::new(&model, cv, RankOne::new(25), 25).unwrap();
        let (mut a, mut b, mut v) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        let counts = sg.estimate_gradient(&model, &theta, &idx, &mut a);
        de.estimate_grad(&model, &theta, &idx, &mut b, &mut v).unwrap();
        assert_close(&a, &b, 1e-12, "CV gradient");
        // Gradients only: 25 at θ, and the control variates' gradients (and Hessians) at θ*.
        let per = order.counts_per_datum();
        let at_star = EvalCounts { terms: 0, ..per.scale_helper(25) };
        assert_eq!(counts, EvalCounts { gradients: 25 + at_star.gradients, ..at_star });
        // Same minibatch again: nothing at θ*.
        assert_eq!(
            sg.estimate_gradient(&model, &theta, &idx, &mut a),
            EvalCounts { gradients: 25, ..EvalCounts::ZERO }
        );
    }
}

/// The gradient-only path (`add_gradient_differences`) gives the numbers of `differences` +
/// `add_weighted_gradients` bit for bit, for both engines, every order, with and without a
/// cache hit, and after a re-centring; the rank-one engine evaluates no term.
#[test]
fn gradient_only_path_matches_the_difference_path_bit_for_bit() {
    let model = logistic(500, 3);
    let center = [0.2, 0.4, 0.0, -0.5];
    let theta = [0.3, 0.3, 0.1, -0.4];
    let (idx, other) = (indices(500, 30, 5), indices(500, 30, 6));
    let weight = 500.0 / 30.0;
    for order in ORDERS {
        let (mut cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let mut engines = (RankOne::new(30), HessianProducts::new(4, 30));
        for (step, batch) in [&idx, &idx, &other].into_iter().enumerate() {
            if step == 2 {
                cv.recenter(&model, &[0.25, 0.35, 0.05, -0.45]).unwrap();
            }
            let (mut reference, mut d, mut want) = (RankOne::new(30), [0.0; 30], [1.0; 4]);
            reference.differences(&model, &cv, &theta, 0, batch, &mut d, true);
            reference.add_weighted_gradients(&model, 0, batch, &[weight; 30], &mut want);
            let (mut g1, mut g2) = ([1.0; 4], [1.0; 4]);
            let c1 =
                engines.0.add_gradient_differences(&model, &cv, &theta, batch, weight, &mut g1);
            engines.1.add_gradient_differences(&model, &cv, &theta, batch, weight, &mut g2);
            assert_eq!(g1.map(f64::to_bits), want.map(f64::to_bits), "rank one, {order:?}, {step}");
            assert_close(&g2, &want, 1e-10, "generic engine");
            assert_eq!(c1.terms, 0);
            let refreshed = order != CvOrder::Zero && step != 1;
            assert_eq!(c1.gradients, if refreshed { 60 } else { 30 }, "{order:?}, call {step}");
        }
    }
}

/// The rank-one engine reads a reused subsample from the model's gathered copy (HMC-ECS keeps
/// u through a trajectory and refreshes one block per iteration): d_k and Σ w_k ∇d_k must be
/// the bits of a fresh engine, which reads the rows in place, along a sequence of calls that
/// reuse the subsample, refresh a block, revert it, change the subsample's size and re-centre.
#[test]
fn gathered_subsample_gives_the_bits_of_the_index_path() {
    let model = logistic(700, 3);
    let center = [0.2, 0.4, 0.0, -0.5];
    let thetas = [[0.3, 0.3, 0.1, -0.4], [0.25, 0.45, -0.05, -0.55]];
    let base = indices(700, 40, 7);
    let mut refreshed = base.clone();
    refreshed[8..16].copy_from_slice(&indices(700, 8, 8));
    let shorter = base[..24].to_vec();
    let calls = [&base, &base, &refreshed, &refreshed, &base, &shorter, &base, &base];
    let weights: Vec<f64> = (0..40).map(|k| 1.0 + k as f64 / 8.0).collect();
    for order in ORDERS {
        let (mut cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let mut engine = RankOne::new(40);
        let mut slots = [None; 40];
        for (step, idx) in calls.into_iter().enumerate() {
            if step == 7 {
                cv.recenter(&model, &[0.25, 0.35, 0.05, -0.45]).unwrap();
            }
            let (m, theta) = (idx.len(), &thetas[step % 2]);
            let (mut d, mut g) = (vec![0.0; m], [0.5; 4]);
            let c = engine.differences(&model, &cv, theta, 0, idx, &mut d, true);
            engine.add_weighted_gradients(&model, 0, idx, &weights[..m], &mut g);
            let mut fresh = RankOne::new(40);
            let (mut want_d, mut want_g) = (vec![0.0; m], [0.5; 4]);
            fresh.differences(&model, &cv, theta, 0, idx, &mut want_d, true);
            fresh.add_weighted_gradients(&model, 0, idx, &weights[..m], &mut want_g);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&d), bits(&want_d), "d_k, {order:?}, call {step}");
            assert_eq!(bits(&g), bits(&want_g), "Σ w_k ∇d_k, {order:?}, call {step}");
            // Counts: m at θ, plus the control variates of the slots whose index changed (all
            // of them after the re-centring).
            if step == 7 {
                slots.fill(None);
            }
            let mut misses = 0;
            for (slot, &i) in slots.iter_mut().zip(idx.iter()) {
                misses += u64::from(*slot != Some(i));
                *slot = Some(i);
            }
            let per = order.counts_per_datum();
            let m = m as u64;
            let want = EvalCounts {
                terms: m + misses * per.terms,
                gradients: m + misses * per.gradients,
                hessians: misses * per.hessians,
            };
            assert_eq!(c, want, "{order:?}, call {step}");
        }
    }
}

#[test]
fn exact_when_the_subsample_is_the_whole_data() {
    let model = logistic(300, 2);
    let center = [0.1, 0.2, 0.3];
    let theta = [0.4, -0.1, 0.5];
    let all: Vec<u32> = (0..300).collect();
    let mut full = FullData::for_model(&model, Parallelism::Sequential);
    let mut g_full = [0.0; 3];
    let ll = full.log_likelihood_grad(&model, &theta, &mut g_full);
    for order in ORDERS {
        let (cv, counts) = ControlVariate::new(&model, &center, order).unwrap();
        assert_eq!(counts, EvalCounts { terms: 300, ..order.counts_per_datum().scale_helper(300) });
        let mut est = DifferenceEstimator::new(&model, cv.clone(), RankOne::new(300), 300).unwrap();
        let (mut gl, mut gv) = ([0.0; 3], [0.0; 3]);
        let e = est.estimate_grad(&model, &theta, &all, &mut gl, &mut gv).unwrap();
        assert!(
            (e.log_likelihood - ll).abs() < 1e-10 * ll.abs(),
            "order {order:?}: {} vs {ll}",
            e.log_likelihood
        );
        assert_close(&gl, &g_full, 1e-10, "∇ℓ̂ on the whole data");
        // Σ_k q_k over the data, from the per-datum engine, equals the O(d²) sum.
        let d = est.last_differences(300).iter().sum::<f64>();
        assert!(((ll - d) - cv.sum(&theta)).abs() < 1e-10 * ll.abs());
        let mut sg = ControlVariateGradient::new(&model, cv, RankOne::new(300), 300).unwrap();
        let mut g = [0.0; 3];
        sg.estimate_gradient(&model, &theta, &all, &mut g);
        assert_close(&g, &g_full, 1e-10, "CV gradient on the whole data");
    }
}

trait Scale {
    fn scale_helper(self, n: u64) -> EvalCounts;
}
impl Scale for EvalCounts {
    fn scale_helper(self, n: u64) -> EvalCounts {
        EvalCounts {
            terms: self.terms * n,
            gradients: self.gradients * n,
            hessians: self.hessians * n,
        }
    }
}

#[test]
fn second_order_on_quadratic_terms_has_zero_differences() {
    let model = gaussian_mean(2000);
    let (cv, _) = ControlVariate::new(&model, &[1.8], CvOrder::Two).unwrap();
    let idx = indices(2000, 50, 5);
    let all: Vec<u32> = (0..2000).collect();
    let exact = model.sum_log_terms(&[2.6], &all);
    assert!((cv.sum(&[2.6]) - exact).abs() < 1e-12 * exact.abs());
    let mut r1 = DifferenceEstimator::new(&model, cv.clone(), RankOne::new(50), 50).unwrap();
    let mut gen_ = DifferenceEstimator::new(&model, cv, HessianProducts::new(1, 50), 50).unwrap();
    for theta in [1.8, 2.6, -3.0] {
        let (mut gl, mut gv) = ([0.0], [0.0]);
        for e in [
            r1.estimate_grad(&model, &[theta], &idx, &mut gl, &mut gv).unwrap(),
            gen_.estimate_grad(&model, &[theta], &idx, &mut gl, &mut gv).unwrap(),
        ] {
            // |ℓ_k| ~ 5 so rounding of one d_k is ~1e-15; σ̂² = n² s²_d/m ~ 2000²·1e-30/50.
            assert!(e.variance < 1e-18, "σ̂² = {} at θ = {theta}", e.variance);
            assert!(gv[0].abs() < 1e-9, "∇σ̂² = {}", gv[0]);
        }
        let d = r1.last_differences(50);
        assert!(d.iter().all(|x| x.abs() < 1e-12), "{d:?}");
    }
}

#[test]
fn variance_of_differences_decreases_with_the_order_near_the_centre() {
    let model = logistic(2000, 3);
    let center = [0.3, 0.5, 0.2, -0.1];
    let theta = [0.32, 0.47, 0.23, -0.08];
    let mut vars = Vec::new();
    for order in ORDERS {
        let (cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let (_, var, counts) = tallmc_estimators::tuning::population_differences(
            &model,
            &cv,
            &mut RankOne::new(0),
            &theta,
        )
        .unwrap();
        assert_eq!(counts.terms, 2 * 2000);
        vars.push(var);
    }
    assert!(vars[0] > 100.0 * vars[1] && vars[1] > 100.0 * vars[2], "σ²_d by order: {vars:?}");
}

#[test]
fn recentering_refreshes_the_caches() {
    let model = logistic(300, 2);
    let idx = indices(300, 20, 6);
    let theta = [0.1, 0.2, 0.3];
    let (cv, _) = ControlVariate::new(&model, &[0.0, 0.0, 0.0], CvOrder::Two).unwrap();
    let mut est = DifferenceEstimator::new(&model, cv, RankOne::new(20), 20).unwrap();
    est.estimate(&model, &theta, &idx).unwrap();
    let c = est.estimate(&model, &theta, &idx).unwrap().counts;
    assert_eq!(c, EvalCounts::terms(20));
    est.control_variate_mut().recenter(&model, &[0.1, 0.2, 0.25]).unwrap();
    let after = est.estimate(&model, &theta, &idx).unwrap();
    assert_eq!(after.counts, EvalCounts { terms: 40, gradients: 20, hessians: 20 });
    let (fresh, _) = ControlVariate::new(&model, &[0.1, 0.2, 0.25], CvOrder::Two).unwrap();
    let mut est2 = DifferenceEstimator::new(&model, fresh, RankOne::new(20), 20).unwrap();
    assert_eq!(est2.estimate(&model, &theta, &idx).unwrap().log_likelihood, after.log_likelihood);
}

#[test]
fn block_poisson_subsample_refresh_and_reject() {
    let mut r = rng(7);
    let mut sub = BlockPoissonSubsample::new(1000, 5, 10, 3).unwrap();
    sub.draw_all(&mut r);
    let before: Vec<Vec<u32>> = (0..10).map(|l| sub.factor_indices(l).to_vec()).collect();
    let changed = sub.propose_refresh(&mut r).to_vec();
    assert_eq!(changed.len(), 3);
    let mut sorted = changed.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 3, "refreshed factors are distinct");
    for l in 0..10 {
        if !changed.contains(&l) {
            assert_eq!(sub.factor_indices(l), before[l]);
        }
        assert_eq!(sub.factor_indices(l).len(), 5 * sub.blocks(l));
    }
    sub.reject();
    for l in 0..10 {
        assert_eq!(sub.factor_indices(l), before[l]);
    }
    sub.propose_refresh(&mut r);
    sub.accept();
    sub.reject(); // no-op after accept
}

#[test]
fn bad_input_is_a_clear_error() {
    let model = logistic(100, 2);
    let (cv, _) = ControlVariate::new(&model, &[0.0; 3], CvOrder::One).unwrap();
    let msg = |e: Error| e.to_string();
    assert!(
        msg(ControlVariate::new(&model, &[0.0; 2], CvOrder::One).unwrap_err())
            .contains("expected 3")
    );
    assert!(
        msg(ControlVariate::new(&model, &[0.0, f64::NAN, 0.0], CvOrder::One).unwrap_err())
            .contains("θ*")
    );
    assert_eq!(
        ControlVariate::without_hessians(&model, &[0.0; 3], CvOrder::Two).unwrap_err(),
        Error::HessiansRequired
    );
    assert!(
        msg(DifferenceEstimator::new(&model, cv.clone(), RankOne::new(1), 0).unwrap_err())
            .contains("m = 0")
    );
    let other = logistic(50, 2);
    assert!(DifferenceEstimator::new(&other, cv.clone(), RankOne::new(1), 5).is_err());
    assert!(
        msg(BlockPoissonEstimator::new(&model, cv.clone(), RankOne::new(1), 5, 0, -1.0)
            .unwrap_err())
        .contains("λ = 0")
    );
    assert!(
        BlockPoissonEstimator::new(&model, cv.clone(), RankOne::new(1), 5, 3, f64::INFINITY)
            .is_err()
    );
    assert!(msg(BlockPoissonSubsample::new(100, 5, 0, 1).unwrap_err()).contains("λ = 0"));
    assert!(msg(BlockPoissonSubsample::new(100, 5, 4, 5).unwrap_err()).contains("[1, λ = 4]"));
    assert!(msg(BlockPoissonSubsample::new(100, 0, 4, 1).unwrap_err()).contains("m = 0"));
    // G = 0 or G > m for the difference estimator's blocks (core's BlockSubsample).
    let g0: Error = tallmc_core::subsample::BlockSubsample::new(100, 10, 0).unwrap_err();
    assert!(msg(g0).contains("G = 0"));
    assert!(tallmc_core::subsample::BlockSubsample::new(100, 10, 11).is_err());
    let mut est = DifferenceEstimator::new(&model, cv, RankOne::new(5), 5).unwrap();
    assert!(matches!(
        est.estimate(&model, &[0.0; 2], &[1, 2]),
        Err(Error::DimensionMismatch { .. })
    ));
    assert!(est.estimate(&model, &[0.0; 3], &[]).is_err());
    assert!(matches!(
        est.estimate(&model, &[0.0, f64::NAN, 0.0], &[1, 2]),
        Err(Error::NonFiniteEstimate { .. })
    ));
    assert!(CvOrder::from_number(3).is_err());
}

/// The generic engine's counts are what it evaluates: at a cache miss ℓ_k and ∇ℓ_k at θ*
/// (no Hessian), and at order 2 one Hessian-vector product per index per call.
#[test]
fn hessian_products_count_what_they_evaluate() {
    let model = logistic(300, 2);
    let idx = indices(300, 20, 6);
    let theta = [0.1, 0.2, 0.3];
    let (cv, _) = ControlVariate::new(&model, &[0.0, 0.0, 0.0], CvOrder::Two).unwrap();
    let mut est = DifferenceEstimator::new(&model, cv, HessianProducts::new(3, 20), 20).unwrap();
    let first = est.estimate(&model, &theta, &idx).unwrap().counts;
    assert_eq!(first, EvalCounts { terms: 40, gradients: 20, hessians: 20 });
    let cached = est.estimate(&model, &theta, &idx).unwrap().counts;
    assert_eq!(cached, EvalCounts { terms: 20, gradients: 0, hessians: 20 });
}
