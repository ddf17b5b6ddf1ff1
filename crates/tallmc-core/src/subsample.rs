//! Subsamplers: which data indices a step looks at.
//!
//! Three ways of drawing, each a small type rather than one trait because they are used
//! differently:
//!
//! * [`WithoutReplacement`] — *incremental* draws without replacement, for sequential tests
//!   that keep asking for more values until they decide or the whole population is used
//!   (partial Fisher–Yates over a kept permutation: O(batch) per draw, no O(N) reset);
//! * [`WithReplacement`] — m indices i.i.d. uniform on {0, …, N−1} (difference estimators);
//! * [`BlockSubsample`] — m indices with replacement in G blocks, of which one is refreshed per
//!   iteration and the refresh accepted or rejected (correlated pseudo-marginal updates; the
//!   correlation between successive estimates is about 1 − 1/G).
//!
//! Indices are `u32`: N must be at most 2³² − 1.

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{Error, Result};

fn check_population(n: usize) -> Result<u32> {
    if n == 0 {
        return Err(Error::invalid("population size N", 0, "at least 1 datum"));
    }
    u32::try_from(n).map_err(|_| Error::invalid("population size N", n, "at most 2^32 - 1"))
}

/// Incremental sampling without replacement from {0, …, N−1}.
///
/// Keeps a permutation of the indices; [`WithoutReplacement::draw`] extends the drawn prefix by a
/// partial Fisher–Yates shuffle, so k draws cost O(k) and [`WithoutReplacement::reset`] is O(1)
/// (the next draws shuffle the permutation left by the previous ones, which is still uniform).
/// Memory: 4N bytes.
#[derive(Debug, Clone)]
pub struct WithoutReplacement {
    perm: Vec<u32>,
    used: usize,
}

impl WithoutReplacement {
    /// A sampler over a population of `n` indices.
    pub fn new(n: usize) -> Result<Self> {
        let n32 = check_population(n)?;
        Ok(Self { perm: (0..n32).collect(), used: 0 })
    }

    /// Population size N.
    pub fn population(&self) -> usize {
        self.perm.len()
    }

    /// Starts a new sample: forget everything drawn so far.
    pub fn reset(&mut self) {
        self.used = 0;
    }

    /// Draws `k` more indices (fewer if fewer remain) without replacement from those not drawn
    /// since the last reset, and returns them.
    pub fn draw<R: Rng + ?Sized>(&mut self, k: usize, rng: &mut R) -> &[u32] {
        let n = self.perm.len();
        let start = self.used;
        let end = n.min(start.saturating_add(k));
        for j in start..end {
            // Remaining population has n - j elements; n ≤ u32::MAX so this fits.
            let r = rng.random_range(0..(n - j) as u32) as usize;
            self.perm.swap(j, j + r);
        }
        self.used = end;
        &self.perm[start..end]
    }

    /// Every index drawn since the last reset, in draw order.
    pub fn drawn(&self) -> &[u32] {
        &self.perm[..self.used]
    }

    /// How many indices remain undrawn.
    pub fn remaining(&self) -> usize {
        self.perm.len() - self.used
    }
}

/// m indices drawn i.i.d. uniformly from {0, …, N−1}.
#[derive(Debug, Clone)]
pub struct WithReplacement {
    n: u32,
    indices: Vec<u32>,
}

impl WithReplacement {
    /// A sampler of `m` indices from a population of `n`.
    pub fn new(n: usize, m: usize) -> Result<Self> {
        let n = check_population(n)?;
        if m == 0 {
            return Err(Error::invalid("subsample size m", 0, "at least 1"));
        }
        Ok(Self { n, indices: vec![0; m] })
    }

    /// Redraws all m indices and returns them.
    pub fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) -> &[u32] {
        for i in self.indices.iter_mut() {
            *i = rng.random_range(0..self.n);
        }
        &self.indices
    }

    /// The current indices.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }
}

/// m indices with replacement split into G blocks; one block is refreshed per iteration.
///
/// Block b holds `m / G` indices (the first `m mod G` blocks one more). A refresh redraws one
/// uniformly chosen block, keeping a copy of the old one so that a rejected refresh can be undone
/// with [`BlockSubsample::reject`].
///
/// **Its own stream.** The indices never depend on θ or on the chain's decisions, so they are
/// drawn from a random stream of their own (ChaCha8, seeded from the caller's RNG by the first
/// [`BlockSubsample::draw_all`]; later draws take nothing from the caller's RNG): which block a
/// refresh redraws and with which indices is known ahead of the kernel
/// ([`BlockSubsample::upcoming`]), so rows that live elsewhere can be fetched before they are
/// read.
#[derive(Debug, Clone)]
pub struct BlockSubsample {
    n: u32,
    indices: Vec<u32>,
    starts: Vec<usize>,
    saved: Vec<u32>,
    pending: Option<usize>,
    stream: Option<ChaCha8Rng>,
}

impl BlockSubsample {
    /// `m` indices from a population of `n`, in `blocks` blocks (1 ≤ G ≤ m).
    pub fn new(n: usize, m: usize, blocks: usize) -> Result<Self> {
        let n = check_population(n)?;
        if m == 0 {
            return Err(Error::invalid("subsample size m", 0, "at least 1"));
        }
        if blocks == 0 || blocks > m {
            return Err(Error::invalid(
                "number of blocks G",
                blocks,
                format!("an integer in [1, m = {m}]"),
            ));
        }
        let (base, extra) = (m / blocks, m % blocks);
        let mut starts = Vec::with_capacity(blocks + 1);
        let mut s = 0;
        for b in 0..blocks {
            starts.push(s);
            s += base + usize::from(b < extra);
        }
        starts.push(s);
        Ok(Self {
            n,
            indices: vec![0; m],
            starts,
            saved: Vec::with_capacity(base + 1),
            pending: None,
            stream: None,
        })
    }

    /// Number of blocks G.
    pub fn num_blocks(&self) -> usize {
        self.starts.len() - 1
    }

    /// All m current indices.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The indices of block `b`.
    pub fn block(&self, b: usize) -> &[u32] {
        &self.indices[self.starts[b]..self.starts[b + 1]]
    }

    /// Draws all m indices afresh, from the subsample's own stream, which this first seeds from
    /// `rng` (one `u64` taken from it).
    pub fn draw_all<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let mut stream = ChaCha8Rng::seed_from_u64(rng.random());
        for i in self.indices.iter_mut() {
            *i = stream.random_range(0..self.n);
        }
        self.stream = Some(stream);
        self.pending = None;
    }

    /// Proposes a refresh: one uniformly chosen block redrawn, from the subsample's own stream
    /// (seeded from `rng` first if nothing was drawn yet); returns the block. Undo it with
    /// [`BlockSubsample::reject`], keep it with [`BlockSubsample::accept`].
    pub fn propose_refresh<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        let stream = self.stream.get_or_insert_with(|| ChaCha8Rng::seed_from_u64(rng.random()));
        let (b, range) = next_refresh(stream, &self.starts);
        self.saved.clear();
        self.saved.extend_from_slice(&self.indices[range.clone()]);
        for i in &mut self.indices[range] {
            *i = stream.random_range(0..self.n);
        }
        self.pending = Some(b);
        b
    }

    /// Appends to `out` the indices that proposals `skip + 1` to `skip + refreshes` from now
    /// will draw, in order, without drawing them (the stream is copied): what a row source
    /// fetches ahead. Nothing before the first [`BlockSubsample::draw_all`].
    pub fn upcoming(&self, skip: usize, refreshes: usize, out: &mut Vec<u32>) {
        let Some(stream) = &self.stream else { return };
        let mut stream = stream.clone();
        for k in 0..skip + refreshes {
            let (_, range) = next_refresh(&mut stream, &self.starts);
            if k < skip {
                range.for_each(|_| _ = stream.random_range(0..self.n));
            } else {
                out.extend(range.map(|_| stream.random_range(0..self.n)));
            }
        }
    }

    /// Keeps the refreshed block.
    pub fn accept(&mut self) {
        self.pending = None;
    }

    /// Restores the block as it was before the last [`BlockSubsample::propose_refresh`].
    pub fn reject(&mut self) {
        if let Some(b) = self.pending.take() {
            self.indices[self.starts[b]..self.starts[b + 1]].copy_from_slice(&self.saved);
        }
    }
}

/// The block a refresh redraws, and its positions in u, from the subsample's stream.
fn next_refresh(stream: &mut ChaCha8Rng, starts: &[usize]) -> (usize, std::ops::Range<usize>) {
    let b = stream.random_range(0..starts.len() - 1);
    (b, starts[b]..starts[b + 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::chain_rng;

    #[test]
    fn without_replacement_exhausts_population_without_repeats() {
        let mut rng = chain_rng(1, 0);
        let mut s = WithoutReplacement::new(1000).unwrap();
        for round in 0..3 {
            s.reset();
            let mut seen = vec![false; 1000];
            let mut total = 0;
            for k in [1, 7, 300, 2000] {
                for &i in s.draw(k, &mut rng) {
                    assert!(!seen[i as usize], "index {i} drawn twice in round {round}");
                    seen[i as usize] = true;
                    total += 1;
                }
            }
            assert_eq!(total, 1000);
            assert_eq!(s.remaining(), 0);
            assert!(s.draw(5, &mut rng).is_empty());
        }
    }

    #[test]
    fn without_replacement_first_draw_is_uniform() {
        // Each index of a population of 10 appears as the first draw with probability 1/10.
        // Over 100,000 resets the counts are Binomial(1e5, 0.1): sd = 94.9; allow 5 sd.
        let mut rng = chain_rng(2, 0);
        let mut s = WithoutReplacement::new(10).unwrap();
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            s.reset();
            counts[s.draw(1, &mut rng)[0] as usize] += 1;
        }
        for c in counts {
            assert!((f64::from(c) - 10_000.0).abs() < 5.0 * 94.9, "counts {counts:?}");
        }
    }

    #[test]
    fn upcoming_refreshes_are_the_ones_proposed_whatever_is_accepted() {
        let mut rng = chain_rng(4, 0);
        let mut s = BlockSubsample::new(1_000, 23, 5).unwrap();
        let mut none = Vec::new();
        s.upcoming(0, 3, &mut none);
        assert!(none.is_empty(), "nothing is known before the first draw");
        s.draw_all(&mut rng);
        let mut ahead = Vec::new();
        s.upcoming(0, 25, &mut ahead);
        s.upcoming(25, 15, &mut ahead);
        // The caller's RNG is not read after the first draw: its next number is unchanged.
        let mut untouched = rng.clone();
        let mut drawn = Vec::new();
        for k in 0..40 {
            let b = s.propose_refresh(&mut rng);
            drawn.extend_from_slice(s.block(b));
            if k % 3 == 0 { s.reject() } else { s.accept() }
        }
        assert_eq!(drawn, ahead);
        assert_eq!(rng.random::<u64>(), untouched.random::<u64>());
    }

    #[test]
    fn block_refresh_changes_one_block_and_reject_restores() {
        let mut rng = chain_rng(3, 0);
        let mut s = BlockSubsample::new(1_000_000, 103, 10).unwrap();
        assert_eq!(s.num_blocks(), 10);
        assert_eq!((0..10).map(|b| s.block(b).len()).sum::<usize>(), 103);
        assert_eq!(s.block(0).len(), 11);
        assert_eq!(s.block(9).len(), 10);
        s.draw_all(&mut rng);
        let before = s.indices().to_vec();
        let b = s.propose_refresh(&mut rng);
        let after = s.indices().to_vec();
        for other in (0..10).filter(|&o| o != b) {
            let r = s.starts[other]..s.starts[other + 1];
            assert_eq!(before[r.clone()], after[r]);
        }
        assert_ne!(s.block(b), &before[s.starts[b]..s.starts[b + 1]]);
        s.reject();
        assert_eq!(s.indices(), &before[..]);
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(WithoutReplacement::new(0).is_err());
        assert!(WithReplacement::new(10, 0).is_err());
        let e = BlockSubsample::new(10, 5, 6).unwrap_err();
        assert!(e.to_string().contains("number of blocks G = 6"), "{e}");
        assert!(BlockSubsample::new(10, 5, 0).is_err());
    }
}
