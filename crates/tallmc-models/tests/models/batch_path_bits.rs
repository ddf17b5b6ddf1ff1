//! The index-batch paths of the GLMs give the bits of their one-row definitions: the four-row
//! dot products ([`Rows::dots4`], explicit AVX2 on CPUs that have it) against
//! [`DesignMatrix::dot`], the predictor pairs against two predictor calls, the chunked scores
//! against [`LinearPredictor::predictor_derivatives`], and the fused
//! [`LinearPredictor::add_score_differences`] against its defining sequence over the whole
//! batch (predictors, scores, w·(φ′ − c_k), one [`LinearPredictor::add_weighted_rows`]), and
//! the gathered-minibatch methods ([`LinearPredictor::gather_rows`], the partial
//! [`LinearPredictor::regather_rows`] and the methods that read the copy) against the index
//! methods. Random
//! batches of 1–300 indices (with repeats) cross the 4-row groups and the 64-row chunks; p from
//! 1 to 40 covers every tail length of the 4-wide dot products; both row views, both logistic
//! families. Equality is of the bits, so the reproduction snapshots cannot move.

use std::sync::Arc;

use crate::common::*;
use proptest::prelude::*;
use rand::RngExt;
use tallmc_core::{LinearPredictor, RowBatch, Terms};
use tallmc_models::{
    Dataset, DesignMatrix, DesignOptions, FastLogisticRegression, LogisticRegression,
};

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Every batch path of `m` on `idx` against its definition.
fn check<M: LinearPredictor + Terms>(
    m: &M, design: &DesignMatrix, theta: &[f64], star: &[f64], idx: &[u32], w: f64,
) -> Result<(), TestCaseError> {
    let k = idx.len();
    let mut eta = vec![0.0; k];
    m.linear_predictors(theta, idx, &mut eta);
    let one_by_one: Vec<f64> = idx.iter().map(|&i| design.dot(i as usize, theta)).collect();
    prop_assert!(same_bits(&eta, &one_by_one), "linear_predictors");

    let (mut e1, mut e2) = (vec![0.0; k], vec![0.0; k]);
    m.linear_predictor_pairs(theta, star, idx, &mut e1, &mut e2);
    let mut eta_star = vec![0.0; k];
    m.linear_predictors(star, idx, &mut eta_star);
    prop_assert!(same_bits(&e1, &eta) && same_bits(&e2, &eta_star), "linear_predictor_pairs");

    let (mut phi, mut d1, mut d2) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
    m.predictor_derivatives(idx, &eta, &mut phi, &mut d1, &mut d2);
    let (mut s1, mut s2) = (vec![0.0; k], vec![0.0; k]);
    m.predictor_scores(idx, &eta, &mut s1, Some(&mut s2));
    prop_assert!(same_bits(&s1, &d1) && same_bits(&s2, &d2), "predictor_scores with φ″");
    m.predictor_scores(idx, &eta, &mut s1, None);
    prop_assert!(same_bits(&s1, &d1), "predictor_scores");

    // Offsets: the scores at θ*, as the control variate caches them.
    let mut offsets = vec![0.0; k];
    m.predictor_scores(idx, &eta_star, &mut offsets, None);
    let a: Vec<f64> = d1.iter().zip(&offsets).map(|(&g, &c)| w * (g - c)).collect();
    let dim = m.dim();
    let start: Vec<f64> = (0..dim).map(|j| j as f64 * 0.25 - 1.0).collect();
    let mut want = start.clone();
    m.add_weighted_rows(idx, &a, &mut want);
    let mut got = start;
    m.add_score_differences(theta, idx, &offsets, w, &mut got);
    prop_assert!(same_bits(&got, &want), "add_score_differences: {:?} vs {:?}", got, want);

    // The same minibatch gathered into the model's contiguous copy.
    let mut batch = RowBatch::default();
    m.gather_rows(idx, &mut batch);
    prop_assert!(batch.copied, "a GLM gathers");
    prop_assert_eq!(batch.len(), k);
    let (mut g_eta, mut g_d1) = (vec![0.0; k], vec![0.0; k]);
    m.gathered_scores(&batch, star, &mut g_eta, &mut g_d1);
    prop_assert!(same_bits(&g_eta, &eta_star) && same_bits(&g_d1, &offsets), "gathered_scores");
    let mut gathered = (0..dim).map(|j| j as f64 * 0.25 - 1.0).collect::<Vec<f64>>();
    m.add_score_differences_gathered(&batch, theta, &offsets, w, &mut gathered);
    prop_assert!(same_bits(&gathered, &want), "add_score_differences_gathered");
    check_gathered(m, &batch, theta, idx, &eta, (&phi, &d1, &d2), &a, dim)?;

    // A batch whose points change in part (HMC-ECS's block refresh): every second position
    // gets the index of the position after it, then the batch must read as one gathered anew.
    let (positions, new): (Vec<usize>, Vec<u32>) =
        (0..k).step_by(2).map(|j| (j, idx[(j + 1) % k])).unzip();
    let mut changed = idx.to_vec();
    for (&j, &i) in positions.iter().zip(&new) {
        changed[j] = i;
    }
    m.regather_rows(&positions, &new, &mut batch);
    let mut fresh = RowBatch::default();
    m.gather_rows(&changed, &mut fresh);
    prop_assert_eq!(&batch.indices, &fresh.indices);
    prop_assert!(same_bits(&batch.values, &fresh.values), "regather_rows: the rows");
    prop_assert!(same_bits(&batch.responses, &fresh.responses), "regather_rows: the responses");
    Ok(())
}

/// The gathered predictors, derivatives and row sums of `batch` (gathered from `idx`) against
/// the index methods' `eta`, (φ, φ′, φ″) and Σ a_k x_k.
#[allow(clippy::too_many_arguments)]
fn check_gathered<M: LinearPredictor + Terms>(
    m: &M, batch: &RowBatch, theta: &[f64], idx: &[u32], eta: &[f64],
    (phi, d1, d2): (&[f64], &[f64], &[f64]), a: &[f64], dim: usize,
) -> Result<(), TestCaseError> {
    let k = idx.len();
    let mut g_eta = vec![0.0; k];
    m.gathered_predictors(batch, theta, &mut g_eta);
    prop_assert!(same_bits(&g_eta, eta), "gathered_predictors");
    let (mut g_phi, mut g_d1, mut g_d2) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
    m.gathered_derivatives(batch, eta, &mut g_phi, &mut g_d1, &mut g_d2);
    prop_assert!(
        same_bits(&g_phi, phi) && same_bits(&g_d1, d1) && same_bits(&g_d2, d2),
        "gathered_derivatives"
    );
    let start: Vec<f64> = (0..dim).map(|j| j as f64 * 0.5 + 0.125).collect();
    let (mut want, mut got) = (start.clone(), start);
    m.add_weighted_rows(idx, a, &mut want);
    m.add_weighted_gathered_rows(batch, a, &mut got);
    prop_assert!(same_bits(&got, &want), "add_weighted_gathered_rows");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 192,
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_126),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn batch_paths_give_the_bits_of_their_definitions(
        n in 1usize..120,
        p in 1usize..41,
        k in 1usize..300,
        seed in any::<u64>(),
        standardize in any::<bool>(),
    ) {
        let mut r = rng(seed);
        let x: Vec<f64> = (0..n * p).map(|_| 4.0 * r.random::<f64>() - 2.0).collect();
        let y: Vec<f64> = (0..n).map(|_| if r.random::<bool>() { 1.0 } else { 0.0 }).collect();
        let data = Arc::new(Dataset::with_default_names(x, y, p).expect("finite data"));
        let options = DesignOptions { intercept: true, standardize };
        // Standardizing rejects a constant column; then the plain design is tested.
        let libm = LogisticRegression::new(data.clone(), options, 1.0)
            .or_else(|_| LogisticRegression::new(data, DesignOptions::default(), 1.0))
            .expect("valid model");
        let design = libm.design().clone();
        let fast = FastLogisticRegression::from_design(design.clone(), 1.0).expect("valid model");
        let d = design.dim();
        let theta: Vec<f64> = (0..d).map(|_| 2.0 * r.random::<f64>() - 1.0).collect();
        let star: Vec<f64> = theta.iter().map(|t| t + 0.1 * (r.random::<f64>() - 0.5)).collect();
        let idx: Vec<u32> = (0..k).map(|_| r.random_range(0..n as u32)).collect();
        let w = 1.0 + 100.0 * r.random::<f64>();
        check(&libm, &design, &theta, &star, &idx, w)?;
        check(&fast, &design, &theta, &star, &idx, w)?;
    }
}
