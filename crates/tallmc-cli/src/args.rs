//! Command-line arguments.

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
    #[command(allow_negative_numbers = true)]
    Sample(SampleArgs),
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

/// The exact (full-data) samplers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SamplerKind {
    /// Random-walk Metropolis, proposal shaped by the Laplace covariance, scale tuned in warmup.
    Rwm,
    /// Adaptive Metropolis (Haario et al. 2001), covariance learned during warmup.
    AdaptiveMh,
    /// Hamiltonian Monte Carlo with dual-averaging step size and metric adaptation.
    Hmc,
    /// Austerity MH (Korattikara et al. 2014): random-walk proposals accepted by a sequential
    /// Student-t test on minibatches drawn without replacement (--epsilon, --batch). Approximate:
    /// each decision may differ from exact MH; ε controls how often.
    Austerity,
    /// The confidence sampler (Bardenet et al. 2014): the accept/reject decision by exact
    /// concentration bounds for sampling without replacement (--bound, --delta, --gamma); each
    /// decision differs from exact MH with probability ≤ δ. Needs term bounds (not --model linear).
    Confidence,
    /// Stochastic-gradient Langevin dynamics (Welling & Teh 2011), uncorrected:
    /// θ ← θ + (h/2)·ĝ(θ) + N(0, h I), ĝ from a fresh minibatch of --batch points drawn without
    /// replacement, fixed step size h (--step-size); --cv for control variates. Approximate:
    /// biased for any h > 0. Warmup iterations are burn-in only (nothing is adapted).
    Sgld,
    /// Stochastic-gradient HMC (Chen et al. 2014) with friction C = I, momentum redrawn every
    /// trajectory of --num-steps L steps (default 10), fixed step size; --cv for control
    /// variates. Approximate (no MH correction).
    Sghmc,
    /// Stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014), --thermostat scalar or
    /// element-wise (mSGNHT), fixed step size; --cv for control variates. Approximate.
    Sgnht,
    /// Perturbed HMC-ECS (Dang et al. 2019): HMC-within-Gibbs on a subsample u of --subsample m
    /// points in --blocks G blocks (one block refreshed per iteration), with the same subsample
    /// for the dynamics and the acceptance, on the bias-corrected likelihood exp(ℓ̂ − σ̂²/2)
    /// with Taylor control variates (--cv-order, default 2) around the posterior mode. m
    /// defaults to the smallest value with V[ℓ̂] ≤ 1 (at least 100). Approximate: the
    /// perturbation is O(1/(n m²)).
    HmcEcs,
    /// Signed HMC-ECS (Dang et al. 2019, §5): HMC-within-Gibbs on |L̂_B|, the block-Poisson
    /// estimator with --lambda λ factors of --subsample m points; writes the sign of L̂_B as
    /// the sign__ column, and summary.json's "sign_corrected" block holds the exact
    /// (sign-corrected) posterior means. The lower bound a is tuned for P(L̂_B ≥ 0) ≥ 0.99.
    HmcEcsSigned,
    /// The Bouncy Particle Sampler on the full data (exact; continuous-time output): bounces
    /// off ∇U at rate ⟨∇U, v⟩⁺, Gaussian velocities refreshed at --refresh-rate. Bounce clock
    /// from the model's curvature bound (exact inversion for Gaussian likelihoods) or, for
    /// models without one, an automatic piecewise bound (--rate-bound).
    Bps,
    /// The Stochastic Bouncy Particle Sampler (Pakman et al. 2017): minibatch gradients of
    /// --batch points, a local-linear-regression proposal band with multiple --k. Approximate:
    /// biased by bound violations, whose rate summary.json reports.
    Sbps,
    /// Preconditioned SBPS (§5): a diagonal preconditioner learned during warmup, then fixed.
    Psbps,
    /// lipSBPS: exact factor BPS with one datum per factor, thinned against a bound on
    /// per-datum gradients (logistic) or their Lipschitz constant around the mode
    /// (gaussian-mean); the prior is its own factor.
    Lipsbps,
    /// The Zig-Zag process on the full data (exact; continuous-time output); clocks as for
    /// --sampler bps.
    Zigzag,
    /// Zig-Zag with subsampling (Bierkens, Fearnhead & Roberts 2019): one datum per proposal,
    /// exact thinning against per-datum gradient bounds.
    ZigzagSs,
    /// Zig-Zag with control variates at the mode (Bierkens, Fearnhead & Roberts 2019): one
    /// datum per proposal; its cost per effective sample does not grow with N near the mode.
    ZigzagCv,
}

impl SamplerKind {
    /// The name on the command line.
    pub fn name(self) -> String {
        self.to_possible_value().map_or_else(String::new, |v| v.get_name().to_owned())
    }

    /// SGLD, SG-HMC or SGNHT.
    pub fn is_stochastic_gradient(self) -> bool {
        matches!(self, Self::Sgld | Self::Sghmc | Self::Sgnht)
    }

    /// Perturbed or signed HMC-ECS.
    pub fn is_hmc_ecs(self) -> bool {
        matches!(self, Self::HmcEcs | Self::HmcEcsSigned)
    }

    /// A piecewise-deterministic (continuous-time) sampler.
    pub fn is_continuous(self) -> bool {
        matches!(
            self,
            Self::Bps
                | Self::Sbps
                | Self::Psbps
                | Self::Lipsbps
                | Self::Zigzag
                | Self::ZigzagSs
                | Self::ZigzagCv
        )
    }
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

/// `tallmc sample` arguments.
#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Model to fit.
    #[arg(long, value_enum)]
    pub model: ModelKind,

    /// Data file: .csv (header; column y is the response, the other columns covariates) or the
    /// tall-data binary format (.bin with its .json header beside it; either path works).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,

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

    /// Sampler.
    #[arg(long, value_enum)]
    pub sampler: SamplerKind,

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

    /// HMC metric. The default, the Laplace covariance, beats a dense metric estimated from
    /// warmup draws on tall data (higgs-like, n = 10⁵, d = 29: min bulk ESS per draw 1.10 vs
    /// 0.35 after 1,000 warmup iterations); estimate one when the posterior is far from Gaussian.
    #[arg(long, value_enum, default_value_t = MetricArg::Laplace)]
    pub metric: MetricArg,

    /// HMC / HMC-ECS target acceptance statistic for dual averaging, in (0, 1).
    #[arg(long, value_name = "P", default_value_t = 0.8)]
    pub target_accept: f64,

    /// HMC / HMC-ECS integration time εL (in units of the metric). [default: π/2 (HMC), 1.2
    /// (HMC-ECS, the paper's)]
    #[arg(long, value_name = "T")]
    pub trajectory_length: Option<f64>,

    /// Austerity: ε ∈ [0, 1), the per-look error level of the t-test (0 = exact MH).
    /// [default: 0.05]
    #[arg(long, value_name = "E")]
    pub epsilon: Option<f64>,

    /// Austerity: minibatch size m added at each look, 1 ≤ m ≤ N. [default: min(500, N)]
    /// SGLD / SG-HMC / SGNHT: minibatch size per gradient, 1 ≤ m ≤ N. [default: min(500, N)]
    #[arg(long, value_name = "M")]
    pub batch: Option<usize>,

    /// SGLD / SG-HMC / SGNHT: fixed step size h > 0 (SGLD: the injected noise has variance h
    /// per coordinate). Required with these samplers.
    #[arg(long, value_name = "H")]
    pub step_size: Option<f64>,

    /// SG-HMC / SGNHT: steps per iteration (SG-HMC: per trajectory, momentum redrawn at its
    /// start). [default: 10 (SG-HMC), 1 (SGNHT)]
    #[arg(long, value_name = "L")]
    pub num_steps: Option<usize>,

    /// SGLD / SG-HMC / SGNHT: Taylor control variates around the posterior mode (one extra
    /// full-data pass at setup; Baker et al. 2017 at order 1). Confidence: 2nd-order Taylor
    /// proxies around the mode (Bardenet, Doucet & Holmes 2017); the test runs on the
    /// remainders, whose range comes from a bound on third derivatives (logistic,
    /// gaussian-mean).
    #[arg(long)]
    pub cv: bool,

    /// Order of the Taylor control variates: 0, 1 (gradients at the mode) or 2 (also
    /// Hessians at the mode). SG samplers: only with --cv [default: 1]. HMC-ECS: [default: 2]
    #[arg(long, value_name = "K")]
    pub cv_order: Option<u32>,

    /// HMC-ECS: subsample size m, 1 ≤ m ≤ N (perturbed: the whole subsample, tuned for
    /// V[ℓ̂] ≤ 1 at the mode if omitted, at least 100; signed: the size of each block estimate,
    /// default 30).
    #[arg(long, value_name = "M")]
    pub subsample: Option<usize>,

    /// Perturbed HMC-ECS: number of blocks G of the subsample, 1 ≤ G ≤ m (one refreshed per
    /// iteration: correlation ≈ 1 − 1/G). [default: min(100, m)]
    #[arg(long, value_name = "G")]
    pub blocks: Option<usize>,

    /// Signed HMC-ECS: number of block-Poisson factors λ ≥ 1. [default: 100]
    #[arg(long, value_name = "L")]
    pub lambda: Option<usize>,

    /// SGLD / SG-HMC: precondition with the Laplace covariance Σ at the posterior mode (SGLD:
    /// θ ← θ + (h/2)Σĝ + N(0, hΣ); SG-HMC: inverse mass matrix Σ), which makes a step size
    /// mean the same in every direction.
    #[arg(long)]
    pub precondition: bool,

    /// SGNHT: the thermostat. [default: scalar]
    #[arg(long, value_enum)]
    pub thermostat: Option<ThermostatArg>,

    /// Austerity / confidence: size of the first look (Austerity ≥ 2). [default: the batch
    /// (Austerity); 100 (confidence)]
    #[arg(long, value_name = "K")]
    pub first_batch: Option<usize>,

    /// Confidence: the concentration bound.
    #[arg(long, value_enum)]
    pub bound: Option<BoundArg>,

    /// Confidence: δ ∈ (0, 1), the probability that a decision differs from exact MH.
    /// [default: 0.01]
    #[arg(long, value_name = "D")]
    pub delta: Option<f64>,

    /// Confidence: geometric growth γ > 1 of the subsample between looks. [default: 2]
    #[arg(long, value_name = "G")]
    pub gamma: Option<f64>,

    /// Confidence: exponent p > 1 of the error schedule δ_k = (p − 1)δ/(p k^p). [default: 2]
    #[arg(long, value_name = "P")]
    pub p: Option<f64>,

    /// Continuous-time samplers: grid step Δ of the draws written to the CSV files, in
    /// trajectory time; --warmup W and --draws D then mean W·Δ and D·Δ of trajectory time.
    /// [default: the median Laplace posterior sd, about the time to cross the posterior]
    #[arg(long, value_name = "DELTA")]
    pub grid: Option<f64>,

    /// Continuous-time samplers: sampling budget in trajectory time (instead of --draws;
    /// draws every --grid).
    #[arg(long, value_name = "T")]
    pub time: Option<f64>,

    /// Continuous-time samplers: sampling budget in events (velocity changes) instead of
    /// --draws.
    #[arg(long, value_name = "E")]
    pub events: Option<u64>,

    /// Continuous-time samplers: sampling budget in per-datum evaluations instead of --draws.
    #[arg(long, value_name = "V")]
    pub evaluations: Option<u64>,

    /// BPS / SBPS / pSBPS / lipSBPS: velocity refreshment rate ≥ 0 per unit of trajectory
    /// time. [default: 1/Δ (BPS, lipSBPS), 0.05/Δ (SBPS, pSBPS)]
    #[arg(long, value_name = "R")]
    pub refresh_rate: Option<f64>,

    /// SBPS / pSBPS: band multiple k > 0 of the proposal intensity (larger: fewer bound
    /// violations, more proposals). [default: 3]
    #[arg(long, value_name = "K")]
    pub k: Option<f64>,

    /// BPS / Zig-Zag: how the event rate is bounded. [default: model when the model has a
    /// curvature bound, envelope otherwise]
    #[arg(long, value_enum)]
    pub rate_bound: Option<RateBoundArg>,

    /// Continuous-time samplers: also write each chain's skeleton (event times, kinds,
    /// positions, velocities) to skeleton_C.csv.
    #[arg(long)]
    pub skeleton: bool,

    /// Worker threads for the chains and the full-data sums. [default: all cores]
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}
