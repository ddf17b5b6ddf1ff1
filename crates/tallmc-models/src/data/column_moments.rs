//! The column moments a standardized design divides by, computed in two passes that reduce
//! shard by shard (`tallmc_core::shards`), so that shards reduced where they live give the
//! bits of the same passes here.
//!
//! For p covariate columns over n rows cut into shards (one when the data set has none):
//!
//! ```text
//! pass 1 (column sums):        S_j = Σ_i x_ij                          m_j = S_j / n
//! pass 2 (column deviations):  Q_j = Σ_i (x_ij − m_j)²,  lo_j = min_i x_ij,  hi_j = max_i x_ij
//!                              s_j = √(Q_j / n)                        (population sd)
//! ```
//!
//! The sums S and Q are chunked sums of [`PASS_CHUNK_ROWS`] rows from each shard's first row,
//! added in chunk order within a shard and shard partials in shard order; lo and hi are exact
//! (a minimum does not depend on the order). The deviations are taken about the mean (two
//! passes, not Σx² − nm², which cancels catastrophically when |m| ≫ s). A column with lo = hi,
//! or whose s is not a positive finite number, is constant: it cannot be standardized.
//!
//! A worker that holds one shard computes its partials with [`column_sums`] and
//! [`column_deviations`] on its rows alone; the driver adds them with
//! [`ColumnMoments::from_shard_partials`].

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tallmc_core::{Parallelism, ShardLayout, add_shard_partials, reduce_sharded};

use super::{Dataset, PASS_CHUNK_ROWS};
use crate::error::{Error, Result};

/// The means m_j and population standard deviations s_j (divisor n) of a data set's p
/// covariate columns: what a standardized design maps x_ij to (x_ij − m_j)/s_j with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnMoments {
    /// The column means m_j.
    pub mean: Vec<f64>,
    /// The population standard deviations s_j > 0.
    pub sd: Vec<f64>,
}

impl ColumnMoments {
    /// The moments of `data`'s covariates, reduced over its shards
    /// ([`Dataset::shard_layout`]; one shard when it has none), with the current rayon pool.
    ///
    /// # Errors
    /// [`Error::ConstantColumn`] naming the first constant column.
    pub fn of(data: &Dataset) -> Result<Self> {
        Self::of_all_but(data, None)
    }

    /// [`ColumnMoments::of`] for every covariate but the one at position `skip` (an offset
    /// column the model reads apart): each column's moments are its own, so the others get
    /// the bits they get without it.
    ///
    /// # Errors
    /// As [`ColumnMoments::of`].
    pub fn of_all_but(data: &Dataset, skip: Option<usize>) -> Result<Self> {
        let n = data.len();
        let p = data.num_covariates();
        let mean: Vec<f64> = column_sums(data).iter().map(|s| s / n as f64).collect();
        let deviations = column_deviations(data, &mean);
        let keep: Vec<usize> = (0..p).filter(|&j| Some(j) != skip).collect();
        let pick = |v: &[f64]| keep.iter().map(|&j| v[j]).collect::<Vec<f64>>();
        let (q, rest) = deviations.split_at(p);
        let (lo, hi) = rest.split_at(p);
        let totals = [pick(q), pick(lo), pick(hi)].concat();
        let names: Vec<String> = keep.iter().map(|&j| data.covariate_names()[j].clone()).collect();
        Self::from_totals(n, pick(&mean), &totals, &names)
    }

    /// The moments from each shard's partials of the two passes, in shard order: `sums` of
    /// pass 1 ([`column_sums`], p numbers each) give the means, with which the caller ran pass
    /// 2 ([`column_deviations`], 3p numbers each) to get `deviations`. `n` is the total number
    /// of rows, `names` the p column names. The bits are those of [`ColumnMoments::of`] over
    /// the same shards.
    ///
    /// # Errors
    /// Partials of the wrong length, or none; a constant column.
    pub fn from_shard_partials(
        n: usize, sums: &[Vec<f64>], deviations: &[Vec<f64>], names: &[String],
    ) -> Result<Self> {
        let mean = means_from_shard_sums(n, sums, names.len())?;
        let p = names.len();
        if deviations.len() != sums.len() {
            return Err(Error::invalid(
                "column deviation partials",
                format!("{} shards", deviations.len()),
                format!("one per shard ({})", sums.len()),
            ));
        }
        let refs: Vec<&[f64]> = deviations.iter().map(Vec::as_slice).collect();
        for (s, part) in refs.iter().enumerate() {
            if part.len() != 3 * p {
                return Err(Error::invalid(
                    "column deviation partial length",
                    format!("{} (shard {s})", part.len()),
                    format!("3p = {} numbers", 3 * p),
                ));
            }
        }
        let mut total = vec![0.0; 3 * p];
        let squares: Vec<&[f64]> = refs.iter().map(|r| &r[..p]).collect();
        add_shard_partials(&squares, &mut total[..p])?;
        let (lo, hi) = total[p..].split_at_mut(p);
        lo.fill(f64::INFINITY);
        hi.fill(f64::NEG_INFINITY);
        for part in &refs {
            for j in 0..p {
                lo[j] = lo[j].min(part[p + j]);
                hi[j] = hi[j].max(part[2 * p + j]);
            }
        }
        Self::from_totals(n, mean, &total, names)
    }

    /// The moments from the means and the reduced pass 2 `[Q, lo, hi]`.
    fn from_totals(n: usize, mean: Vec<f64>, totals: &[f64], names: &[String]) -> Result<Self> {
        let p = mean.len();
        let (q, rest) = totals.split_at(p);
        let (lo, hi) = rest.split_at(p);
        let mut sd = vec![0.0; p];
        for j in 0..p {
            let s = (q[j] / n as f64).sqrt();
            if lo[j] == hi[j] || !(s > 0.0 && s.is_finite()) {
                return Err(Error::ConstantColumn { column: names[j].clone(), value: lo[j] });
            }
            sd[j] = s;
        }
        Ok(Self { mean, sd })
    }

    /// Checks moments given for `p` columns named `names`: p finite means and p positive
    /// finite sds.
    ///
    /// # Errors
    /// A length other than p, a NaN or infinite mean, an sd that is not positive and finite,
    /// each naming the column.
    pub fn check(&self, names: &[String]) -> Result<()> {
        let p = names.len();
        for (what, v) in [("column means", &self.mean), ("column sds", &self.sd)] {
            if v.len() != p {
                return Err(Error::invalid(
                    what,
                    format!("{} values", v.len()),
                    format!("one per covariate ({p}: {})", names.join(", ")),
                ));
            }
        }
        for j in 0..p {
            if !self.mean[j].is_finite() {
                return Err(Error::invalid(
                    "column mean",
                    format!("{} for column `{}`", self.mean[j], names[j]),
                    "a finite number",
                ));
            }
            if !(self.sd[j] > 0.0 && self.sd[j].is_finite()) {
                return Err(Error::invalid(
                    "column sd",
                    format!("{} for column `{}`", self.sd[j], names[j]),
                    "a positive finite number",
                ));
            }
        }
        Ok(())
    }
}

/// The means m_j = S_j / n from each shard's pass-1 partial (p numbers each), added in shard
/// order: what the driver runs pass 2 at.
///
/// # Errors
/// Partials of the wrong length, or none.
pub fn means_from_shard_sums(n: usize, sums: &[Vec<f64>], p: usize) -> Result<Vec<f64>> {
    let refs: Vec<&[f64]> = sums.iter().map(Vec::as_slice).collect();
    let mut total = vec![0.0; p];
    add_shard_partials(&refs, &mut total)?;
    Ok(total.iter().map(|s| s / n as f64).collect())
}

/// Pass 1 over `data`'s covariates: the column sums S_j (p numbers), reduced over its shards
/// (one when it has none: what a worker holding one shard computes).
pub fn column_sums(data: &Dataset) -> Vec<f64> {
    column_sums_over(data.x(), data.num_covariates(), &layout_of(data))
}

/// Pass 2 over `data`'s covariates at the means `mean` (p numbers): `[Q_j…, lo_j…, hi_j…]`
/// (3p numbers), Q reduced over its shards as [`column_sums`].
///
/// # Panics
/// If `mean` does not hold p numbers.
pub fn column_deviations(data: &Dataset, mean: &[f64]) -> Vec<f64> {
    assert_eq!(mean.len(), data.num_covariates(), "one mean per covariate");
    column_deviations_over(data.x(), data.num_covariates(), &layout_of(data), mean)
}

fn layout_of(data: &Dataset) -> ShardLayout {
    data.shard_layout().cloned().unwrap_or_else(|| ShardLayout::single(data.len()))
}

/// Pass 1 over the shards of `layout`: S (p numbers).
fn column_sums_over(x: &[f64], p: usize, layout: &ShardLayout) -> Vec<f64> {
    let mut out = vec![0.0; p];
    if p == 0 {
        return out;
    }
    let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
        slot.fill(0.0);
        for row in x[lo as usize * p..hi as usize * p].chunks_exact(p) {
            for (a, v) in slot.iter_mut().zip(row) {
                *a += v;
            }
        }
    };
    reduce_sharded(layout, PASS_CHUNK_ROWS, Parallelism::Rayon, partial, &mut out, &mut Vec::new());
    out
}

/// Pass 2 over the shards of `layout` at `mean`: `[Q, lo, hi]` (3p numbers).
fn column_deviations_over(x: &[f64], p: usize, layout: &ShardLayout, mean: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; 3 * p];
    if p == 0 {
        return out;
    }
    let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
        slot.fill(0.0);
        for row in x[lo as usize * p..hi as usize * p].chunks_exact(p) {
            for j in 0..p {
                let dv = row[j] - mean[j];
                slot[j] += dv * dv;
            }
        }
    };
    let (q, rest) = out.split_at_mut(p);
    reduce_sharded(layout, PASS_CHUNK_ROWS, Parallelism::Rayon, partial, q, &mut Vec::new());
    // The extremes do not depend on the order: one parallel fold over all rows.
    let (lo, hi) = x.par_chunks(PASS_CHUNK_ROWS * p).map(|c| extremes(c, p)).reduce(
        || (vec![f64::INFINITY; p], vec![f64::NEG_INFINITY; p]),
        |(mut lo, mut hi), (l, h)| {
            for j in 0..p {
                lo[j] = lo[j].min(l[j]);
                hi[j] = hi[j].max(h[j]);
            }
            (lo, hi)
        },
    );
    rest[..p].copy_from_slice(&lo);
    rest[p..].copy_from_slice(&hi);
    out
}

/// The columns' minima and maxima over the rows of `x`.
fn extremes(x: &[f64], p: usize) -> (Vec<f64>, Vec<f64>) {
    let mut lo = vec![f64::INFINITY; p];
    let mut hi = vec![f64::NEG_INFINITY; p];
    for row in x.chunks_exact(p) {
        for j in 0..p {
            lo[j] = lo[j].min(row[j]);
            hi[j] = hi[j].max(row[j]);
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns whose sums depend on the order of additions: a large offset and small noise.
    fn data(n: usize, lengths: Option<&[u64]>) -> Dataset {
        let p = 3;
        let x: Vec<f64> = (0..n * p)
            .map(|k| {
                let (i, j) = (k / p, k % p);
                1e6 * j as f64 + ((i * 7919 + j * 31) % 1013) as f64 * 1e-3
            })
            .collect();
        let names = vec!["a".into(), "b".into(), "c".into()];
        let d = Dataset::new(x, vec![0.0; n], names).unwrap();
        match lengths {
            Some(l) => d.with_shard_lengths(l).unwrap(),
            None => d,
        }
    }

    #[test]
    fn shards_reduced_apart_give_the_bits_of_the_sharded_pass_here() {
        let lengths = [9_000u64, 0, 20_001, 4_999];
        let n = 34_000;
        let whole = data(n, Some(&lengths));
        let here = ColumnMoments::of(&whole).unwrap();
        let layout = ShardLayout::from_lengths(&lengths).unwrap();
        let p = 3;
        let shard = |s: usize| {
            let (lo, hi) = layout.range(s);
            let x = whole.x()[lo as usize * p..hi as usize * p].to_vec();
            Dataset::new(x, vec![0.0; (hi - lo) as usize], whole.covariate_names().to_vec())
                .unwrap()
        };
        // An empty shard adds nothing (a data set has rows): the others, in order.
        let held = [0, 2, 3];
        let sums: Vec<Vec<f64>> = held.iter().map(|&s| column_sums(&shard(s))).collect();
        let mean = means_from_shard_sums(n, &sums, p).unwrap();
        let devs: Vec<Vec<f64>> =
            held.iter().map(|&s| column_deviations(&shard(s), &mean)).collect();
        let apart = ColumnMoments::from_shard_partials(n, &sums, &devs, whole.covariate_names());
        let apart = apart.unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&apart.mean), bits(&here.mean));
        assert_eq!(bits(&apart.sd), bits(&here.sd));
        // Another layout is another order of additions, equally close to the truth.
        let one = ColumnMoments::of(&data(n, None)).unwrap();
        for j in 0..p {
            assert!((one.mean[j] - here.mean[j]).abs() <= 1e-12 * (1.0 + one.mean[j].abs()));
            assert!((one.sd[j] - here.sd[j]).abs() <= 1e-9 * one.sd[j]);
        }
        // The sd of (i·7919 + 31j) mod 1013 · 10⁻³ is near that of a uniform on [0, 1.012].
        assert!((one.sd[0] - 1.012 / 12f64.sqrt()).abs() < 0.01, "{}", one.sd[0]);
    }

    #[test]
    fn a_constant_column_and_bad_given_moments_are_named() {
        let x = vec![1.0, 5.0, 2.0, 5.0, 3.0, 5.0];
        let names: Vec<String> = vec!["a".into(), "b".into()];
        let d = Dataset::new(x, vec![0.0; 3], names.clone()).unwrap();
        let e = ColumnMoments::of(&d).unwrap_err().to_string();
        assert!(e.contains("column `b` is constant (value 5)"), "{e}");
        let bad = ColumnMoments { mean: vec![0.0, f64::NAN], sd: vec![1.0, 1.0] };
        assert!(bad.check(&names).unwrap_err().to_string().contains("NaN for column `b`"));
        let bad = ColumnMoments { mean: vec![0.0, 0.0], sd: vec![1.0, 0.0] };
        assert!(bad.check(&names).unwrap_err().to_string().contains("0 for column `b`"));
        let bad = ColumnMoments { mean: vec![0.0], sd: vec![1.0] };
        assert!(bad.check(&names).unwrap_err().to_string().contains("one per covariate (2: a, b)"));
        let sums = vec![vec![1.0, 2.0]];
        let e = ColumnMoments::from_shard_partials(3, &sums, &[vec![0.0; 5]], &names);
        assert!(e.unwrap_err().to_string().contains("5 (shard 0)"));
    }
}
