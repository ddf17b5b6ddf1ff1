//! The integration tests of `tallmc-samplers`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

use tallmc_testkit::CountingAllocator;

/// Counts allocations per thread, for the allocation-free checks of several modules (tests
/// running in parallel do not disturb each other's counts).
#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

mod common;
mod confidence_proxies;
mod continuous_common;
mod continuous_driver;
mod driver;
mod ecs_errors;
mod exact_kernels;
mod exact_minibatch_mh;
mod gibbs;
mod hmc_ecs;
mod hmc_ecs_nuts;
mod laplace_warm_start;
mod minibatch_mh;
mod no_alloc;
mod nuts;
mod pdmp_full_data;
mod pdmp_subsampling;
mod pdmp_support;
mod pdmp_taylor;
mod pdmp_weighted;
mod pdmp_whitened;
mod pdmp_whitened_subsampled;
mod row_file;
mod sbps;
mod sg_mcmc;
mod sink_throughput;
mod smh;
