//! Stochastic-gradient kernels (uncorrected, a fresh minibatch for every gradient), one kernel
//! ([`StochasticGradient`]) over its dynamics: [`Sgld`], [`SgHmc`], [`Sgnht`].

pub mod kernel;
pub mod sghmc;
pub mod sgld;
pub mod sgnht;

pub(crate) use kernel::{BatchSampler, check_batch};
pub use kernel::{MinibatchScope, SgChain, SgDynamics, StochasticGradient, Subsampling};
pub use sghmc::{SgHmc, SgHmcConfig, SgHmcState, SgHmcStats};
pub use sgld::{Sgld, SgldConfig, SgldState, SgldStats};
pub use sgnht::{Sgnht, SgnhtConfig, SgnhtState, SgnhtStats, Thermostat};
