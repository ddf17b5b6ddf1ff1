//! [`RunSpec`]: one run as a typed, serializable value — the model (family, prior, intercept),
//! the data source, the sampler's settings, the chains, and where the outputs go. The command
//! line parses its flags into it, the Python package builds it from keyword arguments, Rust
//! users build it directly; `summary.json` records it, so any run can be repeated from there.
//!
//! ```
//! use tallmc_run::{DataSpec, ModelSpec, RunSpec, SamplerSettings, spec::NutsSettings};
//!
//! let spec = RunSpec::new(
//!     ModelSpec::logistic(),
//!     DataSpec::file("higgs.csv"),
//!     SamplerSettings::Nuts(NutsSettings { max_depth: 8, ..NutsSettings::default() }),
//! );
//! spec.validate()?;
//! let json = serde_json::to_string(&spec)?;
//! assert_eq!(serde_json::from_str::<RunSpec>(&json)?, spec);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod ecs;
pub mod exact;
pub mod minibatch;
pub mod pdmp;
mod sampler;
pub mod sg;

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tallmc_models::ColumnMoments;

pub use ecs::{EcsCommon, HmcEcsSettings, HmcEcsSignedSettings, InnerChoice};
pub use exact::{
    AdaptiveMhSettings, HamiltonianCommon, HmcSettings, MetricChoice, NutsSettings, RwmSettings,
};
pub use minibatch::{
    AusteritySettings, BoundChoice, ConfidenceSettings, MhSsSettings, SmhSettings, TunaMhSettings,
};
pub use pdmp::{
    BouncySettings, BpsSettings, BudgetSettings, ContinuousSettings, FrameChoice, LipsbpsSettings,
    RateBoundChoice, SbpsSettings, ZigzagCvSettings, ZigzagSettings, ZigzagSubsamplingSettings,
};
pub use sampler::{SamplerKind, SamplerSettings};
pub use sg::{
    MinibatchChoice, SgCommon, SghmcSettings, SgldSettings, SgnhtSettings, ThermostatChoice,
};

/// A setting out of its range, or settings that contradict each other: the message names the
/// setting as the command's flag (`--target-accept 1.5: expected …`); the Python package
/// shows the flag as its keyword argument (`target_accept`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    message: String,
}

impl Invalid {
    /// `setting` (snake_case, as serialized) has `value`, and `expected` says what it should be.
    pub fn new(setting: &str, value: impl fmt::Display, expected: impl fmt::Display) -> Self {
        Self { message: format!("--{} {value}: expected {expected}", setting.replace('_', "-")) }
    }

    /// A message of its own.
    pub fn message(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }

    /// A library's validation error, as it words it.
    pub fn library(e: impl fmt::Display) -> Self {
        Self { message: e.to_string() }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Invalid {}

/// `value` must be a finite number > 0.
pub(crate) fn check_positive(setting: &str, value: f64, expected: &str) -> Result<(), Invalid> {
    if !(value.is_finite() && value > 0.0) {
        return Err(Invalid::new(setting, value, expected));
    }
    Ok(())
}

/// `value` must lie in the open interval (0, 1).
pub(crate) fn check_open_unit(setting: &str, value: f64) -> Result<(), Invalid> {
    if !(value > 0.0 && value < 1.0) {
        return Err(Invalid::new(setting, value, "a number in the open interval (0, 1)"));
    }
    Ok(())
}

/// A size `m` that must be at most the number of data points N.
pub(crate) fn at_most_n(setting: &str, m: usize, n: usize) -> Result<(), Invalid> {
    if m == 0 || m > n {
        return Err(Invalid::new(
            setting,
            m,
            format!("1 ≤ m ≤ N = {n} (the number of data points)"),
        ));
    }
    Ok(())
}

fn default_prior_sd() -> f64 {
    10.0
}

fn yes() -> bool {
    true
}

/// A regression's design and prior.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegressionSpec {
    /// Prior sd s of every coefficient (and, for the linear model, of log σ): N(0, s²).
    #[serde(default = "default_prior_sd")]
    pub prior_sd: f64,
    /// Prepend an intercept column (named `intercept`). Default: yes.
    #[serde(default = "yes")]
    pub intercept: bool,
    /// Standardize every covariate column (mean 0, population sd 1), on the fly.
    #[serde(default)]
    pub standardize: bool,
    /// With `standardize`, the column means and sds to standardize by, instead of those of
    /// the rows the model is built on. A run over shards elsewhere computes them first, with
    /// two passes over every shard, and sets them here so that every part of the run (the
    /// driver's rows, every shard's passes) standardizes alike. Absent: computed from the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_moments: Option<ColumnMoments>,
}

impl Default for RegressionSpec {
    fn default() -> Self {
        Self {
            prior_sd: default_prior_sd(),
            intercept: true,
            standardize: false,
            column_moments: None,
        }
    }
}

/// A count regression's design and prior, and an optional offset: a data column added to
/// every linear predictor as it is (`offset`), or one whose logarithm is (`exposure`, values
/// > 0). The column gets no coefficient.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetSpec {
    /// A column o added to η: log μ_i = x̃_iᵀβ + o_i.
    #[serde(default)]
    pub offset: Option<String>,
    /// A column t > 0 whose log is added to η: μ_i = t_i e^{x̃_iᵀβ} (counts over an exposure).
    #[serde(default)]
    pub exposure: Option<String>,
}

impl OffsetSpec {
    /// The column named by `offset` or `exposure`, with whether its log is taken.
    pub fn column(&self) -> Option<(&str, bool)> {
        match (&self.offset, &self.exposure) {
            (Some(o), _) => Some((o, false)),
            (None, Some(e)) => Some((e, true)),
            (None, None) => None,
        }
    }

    fn validate(&self) -> Result<(), Invalid> {
        if let (Some(o), Some(e)) = (&self.offset, &self.exposure) {
            return Err(Invalid::message(format!(
                "--offset {o} and --exposure {e}: give at most one (an exposure t is the \
                 offset log t)"
            )));
        }
        for (flag, name) in [("offset", &self.offset), ("exposure", &self.exposure)] {
            if name.as_deref().is_some_and(str::is_empty) {
                return Err(Invalid::new(flag, "\"\"", "the name of a data column"));
            }
        }
        Ok(())
    }
}

/// A count regression: its design and prior, and its offset.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CountSpec {
    /// The design and prior (every coefficient, and NB2's log φ, ~ N(0, prior_sd²)).
    #[serde(flatten)]
    pub regression: RegressionSpec,
    /// The offset or exposure column, if any.
    #[serde(flatten)]
    pub offset: OffsetSpec,
}

fn default_nu() -> f64 {
    4.0
}

/// Robust (Student-t) regression: its design and prior, and the degrees of freedom ν.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RobustSpec {
    /// The design and prior (every coefficient and log σ ~ N(0, prior_sd²)).
    #[serde(flatten)]
    pub regression: RegressionSpec,
    /// Degrees of freedom ν > 0 of the noise, fixed (default 4).
    #[serde(default = "default_nu")]
    pub nu: f64,
}

impl Default for RobustSpec {
    fn default() -> Self {
        Self { regression: RegressionSpec::default(), nu: default_nu() }
    }
}

/// The model: its family, prior and design. Parameter names come from the data's columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum ModelSpec {
    /// Bayesian logistic regression: y ∈ {0, 1}, θ ~ N(0, prior_sd² I).
    Logistic(RegressionSpec),
    /// Probit regression: y ∈ {0, 1}, P(y = 1) = Φ(x̃ᵀθ), θ ~ N(0, prior_sd² I).
    Probit(RegressionSpec),
    /// Poisson regression with the log link (and an optional offset or exposure).
    Poisson(CountSpec),
    /// Negative binomial (NB2) regression with the log link, θ = (β, log φ),
    /// Var = μ + μ²/φ (and an optional offset or exposure).
    NegativeBinomial(CountSpec),
    /// Linear regression with unknown noise sd: θ = (β, log σ), all ~ N(0, prior_sd²).
    Linear(RegressionSpec),
    /// Robust linear regression with Student-t noise (ν fixed): θ = (β, log σ).
    Robust(RobustSpec),
    /// Gaussian N(μ, σ²) on the response, θ = (μ, log σ), flat priors.
    Gaussian {},
    /// A model of the user's own, handed over in code (the Python package's `CustomModel`, a
    /// Rust type run by [`run_custom`](crate::run_custom)); `label` says what it was. A run of
    /// it is repeated by handing the model over again.
    Custom {
        /// What the model was (`CustomModel(log_terms=…)`).
        label: String,
    },
    /// Gaussian mean with known σ on the response, μ ~ N(prior_mean, prior_sd²).
    GaussianMean {
        /// The known noise sd σ > 0.
        sigma: f64,
        /// Prior mean of μ.
        #[serde(default)]
        prior_mean: f64,
        /// Prior sd of μ.
        #[serde(default = "default_prior_sd")]
        prior_sd: f64,
    },
}

impl ModelSpec {
    /// Logistic regression with an intercept and the default prior N(0, 10²).
    pub fn logistic() -> Self {
        Self::Logistic(RegressionSpec::default())
    }

    /// The family's name (`logistic`, `gaussian-mean`, …): the command's `--model` value.
    pub fn family(&self) -> &'static str {
        match self {
            Self::Logistic(_) => "logistic",
            Self::Probit(_) => "probit",
            Self::Poisson(_) => "poisson",
            Self::NegativeBinomial(_) => "negative-binomial",
            Self::Linear(_) => "linear",
            Self::Robust(_) => "robust",
            Self::Gaussian {} => "gaussian",
            Self::GaussianMean { .. } => "gaussian-mean",
            Self::Custom { .. } => "custom",
        }
    }

    /// A regression's design and prior (`None` for the Gaussian models).
    pub fn regression(&self) -> Option<&RegressionSpec> {
        match self {
            Self::Logistic(r) | Self::Probit(r) | Self::Linear(r) => Some(r),
            Self::Poisson(c) | Self::NegativeBinomial(c) => Some(&c.regression),
            Self::Robust(r) => Some(&r.regression),
            Self::Gaussian {} | Self::GaussianMean { .. } | Self::Custom { .. } => None,
        }
    }

    /// A regression's design and prior, to change (`None` for the Gaussian models).
    pub fn regression_mut(&mut self) -> Option<&mut RegressionSpec> {
        match self {
            Self::Logistic(r) | Self::Probit(r) | Self::Linear(r) => Some(r),
            Self::Poisson(c) | Self::NegativeBinomial(c) => Some(&mut c.regression),
            Self::Robust(r) => Some(&mut r.regression),
            Self::Gaussian {} | Self::GaussianMean { .. } | Self::Custom { .. } => None,
        }
    }

    /// Whether the model standardizes its covariates.
    pub fn standardizes(&self) -> bool {
        self.regression().is_some_and(|r| r.standardize)
    }

    /// A count regression's offset (`None` for the other models).
    pub fn offset(&self) -> Option<&OffsetSpec> {
        match self {
            Self::Poisson(c) | Self::NegativeBinomial(c) => Some(&c.offset),
            _ => None,
        }
    }

    /// Checks the prior's and the model's parameters.
    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some(r) = self.regression() {
            check_positive("prior_sd", r.prior_sd, "a finite number > 0")?;
            if r.column_moments.is_some() && !r.standardize {
                return Err(Invalid::message(
                    "column_moments are given for a model that does not standardize: set \
                     standardize, or drop the moments"
                        .to_string(),
                ));
            }
        }
        if let Some(o) = self.offset() {
            o.validate()?;
        }
        match *self {
            Self::Robust(ref r) => {
                check_positive("nu", r.nu, "degrees of freedom ν, a finite number > 0")
            }
            Self::GaussianMean { sigma, prior_mean, prior_sd } => {
                check_positive("sigma", sigma, "a finite noise sd > 0")?;
                check_positive("prior_sd", prior_sd, "a finite number > 0")?;
                if !prior_mean.is_finite() {
                    return Err(Invalid::new("prior_mean", prior_mean, "a finite number"));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Where the data come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DataSpec {
    /// A file: CSV with a header (column `y` the response), the tall-data binary format, a
    /// `.npy` file of X with the responses in `y_npy`, or Parquet (a `.parquet` file or a
    /// directory of shards).
    File {
        /// The file (or Parquet directory), as given.
        path: PathBuf,
        /// With a `.npy` file of X: the `.npy` file of y.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y_npy: Option<PathBuf>,
        /// The response's column of a CSV or Parquet source (`None`: `y`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<String>,
        /// The covariates, by column name and in this order (`None`: every column but the
        /// response; for Parquet, every such column that holds numbers).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        columns: Option<Vec<String>>,
    },
    /// Arrays handed over in memory (the Python package's NumPy arrays and DataFrames): `label`
    /// says what they were. A run of them is repeated by handing the arrays over again.
    Arrays {
        /// What the arrays were (`NumPy arrays`, `pandas.DataFrame`, …).
        label: String,
    },
}

impl DataSpec {
    /// A data file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self::File { path: path.into(), y_npy: None, response: None, columns: None }
    }

    /// The same source with its files' paths made absolute (against the current directory), so
    /// that a recorded run can be repeated from anywhere.
    pub fn absolute(self) -> Self {
        let abs = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        match self {
            Self::File { path, y_npy, response, columns } => {
                Self::File { path: abs(path), y_npy: y_npy.map(abs), response, columns }
            }
            arrays => arrays,
        }
    }

    /// How the outputs name the data (the file as given, or the arrays' label).
    pub fn label(&self) -> String {
        match self {
            Self::File { path, .. } => path.display().to_string(),
            Self::Arrays { label } => label.clone(),
        }
    }
}

/// How chains start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum InitChoice {
    /// The posterior mode (found by Newton's method) plus 2× a draw from the Laplace
    /// approximation: over-dispersed starts, so R-hat can detect problems.
    #[default]
    Dispersed,
    /// The posterior mode for every chain.
    Mode,
    /// Uniform(−2, 2) in every coordinate (Stan's default).
    Uniform,
}

/// Where a run's files go. Without a directory nothing is written: the result stays in memory.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OutputSpec {
    /// The output directory (created if needed): chain_1.csv … chain_C.csv, summary.json and,
    /// for continuous-time samplers with a skeleton, skeleton_1.csv ….
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// Whether an existing non-empty directory may be reused: its files are removed first.
    /// Without it such a directory is refused, so that runs are never mixed.
    #[serde(default)]
    pub overwrite: bool,
}

/// How a run executes: nothing here changes its draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// Worker threads for the chains and the full-data sums (all cores if `None`).
    #[serde(default)]
    pub threads: Option<usize>,
    /// Draw a progress bar on stderr when it is a terminal.
    #[serde(default = "yes")]
    pub progress: bool,
    /// Print the end-of-run report on stderr.
    #[serde(default = "yes")]
    pub report: bool,
}

impl Default for Execution {
    fn default() -> Self {
        Self { threads: None, progress: true, report: true }
    }
}

fn default_chains() -> usize {
    4
}

fn default_iterations() -> usize {
    1000
}

fn default_seed() -> u64 {
    1
}

/// One run: what to sample, on what, how, and where the outputs go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The model.
    pub model: ModelSpec,
    /// The data.
    pub data: DataSpec,
    /// The sampler and its settings.
    pub sampler: SamplerSettings,
    /// Number of chains (run in parallel).
    #[serde(default = "default_chains")]
    pub chains: usize,
    /// Warmup (adaptation) iterations per chain.
    #[serde(default = "default_iterations")]
    pub warmup: usize,
    /// Draws per chain after warmup.
    #[serde(default = "default_iterations")]
    pub draws: usize,
    /// Master seed: chain k uses ChaCha8 stream k+1 of this seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// How chains start.
    #[serde(default)]
    pub init: InitChoice,
    /// Where the files go (none: the result stays in memory).
    #[serde(default)]
    pub output: OutputSpec,
    /// Threads, progress bar and report: how the run executes, not what it draws.
    #[serde(default)]
    pub execution: Execution,
}

impl RunSpec {
    /// A run of `sampler` on `model` and `data` with the defaults: 4 chains, 1,000 warmup
    /// iterations and 1,000 draws each, seed 1, dispersed starts, no files.
    pub fn new(model: ModelSpec, data: DataSpec, sampler: SamplerSettings) -> Self {
        Self {
            model,
            data,
            sampler,
            chains: default_chains(),
            warmup: default_iterations(),
            draws: default_iterations(),
            seed: default_seed(),
            init: InitChoice::default(),
            output: OutputSpec::default(),
            execution: Execution::default(),
        }
    }

    /// Checks everything that does not depend on the data: the model's parameters, the
    /// sampler's settings, the chains.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.model.validate()?;
        if self.chains == 0 {
            return Err(Invalid::new("chains", 0, "at least 1 chain"));
        }
        if self.draws < 4 {
            return Err(Invalid::new(
                "draws",
                self.draws,
                "at least 4 draws per chain (for ESS and R-hat)",
            ));
        }
        if self.execution.threads == Some(0) {
            return Err(Invalid::new("threads", 0, "at least 1 thread"));
        }
        if let DataSpec::File { columns: Some(cols), .. } = &self.data {
            if cols.is_empty() {
                return Err(Invalid::new("columns", "an empty list", "at least one column name"));
            }
            if let Some(c) = cols.iter().enumerate().find(|(k, c)| cols[..*k].contains(c)) {
                return Err(Invalid::message(format!(
                    "--columns names `{}` twice; expected each column once",
                    c.1
                )));
            }
        }
        if let DataSpec::File { path, y_npy: Some(y), .. } = &self.data {
            let npy = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
            if !npy {
                return Err(Invalid::message(format!(
                    "--y-npy {} applies only to a .npy --data file (the covariates X); {} \
                     carries its own responses",
                    y.display(),
                    path.display()
                )));
            }
        }
        self.sampler.validate()
    }
}
