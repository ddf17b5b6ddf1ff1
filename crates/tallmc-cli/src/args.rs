//! Command-line arguments: `tallmc sample <SAMPLER>`, one subcommand per sampler, each with the
//! common flags ([`Common`]), its family's flags and its own, and nothing else (clap rejects a
//! flag of another sampler).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// tallmc: MCMC for Bayesian inference on tall data.
#[derive(Debug, Parser)]
#[command(name = "tallmc", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sample a model's posterior on a data file; write one CSV per chain (CmdStan layout) and
    /// summary.json to --out.
    ///
    /// Choose the sampler as a subcommand, e.g. `tallmc sample hmc --model logistic --data
    /// higgs.bin --out runs/higgs`; `tallmc sample SAMPLER --help` lists its flags.
    #[command(
        subcommand,
        subcommand_value_name = "SAMPLER",
        subcommand_help_heading = "Samplers",
        disable_help_subcommand = true
    )]
    Sample(Sampler),
}

/// The samplers, one subcommand each (the same names `summary.json` and the CSV comments use).
#[derive(Debug, Subcommand)]
pub enum Sampler {
    /// Random-walk Metropolis (exact): proposals shaped by the Laplace covariance.
    ///
    /// The proposal covariance is the Laplace covariance (inverse Hessian at the posterior
    /// mode) times a scale tuned during warmup.
    #[command(allow_negative_numbers = true)]
    Rwm(Common),

    /// Adaptive Metropolis (Haario et al. 2001; exact): covariance learned during warmup.
    ///
    /// The proposal covariance starts from the Laplace covariance and is learned from the
    /// warmup draws.
    #[command(allow_negative_numbers = true)]
    AdaptiveMh(Common),

    /// Hamiltonian Monte Carlo (exact) with dual-averaging step size and metric adaptation.
    #[command(allow_negative_numbers = true)]
    Hmc(HmcArgs),

    /// The No-U-Turn Sampler (exact): HMC whose trajectory length is chosen at every iteration.
    ///
    /// Multinomial sampling over a doubling trajectory with the generalized U-turn criterion
    /// (as Stan), dual-averaging step size and the same metric choices as `hmc`.
    #[command(allow_negative_numbers = true)]
    Nuts(NutsArgs),

    /// Austerity MH (Korattikara et al. 2014; approximate): minibatch accept/reject by a t-test.
    ///
    /// Random-walk proposals accepted by a sequential Student-t test on minibatches drawn
    /// without replacement (--epsilon, --batch). Approximate: each decision may differ from
    /// exact MH; ε controls how often.
    #[command(allow_negative_numbers = true)]
    Austerity(AusterityArgs),

    /// The confidence sampler (Bardenet et al. 2014): minibatch MH by concentration bounds.
    ///
    /// The accept/reject decision by exact concentration bounds for sampling without
    /// replacement (--bound, --delta, --gamma); each decision differs from exact MH with
    /// probability ≤ δ. Needs term bounds (not --model linear).
    #[command(allow_negative_numbers = true)]
    Confidence(ConfidenceArgs),

    /// Stochastic-gradient Langevin dynamics (Welling & Teh 2011; approximate).
    ///
    /// Uncorrected: θ ← θ + (h/2)·ĝ(θ) + N(0, h I), ĝ from a fresh minibatch of --batch points
    /// drawn without replacement, fixed step size h (--step-size); --cv for control variates.
    /// Approximate: biased for any h > 0. Warmup iterations are burn-in only (nothing is
    /// adapted).
    #[command(allow_negative_numbers = true)]
    Sgld(SgldArgs),

    /// Stochastic-gradient HMC (Chen et al. 2014; approximate).
    ///
    /// Friction C = I, momentum redrawn every trajectory of --num-steps L steps, fixed step
    /// size; --cv for control variates. Approximate (no MH correction).
    #[command(allow_negative_numbers = true)]
    Sghmc(SghmcArgs),

    /// Stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014; approximate).
    ///
    /// --thermostat scalar or element-wise (mSGNHT), fixed step size; --cv for control
    /// variates. Approximate.
    #[command(allow_negative_numbers = true)]
    Sgnht(SgnhtArgs),

    /// Perturbed HMC with energy-conserving subsampling (Dang et al. 2019; approximate).
    ///
    /// HMC-within-Gibbs on a subsample u of --subsample m points in --blocks G blocks (one
    /// block refreshed per iteration), with the same subsample for the dynamics and the
    /// acceptance, on the bias-corrected likelihood exp(ℓ̂ − σ̂²/2) with Taylor control variates
    /// (--cv-order) around the posterior mode. m defaults to the smallest value with V[ℓ̂] ≤ 1
    /// (at least 100). Approximate: the perturbation is O(1/(n m²)).
    #[command(allow_negative_numbers = true)]
    HmcEcs(HmcEcsArgs),

    /// Signed HMC-ECS (Dang et al. 2019, §5; exact after sign correction).
    ///
    /// HMC-within-Gibbs on |L̂_B|, the block-Poisson estimator with --lambda λ factors of
    /// --subsample m points; writes the sign of L̂_B as the sign__ column, and summary.json's
    /// "sign_corrected" block holds the exact (sign-corrected) posterior means. The lower bound
    /// a is tuned for P(L̂_B ≥ 0) ≥ 0.99.
    #[command(allow_negative_numbers = true)]
    HmcEcsSigned(HmcEcsSignedArgs),

    /// The Bouncy Particle Sampler on the full data (exact; continuous-time output).
    ///
    /// Bounces off ∇U at rate ⟨∇U, v⟩⁺, Gaussian velocities refreshed at --refresh-rate.
    /// Bounce clock from the model's curvature bound (exact inversion for Gaussian
    /// likelihoods) or, for models without one, an automatic piecewise bound (--rate-bound).
    #[command(allow_negative_numbers = true)]
    Bps(BpsArgs),

    /// The Stochastic Bouncy Particle Sampler (Pakman et al. 2017; approximate).
    ///
    /// Minibatch gradients of --batch points, a local-linear-regression proposal band with
    /// multiple --k. Approximate: biased by bound violations, whose rate summary.json reports.
    #[command(allow_negative_numbers = true)]
    Sbps(SbpsArgs),

    /// Preconditioned SBPS (Pakman et al. 2017, §5; approximate).
    ///
    /// As sbps, with a diagonal preconditioner learned during warmup, then fixed.
    #[command(allow_negative_numbers = true)]
    Psbps(SbpsArgs),

    /// lipSBPS (exact): factor BPS with one datum per factor.
    ///
    /// Thinned against a bound on per-datum gradients (logistic) or their Lipschitz constant
    /// around the mode (gaussian-mean); the prior is its own factor.
    #[command(allow_negative_numbers = true)]
    Lipsbps(LipsbpsArgs),

    /// The Zig-Zag process on the full data (exact; continuous-time output).
    ///
    /// Clocks as for bps: the model's curvature bound or the automatic piecewise bound
    /// (--rate-bound).
    #[command(allow_negative_numbers = true)]
    Zigzag(ZigzagArgs),

    /// Zig-Zag with subsampling (Bierkens, Fearnhead & Roberts 2019; exact).
    ///
    /// One datum per proposal, exact thinning against per-datum gradient bounds.
    #[command(allow_negative_numbers = true)]
    ZigzagSs(ContinuousOnlyArgs),

    /// Zig-Zag with control variates at the mode (Bierkens, Fearnhead & Roberts 2019; exact).
    ///
    /// One datum per proposal; its cost per effective sample does not grow with N near the
    /// mode.
    #[command(allow_negative_numbers = true)]
    ZigzagCv(ContinuousOnlyArgs),
}

/// The sampler of a subcommand, without its flags (what the report and summary.json need).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SamplerKind {
    /// `tallmc sample rwm`.
    Rwm,
    /// `tallmc sample adaptive-mh`.
    AdaptiveMh,
    /// `tallmc sample hmc`.
    Hmc,
    /// `tallmc sample nuts`.
    Nuts,
    /// `tallmc sample austerity`.
    Austerity,
    /// `tallmc sample confidence`.
    Confidence,
    /// `tallmc sample sgld`.
    Sgld,
    /// `tallmc sample sghmc`.
    Sghmc,
    /// `tallmc sample sgnht`.
    Sgnht,
    /// `tallmc sample hmc-ecs`.
    HmcEcs,
    /// `tallmc sample hmc-ecs-signed`.
    HmcEcsSigned,
    /// `tallmc sample bps`.
    Bps,
    /// `tallmc sample sbps`.
    Sbps,
    /// `tallmc sample psbps`.
    Psbps,
    /// `tallmc sample lipsbps`.
    Lipsbps,
    /// `tallmc sample zigzag`.
    Zigzag,
    /// `tallmc sample zigzag-ss`.
    ZigzagSs,
    /// `tallmc sample zigzag-cv`.
    ZigzagCv,
}

impl SamplerKind {
    /// The subcommand's name.
    pub fn name(self) -> String {
        self.to_possible_value().map_or_else(String::new, |v| v.get_name().to_owned())
    }

    /// SGLD, SG-HMC or SGNHT.
    pub fn is_stochastic_gradient(self) -> bool {
        matches!(self, Self::Sgld | Self::Sghmc | Self::Sgnht)
    }
}

impl Sampler {
    /// Which sampler.
    pub fn kind(&self) -> SamplerKind {
        match self {
            Self::Rwm(_) => SamplerKind::Rwm,
            Self::AdaptiveMh(_) => SamplerKind::AdaptiveMh,
            Self::Hmc(_) => SamplerKind::Hmc,
            Self::Nuts(_) => SamplerKind::Nuts,
            Self::Austerity(_) => SamplerKind::Austerity,
            Self::Confidence(_) => SamplerKind::Confidence,
            Self::Sgld(_) => SamplerKind::Sgld,
            Self::Sghmc(_) => SamplerKind::Sghmc,
            Self::Sgnht(_) => SamplerKind::Sgnht,
            Self::HmcEcs(_) => SamplerKind::HmcEcs,
            Self::HmcEcsSigned(_) => SamplerKind::HmcEcsSigned,
            Self::Bps(_) => SamplerKind::Bps,
            Self::Sbps(_) => SamplerKind::Sbps,
            Self::Psbps(_) => SamplerKind::Psbps,
            Self::Lipsbps(_) => SamplerKind::Lipsbps,
            Self::Zigzag(_) => SamplerKind::Zigzag,
            Self::ZigzagSs(_) => SamplerKind::ZigzagSs,
            Self::ZigzagCv(_) => SamplerKind::ZigzagCv,
        }
    }

    /// The stochastic-gradient family's flags (SGLD, SG-HMC, SGNHT).
    pub fn stochastic_gradient(&self) -> Option<&SgArgs> {
        match self {
            Self::Sgld(a) => Some(&a.sg),
            Self::Sghmc(a) => Some(&a.sg),
            Self::Sgnht(a) => Some(&a.sg),
            _ => None,
        }
    }

    /// The flags every sampler takes.
    pub fn common(&self) -> &Common {
        match self {
            Self::Rwm(c) | Self::AdaptiveMh(c) => c,
            Self::Hmc(a) => &a.common,
            Self::Nuts(a) => &a.common,
            Self::Austerity(a) => &a.common,
            Self::Confidence(a) => &a.common,
            Self::Sgld(a) => &a.common,
            Self::Sghmc(a) => &a.common,
            Self::Sgnht(a) => &a.common,
            Self::HmcEcs(a) => &a.common,
            Self::HmcEcsSigned(a) => &a.common,
            Self::Bps(a) => &a.common,
            Self::Sbps(a) | Self::Psbps(a) => &a.common,
            Self::Lipsbps(a) => &a.common,
            Self::Zigzag(a) => &a.common,
            Self::ZigzagSs(a) | Self::ZigzagCv(a) => &a.common,
        }
    }
}

/// The models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelKind {
    /// Bayesian logistic regression: y ∈ {0,1}, θ ~ N(0, prior_sd² I). Parameters theta.1…theta.d.
    Logistic,
    /// Linear regression with unknown noise sd: θ = (β, log σ), all ~ N(0, prior_sd²).
    /// Parameters beta.1…beta.p, log_sigma.
    Linear,
    /// Gaussian N(μ, σ²) on column y, θ = (μ, log σ), flat priors. Parameters mu, log_sigma.
    Gaussian,
    /// Gaussian mean with known σ (--sigma) on column y, μ ~ N(prior_mean, prior_sd²).
    /// Parameter mu.
    GaussianMean,
}

/// The SGNHT thermostat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThermostatArg {
    /// One scalar thermostat ξ (SGNHT).
    Scalar,
    /// One thermostat per coordinate (mSGNHT).
    ElementWise,
}

/// How the full-data BPS and Zig-Zag bound their event rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RateBoundArg {
    /// The model's curvature bound (logistic, gaussian-mean): thinning, or exact inversion
    /// when the potential is quadratic.
    Model,
    /// The automatic piecewise bound on a time grid (any model; its violations are counted).
    Envelope,
}

/// Concentration bound of the confidence sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BoundArg {
    /// Hoeffding–Serfling (range only).
    HoeffdingSerfling,
    /// Empirical Bernstein (Audibert et al. 2009).
    Bernstein,
    /// Empirical Bernstein–Serfling (Bardenet & Maillard 2015).
    BernsteinSerfling,
}

/// How chains start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InitKind {
    /// The posterior mode (found by Newton's method) plus 2× a draw from the Laplace
    /// approximation: over-dispersed starts, so R-hat can detect problems.
    Dispersed,
    /// The posterior mode for every chain.
    Mode,
    /// Uniform(−2, 2) in every coordinate (Stan's default).
    Uniform,
}

/// The HMC metric (inverse mass matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    /// The Laplace covariance (inverse Hessian at the mode), fixed: nearly exact for tall data.
    Laplace,
    /// Dense, estimated in Stan's warmup windows (starting from the Laplace covariance).
    Dense,
    /// Diagonal, estimated in Stan's warmup windows (starting from the Laplace variances).
    Diag,
}

/// The flags of every sampler: the model, the data, the chains and the output.
#[derive(Debug, Args)]
#[command(next_help_heading = "Model, data and chains")]
pub struct Common {
    /// Model to fit.
    #[arg(long, value_enum)]
    pub model: ModelKind,

    /// Data file: .csv (header; column y is the response, the other columns covariates), the
    /// tall-data binary format (.bin with its .json header beside it; either path works), or a
    /// NumPy .npy file of the covariates X (n × p float64, C order; give y with --y-npy). Binary
    /// and .npy files are memory-mapped, never copied.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,

    /// With a .npy --data file: the .npy file of the responses y (n float64 values).
    #[arg(long, value_name = "FILE")]
    pub y_npy: Option<PathBuf>,

    /// Prepend an intercept column (logistic and linear only).
    #[arg(long)]
    pub intercept: bool,

    /// Standardize every covariate column (mean 0, population sd 1; logistic and linear only).
    /// Applied on the fly: a memory-mapped file is never copied.
    #[arg(long)]
    pub standardize: bool,

    /// Prior sd s: of every coefficient (logistic, linear — also of log σ), or of μ
    /// (gaussian-mean). Not used by gaussian (flat priors). [default: 10]
    #[arg(long, value_name = "S")]
    pub prior_sd: Option<f64>,

    /// Prior mean of μ (gaussian-mean only). [default: 0]
    #[arg(long, value_name = "M")]
    pub prior_mean: Option<f64>,

    /// Known noise sd σ (gaussian-mean only; required there).
    #[arg(long, value_name = "S")]
    pub sigma: Option<f64>,

    /// Number of chains (run in parallel).
    #[arg(long, value_name = "C", default_value_t = 4)]
    pub chains: usize,

    /// Warmup (adaptation) iterations per chain; not written to the CSV files.
    #[arg(long, value_name = "W", default_value_t = 1000)]
    pub warmup: usize,

    /// Draws per chain after warmup.
    #[arg(long, value_name = "D", default_value_t = 1000)]
    pub draws: usize,

    /// Master seed: chain k uses ChaCha8 stream k+1 of this seed. Same seed → same draws.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Output directory (created if needed): chain_1.csv … chain_C.csv and summary.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// How chains start.
    #[arg(long, value_enum, default_value_t = InitKind::Dispersed)]
    pub init: InitKind,

    /// Worker threads for the chains and the full-data sums. [default: all cores]
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Draw no progress bar (one is drawn only when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Print no report on stderr at the end (summary.json is written either way).
    #[arg(long)]
    pub no_report: bool,
}

impl Common {
    /// Whether to draw progress bars (`--no-progress` not given).
    pub fn progress(&self) -> bool {
        !self.no_progress
    }

    /// Whether to print the end-of-run report (`--no-report` not given).
    pub fn report(&self) -> bool {
        !self.no_report
    }
}

/// The dual-averaging target of HMC and HMC-ECS.
#[derive(Debug, Args)]
pub struct TargetAccept {
    /// Target acceptance statistic for dual averaging, in (0, 1).
    #[arg(long, value_name = "P", default_value_t = 0.8)]
    pub target_accept: f64,
}

/// `tallmc sample hmc`.
#[derive(Debug, Args)]
pub struct HmcArgs {
    /// HMC metric. The default, the Laplace covariance, beats a dense metric estimated from
    /// warmup draws on tall data (higgs-like, n = 10⁵, d = 29: min bulk ESS per draw 1.10 vs
    /// 0.35 after 1,000 warmup iterations); estimate one when the posterior is far from Gaussian.
    #[arg(long, value_enum, default_value_t = MetricArg::Laplace)]
    pub metric: MetricArg,

    #[command(flatten)]
    pub target: TargetAccept,

    /// Integration time εL (in units of the metric); the default is π/2.
    #[arg(long, value_name = "T", default_value_t = std::f64::consts::FRAC_PI_2)]
    pub trajectory_length: f64,

    #[command(flatten)]
    pub common: Common,
}

/// The tree-depth limit of NUTS (`sample nuts`, and `sample hmc-ecs --inner nuts`).
#[derive(Debug, Args)]
pub struct MaxDepth {
    /// Largest number of trajectory doublings per iteration (at most 2^D − 1 leapfrog steps),
    /// from 1 to 30. [default: 10]
    #[arg(long = "max-depth", value_name = "D")]
    pub given: Option<usize>,
}

impl MaxDepth {
    /// Stan's default limit.
    pub const DEFAULT: usize = 10;

    /// The limit given, or the default.
    pub fn value(&self) -> usize {
        self.given.unwrap_or(Self::DEFAULT)
    }
}

/// `tallmc sample nuts`.
#[derive(Debug, Args)]
pub struct NutsArgs {
    /// Metric, as for `hmc`: the Laplace covariance (fixed) by default.
    #[arg(long, value_enum, default_value_t = MetricArg::Laplace)]
    pub metric: MetricArg,

    #[command(flatten)]
    pub target: TargetAccept,

    #[command(flatten)]
    pub max_depth: MaxDepth,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample austerity`.
#[derive(Debug, Args)]
pub struct AusterityArgs {
    /// ε ∈ [0, 1), the per-look error level of the t-test (0 = exact MH).
    #[arg(long, value_name = "E", default_value_t = 0.05)]
    pub epsilon: f64,

    /// Minibatch size m added at each look, 1 ≤ m ≤ N. [default: min(500, N)]
    #[arg(long, value_name = "M")]
    pub batch: Option<usize>,

    /// Size of the first look, ≥ 2. [default: the batch]
    #[arg(long, value_name = "K")]
    pub first_batch: Option<usize>,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample confidence`.
#[derive(Debug, Args)]
pub struct ConfidenceArgs {
    /// The concentration bound.
    #[arg(long, value_enum, default_value_t = BoundArg::BernsteinSerfling)]
    pub bound: BoundArg,

    /// δ ∈ (0, 1), the probability that a decision differs from exact MH.
    #[arg(long, value_name = "D", default_value_t = 0.01)]
    pub delta: f64,

    /// Geometric growth γ > 1 of the subsample between looks.
    #[arg(long, value_name = "G", default_value_t = 2.0)]
    pub gamma: f64,

    /// Exponent p > 1 of the error schedule δ_k = (p − 1)δ/(p k^p).
    #[arg(long, value_name = "P", default_value_t = 2.0)]
    pub p: f64,

    /// Size of the first look, at most N.
    #[arg(long, value_name = "K", default_value_t = 100)]
    pub first_batch: usize,

    /// 2nd-order Taylor proxies around the mode (Bardenet, Doucet & Holmes 2017): the test
    /// runs on the remainders, whose range comes from a bound on third derivatives (logistic,
    /// gaussian-mean).
    #[arg(long)]
    pub cv: bool,

    #[command(flatten)]
    pub common: Common,
}

/// The flags of every stochastic-gradient sampler (SGLD, SG-HMC, SGNHT).
#[derive(Debug, Args)]
pub struct SgArgs {
    /// Fixed step size h > 0 (SGLD: the injected noise has variance h per coordinate). There
    /// is no default: the step size sets the bias of an uncorrected stochastic-gradient chain.
    #[arg(long, value_name = "H")]
    pub step_size: f64,

    /// Minibatch size per gradient, 1 ≤ m ≤ N. [default: min(500, N)]
    #[arg(long, value_name = "M")]
    pub batch: Option<usize>,

    /// Taylor control variates around the posterior mode (one extra full-data pass at setup;
    /// Baker et al. 2017 at order 1).
    #[arg(long)]
    pub cv: bool,

    /// Order of the Taylor control variates: 0, 1 (gradients at the mode) or 2 (also Hessians
    /// at the mode). Only with --cv.
    #[arg(long, value_name = "K", default_value_t = 1, requires = "cv")]
    pub cv_order: u32,
}

/// `tallmc sample sgld`.
#[derive(Debug, Args)]
pub struct SgldArgs {
    #[command(flatten)]
    pub sg: SgArgs,

    /// Precondition with the Laplace covariance Σ at the posterior mode: θ ← θ + (h/2)Σĝ +
    /// N(0, hΣ), which makes a step size mean the same in every direction.
    #[arg(long)]
    pub precondition: bool,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample sghmc`.
#[derive(Debug, Args)]
pub struct SghmcArgs {
    #[command(flatten)]
    pub sg: SgArgs,

    /// Steps per trajectory (momentum redrawn at its start).
    #[arg(long, value_name = "L", default_value_t = 10)]
    pub num_steps: usize,

    /// Precondition with the Laplace covariance Σ at the posterior mode (inverse mass matrix
    /// Σ), which makes a step size mean the same in every direction.
    #[arg(long)]
    pub precondition: bool,

    /// When to draw a new minibatch: at every step of a trajectory, or once per trajectory
    /// (BlackJAX's SG-HMC; cheaper per step, larger gradient-noise bias).
    #[arg(long, value_enum, value_name = "SCOPE", default_value_t = MinibatchArg::PerStep)]
    pub minibatch: MinibatchArg,

    #[command(flatten)]
    pub common: Common,
}

/// When SG-HMC draws a new minibatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MinibatchArg {
    /// A fresh minibatch at every step of the trajectory (Chen et al. 2014).
    PerStep,
    /// One minibatch for the whole trajectory.
    PerTrajectory,
}

/// `tallmc sample sgnht`.
#[derive(Debug, Args)]
pub struct SgnhtArgs {
    #[command(flatten)]
    pub sg: SgArgs,

    /// Steps per iteration.
    #[arg(long, value_name = "L", default_value_t = 1)]
    pub num_steps: usize,

    /// The thermostat.
    #[arg(long, value_enum, default_value_t = ThermostatArg::Scalar)]
    pub thermostat: ThermostatArg,

    #[command(flatten)]
    pub common: Common,
}

/// The θ-step of HMC-ECS (with the subsample fixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InnerArg {
    /// Fixed-length HMC: ⌈εL/ε⌉ leapfrog steps, then accept or reject (the paper's).
    Hmc,
    /// NUTS: the trajectory doubles until it turns back (or --max-depth doublings).
    Nuts,
}

/// The flags of both HMC-ECS samplers.
#[derive(Debug, Args)]
pub struct EcsArgs {
    #[command(flatten)]
    pub target: TargetAccept,

    /// The θ-step with the subsample fixed: fixed-length HMC or NUTS.
    #[arg(long, value_enum, default_value_t = InnerArg::Hmc)]
    pub inner: InnerArg,

    /// Only with --inner nuts.
    #[command(flatten)]
    pub max_depth: MaxDepth,

    /// Integration time εL (in units of the metric; the paper's default). Not used by
    /// --inner nuts.
    #[arg(long, value_name = "T", default_value_t = 1.2)]
    pub trajectory_length: f64,

    /// Order of the Taylor control variates around the posterior mode: 0, 1 (gradients) or 2
    /// (also Hessians).
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub cv_order: u32,
}

/// `tallmc sample hmc-ecs`.
#[derive(Debug, Args)]
pub struct HmcEcsArgs {
    #[command(flatten)]
    pub ecs: EcsArgs,

    /// Subsample size m, 1 ≤ m ≤ N. [default: tuned for V[ℓ̂] ≤ 1 at the mode, at least 100]
    #[arg(long, value_name = "M")]
    pub subsample: Option<usize>,

    /// Number of blocks G of the subsample, 1 ≤ G ≤ m (one refreshed per iteration:
    /// correlation ≈ 1 − 1/G). [default: min(100, m)]
    #[arg(long, value_name = "G")]
    pub blocks: Option<usize>,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample hmc-ecs-signed`.
#[derive(Debug, Args)]
pub struct HmcEcsSignedArgs {
    #[command(flatten)]
    pub ecs: EcsArgs,

    /// Size m of each block estimate, 1 ≤ m ≤ N.
    #[arg(long, value_name = "M", default_value_t = 30)]
    pub subsample: usize,

    /// Number of block-Poisson factors λ ≥ 1.
    #[arg(long, value_name = "L", default_value_t = 100)]
    pub lambda: usize,

    #[command(flatten)]
    pub common: Common,
}

/// The sampling budget of a continuous-time sampler, instead of --draws: at most one.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub struct BudgetArgs {
    /// Sampling budget in trajectory time (instead of --draws; draws every --grid).
    #[arg(long, value_name = "T")]
    pub time: Option<f64>,

    /// Sampling budget in events (velocity changes) instead of --draws.
    #[arg(long, value_name = "E")]
    pub events: Option<u64>,

    /// Sampling budget in per-datum evaluations instead of --draws.
    #[arg(long, value_name = "V")]
    pub evaluations: Option<u64>,
}

/// The flags of every continuous-time (piecewise-deterministic) sampler.
#[derive(Debug, Args)]
pub struct ContinuousArgs {
    /// Grid step Δ of the draws written to the CSV files, in trajectory time; --warmup W and
    /// --draws D then mean W·Δ and D·Δ of trajectory time. [default: the median Laplace
    /// posterior sd, about the time to cross the posterior]
    #[arg(long, value_name = "DELTA")]
    pub grid: Option<f64>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// Also write each chain's skeleton (event times, kinds, positions, velocities) to
    /// skeleton_C.csv.
    #[arg(long)]
    pub skeleton: bool,
}

/// How BPS and Zig-Zag bound their event rates.
#[derive(Debug, Args)]
pub struct RateBound {
    /// How the event rate is bounded. [default: model when the model has a curvature bound,
    /// envelope otherwise]
    #[arg(long, value_enum)]
    pub rate_bound: Option<RateBoundArg>,
}

/// `tallmc sample bps`.
#[derive(Debug, Args)]
pub struct BpsArgs {
    #[command(flatten)]
    pub continuous: ContinuousArgs,

    /// Velocity refreshment rate ≥ 0 per unit of trajectory time. [default: 1/Δ]
    #[arg(long, value_name = "R")]
    pub refresh_rate: Option<f64>,

    #[command(flatten)]
    pub bound: RateBound,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample sbps` and `psbps`.
#[derive(Debug, Args)]
pub struct SbpsArgs {
    #[command(flatten)]
    pub continuous: ContinuousArgs,

    /// Velocity refreshment rate ≥ 0 per unit of trajectory time. [default: 0.05/Δ]
    #[arg(long, value_name = "R")]
    pub refresh_rate: Option<f64>,

    /// Band multiple k > 0 of the proposal intensity (larger: fewer bound violations, more
    /// proposals).
    #[arg(long, value_name = "K", default_value_t = crate::pdmp::DEFAULT_K)]
    pub k: f64,

    /// Minibatch size n per gradient, 1 ≤ n ≤ N. [default: min(100, N)]
    #[arg(long, value_name = "M")]
    pub batch: Option<usize>,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample lipsbps`.
#[derive(Debug, Args)]
pub struct LipsbpsArgs {
    #[command(flatten)]
    pub continuous: ContinuousArgs,

    /// Velocity refreshment rate ≥ 0 per unit of trajectory time. [default: 1/Δ]
    #[arg(long, value_name = "R")]
    pub refresh_rate: Option<f64>,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample zigzag`.
#[derive(Debug, Args)]
pub struct ZigzagArgs {
    #[command(flatten)]
    pub continuous: ContinuousArgs,

    #[command(flatten)]
    pub bound: RateBound,

    #[command(flatten)]
    pub common: Common,
}

/// `tallmc sample zigzag-ss` and `zigzag-cv`: the continuous-time flags only.
#[derive(Debug, Args)]
pub struct ContinuousOnlyArgs {
    #[command(flatten)]
    pub continuous: ContinuousArgs,

    #[command(flatten)]
    pub common: Common,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_is_a_sampler_kind_of_the_same_name() {
        let cli = Cli::command();
        let sample = cli.find_subcommand("sample").expect("tallmc sample");
        let names: Vec<&str> = sample.get_subcommands().map(|c| c.get_name()).collect();
        let kinds: Vec<String> = SamplerKind::value_variants().iter().map(|k| k.name()).collect();
        assert_eq!(names, kinds);
    }
}
