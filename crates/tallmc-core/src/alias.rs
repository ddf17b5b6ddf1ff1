//! Draws of an index i with probability w_i / W in O(1): Walker's alias method, built by Vose's
//! algorithm (Vose 1991, "A linear algorithm for generating random numbers with a given
//! distribution"), and its two-level form over shards.
//!
//! **One level.** With n weights scaled to p_i = n w_i / W (mean 1), the table holds for every
//! cell i a threshold prob_i ∈ [0, 1] and an alias a_i, such that drawing a cell j uniformly and
//! keeping it with probability prob_j (else taking a_j) gives i with probability
//!
//! ```text
//! (1/n) [prob_i + Σ_{j : a_j = i} (1 − prob_j)] = p_i / n = w_i / W.
//! ```
//!
//! Vose's construction pairs a cell below 1 with one at or above 1, fills the small cell up to
//! 1 with the large one's mass and puts the remainder p_l + p_s − 1 back (the form that loses
//! the least to rounding); cells left over at the end hold all their mass (prob = 1).
//!
//! **Two levels** (REFERENCES §7, "Shards"): a shard s drawn with probability W_s / W, W_s the
//! weight of its rows, then a row of that shard by the shard's own table:
//! P(i) = (W_s / W)(w_i / W_s) = w_i / W. No table over all N rows is needed, so each shard's
//! table can be built where the shard lives, and only the S shard weights travel.
//!
//! Cost: O(n) to build, two uniforms per draw (one level) or four (two levels).

use rand::{Rng, RngExt};

use crate::error::{Error, Result};

/// Walker's alias table over n ≥ 1 non-negative weights (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct AliasTable {
    prob: Vec<f64>,
    alias: Vec<u32>,
    total: f64,
}

impl AliasTable {
    /// The table of `weights`.
    ///
    /// # Errors
    /// No weight, more than 2³² − 1, a negative, NaN or infinite weight (naming its index), or
    /// weights that add up to 0 or overflow.
    pub fn new(weights: &[f64]) -> Result<Self> {
        let n = weights.len();
        if n == 0 {
            return Err(Error::invalid("alias table weights", "none", "at least one weight"));
        }
        if u32::try_from(n).is_err() {
            return Err(Error::invalid("alias table weights", n, "at most 2³² − 1 weights"));
        }
        if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(Error::invalid(
                "alias table weight",
                format!("{} at index {i}", weights[i]),
                "a finite number ≥ 0",
            ));
        }
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(Error::invalid(
                "alias table weights",
                format!("adding up to {total}"),
                "a finite positive total",
            ));
        }
        let scale = n as f64 / total;
        let mut mass: Vec<f64> = weights.iter().map(|w| w * scale).collect();
        let mut prob = vec![1.0; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..n as u32).partition(|&i| mass[i as usize] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            let (si, li) = (s as usize, l as usize);
            prob[si] = mass[si];
            alias[si] = l;
            mass[li] = (mass[li] + mass[si]) - 1.0;
            if mass[li] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Cells left in either list hold (up to rounding) exactly their own mass: prob = 1.
        Ok(Self { prob, alias, total })
    }

    /// The number n of weights.
    pub fn len(&self) -> usize {
        self.prob.len()
    }

    /// Always `false`: a table has at least one weight.
    pub fn is_empty(&self) -> bool {
        self.prob.is_empty()
    }

    /// W = Σ_i w_i.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// An index i drawn with probability w_i / W: one uniform cell, one uniform threshold.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let j = rng.random_range(0..self.prob.len() as u32);
        let u: f64 = rng.random();
        if u < self.prob[j as usize] { j } else { self.alias[j as usize] }
    }

    /// The probability the table draws index `i` with, w_i / W up to rounding, recomputed from
    /// its cells (O(n): for tests and diagnostics).
    pub fn probability(&self, i: usize) -> f64 {
        let n = self.prob.len() as f64;
        let own = self.prob[i];
        let given: f64 = (self.alias.iter().zip(&self.prob))
            .enumerate()
            .filter(|&(j, (&a, _))| a as usize == i && j != i)
            .map(|(_, (_, &p))| 1.0 - p)
            .sum();
        (own + given) / n
    }
}

/// The two-level alias table over rows cut into shards (see the [module docs](self)): a shard
/// by its weight W_s, then a row by the shard's table. Indices are global (the shard's first
/// row plus the row within it).
#[derive(Debug, Clone, PartialEq)]
pub struct ShardedAlias {
    shards: AliasTable,
    rows: Vec<Option<AliasTable>>,
    first_rows: Vec<u32>,
}

impl ShardedAlias {
    /// The table from each shard's own table (`None` for a shard of no weight: empty, or all its
    /// weights 0) and its first global row, in shard order. Each shard's weight W_s is its
    /// table's total.
    ///
    /// # Errors
    /// No shard, lists of different lengths, first rows out of order, or no weight at all.
    pub fn new(rows: Vec<Option<AliasTable>>, first_rows: Vec<u32>) -> Result<Self> {
        if rows.len() != first_rows.len() {
            return Err(Error::invalid(
                "sharded alias table",
                format!("{} tables and {} first rows", rows.len(), first_rows.len()),
                "one first row per shard",
            ));
        }
        if first_rows.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::invalid(
                "sharded alias table",
                "first rows out of order",
                "shards in row order",
            ));
        }
        let weights: Vec<f64> =
            rows.iter().map(|t| t.as_ref().map_or(0.0, AliasTable::total)).collect();
        let shards = AliasTable::new(&weights)?;
        Ok(Self { shards, rows, first_rows })
    }

    /// The two-level table of per-row `weights` cut into shards of `lengths` rows (here, with
    /// every shard's rows in one place).
    ///
    /// # Errors
    /// Lengths that do not add up to the number of weights, and [`AliasTable::new`]'s errors.
    pub fn from_weights(weights: &[f64], lengths: &[u64]) -> Result<Self> {
        let total: u64 = lengths.iter().sum();
        if total != weights.len() as u64 {
            return Err(Error::invalid(
                "shard lengths",
                format!("adding up to {total}"),
                format!("the number of weights, {}", weights.len()),
            ));
        }
        let mut first = 0usize;
        let mut tables = Vec::with_capacity(lengths.len());
        let mut firsts = Vec::with_capacity(lengths.len());
        for &len in lengths {
            let part = &weights[first..first + len as usize];
            // A shard of zero weight has no table; a bad weight is named by `AliasTable::new`.
            let table =
                if part.iter().all(|&w| w == 0.0) { None } else { Some(AliasTable::new(part)?) };
            tables.push(table);
            firsts.push(u32::try_from(first).map_err(|_| {
                Error::invalid("rows", first, format!("at most {} rows in all", u32::MAX))
            })?);
            first += len as usize;
        }
        Self::new(tables, firsts)
    }

    /// W = Σ_s W_s.
    pub fn total(&self) -> f64 {
        self.shards.total()
    }

    /// A global row index i drawn with probability w_i / W: a shard, then a row of it.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let s = self.shards.sample(rng) as usize;
        // A shard of no weight is never drawn.
        let row = self.rows[s].as_ref().map_or(0, |t| t.sample(rng));
        self.first_rows[s] + row
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Weights spanning orders of magnitude, with zeros.
    fn weights(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    0.0
                } else {
                    ((i * 37) % 101) as f64 * 10f64.powi((i % 4) as i32 - 2)
                }
            })
            .collect()
    }

    #[test]
    fn the_table_gives_each_index_its_weight() {
        let w = weights(500);
        let table = AliasTable::new(&w).unwrap();
        let total: f64 = w.iter().sum();
        assert!((table.total() - total).abs() <= 1e-12 * total);
        for (i, wi) in w.iter().enumerate() {
            let p = table.probability(i);
            assert!((p - wi / total).abs() <= 1e-12, "index {i}: {p} vs {}", wi / total);
        }
    }

    /// The counts of `draws` draws against their multinomial expectations: every count within
    /// 5 sds, and a χ² over the cells with expected counts ≥ 5 within 5 sds of its mean.
    fn check_frequencies(counts: &[u64], probs: &[f64], draws: u64) {
        let (mut chi2, mut cells) = (0.0, 0.0);
        for (i, (&c, &p)) in counts.iter().zip(probs).enumerate() {
            let expected = p * draws as f64;
            if p == 0.0 {
                assert_eq!(c, 0, "index {i} of weight 0 was drawn");
                continue;
            }
            let sd = (expected * (1.0 - p)).sqrt();
            assert!((c as f64 - expected).abs() <= 5.0 * sd + 1.0, "index {i}: {c} vs {expected}");
            if expected >= 5.0 {
                chi2 += (c as f64 - expected).powi(2) / expected;
                cells += 1.0;
            }
        }
        // χ² with k − 1 degrees of freedom: mean k − 1, sd √(2(k − 1)).
        let df = cells - 1.0;
        assert!((chi2 - df).abs() <= 5.0 * (2.0 * df).sqrt(), "χ² = {chi2} on {df} df");
    }

    #[test]
    fn draws_follow_the_weights_one_level_and_over_shards() {
        let w = weights(300);
        let total: f64 = w.iter().sum();
        let probs: Vec<f64> = w.iter().map(|x| x / total).collect();
        let draws = 400_000u64;
        for seed in [1u64, 2] {
            let table = AliasTable::new(&w).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut counts = vec![0u64; w.len()];
            (0..draws).for_each(|_| counts[table.sample(&mut rng) as usize] += 1);
            check_frequencies(&counts, &probs, draws);
            // Shards of uneven lengths, one empty and one of zero weight only.
            let mut w0 = w.clone();
            w0[100..110].iter_mut().for_each(|x| *x = 0.0);
            let total0: f64 = w0.iter().sum();
            let probs0: Vec<f64> = w0.iter().map(|x| x / total0).collect();
            let sharded = ShardedAlias::from_weights(&w0, &[100, 10, 0, 150, 40]).unwrap();
            assert!((sharded.total() - total0).abs() <= 1e-12 * total0);
            let mut counts = vec![0u64; w.len()];
            (0..draws).for_each(|_| counts[sharded.sample(&mut rng) as usize] += 1);
            check_frequencies(&counts, &probs0, draws);
        }
    }

    #[test]
    fn bad_weights_are_named() {
        assert!(AliasTable::new(&[]).unwrap_err().to_string().contains("at least one weight"));
        let e = AliasTable::new(&[1.0, -0.5]).unwrap_err().to_string();
        assert!(e.contains("-0.5 at index 1"), "{e}");
        let e = AliasTable::new(&[1.0, f64::NAN]).unwrap_err().to_string();
        assert!(e.contains("NaN at index 1"), "{e}");
        let e = AliasTable::new(&[0.0, 0.0]).unwrap_err().to_string();
        assert!(e.contains("adding up to 0"), "{e}");
        let e = ShardedAlias::from_weights(&[1.0, 2.0], &[1]).unwrap_err().to_string();
        assert!(e.contains("adding up to 1"), "{e}");
        // One weight: always that index.
        let one = AliasTable::new(&[3.0]).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!((0..100).all(|_| one.sample(&mut rng) == 0));
    }
}
