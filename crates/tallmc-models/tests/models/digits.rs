//! The 7 × 7 digits stand-in of Pakman et al. (2017, §7.3): dimension, removed pixels, balance,
//! determinism, and that a softmax network learns the classes.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use tallmc_core::{LogPrior, TermGradients, Terms};
use tallmc_models::SoftmaxMlp;
use tallmc_models::mlp::PAKMAN_L2;
use tallmc_models::synthetic::{
    self, DIGITS_7X7_CLASSES, DIGITS_7X7_EMPTY, DIGITS_7X7_INPUTS, DIGITS_7X7_N, DIGITS_7X7_PIXELS,
    DIGITS_7X7_SIDE,
};

#[test]
fn dimensions_names_and_removed_pixels() {
    let n = 3_000;
    let sim = synthetic::digits_7x7(n, 5).unwrap();
    let ds = &sim.data;
    assert_eq!(DIGITS_7X7_INPUTS, 42);
    assert_eq!(ds.num_covariates(), 42);
    assert_eq!(ds.len(), n);
    assert_eq!(ds.covariate_names()[0], "px02");
    assert!(ds.x().iter().all(|v| (0.0..=1.0).contains(v)));
    // The raw images: the seven removed pixels are 0 in every image, every other pixel is
    // non-zero in some image, and the data set is the images without those seven.
    let (images, labels) = synthetic::digits_7x7_images(n, 5).unwrap();
    assert_eq!(labels, ds.y());
    let kept = synthetic::digits_7x7_kept_pixels();
    assert_eq!(kept.len(), 42);
    for t in 0..DIGITS_7X7_PIXELS {
        let (r, c) = (t / DIGITS_7X7_SIDE, t % DIGITS_7X7_SIDE);
        let always_zero = images.chunks_exact(DIGITS_7X7_PIXELS).all(|img| img[t] == 0.0);
        assert_eq!(always_zero, DIGITS_7X7_EMPTY.contains(&(r, c)), "pixel ({r}, {c})");
    }
    for (img, row) in images.chunks_exact(DIGITS_7X7_PIXELS).zip(ds.x().chunks_exact(42)) {
        let want: Vec<f64> = kept.iter().map(|&t| img[t]).collect();
        assert_eq!(row, want.as_slice());
    }
}

#[test]
fn labels_are_balanced_and_the_generator_is_deterministic() {
    let a = synthetic::digits_7x7(DIGITS_7X7_N, 11).unwrap();
    let mut counts = [0usize; DIGITS_7X7_CLASSES];
    for &y in a.data.y() {
        counts[y as usize] += 1;
    }
    // Multinomial(8340, ¼): sd ≈ 40 around 2085.
    for c in counts {
        assert!((1_885..=2_285).contains(&c), "{counts:?}");
    }
    let b = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| synthetic::digits_7x7(DIGITS_7X7_N, 11).unwrap());
    assert_eq!(a.data.x(), b.data.x());
    assert_eq!(a.data.y(), b.data.y());
    let c = synthetic::digits_7x7(DIGITS_7X7_N, 12).unwrap();
    assert_ne!(a.data.x(), c.data.x());
    assert!(synthetic::digits_7x7(0, 1).is_err());
}

/// A few hundred full-data Adam steps on the log posterior of the d = 192 network reach a
/// held-out accuracy far above chance (25%).
#[test]
fn a_softmax_network_learns_the_classes() {
    let train = synthetic::digits_7x7(2_000, 1).unwrap();
    let test = synthetic::digits_7x7(1_000, 2).unwrap();
    let m = SoftmaxMlp::new(train.data, 4, DIGITS_7X7_CLASSES, PAKMAN_L2).unwrap();
    let d = m.dim();
    assert_eq!(d, 192);
    let n = m.num_terms() as u32;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut theta: Vec<f64> = (0..d)
        .map(|_| {
            let z: f64 = StandardNormal.sample(&mut rng);
            0.1 * z
        })
        .collect();
    let (mut mom, mut var) = (vec![0.0; d], vec![0.0; d]);
    let (lr, b1, b2) = (0.05, 0.9, 0.999);
    let mut first = f64::NAN;
    for step in 1..=300 {
        let mut g = vec![0.0; d];
        let lp =
            m.sum_log_terms_grad_range(&theta, 0, n, &mut g) + m.log_prior_grad(&theta, &mut g);
        if step == 1 {
            first = lp;
        }
        for j in 0..d {
            let gj = g[j] / f64::from(n);
            mom[j] = b1 * mom[j] + (1.0 - b1) * gj;
            var[j] = b2 * var[j] + (1.0 - b2) * gj * gj;
            let (mh, vh) = (mom[j] / (1.0 - b1.powi(step)), var[j] / (1.0 - b2.powi(step)));
            theta[j] += lr * mh / (vh.sqrt() + 1e-8);
        }
    }
    let last = m.sum_log_terms_range(&theta, 0, n) + m.log_prior(&theta);
    assert!(last > first, "{first} → {last}");
    let ds = &test.data;
    let correct = (0..ds.len()).filter(|&i| m.predict(&theta, ds.row(i)) == ds.y()[i] as usize);
    let accuracy = correct.count() as f64 / ds.len() as f64;
    assert!(accuracy > 0.8, "held-out accuracy {accuracy}");
}
