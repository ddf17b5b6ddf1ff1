//! The per-shard kernel: every pass over shards computed apart (as Dask workers would) and
//! added in shard order gives, bit for bit, the pass over the whole data cut into the same
//! shards — for logistic, Poisson with an exposure column and NB2 regression.

use tallmc_core::add_shard_partials;
use tallmc_models::Dataset;
use tallmc_run::{CountSpec, ModelSpec, OffsetSpec, PassKind, RegressionSpec, shard_sums};

const LENGTHS: [usize; 3] = [7_001, 12_000, 4_999];

/// n rows of (a, b, t) with t > 0 an exposure, and y a count (also fine as 0/1 when odd).
fn rows(n: usize, counts: bool) -> (Vec<f64>, Vec<f64>) {
    let mut state: u64 = 11;
    let mut u = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (a, b, t) = (u() * 2.0 - 1.0, u() * 3.0, 0.5 + u());
        x.extend([a, b, t]);
        let v = if counts { (u() * 6.0).floor() } else { f64::from(u() < 0.4) };
        y.push(v);
    }
    (x, y)
}

fn dataset(x: &[f64], y: &[f64]) -> Dataset {
    Dataset::new(x.to_vec(), y.to_vec(), vec!["a".into(), "b".into(), "t".into()]).unwrap()
}

#[test]
fn shards_computed_apart_give_the_whole_sharded_pass() {
    let n: usize = LENGTHS.iter().sum();
    let count = CountSpec {
        regression: RegressionSpec::default(),
        offset: OffsetSpec { offset: None, exposure: Some("t".into()) },
    };
    let cases = [
        ("logistic", ModelSpec::Logistic(RegressionSpec::default()), false, 4),
        ("poisson", ModelSpec::Poisson(count.clone()), true, 3),
        ("negative binomial", ModelSpec::NegativeBinomial(count), true, 4),
    ];
    for (name, model, counts, d) in cases {
        let (x, y) = rows(n, counts);
        let lengths: Vec<u64> = LENGTHS.iter().map(|&l| l as u64).collect();
        let whole = || dataset(&x, &y).with_shard_lengths(&lengths).unwrap();
        let theta: Vec<f64> = (0..d).map(|j| 0.1 * j as f64 - 0.15).collect();
        let kinds = [
            PassKind::Value,
            PassKind::Gradient,
            PassKind::Hessian,
            PassKind::ControlVariate { order: 2 },
        ];
        for kind in kinds {
            let want = shard_sums(&model, whole(), &theta, kind, n).unwrap();
            let mut first = 0;
            let partials: Vec<Vec<f64>> = LENGTHS
                .iter()
                .map(|&len| {
                    let own = dataset(&x[first * 3..(first + len) * 3], &y[first..first + len]);
                    first += len;
                    shard_sums(&model, own, &theta, kind, n).unwrap()
                })
                .collect();
            let refs: Vec<&[f64]> = partials.iter().map(Vec::as_slice).collect();
            let mut got = vec![0.0; want.len()];
            add_shard_partials(&refs, &mut got).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "{name}, {kind:?}");
            // …and within rounding of the one-shard pass of the same rows.
            let one = shard_sums(&model, dataset(&x, &y), &theta, kind, n).unwrap();
            let scale = one.iter().fold(1.0f64, |a, b| a.max(b.abs()));
            for (a, b) in got.iter().zip(&one) {
                assert!((a - b).abs() <= 1e-11 * scale, "{name}, {kind:?}: {a} vs {b}");
            }
        }
    }
}

#[test]
fn the_kernel_refuses_what_it_cannot_compute_on_one_shard() {
    let (x, y) = rows(100, false);
    let standardized =
        ModelSpec::Logistic(RegressionSpec { standardize: true, ..RegressionSpec::default() });
    let e = shard_sums(&standardized, dataset(&x, &y), &[0.0; 4], PassKind::Value, 100);
    assert!(e.unwrap_err().to_string().contains("standardize"));
    let logistic = ModelSpec::Logistic(RegressionSpec::default());
    let e = shard_sums(&logistic, dataset(&x, &y), &[0.0; 3], PassKind::Value, 100);
    assert!(e.unwrap_err().to_string().contains("d = 4"));
    let e = shard_sums(
        &logistic,
        dataset(&x, &y),
        &[0.0; 4],
        PassKind::ControlVariate { order: 3 },
        100,
    );
    assert!(e.is_err());
}
