//! Piecewise-deterministic kernels: the particle moves on straight lines and changes velocity
//! at the events of Poisson processes, simulated with the clocks of
//! [`tallmc_integrators::poisson`]. Each is a [`PdmpKernel`](tallmc_core::PdmpKernel): settings
//! that build a [`PdmpChain`](tallmc_core::PdmpChain), whose step moves along one segment and
//! reports it, with a typed tuning for the CSV comments and run reports; the output is the continuous trajectory (see
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
//! Any of them in whitened coordinates z = L⁻¹(θ − θ*), output in θ: [`Whitened`] over the
//! model in z, [`InFrame`] (issue 29).
//!
//! Subsampling, approximate:
//!
//! * [`Sbps`] — the Stochastic Bouncy Particle Sampler (Pakman et al. 2017): minibatch
//!   gradients, bounce proposals from a local-regression band ([`regression`]), bound
//!   violations counted as the bias diagnostic; with [`SbpsConfig::preconditioned`], pSBPS
//!   ([`precondition`]).
//!
//! Exact, subsampling (one datum per thinning proposal, against bounds that hold for every
//! datum; the per-datum bounds come from [`BoundedGradients`] or [`LipschitzGradients`]):
//!
//! * [`LipSbps`] — factor BPS with one factor per datum plus the prior as its own factor
//!   (Pakman et al. 2017, §7.1 and Supp. F);
//! * [`ZigZagSubsampling`] — Zig-Zag with subsampling (ZZ-SS) or, with the
//!   [`ControlVariates`] estimator, with control variates (ZZ-CV) (Bierkens, Fearnhead &
//!   Roberts 2019, §4); with [`TaylorControlVariates`], control variates of order two,
//!   data drawn in proportion to their own remainder bounds, in whitened coordinates
//!   z = L⁻¹(θ − θ*) (issue 29: O(1) proposals per flip).

mod bps;
mod common;
mod datum_bounds;
pub mod envelope;
mod frame_rows;
mod lipsbps;
mod minibatch;
pub mod precondition;
pub mod regression;
mod sbps;
mod sbps_config;
mod weighted_bounds;
mod whitened;
mod whitened_bounds;
mod zigzag;
mod zigzag_cv;
mod zigzag_subsampling;
mod zigzag_taylor;

pub use bps::{
    AutomaticBound, Bps, BpsChain, BpsConfig, BpsState, BpsTuning, CurvatureClock, EnvelopeClock,
    ModelBound,
};
pub use common::{ClockTuning, ParticleState, VelocityDistribution, reflect};
pub use datum_bounds::{BoundedGradients, LipschitzGradients};
pub use envelope::AutoBoundConfig;
pub use frame_rows::{FRAME_ROWS_BYTES, FrameRows};
pub use lipsbps::{LipSbps, LipSbpsChain, LipSbpsConfig, LipSbpsTuning};
pub use precondition::{DiagonalPreconditioner, PreconditionerConfig};
pub use regression::{BandConfig, LocalRegression, ProposalBand, RegressionPosterior, SlopePrior};
pub use sbps::{Sbps, SbpsChain, SbpsState, SbpsTuning};
pub use sbps_config::SbpsConfig;
pub use tallmc_estimators::{DatumRateBound, SwitchingRateEstimator};
pub use weighted_bounds::{WeightedGradients, WeightedLipschitzGradients};
pub use whitened::{Coordinates, InFrame, Whitened, WhitenedChain, WhitenedTuning};
pub use zigzag::{EnvelopeClocks, ZigZag, ZigZagChain, ZigZagConfig, ZigZagState, ZigZagTuning};
pub use zigzag_cv::ControlVariates;
pub use zigzag_subsampling::{ZigZagSubsampling, ZigZagSubsamplingChain, ZigZagSubsamplingTuning};
pub use zigzag_taylor::{
    DatumSampling, PER_COORDINATE_TABLE_BYTES, TaylorControlVariates, TaylorModel,
};
