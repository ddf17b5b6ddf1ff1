//! The rank-two difference engine (`RankTwo`) on negative binomial and Student-t regression:
//! the numbers of the generic Hessian-products engine, gradients that match finite
//! differences, exactness on the whole data, the gradient-only path, and its counts.

use crate::common::*;
use rand::RngExt;
use tallmc_core::{
    Counting, DispersionPredictor, EvalCounts, FullData, Parallelism, TermHessians, Terms,
};
use tallmc_estimators::{
    ControlVariate, ControlVariateGradient, CvOrder, DifferenceEstimator, DifferenceTerms,
    GradientEstimator, HessianProducts, RankTwo,
};

const ORDERS: [CvOrder; 3] = [CvOrder::Zero, CvOrder::One, CvOrder::Two];

/// Central differences with step 1e-5 (see identities.rs).
const FD_REL: f64 = 1e-6;

fn indices(n: usize, m: usize, seed: u64) -> Vec<u32> {
    let mut r = rng(seed);
    (0..m).map(|_| r.random_range(0..n as u32)).collect()
}

/// The two models, with a centre near each one's mode and a θ a little away from it (both in
/// the (β₀, β₁, β₂, τ) of an intercept, two covariates and the dispersion parameter).
fn cases() -> [(&'static str, Case); 2] {
    [
        ("negative binomial", Case::Nb(negative_binomial(400, 2))),
        ("robust", Case::Robust(robust(400, 2))),
    ]
}

enum Case {
    Nb(tallmc_models::NegativeBinomialRegression),
    Robust(tallmc_models::RobustRegression),
}

impl Case {
    fn points(&self) -> ([f64; 4], [f64; 4]) {
        match self {
            // β ≈ (0.8, 0.4, 0.4), log φ ≈ log 3.
            Self::Nb(_) => ([0.75, 0.42, 0.37, 1.0], [0.85, 0.30, 0.45, 1.3]),
            // β ≈ (1, 0.7, 0.7), log σ ≈ log 0.5 (t₃ noise fitted with ν = 4).
            Self::Robust(_) => ([1.02, 0.68, 0.71, -0.7], [0.9, 0.8, 0.6, -0.4]),
        }
    }
}

/// Runs `f` on the case's model.
macro_rules! with_model {
    ($case:expr, $m:ident => $body:expr) => {
        match &$case {
            Case::Nb($m) => $body,
            Case::Robust($m) => $body,
        }
    };
}

/// d_k and Σ w_k ∇d_k from the rank-two engine equal those of the generic engine (which
/// evaluates ℓ_k, ∇ℓ_k and H_k(θ*)h through the model's `TermHessians`), at every order.
#[test]
fn rank_two_gives_the_numbers_of_the_generic_engine() {
    for (name, case) in cases() {
        let (center, theta) = case.points();
        with_model!(case, model => {
            let idx = indices(400, 60, 1);
            let w: Vec<f64> = (0..60).map(|k| 0.5 + 0.01 * k as f64).collect();
            for order in ORDERS {
                let (cv, _) = ControlVariate::new(model, &center, order).unwrap();
                let (mut two, mut generic) = (RankTwo::new(60), HessianProducts::new(4, 60));
                let (mut d2, mut dg) = ([0.0; 60], [0.0; 60]);
                let c2 = two.differences(model, &cv, &theta, 0, &idx, &mut d2, true);
                generic.differences(model, &cv, &theta, 0, &idx, &mut dg, true);
                let scale = dg.iter().fold(1.0f64, |a, b| a.max(b.abs()));
                for (k, (a, b)) in d2.iter().zip(&dg).enumerate() {
                    assert!((a - b).abs() < 1e-11 * scale, "{name} {order:?} d[{k}]: {a} vs {b}");
                }
                let (mut g2, mut gg) = ([0.0; 4], [0.0; 4]);
                two.add_weighted_gradients(model, 0, &idx, &w, &mut g2);
                generic.add_weighted_gradients(model, 0, &idx, &w, &mut gg);
                assert_close(&g2, &gg, 1e-11, &format!("{name} {order:?} Σ w ∇d"));
                // Counts: 60 terms and gradients at θ, every slot missed once at θ*.
                let per = order.counts_per_datum();
                let want = EvalCounts {
                    terms: 60 + 60 * per.terms,
                    gradients: 60 + 60 * per.gradients,
                    hessians: 60 * per.hessians,
                };
                assert_eq!(c2, want, "{name} {order:?}");
            }
        });
    }
}

/// ∇ℓ̂, ∇σ̂² and ∇(ℓ̂ − σ̂²/2) of the difference estimator on the rank-two engine match central
/// differences of its values, at every order.
#[test]
fn rank_two_estimator_gradients_match_finite_differences() {
    for (name, case) in cases() {
        let (center, theta) = case.points();
        with_model!(case, model => {
            let idx = indices(400, 40, 2);
            for order in ORDERS {
                let (cv, _) = ControlVariate::new(model, &center, order).unwrap();
                let mut est = DifferenceEstimator::new(model, cv, RankTwo::new(40), 40).unwrap();
                let (mut gl, mut gv, mut gp) = ([0.0; 4], [0.0; 4], [0.0; 4]);
                est.estimate_grad(model, &theta, &idx, &mut gl, &mut gv).unwrap();
                est.perturbed_grad(model, &theta, &idx, &mut gp).unwrap();
                let mut val = |t: &[f64]| est.estimate(model, t, &idx).unwrap();
                let fd_l = finite_difference(&theta, 1e-5, |t| val(t).log_likelihood);
                let fd_v = finite_difference(&theta, 1e-5, |t| val(t).variance);
                let fd_p = finite_difference(&theta, 1e-5, |t| val(t).perturbed());
                assert_close(&gl, &fd_l, FD_REL, &format!("{name} ∇ℓ̂ {order:?}"));
                assert_close(&gv, &fd_v, FD_REL, &format!("{name} ∇σ̂² {order:?}"));
                assert_close(&gp, &fd_p, FD_REL, &format!("{name} ∇(ℓ̂ − σ̂²/2) {order:?}"));
            }
        });
    }
}

/// With the whole data as the subsample, ℓ̂ and its gradient are the full-data ones, and the
/// engine's Σ_k q_k equals the control variate's O(d²) closed form.
#[test]
fn rank_two_is_exact_on_the_whole_data() {
    for (name, case) in cases() {
        let (center, theta) = case.points();
        with_model!(case, model => {
            let all: Vec<u32> = (0..400).collect();
            let mut full = FullData::for_model(model, Parallelism::Sequential);
            let mut g_full = [0.0; 4];
            let ll = full.log_likelihood_grad(model, &theta, &mut g_full);
            for order in ORDERS {
                let (cv, _) = ControlVariate::new(model, &center, order).unwrap();
                let mut est =
                    DifferenceEstimator::new(model, cv.clone(), RankTwo::new(400), 400).unwrap();
                let (mut gl, mut gv) = ([0.0; 4], [0.0; 4]);
                let e = est.estimate_grad(model, &theta, &all, &mut gl, &mut gv).unwrap();
                let tol = 1e-10 * ll.abs();
                assert!((e.log_likelihood - ll).abs() < tol, "{name} {order:?}: {}", e.log_likelihood);
                assert_close(&gl, &g_full, 1e-10, &format!("{name} ∇ℓ̂ on the whole data"));
                let d = est.last_differences(400).iter().sum::<f64>();
                assert!(((ll - d) - cv.sum(&theta)).abs() < tol, "{name} {order:?}: Σq");
                let mut sg = ControlVariateGradient::new(model, cv, RankTwo::new(400), 400).unwrap();
                let mut g = [0.0; 4];
                sg.estimate_gradient(model, &theta, &all, &mut g);
                assert_close(&g, &g_full, 1e-10, &format!("{name} CV gradient, whole data"));
            }
        });
    }
}

/// At second order the differences vanish to second order at the centre: |d_k| shrinks like
/// h³ along θ* + h·v (halving h divides the largest |d_k| by about 8), and at first order like
/// h² — a check that the expansion in (δη, δτ) includes the cross term.
#[test]
fn rank_two_differences_vanish_at_the_order_of_the_expansion() {
    for (name, case) in cases() {
        let (center, _) = case.points();
        with_model!(case, model => {
            let idx = indices(400, 50, 3);
            let v = [0.3, -0.2, 0.25, 0.5];
            for (order, power) in [(CvOrder::One, 2.0), (CvOrder::Two, 3.0)] {
                let (cv, _) = ControlVariate::new(model, &center, order).unwrap();
                let mut engine = RankTwo::new(50);
                let mut largest = |h: f64| {
                    let theta: Vec<f64> = center.iter().zip(&v).map(|(c, v)| c + h * v).collect();
                    let mut d = [0.0; 50];
                    engine.differences(model, &cv, &theta, 0, &idx, &mut d, false);
                    d.iter().fold(0.0f64, |a, b| a.max(b.abs()))
                };
                let (a, b) = (largest(0.02), largest(0.01));
                let ratio = (a / b).log2();
                assert!((ratio - power).abs() < 0.25, "{name} {order:?}: slope {ratio}");
            }
        });
    }
}

/// The gradient-only path gives the numbers of `differences` + `add_weighted_gradients`, keeps
/// its own cache (an HMC-ECS lane is not evicted), and counts what it evaluates: m terms and
/// gradients at θ, and the control variate's evaluations at θ* only when an index changed.
#[test]
fn rank_two_gradient_only_path() {
    let model = Counting::new(negative_binomial(400, 2));
    let case = Case::Nb(negative_binomial(400, 2));
    let (center, theta) = case.points();
    let (idx, other) = (indices(400, 30, 5), indices(400, 30, 6));
    let weight = 400.0 / 30.0;
    for order in ORDERS {
        let (cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let mut engine = RankTwo::new(30);
        // An HMC-ECS-like lane, filled before the gradient calls.
        let mut d = [0.0; 30];
        engine.differences(&model, &cv, &theta, 0, &idx, &mut d, true);
        for (step, batch) in [&idx, &idx, &other].into_iter().enumerate() {
            let (mut reference, mut want) = (RankTwo::new(30), [1.0; 4]);
            reference.differences(&model, &cv, &theta, 0, batch, &mut d, true);
            reference.add_weighted_gradients(&model, 0, batch, &[weight; 30], &mut want);
            model.reset();
            let mut got = [1.0; 4];
            let counts =
                engine.add_gradient_differences(&model, &cv, &theta, batch, weight, &mut got);
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{order:?}, call {step}");
            let refreshed = step != 1;
            let per = if refreshed { order.counts_per_datum() } else { EvalCounts::ZERO };
            let want_counts = EvalCounts {
                terms: 30 + 30 * per.terms,
                gradients: 30 + 30 * per.gradients,
                hessians: 30 * per.hessians,
            };
            assert_eq!(counts, want_counts, "{order:?}, call {step}");
            // The model saw one derivative call per index at θ, one more per refreshed slot.
            let made = model.predictor_derivatives();
            assert_eq!(made, if refreshed { 60 } else { 30 }, "{order:?}, call {step}");
        }
        // The lane filled first is still cached: a repeat call evaluates nothing at θ*.
        let again = engine.differences(&model, &cv, &theta, 0, &idx, &mut d, true);
        assert_eq!(again, EvalCounts { terms: 30, gradients: 30, hessians: 0 }, "{order:?}");
    }
}

/// The model side of the engine: the predictors, scores and derivatives of `DispersionGlm`
/// agree with its `Terms`, `TermGradients` and `TermHessians` (the value and gradient bit for
/// bit, Hessian-vector products to rounding).
#[test]
fn dispersion_predictor_agrees_with_the_model_traits() {
    for (name, case) in cases() {
        let (_, theta) = case.points();
        with_model!(case, model => {
            let idx = indices(400, 25, 7);
            let mut eta = [0.0; 25];
            model.dispersion_predictors(&theta, &idx, &mut eta);
            let mut scores = [(0.0, 0.0, 0.0); 25];
            model.predictor_scores_at(theta[3], &idx, &eta, &mut scores);
            let mut derivs = [tallmc_core::PredictorDerivatives::default(); 25];
            model.predictor_derivatives_at(theta[3], &idx, &eta, &mut derivs);
            let mut values = [0.0; 25];
            model.log_terms(&theta, &idx, &mut values);
            let v = [0.2, -0.1, 0.3, 0.4];
            let mut hv = vec![0.0; 25 * 4];
            model.hessian_vector_products(&theta, &idx, &v, &mut hv);
            for k in 0..25 {
                let (value, f_eta, f_tau) = scores[k];
                assert_eq!(value.to_bits(), values[k].to_bits(), "{name} value {k}");
                let dk = derivs[k];
                assert_eq!((dk.value, dk.eta, dk.tau), (value, f_eta, f_tau), "{name} {k}");
                let mut x = [0.0; 3];
                model.add_weighted_predictor_rows(&idx[k..=k], &[1.0], &mut x);
                let xv: f64 = x.iter().zip(&v).map(|(a, b)| a * b).sum();
                let want_tau = dk.eta_tau * xv + dk.tau_tau * v[3];
                let got_tau = hv[k * 4 + 3];
                assert!((got_tau - want_tau).abs() < 1e-12 * want_tau.abs().max(1.0), "{name} {k}");
                let coef = dk.eta_eta * xv + dk.eta_tau * v[3];
                let want_beta: Vec<f64> = x.iter().map(|xj| coef * xj).collect();
                assert_close(&hv[k * 4..k * 4 + 3], &want_beta, 1e-12, &format!("{name} Hv_β {k}"));
            }
        });
    }
}

/// The counting wrapper forwards the rank-two methods, so an engine on a counted model gives
/// the numbers of the bare model.
#[test]
fn counting_wrapper_forwards_the_dispersion_methods() {
    let bare = robust(400, 2);
    let counted = Counting::new(robust(400, 2));
    let (center, theta) = Case::Robust(robust(10, 2)).points();
    let idx = indices(400, 20, 8);
    let (cv, _) = ControlVariate::new(&bare, &center, CvOrder::Two).unwrap();
    let (mut a, mut b) = (RankTwo::new(20), RankTwo::new(20));
    let (mut da, mut db) = ([0.0; 20], [0.0; 20]);
    let ca = a.differences(&bare, &cv, &theta, 0, &idx, &mut da, true);
    let cb = b.differences(&counted, &cv, &theta, 0, &idx, &mut db, true);
    assert_eq!(da.map(f64::to_bits), db.map(f64::to_bits));
    assert_eq!(ca, cb);
    assert_eq!(counted.predictor_derivatives(), 40);
    assert_eq!(counted.dim(), 4);
}
