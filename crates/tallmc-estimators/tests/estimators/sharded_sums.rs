//! The full-data passes of a model whose rows are cut into shards equal, bit for bit, the
//! shards reduced on their own rows (as workers holding one shard each would) and added in
//! shard order: the value and gradient, the Hessian, and the control variates' sums.

use crate::common;

use tallmc_core::{FullData, Parallelism, ShardLayout, Terms, add_shard_partials};
use tallmc_estimators::{ControlVariate, CvOrder};
use tallmc_models::{Dataset, DesignOptions, LogisticRegression};

const LENGTHS: [u64; 4] = [30_001, 0, 40_000, 29_999];

fn model_of(x: &[f64], y: &[f64], p: usize, shards: Option<&[u64]>) -> LogisticRegression {
    let mut data = Dataset::with_default_names(x.to_vec(), y.to_vec(), p).unwrap();
    if let Some(lengths) = shards {
        data = data.with_shard_lengths(lengths).unwrap();
    }
    LogisticRegression::new(data, DesignOptions::default().with_intercept(true), 10.0).unwrap()
}

#[test]
fn sharded_passes_equal_the_shards_reduced_apart() {
    let whole = common::logistic(100_000, 3);
    let p = 3;
    let (x, y) = (whole.design().data().x().to_vec(), whole.design().data().y().to_vec());
    let sharded = model_of(&x, &y, p, Some(&LENGTHS));
    let layout = ShardLayout::from_lengths(&LENGTHS).unwrap();
    let shard_models: Vec<LogisticRegression> = (0..layout.num_shards())
        .filter(|&s| LENGTHS[s] > 0)
        .map(|s| {
            let (lo, hi) = layout.range(s);
            let (lo, hi) = (lo as usize, hi as usize);
            model_of(&x[lo * p..hi * p], &y[lo..hi], p, None)
        })
        .collect();
    let theta = [0.25, 0.4, -0.3, 0.1];
    let d = sharded.dim();

    // Value and gradient.
    let mut g = vec![0.0; d];
    let value = FullData::for_model(&sharded, Parallelism::Rayon)
        .log_likelihood_grad(&sharded, &theta, &mut g);
    let partials: Vec<Vec<f64>> = shard_models
        .iter()
        .map(|m| {
            let mut gs = vec![0.0; d];
            let v = FullData::for_model(m, Parallelism::Sequential)
                .log_likelihood_grad(m, &theta, &mut gs);
            std::iter::once(v).chain(gs).collect()
        })
        .collect();
    let refs: Vec<&[f64]> = partials.iter().map(Vec::as_slice).collect();
    let mut total = vec![0.0; d + 1];
    add_shard_partials(&refs, &mut total).unwrap();
    assert_eq!(total[0].to_bits(), value.to_bits());
    assert_eq!(
        total[1..].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        g.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    // The one-shard reduction of the same rows is another order of additions.
    let mut g1 = vec![0.0; d];
    let v1 = FullData::for_model(&whole, Parallelism::Rayon)
        .log_likelihood_grad(&whole, &theta, &mut g1);
    assert!((v1 - value).abs() <= 1e-12 * value.abs());

    // The Hessian: its chunk size is fixed by N, so the workers are told the whole data's.
    let mut h = vec![0.0; d * d];
    FullData::for_model(&sharded, Parallelism::Rayon).hessian(&sharded, &theta, &mut h);
    let chunk = FullData::hessian_chunk(sharded.num_terms());
    let hp: Vec<Vec<f64>> = shard_models
        .iter()
        .map(|m| {
            let mut out = vec![0.0; d * d];
            let one = ShardLayout::single(m.num_terms());
            let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
                slot.fill(0.0);
                tallmc_core::TermHessians::sum_hessian_range(m, &theta, lo, hi, slot);
            };
            tallmc_core::reduce_sharded(
                &one,
                chunk,
                Parallelism::Rayon,
                partial,
                &mut out,
                &mut Vec::new(),
            );
            out
        })
        .collect();
    let refs: Vec<&[f64]> = hp.iter().map(Vec::as_slice).collect();
    let mut ht = vec![0.0; d * d];
    add_shard_partials(&refs, &mut ht).unwrap();
    assert_eq!(ht, h);

    // The control variates' sums at θ*.
    let (cv, _) = ControlVariate::new_on_all_cores(&sharded, &theta, CvOrder::Two).unwrap();
    let parts: Vec<Vec<f64>> = shard_models
        .iter()
        .map(|m| {
            let (c, _) = ControlVariate::new_on_all_cores(m, &theta, CvOrder::Two).unwrap();
            std::iter::once(c.sum_at_center())
                .chain(c.gradient_sum().iter().copied())
                .chain(c.hessian_sum().iter().copied())
                .collect()
        })
        .collect();
    let refs: Vec<&[f64]> = parts.iter().map(Vec::as_slice).collect();
    let mut sums = vec![0.0; 1 + d + d * d];
    add_shard_partials(&refs, &mut sums).unwrap();
    assert_eq!(sums[0].to_bits(), cv.sum_at_center().to_bits());
    assert_eq!(&sums[1..1 + d], cv.gradient_sum());
    assert_eq!(&sums[1 + d..], cv.hessian_sum());
}
