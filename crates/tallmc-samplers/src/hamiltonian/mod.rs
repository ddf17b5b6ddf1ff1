//! The Hamiltonian family on the full data: [`Hmc`] (a jittered fixed-length trajectory) and
//! [`Nuts`] (the No-U-Turn tree), one generic kernel ([`Hamiltonian`]) over their transitions.
//!
//! * `kernel` — the chain both share: the phase point with its cached full-data gradient,
//!   the step-size heuristic and Stan's warmup;
//! * [`settings`] — the warmup settings both share ([`HamiltonianWarmup`], [`MetricSetting`]);
//! * [`hmc`], [`nuts`] — the two transitions and their settings;
//! * `transition` — the pieces of every Hamiltonian transition (momentum refresh, the
//!   fixed-length transition, the step size and its dual averaging), which HMC-ECS's θ-step
//!   uses too;
//! * `tree` — the NUTS trajectory over any potential (HMC-ECS's NUTS θ-step uses it too).

pub mod hmc;
mod kernel;
pub mod nuts;
pub mod settings;
pub(crate) mod transition;
pub(crate) mod tree;

pub use hmc::{Hmc, HmcChain, HmcConfig, HmcStats};
pub use kernel::{Hamiltonian, HamiltonianChain, HmcTuning};
pub use nuts::{MAX_TREE_DEPTH, Nuts, NutsChain, NutsConfig, NutsStats};
pub use settings::{HamiltonianWarmup, MetricSetting};
