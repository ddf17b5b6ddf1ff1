//! Settings of the piecewise-deterministic (continuous-time) samplers: BPS, SBPS, pSBPS,
//! lipSBPS, Zig-Zag, Zig-Zag with subsampling and with control variates.

use serde::{Deserialize, Serialize};

use super::{Invalid, check_positive};

/// The sampling budget of a continuous-time sampler, instead of the draws: at most one.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "clap", group(multiple = false))]
pub struct BudgetSettings {
    /// Sampling budget in trajectory time (instead of --draws; draws every --grid).
    #[cfg_attr(feature = "clap", arg(long, value_name = "T"))]
    #[serde(default)]
    pub time: Option<f64>,

    /// Sampling budget in events (velocity changes) instead of --draws.
    #[cfg_attr(feature = "clap", arg(long, value_name = "E"))]
    #[serde(default)]
    pub events: Option<u64>,

    /// Sampling budget in per-datum evaluations instead of --draws.
    #[cfg_attr(feature = "clap", arg(long, value_name = "V"))]
    #[serde(default)]
    pub evaluations: Option<u64>,
}

/// The settings every continuous-time sampler has.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ContinuousSettings {
    /// Grid step Δ of the draws written to the CSV files, in trajectory time; --warmup W and
    /// --draws D then mean W·Δ and D·Δ of trajectory time. [default: the median Laplace
    /// posterior sd, about the time to cross the posterior; 1 in whitened coordinates]
    #[cfg_attr(feature = "clap", arg(long, value_name = "DELTA"))]
    #[serde(default)]
    pub grid: Option<f64>,

    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub budget: BudgetSettings,

    /// Also write each chain's skeleton (event times, kinds, positions, velocities) to
    /// skeleton_C.csv.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub skeleton: bool,
}

impl ContinuousSettings {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some(g) = self.grid {
            check_positive("grid", g, "a finite trajectory time > 0")?;
        }
        let b = &self.budget;
        let given = [b.time.is_some(), b.events.is_some(), b.evaluations.is_some()];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(Invalid::message(
                "time, events and evaluations are alternative budgets: give at most one",
            ));
        }
        if let Some(t) = b.time {
            check_positive("time", t, "a finite trajectory time > 0")?;
        }
        if b.events == Some(0) {
            return Err(Invalid::new("events", 0, "at least 1 event"));
        }
        if b.evaluations == Some(0) {
            return Err(Invalid::new("evaluations", 0, "at least 1 per-datum evaluation"));
        }
        Ok(())
    }
}

/// How the full-data BPS and Zig-Zag bound their event rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RateBoundChoice {
    /// The model's curvature bound (logistic, gaussian-mean): thinning, or exact inversion
    /// when the potential is quadratic.
    Model,
    /// The automatic piecewise bound on a time grid (any model; its violations are counted).
    Envelope,
}

fn check_refresh(rate: Option<f64>) -> Result<(), Invalid> {
    if let Some(r) = rate
        && !(r.is_finite() && r >= 0.0)
    {
        return Err(Invalid::new("refresh_rate", r, "a finite rate >= 0"));
    }
    Ok(())
}

/// The settings of the bouncy particle samplers (BPS, SBPS, pSBPS, lipSBPS): the
/// continuous-time settings and the velocity refreshment rate.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BouncySettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub continuous: ContinuousSettings,

    /// Velocity refreshment rate ≥ 0 per unit of trajectory time. [default: 1/Δ for bps and
    /// lipsbps, 0.05/Δ for sbps and psbps]
    #[cfg_attr(feature = "clap", arg(long, value_name = "R"))]
    #[serde(default)]
    pub refresh_rate: Option<f64>,
}

impl BouncySettings {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.continuous.validate()?;
        check_refresh(self.refresh_rate)
    }
}

/// `tallmc sample bps`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BpsSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub bouncy: BouncySettings,

    /// How the event rate is bounded. [default: model when the model has a curvature bound,
    /// envelope otherwise]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub rate_bound: Option<RateBoundChoice>,

    /// Coordinates of the process with the automatic envelope: whitened z = L⁻¹(θ − θ*) (the
    /// Laplace approximation's mode and Cholesky factor) or θ itself. The trajectory and the
    /// draws are in θ either way; whitened, the default --grid is 1 (one posterior sd of
    /// travel). With the model's curvature bound the process runs in θ. [default: whitened with
    /// the envelope]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub frame: Option<FrameChoice>,
}

/// Default band multiple k of SBPS (the paper's).
pub const DEFAULT_K: f64 = 3.0;

fn default_k() -> f64 {
    DEFAULT_K
}

/// `tallmc sample sbps` and `psbps`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SbpsSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub bouncy: BouncySettings,

    /// Band multiple k > 0 of the proposal intensity (larger: fewer bound violations, more
    /// proposals).
    #[cfg_attr(feature = "clap", arg(long, value_name = "K", default_value_t = default_k()))]
    #[serde(default = "default_k")]
    pub k: f64,

    /// Minibatch size n per gradient, 1 ≤ n ≤ N. [default: min(100, N)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "M"))]
    #[serde(default)]
    pub batch: Option<usize>,

    /// Coordinates of the process: whitened z = L⁻¹(θ − θ*) (the Laplace approximation's mode
    /// and Cholesky factor) or θ itself. The trajectory and the draws are in θ either way;
    /// whitened, the default --grid is 1 (one posterior sd of travel). [default: whitened
    /// where the Laplace covariance can be factored, else θ]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub frame: Option<FrameChoice>,
}

impl Default for SbpsSettings {
    fn default() -> Self {
        Self { bouncy: BouncySettings::default(), k: DEFAULT_K, batch: None, frame: None }
    }
}

/// `tallmc sample lipsbps`: the bouncy settings and the coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct LipsbpsSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub bouncy: BouncySettings,

    /// Coordinates of the process: θ itself or, on models with bounded per-datum gradients
    /// (logistic; the Lipschitz models, gaussian-mean and probit, run in θ), whitened
    /// z = L⁻¹(θ − θ*) (the Laplace approximation's mode and Cholesky factor). The trajectory
    /// and the draws are in θ either way; whitened, the default --grid is 1 (one posterior sd
    /// of travel). lipSBPS needs fewer evaluations whitened but mixes less per second there
    /// (docs/methods/lipsbps.md). [default: original]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub frame: Option<FrameChoice>,
}

impl LipsbpsSettings {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.bouncy.validate()
    }
}

/// `tallmc sample zigzag`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ZigzagSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub continuous: ContinuousSettings,

    /// How the event rate is bounded. [default: model when the model has a curvature bound,
    /// envelope otherwise]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub rate_bound: Option<RateBoundChoice>,

    /// Coordinates of the process with the automatic envelope: whitened z = L⁻¹(θ − θ*) (the
    /// Laplace approximation's mode and Cholesky factor) or θ itself. The trajectory and the
    /// draws are in θ either way; whitened, the default --grid is 1 (one posterior sd of
    /// travel). With the model's curvature bound the process runs in θ. [default: whitened with
    /// the envelope]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub frame: Option<FrameChoice>,
}

/// The coordinates `tallmc sample zigzag-cv`, `bps` / `zigzag` with the automatic envelope,
/// `sbps` / `psbps`, and `lipsbps` / `zigzag-ss` with bounded per-datum gradients run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FrameChoice {
    /// z = L⁻¹(θ − θ*), L the Cholesky factor of the Laplace covariance at the mode θ*
    /// (zigzag-cv: with control variates of order two and data drawn in proportion to their
    /// remainder bounds, about one thinning proposal per flip on tall data).
    Whitened,
    /// θ itself (zigzag-cv: with the first-order control variates of Bierkens, Fearnhead &
    /// Roberts (2019) and data drawn uniformly, the paper's algorithm).
    Original,
}

/// `tallmc sample zigzag-cv`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ZigzagCvSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub continuous: ContinuousSettings,

    /// Coordinates of the process (and its control variates). The trajectory and the draws
    /// are in θ either way; in whitened coordinates the default --grid is 1 (one posterior sd
    /// of travel). [default: whitened]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub frame: Option<FrameChoice>,
}

/// `tallmc sample zigzag-ss`: the continuous-time settings and the coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ZigzagSubsamplingSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub continuous: ContinuousSettings,

    /// Coordinates of the process (with bounded per-datum gradients; the Lipschitz
    /// models, gaussian-mean and probit, run in θ): whitened z = L⁻¹(θ − θ*) (the Laplace approximation's mode
    /// and Cholesky factor) or θ itself. The trajectory and the draws are in θ either way;
    /// whitened, the default --grid is 1 (one posterior sd of travel). [default: whitened
    /// where the Laplace covariance can be factored, else θ]
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub frame: Option<FrameChoice>,
}

impl SbpsSettings {
    /// Checks the ranges that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.bouncy.validate()?;
        // The batch is checked against N when the data are read.
        check_positive("k", self.k, "a finite band multiple > 0")
    }
}
