//! The Hamiltonian family on the full data: [`Hmc`] (a jittered fixed-length trajectory) and
//! [`Nuts`] (the No-U-Turn tree), one generic kernel ([`Hamiltonian`]) over their transitions.
//!
//! * [`kernel`] — the chain both share: the phase point with its cached full-data gradient,
//!   the step-size heuristic and Stan's warmup;
//! * [`hmc`], [`nuts`] — the two transitions and their settings;
//! * `tree` — the NUTS trajectory over any potential (HMC-ECS's NUTS θ-step uses it too).

#[macro_use]
pub mod kernel;
pub mod hmc;
pub mod nuts;
pub(crate) mod tree;

pub use hmc::{Hmc, HmcChain, HmcConfig, HmcStats, HmcTuning};
pub use kernel::{Hamiltonian, HamiltonianChain};
pub use nuts::{MAX_TREE_DEPTH, Nuts, NutsChain, NutsConfig, NutsStats};
