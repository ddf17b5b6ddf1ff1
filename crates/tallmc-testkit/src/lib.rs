//! Test support shared by tallmc's test suites (a dev-dependency only).
//!
//! * [`CountingAllocator`] and [`allocations`]: a global allocator that forwards to the system
//!   allocator and counts the allocations of the *current thread*, for "this hot path allocates
//!   nothing" tests (per thread, so tests running in parallel do not disturb each other). A test
//!   binary installs it with
//!   `#[global_allocator] static GLOBAL: CountingAllocator = CountingAllocator;`.
//! * [`seed`] and [`seed_offset`]: statistical tests use fixed seeds shifted by the environment
//!   variable `TALLMC_SEED_OFFSET` (u64, default 0), to check that they pass at other seeds too.
//! * [`Z_MAX`]: the tolerance of statistical tests, in Monte Carlo standard errors.
//! * [`ks`]: the one-sample Kolmogorov–Smirnov test.

#![warn(missing_docs)]

pub mod ks;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Tolerance of statistical tests, in Monte Carlo standard errors.
pub const Z_MAX: f64 = 4.0;

/// `TALLMC_SEED_OFFSET`, or 0.
pub fn seed_offset() -> u64 {
    std::env::var("TALLMC_SEED_OFFSET").ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// `base` shifted by [`seed_offset`].
pub fn seed(base: u64) -> u64 {
    base.wrapping_add(seed_offset())
}

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations (and reallocations) made by the current thread so far.
pub fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// Calls `f` `warm_up` times (so that scratch buffers reach their final size), then `repeat`
/// times more, and panics naming `what` if those `repeat` calls allocated on this thread.
/// Needs [`CountingAllocator`] as the test binary's global allocator.
pub fn assert_allocation_free(what: &str, warm_up: usize, repeat: usize, mut f: impl FnMut()) {
    for _ in 0..warm_up {
        f();
    }
    let before = allocations();
    for _ in 0..repeat {
        f();
    }
    let made = allocations() - before;
    assert_eq!(made, 0, "{what}: {made} allocations in {repeat} calls");
}

/// A global allocator that forwards to [`System`] and counts per thread (see the crate docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

fn count() {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every method forwards its arguments unchanged to the system allocator, which upholds
// the `GlobalAlloc` contract; counting touches only a thread-local `Cell`.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
