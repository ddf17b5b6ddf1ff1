//! The cross-crate integration tests and the quick reproduction suites' snapshot tests
//! (`tallmc-tests`), one module per former test file, in one test binary: each file linked and
//! instantiated the generic kernels on its own, which cost CI minutes of compile time; together
//! they are compiled once. A snapshot is named `integration__<module>__<name>.snap`.

mod austerity;
mod baseline;
mod confidence;
mod doc_links;
mod eval_counts;
mod exact_kernels_conjugate;
mod exact_mh;
mod glm_references;
mod hmcecs;
mod hmcecs_must_show;
mod minibatch_exactness;
mod sbps;
