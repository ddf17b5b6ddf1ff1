//! The integration tests of `tallmc-bounds`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

use tallmc_testkit::CountingAllocator;

/// Counts allocations per thread, for the allocation-free checks of several modules (tests
/// running in parallel do not disturb each other's counts).
#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

mod austerity_error;
mod bad_input;
mod bound_grid;
mod common;
mod coverage;
mod exactness;
mod no_alloc;
