//! Settings of HMC with energy-conserving subsampling (Dang et al. 2019), perturbed and signed.

use serde::{Deserialize, Serialize};
use tallmc_estimators::CvOrder;
use tallmc_samplers::ThetaIntegrator;

use super::exact::{check_max_depth, default_max_depth, default_target_accept};
use super::{Invalid, at_most_n, check_open_unit, check_positive};

/// The θ-step of HMC-ECS (with the subsample fixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum InnerChoice {
    /// Fixed-length HMC: ⌈εL/ε⌉ leapfrog steps, then accept or reject (the paper's).
    #[default]
    Hmc,
    /// NUTS: the trajectory doubles until it turns back (or --max-depth doublings).
    Nuts,
}

/// The paper's integration time of the HMC θ-step.
pub const DEFAULT_ECS_TRAJECTORY_LENGTH: f64 = 1.2;

fn default_ecs_cv_order() -> u32 {
    2
}

/// The settings both HMC-ECS samplers have.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct EcsCommon {
    /// Target acceptance statistic for dual averaging, in (0, 1).
    #[cfg_attr(feature = "clap", arg(long, value_name = "P", default_value_t = default_target_accept()))]
    #[serde(default = "default_target_accept")]
    pub target_accept: f64,

    /// The θ-step with the subsample fixed: fixed-length HMC or NUTS.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = InnerChoice::Hmc))]
    #[serde(default)]
    pub inner: InnerChoice,

    /// Largest number of trajectory doublings of the NUTS θ-step, from 1 to 30 (only with
    /// --inner nuts). [default: 10]
    #[cfg_attr(feature = "clap", arg(long, value_name = "D"))]
    #[serde(default)]
    pub max_depth: Option<usize>,

    /// Integration time εL of the HMC θ-step (in units of the metric; only with --inner hmc).
    /// [default: 1.2, the paper's]
    #[cfg_attr(feature = "clap", arg(long, value_name = "T"))]
    #[serde(default)]
    pub trajectory_length: Option<f64>,

    /// Order of the Taylor control variates around the posterior mode: 0, 1 (gradients) or 2
    /// (also Hessians).
    #[cfg_attr(feature = "clap", arg(long, value_name = "K", default_value_t = default_ecs_cv_order()))]
    #[serde(default = "default_ecs_cv_order")]
    pub cv_order: u32,
}

impl Default for EcsCommon {
    fn default() -> Self {
        Self {
            target_accept: default_target_accept(),
            inner: InnerChoice::default(),
            max_depth: None,
            trajectory_length: None,
            cv_order: default_ecs_cv_order(),
        }
    }
}

impl EcsCommon {
    /// Checks the ranges, and that each setting belongs to the chosen θ-step.
    pub fn validate(&self) -> Result<(), Invalid> {
        check_open_unit("target_accept", self.target_accept)?;
        match self.inner {
            InnerChoice::Hmc => {
                if let Some(d) = self.max_depth {
                    return Err(Invalid::message(format!(
                        "--max-depth {d}: only meaningful with --inner nuts (the fixed-length \
                         HMC θ-step has no tree; its length is --trajectory-length)"
                    )));
                }
                if let Some(t) = self.trajectory_length {
                    check_positive("trajectory_length", t, "a finite number > 0")?;
                }
            }
            InnerChoice::Nuts => {
                if let Some(t) = self.trajectory_length {
                    return Err(Invalid::message(format!(
                        "--trajectory-length {t}: only meaningful with --inner hmc (NUTS \
                         chooses the length at every iteration; its limit is --max-depth)"
                    )));
                }
                check_max_depth(self.max_depth.unwrap_or_else(default_max_depth))?;
            }
        }
        self.order().map(drop)
    }

    /// The control variates' order.
    pub fn order(&self) -> Result<CvOrder, Invalid> {
        CvOrder::from_number(self.cv_order)
            .map_err(|_| Invalid::new("cv_order", self.cv_order, "0, 1 or 2"))
    }

    /// The θ-step.
    pub fn integrator(&self) -> ThetaIntegrator {
        match self.inner {
            InnerChoice::Hmc => ThetaIntegrator::Hmc,
            InnerChoice::Nuts => ThetaIntegrator::Nuts {
                max_depth: self.max_depth.unwrap_or_else(default_max_depth),
            },
        }
    }

    /// The HMC θ-step's integration time.
    pub fn hmc_trajectory_length(&self) -> f64 {
        self.trajectory_length.unwrap_or(DEFAULT_ECS_TRAJECTORY_LENGTH)
    }
}

/// `tallmc sample hmc-ecs`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HmcEcsSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub ecs: EcsCommon,

    /// Subsample size m, 1 ≤ m ≤ N. [default: tuned for V[ℓ̂] ≤ 1 at the mode, at least 100,
    /// at most N]
    #[cfg_attr(feature = "clap", arg(long, value_name = "M"))]
    #[serde(default)]
    pub subsample: Option<usize>,

    /// Number of blocks G of the subsample, 1 ≤ G ≤ m (one refreshed per iteration:
    /// correlation ≈ 1 − 1/G). [default: min(100, m)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "G"))]
    #[serde(default)]
    pub blocks: Option<usize>,
}

impl HmcEcsSettings {
    /// Checks the ranges that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.ecs.validate()?;
        if self.subsample == Some(0) {
            return Err(Invalid::new("subsample", 0, "1 ≤ m ≤ N"));
        }
        if let Some(g) = self.blocks {
            let m = self.subsample.map_or("the tuned m".to_string(), |m| m.to_string());
            if g == 0 || self.subsample.is_some_and(|m| g > m) {
                return Err(Invalid::new("blocks", g, format!("1 ≤ G ≤ m = {m}")));
            }
        }
        Ok(())
    }

    /// Checks the settings against N data points.
    pub fn check_against(&self, n: usize) -> Result<(), Invalid> {
        if let Some(m) = self.subsample {
            at_most_n("subsample", m, n)?;
        }
        Ok(())
    }
}

fn default_block_size() -> usize {
    30
}

fn default_lambda() -> usize {
    100
}

/// `tallmc sample hmc-ecs-signed`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HmcEcsSignedSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub ecs: EcsCommon,

    /// Size m of each block estimate, 1 ≤ m ≤ N.
    #[cfg_attr(feature = "clap", arg(long, value_name = "M", default_value_t = default_block_size()))]
    #[serde(default = "default_block_size")]
    pub subsample: usize,

    /// Number of block-Poisson factors λ ≥ 1.
    #[cfg_attr(feature = "clap", arg(long, value_name = "L", default_value_t = default_lambda()))]
    #[serde(default = "default_lambda")]
    pub lambda: usize,
}

impl Default for HmcEcsSignedSettings {
    fn default() -> Self {
        Self {
            ecs: EcsCommon::default(),
            subsample: default_block_size(),
            lambda: default_lambda(),
        }
    }
}

impl HmcEcsSignedSettings {
    /// Checks the ranges that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.ecs.validate()?;
        if self.subsample == 0 {
            return Err(Invalid::new("subsample", 0, "1 ≤ m ≤ N"));
        }
        if self.lambda == 0 {
            return Err(Invalid::new("lambda", 0, "at least 1 factor λ"));
        }
        Ok(())
    }

    /// Checks the settings against N data points.
    pub fn check_against(&self, n: usize) -> Result<(), Invalid> {
        at_most_n("subsample", self.subsample, n)
    }
}
