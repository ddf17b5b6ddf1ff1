//! The integration tests of `tallmc-models`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

use tallmc_testkit::CountingAllocator;

/// Counts allocations per thread, for the allocation-free checks of several modules (tests
/// running in parallel do not disturb each other's counts).
#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

mod batch_path_bits;
mod bounds;
mod common;
mod data_io;
mod design_diagnostics;
mod digits;
mod gaussian_regression;
mod glm_families;
mod glm_family;
mod gradient_bounds;
mod linear_predictor;
mod logistic_fast_math;
mod mlp;
mod models;
mod mrf;
mod names_and_locations;
mod no_alloc;
mod npy_io;
mod streaming_io;
mod synthetic;
mod termwise_bounds;
