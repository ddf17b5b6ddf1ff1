//! # tallmc
//!
//! One dependency for all of tallmc: the crates are re-exported as modules, and [`prelude`]
//! brings the names most programs need. Users who want less can depend on the individual
//! crates (`tallmc-core`, `tallmc-models`, `tallmc-samplers`, …) instead.
//!
//! The README follows; its examples are compiled and run as tests of this crate.
#![doc = include_str!("../../../README.md")]
#![warn(missing_docs)]

pub use tallmc_bounds as bounds;
pub use tallmc_core as core;
pub use tallmc_diagnostics as diagnostics;
pub use tallmc_estimators as estimators;
pub use tallmc_integrators as integrators;
pub use tallmc_models as models;
pub use tallmc_samplers as samplers;

mod run_summary;
pub use run_summary::RunSummary;

/// The names most programs need.
pub mod prelude {
    pub use crate::RunSummary;
    pub use tallmc_bounds::{
        AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, ExactTest,
        MeanTest, Population,
    };
    pub use tallmc_core::rng::{chain_rng, setup_rng};
    pub use tallmc_core::{
        BinaryFactors, Chain, EvalCounts, EventKind, FullData, Kernel, LinearPredictor, LogPrior,
        LogPriorCurvature, LogPriorHessian, Parallelism, ParameterNames, PdmpChain, PdmpKernel,
        Segment, SegmentStats, StepStats, TaylorRemainderBound, TermBounds, TermCurvatureBound,
        TermGradientBounds, TermGradientLipschitz, TermGradients, TermHessians, Terms, Trajectory,
        Tuning,
    };
    pub use tallmc_diagnostics::{
        ContinuousSummary, Draws, Summary, TimeAverages, ess_bulk, ess_tail, inefficiency_factor,
        mcse_mean, rhat, summarize, summarize_continuous,
    };
    pub use tallmc_estimators::{
        ControlVariate, ControlVariateGradient, CvOrder, DifferenceEstimate, DifferenceEstimator,
        GradientEstimator, HessianProducts, MinibatchGradient, RankOne,
    };
    pub use tallmc_integrators::{Metric, MetricKind};
    pub use tallmc_models::{
        Dataset, DesignOptions, Gaussian, GaussianMean, GaussianRegression, LinearRegression,
        LoadOptions, LogisticRegression, SoftmaxMlp, ThreeWayMrf, synthetic,
    };
    pub use tallmc_samplers::continuous::{
        Budget, ContinuousDriver, ContinuousRunConfig, GridDraws, InMemoryOptions, SegmentSink,
        SkeletonSink, TimeAverageSink, sample_trajectories_in_memory, summarize_trajectories,
    };
    pub use tallmc_samplers::piecewise::{
        AutoBoundConfig, Bps, BpsConfig, ControlVariates, LipSbps, LipSbpsConfig, Sbps, SbpsConfig,
        VelocityDistribution, ZigZag, ZigZagConfig, ZigZagSubsampling,
    };
    pub use tallmc_samplers::sink::{CsvSink, DrawSink, MemorySink, Tee};
    // HMC-ECS and the stochastic-gradient kernels: the generic kernels and typed tunings.
    pub use tallmc_samplers::{
        AdaptiveMetropolis, AdaptiveMetropolisConfig, ApproximateGibbs, Driver, EcsDynamics,
        EcsEstimate, EcsEstimator, GibbsConfig, GibbsSubsample, HamiltonianWarmup, Hmc, HmcConfig,
        HmcEcs, HmcEcsConfig, HmcEcsWithEstimator, InitStrategy, Laplace, MetricSetting,
        MinibatchMh, MinibatchScope, NewtonOptions, Nuts, NutsConfig, Proposal, ProxyConfig,
        ProxyMinibatchMh, RandomWalkConfig, RandomWalkMetropolis, RandomWalkProposal,
        RandomWalkProposalConfig, RunConfig, SgHmc, SgHmcConfig, Sgld, SgldConfig, SgldProposal,
        SgldProposalConfig, Sgnht, SgnhtConfig, SignedHmcEcs, SignedHmcEcsConfig, Subsampling,
        Thermostat, ThetaIntegrator, laplace_approximation, sample_in_memory,
    };
    pub use tallmc_samplers::{
        EcsKernel, EcsTuning, HmcEcsTuning, SgDynamics, SignedHmcEcsTuning, StochasticGradient,
    };
    pub use tallmc_samplers::{FullDataMh, MinibatchMhTuning, ProxyMhTuning, RandomWalkTuning};
}
