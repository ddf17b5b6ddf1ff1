//! # tallmc-samplers
//!
//! Markov kernels and the driver that runs them.
//!
//! Exact full-data kernels (every step evaluates all N terms, so their cost is the baseline the
//! subsampling methods are measured against):
//!
//! * [`RandomWalkMetropolis`] — Gaussian random walk with scale tuned during warmup;
//! * [`AdaptiveMetropolis`] — Haario et al. (2001), covariance learned from the chain;
//!
//!   both are [`FullDataMh`] over the [`RandomWalkProposal`] (MH over any [`Proposal`]);
//! * [`Hmc`] — Hamiltonian Monte Carlo with dual-averaging step size, diagonal or dense metric
//!   adapted in Stan's windows, divergence detection;
//! * [`Nuts`] — the No-U-Turn Sampler (multinomial sampling, generalized U-turn criterion with
//!   Stan's checks across merges, `max_depth`), with HMC's warmup.
//!
//!   Both share one warmup setting, [`HamiltonianWarmup`], whose metric is a
//!   [`MetricSetting`]: adapted (`Adapt { kind, initial }`) or held fixed (`Fixed(metric)`).
//!
//! Subsampling kernels with an accept/reject step:
//!
//! * [`MinibatchMh`] — Metropolis–Hastings whose accept test is a sequential
//!   [`MeanTest`](tallmc_bounds::MeanTest) on minibatches drawn without replacement: exact,
//!   Austerity (Korattikara et al. 2014) or the confidence sampler (Bardenet et al. 2014), with
//!   random-walk or SGLD proposals;
//! * [`ProxyMinibatchMh`] — the confidence sampler with Taylor proxies (Bardenet, Doucet &
//!   Holmes 2017): the same test on the remainders after a second-order Taylor proxy around θ*,
//!   for models with a third-derivative bound
//!   ([`TaylorRemainderBound`](tallmc_core::TaylorRemainderBound));
//! * [`ApproximateGibbs`] — Gibbs on binary factor models with the same tests;
//! * [`HmcEcs`] — perturbed HMC with energy-conserving subsampling (Dang et al. 2019):
//!   HMC-within-Gibbs on the bias-corrected difference estimator with Taylor control variates;
//!   [`HmcEcsWithEstimator`] runs the same kernel on a log-likelihood estimator of your own
//!   (the [`EcsEstimator`] trait, with its [`GibbsSubsample`] and [`EcsEstimate`]);
//! * [`SignedHmcEcs`] — the signed variant on the block-Poisson estimator; its draws are
//!   summarized with the sign-corrected averages of `tallmc_diagnostics::signed`.
//!
//! All three are one kernel, [`EcsKernel`], over an [`EcsSetup`] (how a chain's estimator is made
//! and what it reports), building [`EcsChain`]s with a typed [`EcsTuning`].
//!
//! Stochastic-gradient kernels (uncorrected, fixed step size, a fresh minibatch for every
//! gradient; biased by O(h) — each module documents by how much), generic over the
//! [`GradientEstimator`](tallmc_estimators::GradientEstimator) so that the control-variate
//! versions are the same kernels with another estimator:
//!
//! * [`Sgld`] — stochastic-gradient Langevin dynamics (Welling & Teh 2011), optionally
//!   preconditioned;
//! * [`SgHmc`] — stochastic-gradient HMC (Chen et al. 2014) with friction C and mass matrix M,
//!   momentum redrawn every trajectory of L steps;
//! * [`Sgnht`] — stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014) and its
//!   element-wise variant mSGNHT ([`Thermostat`]).
//!
//! All three are one kernel, [`StochasticGradient`], over its dynamics ([`SgDynamics`], the
//! per-step update given the gradient estimate), building [`SgChain`]s.
//!
//! Piecewise-deterministic kernels ([`piecewise`]; output is a continuous trajectory): full-data
//! [`Bps`] and [`ZigZag`], and the subsampling [`Sbps`] (SBPS and pSBPS).
//!
//! Continuous-time (piecewise-deterministic) output, in [`continuous`]: the
//! [`ContinuousDriver`] runs a [`PdmpKernel`](tallmc_core::PdmpKernel) (BPS, SBPS, Zig-Zag) for
//! budgets in trajectory time, events, evaluations or grid draws ([`Budget`]) and hands every
//! post-warmup trajectory segment to a [`SegmentSink`]: the skeleton to CSV ([`SkeletonSink`])
//! or memory ([`MemorySkeleton`]); equally spaced draws x(kΔ) for the draw sinks above
//! ([`GridDraws`], the only place where a PDMP makes draws — event positions are not draws);
//! exact time averages with batch-means MCSE ([`TimeAverageSink`]).
//! [`sample_trajectories_in_memory`] is the convenient form.
//!
//! **Layout.** One folder per family, each re-exported here: [`mh`], [`hamiltonian`], [`ecs`],
//! [`sg`], [`piecewise`]; the [`drivers`] (the draw driver, [`driver`], and the continuous one,
//! [`continuous`]), the [`sinks`] (draw sinks, [`sink`], and segment sinks) and the starting
//! points ([`init`]). The traits a user implements to bring an estimator of their own
//! ([`EcsEstimator`], [`SwitchingRateEstimator`], [`DatumRateBound`], [`RangeSource`], and the
//! gradient estimators') live in `tallmc_estimators::traits` and are re-exported here.
//!
//! The [`Driver`] runs warmup (calling the kernels' adaptation hooks) and draws for several
//! chains in parallel, one ChaCha8 stream per chain, and streams every draw with its typed stats
//! to a [`sink::DrawSink`] (memory or CmdStan CSV). [`init`] finds the posterior mode and the
//! Laplace approximation, the usual starting point on tall data.
//!
//! ```
//! use tallmc_core::{LogPrior, TermGradients, Terms};
//! use tallmc_samplers::{Hmc, HmcConfig, RunConfig, sample_in_memory};
//!
//! /// ℓ_i(θ) = −(y_i − θ)²/2 for y = (−1, 0, 1, 2), flat prior: posterior N(0.5, 1/4).
//! struct Toy;
//! const Y: [f64; 4] = [-1.0, 0.0, 1.0, 2.0];
//! impl Terms for Toy {
//!     fn dim(&self) -> usize { 1 }
//!     fn num_terms(&self) -> usize { 4 }
//!     fn log_terms(&self, t: &[f64], idx: &[u32], out: &mut [f64]) {
//!         for (o, &i) in out.iter_mut().zip(idx) { *o = -0.5 * (Y[i as usize] - t[0]).powi(2); }
//!     }
//! }
//! impl TermGradients for Toy {
//!     fn log_terms_grad_sum(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) -> f64 {
//!         self.log_terms(t, idx, out);
//!         for &i in idx { g[0] += Y[i as usize] - t[0]; }
//!         out.iter().sum()
//!     }
//!     fn log_terms_grads(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
//!         self.log_terms(t, idx, out);
//!         for (gk, &i) in g.iter_mut().zip(idx) { *gk = Y[i as usize] - t[0]; }
//!     }
//! }
//! impl LogPrior for Toy {
//!     fn log_prior(&self, _: &[f64]) -> f64 { 0.0 }
//!     fn log_prior_grad(&self, _: &[f64], _: &mut [f64]) -> f64 { 0.0 }
//! }
//!
//! let config = RunConfig { num_warmup: 300, num_draws: 2000, num_chains: 2, seed: 7, save_warmup: false };
//! let chains = sample_in_memory(&Toy, config, &[vec![0.0]], &Hmc::new(HmcConfig::default())?)?;
//! let draws: Vec<f64> = chains.iter().flat_map(|c| c.sink.coordinate(0)).collect();
//! let mean = draws.iter().sum::<f64>() / draws.len() as f64;
//! assert!((mean - 0.5).abs() < 0.1);
//! // Every gradient touched all 4 data points.
//! assert_eq!(chains[0].report.sampling_evals.gradients % 4, 0);
//! # Ok::<(), tallmc_samplers::SamplerError>(())
//! ```

#![warn(missing_docs)]

#[macro_use]
mod step_stats;
mod budget;
mod step_size;

pub mod drivers;
pub mod ecs;
pub mod error;
pub mod hamiltonian;
pub mod init;
pub mod mh;
pub mod piecewise;
pub mod sg;
pub mod sinks;

pub use drivers::continuous;
pub use drivers::discrete as driver;
pub use sinks::draws as sink;

pub use continuous::{
    Budget, ContinuousChainOutput, ContinuousChainReport, ContinuousDriver, ContinuousRunConfig,
    GridDraws, GridStats, InMemoryOptions, MemorySkeleton, MemoryTrajectory, PdmpTuningOf,
    SegmentSink, SkeletonSink, TimeAverageSink, sample_trajectories_in_memory,
    summarize_trajectories,
};
pub use driver::{
    ChainOutput, ChainReport, Driver, InMemory, NoProgress, Progress, RunConfig, Runner, StatsOf,
    TuningOf, sample_in_memory,
};
pub use ecs::{
    EcsChain, EcsDynamics, EcsHead, EcsKernel, EcsReport, EcsSetup, EcsStart, EcsStep, EcsTuning,
    HmcEcs, HmcEcsConfig, HmcEcsStats, HmcEcsTuning, HmcEcsWithEstimator, PerturbedEcs,
    PerturbedTuning, RecenterSchedule, SignedEcs, SignedHmcEcs, SignedHmcEcsConfig,
    SignedHmcEcsStats, SignedHmcEcsTuning, SignedTuning, ThetaIntegrator, UserEcs,
};
pub use error::{Result, SamplerError};
pub use hamiltonian::{
    Hamiltonian, HamiltonianChain, HamiltonianWarmup, Hmc, HmcChain, HmcConfig, HmcStats,
    HmcTuning, MAX_TREE_DEPTH, MetricSetting, Nuts, NutsChain, NutsConfig, NutsStats,
};
pub use init::{
    InitStrategy, Initialization, Laplace, NewtonOptions, initialize, laplace_approximation,
    uniform_positions, warm_start_indices,
};
pub use mh::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, ApproximateGibbs, CrankNicolsonConfig,
    CrankNicolsonProposal, CrankNicolsonTuning, EmpiricalConditional, FirstOrderCv, FullDataMh,
    GibbsChain, GibbsConfig, GibbsStats, MhChain, MhSs, MhSsChain, MhSsConfig, MhSsOrder, MhStats,
    MinibatchMh, MinibatchMhChain, MinibatchMhStats, MinibatchMhTuning, Proposal, ProxyConfig,
    ProxyMhStats, ProxyMhTuning, ProxyMinibatchMh, ProxyMinibatchMhChain, RandomWalkConfig,
    RandomWalkMetropolis, RandomWalkMhConfig, RandomWalkProposal, RandomWalkProposalConfig,
    RandomWalkTuning, Scan, SecondOrderCv, SgldProposal, SgldProposalConfig, SgldProposalTuning,
    Smh, SmhChain, SmhConfig, SmhModel, SmhStats, TunaMh, TunaMhChain, TunaMhConfig, TunaMhStats,
    empirical_conditional,
};
pub use piecewise::{
    AutoBoundConfig, AutomaticBound, BandConfig, BoundedGradients, Bps, BpsChain, BpsConfig,
    BpsState, BpsTuning, ClockTuning, ControlVariates, DatumSampling, LipSbps, LipSbpsChain,
    LipSbpsConfig, LipSbpsTuning, LipschitzGradients, ModelBound, PreconditionerConfig, Sbps,
    SbpsChain, SbpsConfig, SbpsState, SbpsTuning, SlopePrior, TaylorControlVariates,
    VelocityDistribution, ZigZag, ZigZagChain, ZigZagConfig, ZigZagState, ZigZagSubsampling,
    ZigZagSubsamplingChain, ZigZagSubsamplingTuning, ZigZagTuning,
};
pub use piecewise::{
    FRAME_ROWS_BYTES, FrameRows, InFrame, Whitened, WhitenedChain, WhitenedTuning,
};
pub use piecewise::{WeightedGradients, WeightedLipschitzGradients};
pub use sg::{
    MinibatchScope, SgChain, SgDynamics, SgHmc, SgHmcConfig, SgHmcState, SgHmcStats, Sgld,
    SgldConfig, SgldState, SgldStats, Sgnht, SgnhtConfig, SgnhtState, SgnhtStats,
    StochasticGradient, Subsampling, Thermostat,
};
/// The estimator traits users implement, from `tallmc-estimators` (where they live together).
pub use tallmc_estimators::{
    DatumRateBound, EcsEstimate, EcsEstimator, GibbsSubsample, NoRange, RangeSource,
    SwitchingRateEstimator, TermBoundRange,
};
