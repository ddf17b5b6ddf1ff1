//! Parallel loops on the rayon pool whose machinery is compiled once.
//!
//! A rayon iterator is generic over its closure, so every caller that is itself generic (a
//! driver over each kernel, model and sink; a pass over each model) would instantiate rayon's
//! whole job, join and bridge machinery once per type it is used with — in `tallmc-run`, 43 %
//! of the LLVM IR was that, for ~600 instantiations. The loops here take the work as a trait
//! object, so rayon is instantiated once, here; the generic callers keep only their closures.
//! The work of one index or chunk is large (a chain, a chunk of thousands of rows), so the
//! one indirect call per item costs nothing measurable.
//!
//! A panic in the work is propagated to the caller, as rayon's own loops do.

use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

/// Runs `job(k)` for every k in 0..n on the current rayon pool.
pub fn for_each_index(n: usize, job: &(dyn Fn(usize) + Sync)) {
    (0..n).into_par_iter().for_each(job);
}

/// Runs `job(k, chunk)` for every consecutive chunk of `width` numbers of `data` (chunk k is
/// `data[k·width..(k+1)·width]`; the last may be shorter) on the current rayon pool.
///
/// # Panics
/// If `width` is 0.
pub fn for_each_chunk_mut(
    data: &mut [f64], width: usize, job: &(dyn Fn(usize, &mut [f64]) + Sync),
) {
    data.par_chunks_mut(width).enumerate().for_each(|(k, chunk)| job(k, chunk));
}

/// `[f(0), f(1), …, f(n − 1)]`, computed on the current rayon pool, in index order.
pub fn map_indices<T, F>(n: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    map_owned(vec![(); n], |k, ()| f(k))
}

/// `[f(0, items[0]), f(1, items[1]), …]`, each item moved into its call, computed on the
/// current rayon pool, in index order. (Plain loops rather than iterator chains: this is
/// instantiated for every caller's types, so it is kept small.)
pub fn map_owned<I, T, F>(items: Vec<I>, f: F) -> Vec<T>
where
    I: Send,
    T: Send,
    F: Fn(usize, I) -> T + Sync,
{
    // Slot k holds item k until its job takes it, then the job's result.
    enum Slot<I, T> {
        Item(I),
        Taken,
        Done(T),
    }
    let mut slots = Vec::with_capacity(items.len());
    for item in items {
        slots.push(Mutex::new(Slot::<I, T>::Item(item)));
    }
    let lock = |k: usize| slots[k].lock().unwrap_or_else(PoisonError::into_inner);
    for_each_index(slots.len(), &|k| {
        let Slot::Item(item) = std::mem::replace(&mut *lock(k), Slot::Taken) else {
            unreachable!("each index runs once");
        };
        let value = f(k, item);
        *lock(k) = Slot::Done(value);
    });
    let mut out = Vec::with_capacity(slots.len());
    for slot in slots {
        let Slot::Done(value) = slot.into_inner().unwrap_or_else(PoisonError::into_inner) else {
            unreachable!("every index ran");
        };
        out.push(value);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn every_index_runs_once_and_results_keep_their_order() {
        let runs = AtomicUsize::new(0);
        let squares = map_indices(1000, |k| {
            runs.fetch_add(1, Ordering::Relaxed);
            k * k
        });
        assert_eq!(runs.load(Ordering::Relaxed), 1000);
        assert_eq!(squares, (0..1000).map(|k| k * k).collect::<Vec<_>>());
        assert!(map_indices(0, |k| k).is_empty());
    }

    #[test]
    fn owned_items_are_moved_to_their_index() {
        let items: Vec<String> = (0..50).map(|k| format!("item {k}")).collect();
        let out = map_owned(items, |k, s| format!("{k}: {s}"));
        assert_eq!(out[7], "7: item 7");
        assert_eq!(out.len(), 50);
    }

    #[test]
    fn chunks_are_the_consecutive_slices() {
        let mut data = vec![0.0; 10];
        for_each_chunk_mut(&mut data, 3, &|k, chunk| chunk.fill(k as f64));
        assert_eq!(data, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0]);
    }

    #[test]
    #[should_panic(expected = "chain 3 failed")]
    fn a_panic_reaches_the_caller() {
        for_each_index(8, &|k| assert!(k != 3, "chain 3 failed"));
    }
}
