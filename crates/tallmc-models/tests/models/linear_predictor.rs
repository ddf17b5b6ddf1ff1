//! `LinearPredictor` agrees with the models' terms, gradients and Hessians.

use tallmc_core::{LinearPredictor, TermHessians};
use tallmc_models::{Dataset, DesignOptions, GaussianMean, LogisticRegression};

fn check<M: LinearPredictor + TermHessians>(model: &M, theta: &[f64], v: &[f64]) {
    let d = model.dim();
    let idx: Vec<u32> = (0..model.num_terms() as u32).collect();
    let m = idx.len();
    let (mut eta, mut phi, mut d1, mut d2) =
        (vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    model.linear_predictors(theta, &idx, &mut eta);
    model.predictor_derivatives(&idx, &eta, &mut phi, &mut d1, &mut d2);
    let (mut ll, mut grads, mut hv) = (vec![0.0; m], vec![0.0; m * d], vec![0.0; m * d]);
    model.log_terms_grads(theta, &idx, &mut ll, &mut grads);
    model.hessian_vector_products(theta, &idx, v, &mut hv);
    // x_k from a unit weight: ∇ℓ_k = φ′_k x_k and H_k v = φ″_k (x_kᵀv) x_k.
    let mut x = vec![0.0; d];
    for k in 0..m {
        x.fill(0.0);
        model.add_weighted_rows(&idx[k..k + 1], &[1.0], &mut x);
        let xv: f64 = x.iter().zip(v).map(|(a, b)| a * b).sum();
        let xt: f64 = x.iter().zip(theta).map(|(a, b)| a * b).sum();
        assert!((eta[k] - xt).abs() < 1e-12 * (1.0 + xt.abs()));
        assert!((phi[k] - ll[k]).abs() < 1e-12 * (1.0 + ll[k].abs()));
        for j in 0..d {
            let g = grads[k * d + j];
            assert!((d1[k] * x[j] - g).abs() < 1e-12 * (1.0 + g.abs()), "gradient {k},{j}");
            let h = hv[k * d + j];
            assert!((d2[k] * xv * x[j] - h).abs() < 1e-12 * (1.0 + h.abs()), "Hv {k},{j}");
        }
    }
    // Weighted sums add up.
    let w: Vec<f64> = (0..m).map(|k| 0.1 * k as f64 - 0.3).collect();
    let mut total = vec![0.5; d];
    model.add_weighted_rows(&idx, &w, &mut total);
    let mut want = vec![0.5; d];
    for k in 0..m {
        model.add_weighted_rows(&idx[k..k + 1], &w[k..k + 1], &mut want);
    }
    for (a, b) in total.iter().zip(&want) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn logistic_linear_predictor_matches_terms_gradients_and_hessians() {
    let x = vec![0.5, -1.0, 2.0, 0.1, -0.3, 0.7, 1.5, 0.2, -2.2, 0.9];
    let data = std::sync::Arc::new(
        Dataset::with_default_names(x, vec![1.0, 0.0, 1.0, 1.0, 0.0], 2).unwrap(),
    );
    for standardize in [false, true] {
        let opts = DesignOptions::default().with_intercept(true).with_standardize(standardize);
        let model = LogisticRegression::new(data.clone(), opts, 10.0).unwrap();
        check(&model, &[0.1, 0.2, -0.3], &[0.7, -0.4, 1.1]);
    }
}

#[test]
fn gaussian_mean_linear_predictor_matches_terms_gradients_and_hessians() {
    let model = GaussianMean::from_observations(vec![0.3, -1.2, 0.8, 2.0], 1.3, 0.0, 10.0).unwrap();
    check(&model, &[0.4], &[-0.8]);
}
