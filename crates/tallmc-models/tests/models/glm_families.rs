//! The GLM families beyond logistic and Gaussian: probit, Poisson (with an offset), negative
//! binomial (NB2) and Student-t robust regression. Derivatives against finite differences,
//! values against the textbook formulas, the stated bounds on random θ and rows, stability in
//! the tails, and the errors on bad responses and settings.

use crate::common::{bernoulli_response, check_model, normal, random_dataset, rng};
use proptest::prelude::*;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use statrs::function::gamma::ln_gamma;
use tallmc_core::{ParameterNames, TermHessians, Terms};
use tallmc_models::dispersion::{DispersionFamily, NegativeBinomialFamily, StudentTFamily};
use tallmc_models::glm::{GlmFamily, PoissonFamily, ProbitFamily};
use tallmc_models::{
    Dataset, DesignMatrix, DesignOptions, Error, NegativeBinomialRegression, PoissonRegression,
    ProbitRegression, RobustRegression,
};

fn poisson_count(eta: f64, r: &mut ChaCha8Rng) -> f64 {
    // Knuth's product method (small means only).
    let limit = (-eta.min(3.0).exp()).exp();
    let (mut k, mut prod) = (0.0, r.random::<f64>());
    while prod > limit {
        k += 1.0;
        prod *= r.random::<f64>();
    }
    k
}

fn design(data: Dataset) -> DesignMatrix {
    DesignMatrix::new(data, DesignOptions::default().with_intercept(true)).unwrap()
}

fn offsets(n: usize, seed: u64) -> Vec<f64> {
    let mut r = rng(seed);
    (0..n).map(|_| 0.5 * normal(&mut r)).collect()
}

fn batch() -> Vec<u32> {
    vec![0, 3, 3, 7, 11, 19, 2, 5]
}

#[test]
fn probit_derivatives_batches_and_prior_agree() {
    let data = random_dataset(24, 3, 1, bernoulli_response);
    let model = ProbitRegression::with_family(ProbitFamily, design(data), 3.0).unwrap();
    for theta in [[0.1, 0.4, -0.2, 0.3], [2.0, -3.0, 1.5, 2.5]] {
        check_model(&model, &theta, &batch(), &[0.3, -0.2, 0.5, 1.0]);
    }
}

#[test]
fn poisson_derivatives_agree_with_and_without_an_offset() {
    let data = random_dataset(24, 2, 2, poisson_count);
    let plain = PoissonRegression::with_family(PoissonFamily, design(data), 3.0).unwrap();
    let with_offset = design(random_dataset(24, 2, 2, poisson_count))
        .with_offset(offsets(24, 3), "log_exposure")
        .unwrap();
    let offset = PoissonRegression::with_family(PoissonFamily, with_offset, 3.0).unwrap();
    for m in [&plain, &offset] {
        check_model(m, &[0.2, 0.1, -0.3], &batch(), &[0.3, -0.2, 0.5]);
    }
    // The offset enters η only: ℓ_i with offset o_i at θ equals ℓ_i without it at an
    // intercept shifted by o_i.
    let o = offsets(24, 3);
    let theta = [0.2, 0.1, -0.3];
    for i in [0_u32, 5, 17] {
        let mut shifted = theta;
        shifted[0] += o[i as usize];
        let (mut a, mut b) = ([0.0], [0.0]);
        offset.log_terms(&theta, &[i], &mut a);
        plain.log_terms(&shifted, &[i], &mut b);
        assert!((a[0] - b[0]).abs() < 1e-12, "row {i}: {} vs {}", a[0], b[0]);
    }
}

#[test]
fn negative_binomial_derivatives_agree_from_small_to_huge_dispersion() {
    let d = design(random_dataset(24, 2, 4, poisson_count)).with_offset(offsets(24, 5), "o");
    let model =
        NegativeBinomialRegression::with_family(NegativeBinomialFamily, d.unwrap(), 3.0).unwrap();
    assert_eq!(model.parameter_names(), ["intercept", "x0", "x1", "log_phi"]);
    for log_phi in [-2.0, 0.5, 3.0, 12.0] {
        check_model(&model, &[0.2, 0.1, -0.3, log_phi], &batch(), &[0.3, -0.2, 0.5, 0.7]);
    }
}

#[test]
fn robust_regression_derivatives_agree() {
    let data = random_dataset(24, 3, 6, |eta, r| eta + 2.0 * normal(r) / (0.1 + normal(r).abs()));
    let family = StudentTFamily::new(4.0).unwrap();
    let model =
        RobustRegression::new(family, data, DesignOptions::default().with_intercept(true), 3.0)
            .unwrap();
    for log_sigma in [-1.0, 0.3, 2.0] {
        check_model(
            &model,
            &[0.1, 0.4, -0.2, 0.3, log_sigma],
            &batch(),
            &[0.3, -0.2, 0.5, 1.0, 0.4],
        );
    }
}

/// Textbook formulas with log-gammas, where they are accurate (moderate values).
#[test]
fn values_equal_the_textbook_log_probabilities() {
    let rows = [(0.0, 0.3), (1.0, -0.2), (4.0, 1.1), (17.0, 2.0), (250.0, 5.5), (1000.0, 6.9)];
    for &(y, eta) in &rows {
        let mu: f64 = f64::exp(eta);
        let want = y * eta - mu - ln_gamma(y + 1.0);
        let got = PoissonFamily.value(y, eta);
        assert!((got - want).abs() < 1e-12 * (1.0 + want.abs()), "Poisson y={y}: {got} vs {want}");
        for log_phi in [-1.0_f64, 0.7, 4.0] {
            let phi = log_phi.exp();
            let want = ln_gamma(y + phi) - ln_gamma(phi) - ln_gamma(y + 1.0)
                + phi * (phi / (phi + mu)).ln()
                + y * (mu / (phi + mu)).ln();
            let got = nb2_term(y, eta, log_phi);
            assert!(
                (got - want).abs() < 1e-11 * (1.0 + want.abs()),
                "NB2 y={y} φ={phi}: {got} vs {want}"
            );
        }
    }
    // Student-t with ν = 4 and σ = e^0.3, against the density written out.
    let nu: f64 = 4.0;
    let sigma = 0.3_f64.exp();
    for &(y, eta) in &rows {
        let z = (y - eta) / sigma;
        let want = ln_gamma((nu + 1.0) / 2.0)
            - ln_gamma(nu / 2.0)
            - 0.5 * (nu * std::f64::consts::PI).ln()
            - sigma.ln()
            - (nu + 1.0) / 2.0 * (1.0 + z * z / nu).ln();
        let got = robust_term(y, eta, 0.3, nu);
        assert!((got - want).abs() < 1e-11 * (1.0 + want.abs()), "t y={y}: {got} vs {want}");
    }
    // Probit against log Φ by erfc where Φ is not tiny.
    for &eta in &[-3.0, -0.5, 0.0, 1.3, 4.0] {
        let phi = 0.5 * libm::erfc(-eta / std::f64::consts::SQRT_2);
        let upper = 0.5 * libm::erfc(eta / std::f64::consts::SQRT_2);
        let (one, zero) =
            if eta > 0.0 { ((-upper).ln_1p(), upper.ln()) } else { (phi.ln(), (-phi).ln_1p()) };
        assert!((ProbitFamily.value(1.0, eta) - one).abs() < 1e-13 * (1.0 + one.abs()));
        assert!((ProbitFamily.value(0.0, eta) - zero).abs() < 1e-13 * (1.0 + zero.abs()));
    }
}

fn one_row(y: f64, p: usize) -> Dataset {
    Dataset::with_default_names(vec![0.0; p], vec![y], p).unwrap()
}

/// ℓ of a one-row NB2 model with η = intercept.
fn nb2_term(y: f64, eta: f64, log_phi: f64) -> f64 {
    let m = NegativeBinomialRegression::new(
        NegativeBinomialFamily,
        one_row(y, 0),
        DesignOptions::default().with_intercept(true),
        10.0,
    )
    .unwrap();
    m.sum_log_terms(&[eta, log_phi], &[0])
}

fn robust_term(y: f64, eta: f64, log_sigma: f64, nu: f64) -> f64 {
    let m = RobustRegression::new(
        StudentTFamily::new(nu).unwrap(),
        one_row(y, 0),
        DesignOptions::default().with_intercept(true),
        10.0,
    )
    .unwrap();
    m.sum_log_terms(&[eta, log_sigma], &[0])
}

#[test]
fn terms_stay_finite_and_accurate_in_the_tails() {
    // Probit far in the lower tail: log Φ(−40) = −804.60844201375379 (mpmath, 50 digits)
    let v = ProbitFamily.value(1.0, -40.0);
    assert!((v - (-804.608_442_013_753_8)).abs() < 1e-10, "{v}");
    let (v, d1, d2) = ProbitFamily.derivatives(0.0, 1e6);
    assert!(v.is_finite() && d1 < -0.99e6 && d2 < 0.0 && d2 > -1.0, "{v} {d1} {d2}");
    assert_eq!(ProbitFamily.score(0.0, 1e6).to_bits(), d1.to_bits());
    // NB2 in the Poisson limit (φ = e^30): within 1e-9 of the Poisson term.
    for &(y, eta) in &[(0.0, 0.1), (3.0, 1.2), (40.0, 3.5)] {
        let nb = nb2_term(y, eta, 30.0);
        let po = PoissonFamily.value(y, eta);
        assert!((nb - po).abs() < 1e-9 * (1.0 + po.abs()), "y={y}: {nb} vs {po}");
    }
    // NB2 with a tiny dispersion and a huge count stays finite.
    assert!(nb2_term(1e6, 10.0, -20.0).is_finite());
    // Student-t with a far outlier: finite, with a bounded score.
    assert!(robust_term(1e12, 0.0, 0.0, 4.0).is_finite());
}

/// |φ″| ≤ c₂ and |φ‴| ≤ c₃ for probit, c₃ checked by central differences of φ″.
#[test]
fn probit_bounds_hold_on_a_dense_grid() {
    let mut worst3 = 0.0_f64;
    for k in 0..=60_000 {
        let eta = -30.0 + 60.0 * f64::from(k) / 60_000.0;
        for y in [0.0, 1.0] {
            let (_, _, d2) = ProbitFamily.derivatives(y, eta);
            assert!((-1.0..=0.0).contains(&d2), "φ″({eta}) = {d2}");
            let h = 1e-4;
            let d3 = (ProbitFamily.curvature(y, eta + h) - ProbitFamily.curvature(y, eta - h))
                / (2.0 * h);
            worst3 = worst3.max(d3.abs());
        }
    }
    assert!(worst3 <= 0.2958, "sup |φ‴| on the grid = {worst3}");
    assert!(worst3 > 0.295, "the bound is tight: sup |φ‴| ≈ 0.29572, found {worst3}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Probit's curvature bound at the model level, on random θ, rows and directions:
    /// |vᵀ∇²ℓ_i v| ≤ c₂ (x̃_iᵀv)² and |d/dt vᵀ∇²ℓ_i(θ + tv) v| ≤ c₃ |x̃_iᵀv|³.
    #[test]
    fn probit_model_bounds_hold(seed in 0_u64..1000, scale in 0.1_f64..6.0) {
        let data = random_dataset(12, 3, seed, bernoulli_response);
        let model = ProbitRegression::with_family(ProbitFamily, design(data), 3.0).unwrap();
        let mut r = rng(seed + 7);
        let theta: Vec<f64> = (0..4).map(|_| scale * normal(&mut r)).collect();
        let v: Vec<f64> = (0..4).map(|_| normal(&mut r)).collect();
        for i in 0..12_u32 {
            let xv: f64 = (0..4).map(|j| model.design().get(i as usize, j) * v[j]).sum();
            let quad = |t: f64| {
                let th: Vec<f64> = theta.iter().zip(&v).map(|(a, b)| a + t * b).collect();
                let mut hv = [0.0; 4];
                model.hessian_vector_products(&th, &[i], &v, &mut hv);
                hv.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>()
            };
            prop_assert!(quad(0.0).abs() <= xv * xv * (1.0 + 1e-12));
            let h = 1e-5;
            let third = (quad(h) - quad(-h)) / (2.0 * h);
            prop_assert!(third.abs() <= 0.2958 * xv.abs().powi(3) * (1.0 + 1e-4) + 1e-9);
        }
    }
}

#[test]
fn bad_responses_and_settings_are_named() {
    let e = PoissonRegression::with_family(
        PoissonFamily,
        design(Dataset::with_default_names(vec![1.0, 2.0], vec![3.0, 1.5], 1).unwrap()),
        10.0,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidResponse { .. }), "{e}");
    assert!(e.to_string().contains("1.5") && e.to_string().contains("count"), "{e}");
    let e = NegativeBinomialRegression::new(
        NegativeBinomialFamily,
        Dataset::with_default_names(vec![1.0, 2.0], vec![-1.0, 1.0], 1).unwrap(),
        DesignOptions::default(),
        10.0,
    )
    .unwrap_err();
    assert!(e.to_string().contains("-1"), "{e}");
    let e = ProbitRegression::with_family(
        ProbitFamily,
        design(Dataset::with_default_names(vec![1.0, 2.0], vec![1.0, 2.0], 1).unwrap()),
        10.0,
    )
    .unwrap_err();
    assert!(e.to_string().contains("0 or 1"), "{e}");
    for nu in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = StudentTFamily::new(nu).unwrap_err().to_string();
        assert!(e.contains("nu"), "{e}");
    }
    let named = Dataset::new(vec![1.0, 2.0], vec![1.0, 0.0], vec!["log_phi".into()]).unwrap();
    let e = NegativeBinomialRegression::new(
        NegativeBinomialFamily,
        named,
        DesignOptions::default(),
        1.0,
    )
    .unwrap_err();
    assert!(matches!(e, Error::ReservedName { .. }), "{e}");
    // An offset of the wrong length, or with a NaN.
    let d = design(Dataset::with_default_names(vec![1.0, 2.0], vec![1.0, 0.0], 1).unwrap());
    assert!(d.clone().with_offset(vec![0.0], "o").unwrap_err().to_string().contains("2 rows"));
    let e = d.with_offset(vec![0.0, f64::NAN], "exposure").unwrap_err().to_string();
    assert!(e.contains("exposure"), "{e}");
}

#[test]
fn a_column_split_off_becomes_the_offset_and_leaves_the_others() {
    let names = vec!["age".to_string(), "log_t".to_string(), "income".to_string()];
    let x = vec![1.0, 10.0, 100.0, 2.0, 20.0, 200.0];
    let data = Dataset::new(x, vec![3.0, 4.0], names).unwrap();
    let (rest, column) = data.split_off_column("log_t").unwrap();
    assert_eq!(column, [10.0, 20.0]);
    assert_eq!(rest.covariate_names(), ["age", "income"]);
    assert_eq!(rest.x(), [1.0, 100.0, 2.0, 200.0]);
    assert_eq!(rest.y(), [3.0, 4.0]);
    let e = data.split_off_column("exposure").unwrap_err().to_string();
    assert!(e.contains("exposure") && e.contains("age, log_t, income"), "{e}");
}

/// NB2's batch scores (which tabulate the log-gamma and digamma differences of the batch's
/// small counts once) give the bits of the datum-by-datum function, for dispersions on both
/// sides of the asymptotic switch (φ = 10), counts inside and beyond the table (0 … 40, 1000),
/// and batches that are not a multiple of the block size.
#[test]
fn negative_binomial_batch_scores_give_the_bits_of_one_datum_at_a_time() {
    let f = NegativeBinomialFamily;
    let mut r = rng(31);
    for tau in [-3.0, 0.7, 2.3, 2.31, 6.0] {
        let at = f.at(tau);
        for len in [1, 7, 8, 61, 300] {
            let y: Vec<f64> = (0..len)
                .map(|k| if k % 37 == 5 { 1000.0 } else { f64::from(r.random_range(0u32..41)) })
                .collect();
            let eta: Vec<f64> = (0..len).map(|_| r.random_range(-8.0..8.0)).collect();
            let mut out = vec![(0.0, 0.0, 0.0); len];
            f.value_and_scores_batch(&at, &y, &eta, &mut out);
            for k in 0..len {
                let one = f.value_and_scores(&at, y[k], eta[k]);
                let bits = |t: (f64, f64, f64)| [t.0.to_bits(), t.1.to_bits(), t.2.to_bits()];
                assert_eq!(bits(out[k]), bits(one), "τ = {tau}, y = {}, η = {}", y[k], eta[k]);
            }
        }
    }
}
