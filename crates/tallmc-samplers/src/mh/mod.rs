//! The Metropolis–Hastings family: kernels that propose θ′ and accept or reject it.
//!
//! * [`full_data`] — MH over any [`Proposal`] on the full data, with
//!   [`rwm`] (random-walk Metropolis) and [`adaptive`] (adaptive Metropolis) as its configs;
//! * [`proposal`] — the proposals: random walk and SGLD;
//! * [`crank_nicolson`] — the pCN proposal around a Gaussian reference (the Laplace
//!   approximation), for SMH and MH-SS on tall data;
//! * [`minibatch`] — minibatch MH, the accept step as a sequential mean test (exact,
//!   Austerity, confidence sampler);
//! * [`proxy`] — the confidence sampler with Taylor proxies;
//! * [`smh`] — scalable Metropolis–Hastings (exact, a Poisson minibatch per iteration);
//! * [`tunamh`] — TunaMH (exact, a Poisson minibatch against per-datum Lipschitz constants);
//! * [`mhss`] — MH-SS (TunaMH's minibatch on the remainders of Taylor control variates);
//! * [`gibbs`] — Gibbs on binary factor models with the same mean tests.

pub mod adaptive;
pub mod crank_nicolson;
pub mod full_data;
pub mod gibbs;
mod index_stream;
pub mod mhss;
pub mod minibatch;
mod poisson_minibatch;
pub mod proposal;
pub mod proxy;
pub mod rwm;
pub mod smh;
mod taylor_expansions;
pub mod tunamh;

pub use adaptive::{AdaptiveMetropolis, AdaptiveMetropolisConfig};
pub use crank_nicolson::{CrankNicolsonConfig, CrankNicolsonProposal, CrankNicolsonTuning};
pub use full_data::{FullDataMh, MhChain, MhStats, RandomWalkMhConfig};
pub use gibbs::{
    ApproximateGibbs, EmpiricalConditional, GibbsChain, GibbsConfig, GibbsStats, Scan,
    empirical_conditional,
};
pub use mhss::{FirstOrderCv, MhSs, MhSsChain, MhSsConfig, MhSsOrder, SecondOrderCv};
pub use minibatch::{MinibatchMh, MinibatchMhChain, MinibatchMhStats, MinibatchMhTuning};
pub use proposal::{
    Proposal, RandomWalkProposal, RandomWalkProposalConfig, RandomWalkTuning, SgldProposal,
    SgldProposalConfig, SgldProposalTuning,
};
pub use proxy::{
    ProxyConfig, ProxyMhStats, ProxyMhTuning, ProxyMinibatchMh, ProxyMinibatchMhChain,
};
pub use rwm::{RandomWalkConfig, RandomWalkMetropolis};
pub use smh::{Smh, SmhChain, SmhConfig, SmhModel, SmhStats};
pub use tallmc_estimators::{NoRange, RangeSource, TermBoundRange};
pub use tunamh::{TunaMh, TunaMhChain, TunaMhConfig, TunaMhStats};
