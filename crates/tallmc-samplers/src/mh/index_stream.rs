//! The indices of a chain's Poisson minibatches, from a random stream of their own, and the
//! rows they name declared ahead when the model's rows live elsewhere.
//!
//! SMH, TunaMH and MH-SS draw each iteration's minibatch size B from the chain's RNG (its mean
//! depends on θ and θ′), then B indices i with probability c_i / C from an alias table of the
//! per-datum constants, which do not depend on the state. Those index draws come from a
//! ChaCha8 stream seeded from the chain's RNG when the chain is built, not from the chain's
//! RNG:
//!
//! * the sequence of indices a chain reads is fixed by its seed whatever it accepts (the k-th
//!   index drawn is the same in every run), so a chain whose rows live elsewhere knows the rows
//!   it reads next;
//! * the proposals and uniforms of two runs that read different numbers of rows (another χ,
//!   another order) stay aligned.
//!
//! Whether the drawn indices are kept is decided with the chain's RNG (they depend on θ, θ′).
//!
//! **Rows that live elsewhere** (a model with a [`RowService`](tallmc_core::RowService): a
//! cluster's shards). The stream draws its indices ahead into a queue. When an iteration needs
//! more indices than the queue holds declared, the chain declares: *now*, every index drawn so
//! far (the previous declaration's rows ahead, whose fetch is under way) and at least the B
//! this iteration needs; *ahead*, the next window of the stream, whose fetch then runs while
//! the chain samples. The window is twice the rows read since the last declaration, and at
//! least [`MIN_WINDOW`]: a chain declares about once per window, whatever its minibatches'
//! sizes. The indices are those of a local run (the queue holds the same draws in the same
//! order), so a run over shards gives a local run's draws bit for bit.

use std::collections::VecDeque;

use rand::{Rng, RngExt, SeedableRng};
use tallmc_core::rng::ChainRng;
use tallmc_core::{AliasTable, Error, Result, Terms};

/// The smallest window of indices declared ahead.
pub(crate) const MIN_WINDOW: usize = 4096;

/// A chain's stream of minibatch indices.
#[derive(Debug, Clone)]
pub(crate) struct IndexStream {
    rng: ChainRng,
    /// `Some` when the model's rows live elsewhere.
    declared: Option<Declared>,
}

/// The indices drawn ahead and what was declared of them.
#[derive(Debug, Clone)]
struct Declared {
    /// The chain's key with the model's row service.
    reader: usize,
    /// Indices drawn and not yet read, in stream order.
    queue: VecDeque<u32>,
    /// How many at the front of `queue` are present (declared *now*).
    ready: usize,
    /// Indices read since the last declaration.
    read: usize,
}

impl IndexStream {
    /// A stream seeded with one `u64` of the chain's RNG; registered as a reader with `model`'s
    /// row service if it has one.
    pub(crate) fn seeded_from<M: Terms + ?Sized, R: Rng + ?Sized>(model: &M, rng: &mut R) -> Self {
        let declared = model.row_service().map(|service| Declared {
            reader: service.register(),
            queue: VecDeque::new(),
            ready: 0,
            read: 0,
        });
        Self { rng: ChainRng::seed_from_u64(rng.random::<u64>()), declared }
    }

    /// Appends the next `b` indices of the stream, each i with probability w_i / W of `table`,
    /// to `out`; for a model whose rows live elsewhere, their rows are present when it returns.
    ///
    /// # Errors
    /// A failed fetch of rows (the row service's message).
    pub(crate) fn extend<M: Terms + ?Sized>(
        &mut self, model: &M, table: &AliasTable, b: usize, out: &mut Vec<u32>,
    ) -> Result<()> {
        let Some(declared) = &mut self.declared else {
            out.extend((0..b).map(|_| table.sample(&mut self.rng)));
            return Ok(());
        };
        if b > declared.ready {
            let service =
                model.row_service().ok_or(Error::Internal("the row service went away"))?;
            let now = b.max(declared.queue.len());
            let window = MIN_WINDOW.max(2 * declared.read);
            while declared.queue.len() < now + window {
                declared.queue.push_back(table.sample(&mut self.rng));
            }
            let drawn = declared.queue.make_contiguous();
            service.declare(declared.reader, &drawn[..now], &drawn[now..now + window])?;
            declared.ready = now;
            declared.read = 0;
        }
        out.extend(declared.queue.drain(..b));
        declared.ready -= b;
        declared.read += b;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tallmc_core::RowService;

    use super::*;

    /// A model of `n` terms whose rows live elsewhere: it records every declaration.
    struct Elsewhere {
        n: usize,
        declarations: Mutex<Vec<(Vec<u32>, Vec<u32>)>>,
    }

    impl Terms for Elsewhere {
        fn dim(&self) -> usize {
            1
        }
        fn num_terms(&self) -> usize {
            self.n
        }
        fn log_terms(&self, _theta: &[f64], _indices: &[u32], out: &mut [f64]) {
            out.fill(0.0);
        }
        fn row_service(&self) -> Option<&dyn RowService> {
            Some(self)
        }
    }

    impl RowService for Elsewhere {
        fn register(&self) -> usize {
            0
        }
        fn declare(&self, _reader: usize, now: &[u32], ahead: &[u32]) -> Result<()> {
            self.declarations.lock().unwrap().push((now.to_vec(), ahead.to_vec()));
            Ok(())
        }
    }

    /// A model of `n` terms, all here.
    struct Here(usize);

    impl Terms for Here {
        fn dim(&self) -> usize {
            1
        }
        fn num_terms(&self) -> usize {
            self.0
        }
        fn log_terms(&self, _theta: &[f64], _indices: &[u32], out: &mut [f64]) {
            out.fill(0.0);
        }
    }

    fn table() -> AliasTable {
        AliasTable::new(&[1.0, 2.0, 0.5, 4.0, 0.0, 3.0]).unwrap()
    }

    /// The indices do not depend on how many are drawn at a time, nor on where the rows live:
    /// the stream is one sequence.
    #[test]
    fn the_sequence_does_not_depend_on_batch_sizes_or_where_the_rows_are() {
        let (table, here) = (table(), Here(6));
        let elsewhere = Elsewhere { n: 6, declarations: Mutex::new(Vec::new()) };
        let mut a = IndexStream::seeded_from(&here, &mut ChainRng::seed_from_u64(9));
        let mut b = a.clone();
        let mut c = IndexStream::seeded_from(&elsewhere, &mut ChainRng::seed_from_u64(9));
        let (mut one, mut batched, mut served) = (Vec::new(), Vec::new(), Vec::new());
        a.extend(&here, &table, 20_000, &mut one).unwrap();
        for size in [3, 0, 17, 1, 5_000, 19, 14_960] {
            b.extend(&here, &table, size, &mut batched).unwrap();
            c.extend(&elsewhere, &table, size, &mut served).unwrap();
        }
        assert_eq!(one, batched);
        assert_eq!(one, served);
        assert!(one.iter().all(|&i| i != 4), "a datum of weight 0 is never drawn");
    }

    /// Every index read was declared *now* before it was read (in the last declaration made
    /// at or before the read), and each declaration's rows are the stream's, in order: *now*
    /// from where the chain stands, *ahead* right after.
    #[test]
    fn every_index_read_was_declared_first() {
        let (table, here) = (table(), Here(6));
        let elsewhere = Elsewhere { n: 6, declarations: Mutex::new(Vec::new()) };
        let mut stream = IndexStream::seeded_from(&elsewhere, &mut ChainRng::seed_from_u64(3));
        let mut reference = IndexStream::seeded_from(&here, &mut ChainRng::seed_from_u64(3));
        let mut whole = Vec::new();
        reference.extend(&here, &table, 200_000, &mut whole).unwrap();
        let (mut read, mut at) = (Vec::new(), 0);
        for b in [10, 4_000, 90, 7_000, 1, 30_000, 2, 0, 5] {
            let start = read.len();
            let before = elsewhere.declarations.lock().unwrap().len();
            stream.extend(&elsewhere, &table, b, &mut read).unwrap();
            let declarations = elsewhere.declarations.lock().unwrap();
            let (now, ahead) = declarations.last().unwrap();
            if declarations.len() > before {
                at = start;
                assert_eq!(&whole[at..at + now.len()], now.as_slice());
                assert_eq!(&whole[at + now.len()..at + now.len() + ahead.len()], ahead.as_slice());
                assert!(ahead.len() >= MIN_WINDOW, "{} ahead", ahead.len());
            }
            assert!(start + b <= at + now.len(), "rows {start}..{} read, not declared", start + b);
        }
        assert_eq!(read, whole[..read.len()]);
        let declarations = elsewhere.declarations.lock().unwrap().len();
        assert!((3..=6).contains(&declarations), "{declarations} declarations");
    }
}
