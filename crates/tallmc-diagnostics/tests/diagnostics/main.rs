//! The integration tests of `tallmc-diagnostics`, one module per former test file, in one test binary:
//! each file linked and instantiated the crate's generic kernels on its own, which cost CI
//! minutes of compile time; together they are compiled once.

mod arviz;
mod properties;
mod theory;
