//! Piecewise-deterministic kernels: the particle moves on straight lines and changes velocity
//! at the events of Poisson processes, simulated with the clocks of
//! [`tallmc_integrators::poisson`]. Each implements [`PdmpKernel`](tallmc_core::PdmpKernel):
//! a step moves along one segment and reports it; the output is the continuous trajectory (see
//! [`tallmc_core::pdmp`]), never the event positions as draws.
//!
//! Exact, full data:
//!
//! * [`Bps`] — the Bouncy Particle Sampler with refreshment;
//! * [`ZigZag`] — the Zig-Zag process;
//!
//! each with its bounce clocks from the model's curvature bound ([`ModelBound`]; exact
//! inversion for quadratic potentials) or from an automatic piecewise envelope
//! ([`AutomaticBound`], any model with Hessian-vector products).
//!
//! Subsampling, approximate:
//!
//! * [`Sbps`] — the Stochastic Bouncy Particle Sampler (Pakman et al. 2017): minibatch
//!   gradients, bounce proposals from a local-regression band ([`regression`]), bound
//!   violations counted as the bias diagnostic; with [`SbpsConfig::preconditioned`], pSBPS
//!   ([`precondition`]).

mod bps;
mod common;
pub mod envelope;
mod minibatch;
pub mod precondition;
pub mod regression;
mod sbps;
mod sbps_config;
mod zigzag;

pub use bps::{AutomaticBound, Bps, BpsConfig, BpsState, ModelBound};
pub use common::{VelocityDistribution, reflect};
pub use envelope::AutoBoundConfig;
pub use precondition::{DiagonalPreconditioner, PreconditionerConfig};
pub use regression::{BandConfig, LocalRegression, ProposalBand, RegressionPosterior, SlopePrior};
pub use sbps::{Sbps, SbpsState};
pub use sbps_config::SbpsConfig;
pub use zigzag::{ZigZag, ZigZagConfig, ZigZagState};
