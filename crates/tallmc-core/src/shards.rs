//! Rows cut into shards, and the one deterministic reduction every O(n) pass goes through.
//!
//! Tall data often arrive in shards (the files of a Parquet directory, the partitions of a
//! Dask DataFrame). Every full-data pass — the mode's Newton steps, the Laplace covariance, the
//! control variates' sums at θ* — is a sum over rows of small per-row results (a value, a
//! gradient, a Hessian: 1 + d + d² numbers). [`reduce_sharded`] computes it as
//!
//! ```text
//! partial_s = Σ_{chunks c of shard s, in order} sum_c     (chunks of `chunk` rows from the
//!                                                          shard's first row)
//! total     = partial_0 + partial_1 + … + partial_{S−1}   (in shard order)
//! ```
//!
//! with each chunk's sum computed on any thread. The bits depend only on the layout, the chunk
//! size and the rows — not on the thread count, and not on *where* a shard's partial is
//! computed: a worker that holds only shard s's rows and reduces them as a one-shard layout
//! ([`ShardLayout::single`]) gets partial_s bit for bit, as long as the per-row code gives the
//! same bits for the same rows wherever they sit (the models' range sums work relative to the
//! range's first row). With one shard, the total is the chunked sum the passes always used.

use crate::error::{Error, Result};
use crate::parallel;

/// Whether a full-data pass may use the rayon thread pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parallelism {
    /// One thread.
    Sequential,
    /// The current rayon thread pool (all cores by default).
    #[default]
    Rayon,
}

/// The rows 0..N cut into consecutive shards (at least one; a shard may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardLayout {
    /// bounds[s]..bounds[s + 1] are shard s's rows; bounds[0] = 0, the last is N.
    bounds: Vec<u32>,
}

impl ShardLayout {
    /// All `n` rows in one shard.
    pub fn single(n: usize) -> Self {
        Self { bounds: vec![0, n as u32] }
    }

    /// Shards of the given lengths, in order. Errors: no shard, or more than `u32::MAX` rows
    /// in all (terms are addressed by `u32` indices).
    pub fn from_lengths(lengths: &[u64]) -> Result<Self> {
        if lengths.is_empty() {
            return Err(Error::invalid("shard lengths", "an empty list", "at least one shard"));
        }
        let mut bounds = Vec::with_capacity(lengths.len() + 1);
        bounds.push(0u32);
        let mut total = 0u64;
        for &len in lengths {
            total += len;
            let b = u32::try_from(total).map_err(|_| {
                Error::invalid("rows", total, format!("at most {} rows in all", u32::MAX))
            })?;
            bounds.push(b);
        }
        Ok(Self { bounds })
    }

    /// Number of rows N.
    pub fn num_rows(&self) -> usize {
        *self.bounds.last().expect("at least one bound") as usize
    }

    /// Number of shards.
    pub fn num_shards(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Shard `s`'s rows, `start..end`.
    pub fn range(&self, s: usize) -> (u32, u32) {
        (self.bounds[s], self.bounds[s + 1])
    }

    /// The shards' lengths, in order.
    pub fn lengths(&self) -> Vec<u64> {
        self.bounds.windows(2).map(|w| u64::from(w[1] - w[0])).collect()
    }

    /// The chunks of the reduction with `chunk` rows per chunk: (shard, start, end) in order,
    /// each shard cut from its own first row (its last chunk may be shorter).
    pub fn chunks(&self, chunk: usize) -> Vec<(usize, u32, u32)> {
        let chunk = chunk.max(1) as u64;
        let mut out = Vec::new();
        for s in 0..self.num_shards() {
            let (lo, hi) = self.range(s);
            let mut a = u64::from(lo);
            while a < u64::from(hi) {
                let b = (a + chunk).min(u64::from(hi));
                out.push((s, a as u32, b as u32));
                a = b;
            }
        }
        out
    }
}

/// The sharded reduction (see the [module docs](self)): **overwrites** `out` (its length is the
/// width w of one partial result) with the total of `partial(start, end, slot)` over the
/// chunks of `layout` — `partial` **overwrites** its w-slot with the sum over rows
/// `start..end` — chunk sums added in chunk order within a shard, shard partials in shard
/// order. `scratch` holds one slot per chunk (it only grows). Allocates the chunk list; a
/// caller that reduces many times keeps it and calls [`reduce_chunks`].
pub fn reduce_sharded<F>(
    layout: &ShardLayout, chunk: usize, parallelism: Parallelism, partial: F, out: &mut [f64],
    scratch: &mut Vec<f64>,
) where
    F: Fn(u32, u32, &mut [f64]) + Sync,
{
    reduce_chunks(&layout.chunks(chunk), parallelism, partial, out, scratch);
}

/// [`reduce_sharded`] over a chunk list made once by [`ShardLayout::chunks`]: allocates
/// nothing once `scratch` holds (chunks + 1) · w numbers.
pub fn reduce_chunks<F>(
    chunks: &[(usize, u32, u32)], parallelism: Parallelism, partial: F, out: &mut [f64],
    scratch: &mut Vec<f64>,
) where
    F: Fn(u32, u32, &mut [f64]) + Sync,
{
    let w = out.len();
    let need = (chunks.len() + 1) * w;
    if scratch.len() < need {
        scratch.resize(need, 0.0);
    }
    let (slots, shard_sum) = scratch[..need].split_at_mut(chunks.len() * w);
    if w > 0 {
        let fill = |(k, slot): (usize, &mut [f64])| {
            let (_, lo, hi) = chunks[k];
            partial(lo, hi, slot);
        };
        match parallelism {
            Parallelism::Sequential => slots.chunks_mut(w).enumerate().for_each(fill),
            Parallelism::Rayon => {
                parallel::for_each_chunk_mut(slots, w, &|k, slot| fill((k, slot)))
            }
        }
    }
    add_in_shard_order(chunks, slots, w, shard_sum, out);
}

/// Chunks mapped in parallel at a time by [`fold_sharded`]: bounds the memory of the partial
/// results in flight while keeping the merge order fixed.
const FOLD_GROUP_CHUNKS: usize = 64;

/// The sharded reduction of results that are not plain sums (extremes, counts, flags beside
/// sums): `partial(start, end)` over the chunks of `layout` of `chunk` rows, merged with
/// `merge(acc, next)` in chunk order within a shard, then the shard results in shard order —
/// the order [`reduce_sharded`] adds in, so a driver that merges the partials of shards folded
/// apart (each a one-shard layout) in shard order gets the same bits. `None` when there are no
/// rows. At most 64 chunk results are held at a time.
pub fn fold_sharded<T, F, G>(
    layout: &ShardLayout, chunk: usize, parallelism: Parallelism, partial: F, merge: G,
) -> Option<T>
where
    T: Send,
    F: Fn(u32, u32) -> T + Sync,
    G: Fn(&mut T, T),
{
    let chunks = layout.chunks(chunk);
    let mut total: Option<T> = None;
    let mut shard: Option<(usize, T)> = None;
    for group in chunks.chunks(FOLD_GROUP_CHUNKS) {
        let parts: Vec<T> = match parallelism {
            Parallelism::Sequential => group.iter().map(|&(_, lo, hi)| partial(lo, hi)).collect(),
            Parallelism::Rayon => parallel::map_indices(group.len(), |k| {
                let (_, lo, hi) = group[k];
                partial(lo, hi)
            }),
        };
        for (&(s, _, _), part) in group.iter().zip(parts) {
            match &mut shard {
                Some((current, acc)) if *current == s => merge(acc, part),
                _ => {
                    if let Some((_, done)) = shard.take() {
                        merge_into(&mut total, done, &merge);
                    }
                    shard = Some((s, part));
                }
            }
        }
    }
    if let Some((_, done)) = shard {
        merge_into(&mut total, done, &merge);
    }
    total
}

/// `total` merged with `next` (or `next`, when it is the first).
fn merge_into<T>(total: &mut Option<T>, next: T, merge: &impl Fn(&mut T, T)) {
    match total {
        Some(acc) => merge(acc, next),
        None => *total = Some(next),
    }
}

/// The two-level sum of [`reduce_sharded`] over chunk slots already filled (`shard_sum`: w
/// numbers of scratch).
fn add_in_shard_order(
    chunks: &[(usize, u32, u32)], slots: &[f64], w: usize, shard_sum: &mut [f64], out: &mut [f64],
) {
    out.fill(0.0);
    let mut first_shard = true;
    let mut k = 0;
    while k < chunks.len() {
        let s = chunks[k].0;
        shard_sum.fill(0.0);
        while k < chunks.len() && chunks[k].0 == s {
            for (a, b) in shard_sum.iter_mut().zip(&slots[k * w..(k + 1) * w]) {
                *a += b;
            }
            k += 1;
        }
        add_shard_partial(shard_sum, first_shard, out);
        first_shard = false;
    }
}

/// Adds one shard's partial into a running total in shard order: the first partial is the
/// total as it is (so one shard gives exactly its chunked sum), later ones are added. What a
/// driver does with the partials its workers return ([`add_shard_partials`]).
fn add_shard_partial(partial: &[f64], first: bool, total: &mut [f64]) {
    if first {
        total.copy_from_slice(partial);
    } else {
        for (t, p) in total.iter_mut().zip(partial) {
            *t += p;
        }
    }
}

/// **Overwrites** `total` with the sum of `partials` (one per shard, each of `total`'s length)
/// in their order, with the bits of [`reduce_sharded`] over the same shards: how the results of
/// shards reduced elsewhere are combined. Errors when a partial has the wrong length or there
/// is none.
pub fn add_shard_partials(partials: &[&[f64]], total: &mut [f64]) -> Result<()> {
    if partials.is_empty() {
        return Err(Error::invalid("shard partials", "none", "one per shard"));
    }
    for (s, p) in partials.iter().enumerate() {
        if p.len() != total.len() {
            return Err(Error::invalid(
                "shard partial length",
                format!("{} (shard {s})", p.len()),
                format!("{} numbers", total.len()),
            ));
        }
        add_shard_partial(p, s == 0, total);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-row values whose sums depend on the order of additions.
    fn values(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i * 7919) % 1013) as f64 * 1e-3 + if i % 3 == 0 { 1e15 } else { 0.1 })
            .collect()
    }

    fn reduce(v: &[f64], layout: &ShardLayout, chunk: usize, par: Parallelism) -> [f64; 2] {
        let mut out = [0.0; 2];
        let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
            slot[0] = v[lo as usize..hi as usize].iter().sum();
            slot[1] = v[lo as usize..hi as usize].iter().map(|x| x * 0.5).sum();
        };
        reduce_sharded(layout, chunk, par, partial, &mut out, &mut Vec::new());
        out
    }

    #[test]
    fn shards_reduced_apart_and_added_in_order_give_the_bits_of_the_whole() {
        let v = values(10_000);
        let layout = ShardLayout::from_lengths(&[3_001, 0, 4_000, 2_999]).unwrap();
        let whole = reduce(&v, &layout, 512, Parallelism::Rayon);
        assert_eq!(whole, reduce(&v, &layout, 512, Parallelism::Sequential));
        // Each shard reduced on its own rows only, as a worker would, then added in order.
        let partials: Vec<[f64; 2]> = (0..layout.num_shards())
            .map(|s| {
                let (lo, hi) = layout.range(s);
                let own = &v[lo as usize..hi as usize];
                reduce(own, &ShardLayout::single(own.len()), 512, Parallelism::Rayon)
            })
            .collect();
        let refs: Vec<&[f64]> = partials.iter().map(|p| p.as_slice()).collect();
        let mut total = [0.0; 2];
        add_shard_partials(&refs, &mut total).unwrap();
        assert_eq!(total.map(f64::to_bits), whole.map(f64::to_bits));
        // Another layout is another (equally valid) order of additions.
        let one = reduce(&v, &ShardLayout::single(10_000), 512, Parallelism::Rayon);
        assert!((one[0] - whole[0]).abs() <= 1e-12 * one[0].abs());
    }

    #[test]
    fn a_fold_of_shards_apart_merged_in_order_gives_the_bits_of_the_whole() {
        let v = values(300_000);
        let layout = ShardLayout::from_lengths(&[100_001, 0, 150_000, 49_999]).unwrap();
        // (sum, max): a sum beside an extreme; 300,000 rows are more than 64 chunks of 512.
        let fold = |v: &[f64], layout: &ShardLayout, par| {
            let partial = |lo: u32, hi: u32| {
                let rows = &v[lo as usize..hi as usize];
                (rows.iter().sum::<f64>(), rows.iter().copied().fold(f64::MIN, f64::max))
            };
            let merge = |a: &mut (f64, f64), b: (f64, f64)| *a = (a.0 + b.0, a.1.max(b.1));
            fold_sharded(layout, 512, par, partial, merge).unwrap()
        };
        let whole = fold(&v, &layout, Parallelism::Rayon);
        assert_eq!(whole, fold(&v, &layout, Parallelism::Sequential));
        // The sums are reduce_sharded's.
        assert_eq!(whole.0.to_bits(), reduce(&v, &layout, 512, Parallelism::Rayon)[0].to_bits());
        let mut apart: Option<(f64, f64)> = None;
        for s in (0..layout.num_shards()).filter(|&s| layout.lengths()[s] > 0) {
            let (lo, hi) = layout.range(s);
            let own = &v[lo as usize..hi as usize];
            let p = fold(own, &ShardLayout::single(own.len()), Parallelism::Rayon);
            apart = Some(match apart {
                None => p,
                Some(a) => (a.0 + p.0, a.1.max(p.1)),
            });
        }
        assert_eq!(apart.unwrap().0.to_bits(), whole.0.to_bits());
        assert_eq!(apart.unwrap().1, whole.1);
        let none =
            fold_sharded(&ShardLayout::single(0), 512, Parallelism::Rayon, |_, _| 1.0, |_, _| {});
        assert!(none.is_none());
    }

    #[test]
    fn chunks_start_at_each_shard() {
        let layout = ShardLayout::from_lengths(&[5, 3]).unwrap();
        assert_eq!(layout.chunks(2), [(0, 0, 2), (0, 2, 4), (0, 4, 5), (1, 5, 7), (1, 7, 8)]);
        assert_eq!(layout.num_rows(), 8);
        assert_eq!(layout.lengths(), [5, 3]);
        assert!(ShardLayout::from_lengths(&[]).is_err());
        assert!(ShardLayout::from_lengths(&[u64::from(u32::MAX), 1]).is_err());
        let mut t = [0.0];
        assert!(add_shard_partials(&[&[1.0, 2.0]], &mut t).is_err());
    }
}
