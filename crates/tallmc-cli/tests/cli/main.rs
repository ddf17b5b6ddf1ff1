//! The integration tests of `tallmc-cli`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

mod cli;
mod cli_continuous;
mod cli_report;
mod cli_runs;
mod cli_tall_logistic;
mod rust_api_bits;
mod support;
