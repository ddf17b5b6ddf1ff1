//! The integration tests of `tallmc-io`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

mod convert;
mod parquet_read;
