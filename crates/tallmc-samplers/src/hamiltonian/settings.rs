//! The settings both full-data Hamiltonian kernels share: their warmup
//! ([`HamiltonianWarmup`]: the step size and the metric, [`MetricSetting`]).

use tallmc_core::{Error, Result};
use tallmc_integrators::{DualAveragingConfig, Metric, MetricKind};

/// The metric (inverse mass matrix Σ) of a Hamiltonian kernel: estimated during warmup or held
/// fixed — one setting, so that a kind, a starting metric and an "adapt" switch cannot
/// disagree.
///
/// ```
/// use tallmc_integrators::{Metric, MetricKind};
/// use tallmc_samplers::{HamiltonianWarmup, Hmc, HmcConfig, MetricSetting};
///
/// // Stan's default: a diagonal Σ estimated in the warmup windows, from the identity.
/// assert_eq!(MetricSetting::default(), MetricSetting::adapt(MetricKind::Diagonal));
/// // Held at a given Σ (e.g. the Laplace covariance); only the step size is tuned.
/// let fixed = MetricSetting::Fixed(Metric::diagonal(vec![0.5, 2.0])?);
/// let warmup = HamiltonianWarmup::default().with_metric(fixed);
/// assert!(Hmc::new(HmcConfig { warmup, ..HmcConfig::default() }).is_ok());
/// // The identity has nothing to estimate: adapting it is refused by the kernel's constructor.
/// let warmup = HamiltonianWarmup::default().with_metric(MetricSetting::adapt(MetricKind::Identity));
/// assert!(Hmc::new(HmcConfig { warmup, ..HmcConfig::default() }).is_err());
/// # Ok::<(), tallmc_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum MetricSetting {
    /// Σ estimated from the chain's positions in Stan's doubling slow windows of warmup
    /// ([`WarmupSchedule`](tallmc_integrators::WarmupSchedule)), replaced at the end of each.
    Adapt {
        /// The kind estimated: [`MetricKind::Diagonal`] or [`MetricKind::Dense`].
        kind: MetricKind,
        /// Σ until the first window ends; the unit metric of `kind` if `None`.
        initial: Option<Metric>,
    },
    /// Σ held at this metric throughout (e.g. the Laplace covariance from
    /// [`Laplace::dense_metric`](crate::Laplace::dense_metric); for the identity,
    /// `Metric::unit(MetricKind::Identity, d)`).
    Fixed(Metric),
}

impl Default for MetricSetting {
    /// A diagonal Σ estimated during warmup, from the identity.
    fn default() -> Self {
        Self::adapt(MetricKind::Diagonal)
    }
}

impl MetricSetting {
    /// A metric of kind `kind` estimated during warmup, starting from the unit metric.
    pub fn adapt(kind: MetricKind) -> Self {
        Self::Adapt { kind, initial: None }
    }

    /// Checks that an adapted metric is diagonal or dense (an identity has nothing to
    /// estimate). Dimensions are checked when a chain is built.
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::Adapt { kind: MetricKind::Identity, .. } => Err(Error::invalid(
                "adapted metric kind",
                "Identity",
                "Diagonal or Dense (an identity metric is MetricSetting::Fixed)",
            )),
            _ => Ok(()),
        }
    }

    /// The metric a chain of dimension `d` starts with: the given one (checked to be of
    /// dimension `d`), or the unit metric of the adapted kind.
    pub fn initial(&self, d: usize) -> Result<Metric> {
        match self {
            Self::Adapt { initial: Some(m), .. } | Self::Fixed(m) if m.dim() != d => {
                Err(Error::dimension("initial metric", d, m.dim()))
            }
            Self::Adapt { initial: Some(m), .. } | Self::Fixed(m) => Ok(m.clone()),
            Self::Adapt { kind, initial: None } => Ok(Metric::unit(*kind, d)),
        }
    }

    /// The kind estimated during warmup (`None`: held fixed).
    pub fn adapted_kind(&self) -> Option<MetricKind> {
        match self {
            Self::Adapt { kind, .. } => Some(*kind),
            Self::Fixed(_) => None,
        }
    }
}

/// The warmup of a full-data Hamiltonian kernel ([`HmcConfig`](crate::HmcConfig),
/// [`NutsConfig`](crate::NutsConfig)): Stan's, with the step size ε tuned by dual averaging and
/// the metric estimated in doubling windows (or held, [`MetricSetting`]); after each window
/// the step size is re-found by Hoffman & Gelman's heuristic and dual averaging restarts.
#[derive(Debug, Clone, PartialEq)]
pub struct HamiltonianWarmup {
    /// Initial step size; found by the heuristic if `None`.
    pub initial_step_size: Option<f64>,
    /// Tune the step size by dual averaging during warmup.
    pub adapt_step_size: bool,
    /// Dual-averaging settings (target acceptance statistic 0.8 by default).
    pub dual_averaging: DualAveragingConfig,
    /// The metric: estimated during warmup or fixed.
    pub metric: MetricSetting,
}

impl Default for HamiltonianWarmup {
    fn default() -> Self {
        Self {
            initial_step_size: None,
            adapt_step_size: true,
            dual_averaging: DualAveragingConfig::default(),
            metric: MetricSetting::default(),
        }
    }
}

impl HamiltonianWarmup {
    /// The default warmup with the metric held at `metric` (only the step size is tuned).
    pub fn fixed_metric(metric: Metric) -> Self {
        Self::default().with_metric(MetricSetting::Fixed(metric))
    }

    /// This warmup with the metric setting `metric`.
    pub fn with_metric(self, metric: MetricSetting) -> Self {
        Self { metric, ..self }
    }

    /// Checks a positive initial step size, the dual-averaging settings and the metric setting.
    pub fn validate(&self) -> Result<()> {
        if let Some(e) = self.initial_step_size {
            tallmc_core::error::check_positive("step_size", e)?;
        }
        self.dual_averaging.validate()?;
        self.metric.validate()
    }
}
