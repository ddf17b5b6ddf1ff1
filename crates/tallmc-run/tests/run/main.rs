//! The integration tests of `tallmc-run`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

mod custom_model;
mod data_sources;
mod exact_mh_runs;
mod on_shards;
mod runs;
mod shard_kernel;
