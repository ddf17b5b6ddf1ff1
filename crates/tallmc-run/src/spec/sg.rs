//! Settings of the stochastic-gradient samplers: SGLD, SG-HMC and SGNHT, each with or without
//! Taylor control variates around the posterior mode.

use serde::{Deserialize, Serialize};
use tallmc_estimators::CvOrder;

use super::{Invalid, check_positive};

/// Default minibatch size of the stochastic-gradient samplers: min(500, N).
pub const DEFAULT_SG_BATCH: usize = 500;

fn default_cv_order() -> u32 {
    1
}

/// The settings every stochastic-gradient sampler has.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SgCommon {
    /// Fixed step size h > 0 (SGLD: the injected noise has variance h per coordinate). There
    /// is no default: the step size sets the bias of an uncorrected stochastic-gradient chain.
    #[cfg_attr(feature = "clap", arg(long, value_name = "H"))]
    pub step_size: f64,

    /// Minibatch size per gradient, 1 ≤ m ≤ N. [default: min(500, N)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "M"))]
    #[serde(default)]
    pub batch: Option<usize>,

    /// Taylor control variates around the posterior mode (one extra full-data pass at setup;
    /// Baker et al. 2017 at order 1).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub cv: bool,

    /// Order of the Taylor control variates: 0, 1 (gradients at the mode) or 2 (also Hessians
    /// at the mode). Only with --cv. [default: 1]
    #[cfg_attr(feature = "clap", arg(long, value_name = "K", requires = "cv"))]
    #[serde(default)]
    pub cv_order: Option<u32>,
}

impl SgCommon {
    /// Settings with step size `h` and every other setting at its default.
    pub fn with_step_size(h: f64) -> Self {
        Self { step_size: h, batch: None, cv: false, cv_order: None }
    }

    /// Checks the ranges that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        check_positive("step_size", self.step_size, "a finite number > 0")?;
        if self.batch == Some(0) {
            return Err(Invalid::new("batch", 0, "1 ≤ m ≤ N"));
        }
        if let Some(k) = self.cv_order {
            if !self.cv {
                return Err(Invalid::new(
                    "cv_order",
                    k,
                    "no order without --cv (control variates)",
                ));
            }
            CvOrder::from_number(k).map_err(|_| Invalid::new("cv_order", k, "0, 1 or 2"))?;
        }
        Ok(())
    }

    /// The minibatch size for N data points.
    pub fn batch_for(&self, n: usize) -> Result<usize, Invalid> {
        let batch = self.batch.unwrap_or(n.min(DEFAULT_SG_BATCH));
        super::at_most_n("batch", batch, n)?;
        Ok(batch)
    }

    /// The control variates' order, if there are control variates.
    pub fn control_variates(&self) -> Option<CvOrder> {
        self.cv.then(|| {
            CvOrder::from_number(self.cv_order.unwrap_or_else(default_cv_order))
                .unwrap_or(CvOrder::One)
        })
    }
}

/// `tallmc sample sgld`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SgldSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub sg: SgCommon,

    /// Precondition with the Laplace covariance Σ at the posterior mode: θ ← θ + (h/2)Σĝ +
    /// N(0, hΣ), which makes a step size mean the same in every direction.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub precondition: bool,
}

/// When SG-HMC draws a new minibatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum MinibatchChoice {
    /// A fresh minibatch at every step of the trajectory (Chen et al. 2014).
    #[default]
    PerStep,
    /// One minibatch for the whole trajectory.
    PerTrajectory,
}

fn default_sghmc_steps() -> usize {
    10
}

/// `tallmc sample sghmc`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SghmcSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub sg: SgCommon,

    /// Steps per trajectory (momentum redrawn at its start).
    #[cfg_attr(feature = "clap", arg(long, value_name = "L", default_value_t = default_sghmc_steps()))]
    #[serde(default = "default_sghmc_steps")]
    pub num_steps: usize,

    /// Precondition with the Laplace covariance Σ at the posterior mode (inverse mass matrix
    /// Σ), which makes a step size mean the same in every direction.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub precondition: bool,

    /// When to draw a new minibatch: at every step of a trajectory, or once per trajectory
    /// (BlackJAX's SG-HMC; cheaper per step, larger gradient-noise bias).
    #[cfg_attr(feature = "clap", arg(long, value_enum, value_name = "SCOPE", default_value_t = MinibatchChoice::PerStep))]
    #[serde(default)]
    pub minibatch: MinibatchChoice,
}

/// The SGNHT thermostat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ThermostatChoice {
    /// One scalar thermostat ξ (SGNHT).
    #[default]
    Scalar,
    /// One thermostat per coordinate (mSGNHT).
    ElementWise,
}

fn default_sgnht_steps() -> usize {
    1
}

/// `tallmc sample sgnht`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SgnhtSettings {
    // clap takes no doc comment on a flattened group: see the type's docs.
    #[allow(missing_docs)]
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub sg: SgCommon,

    /// Steps per iteration.
    #[cfg_attr(feature = "clap", arg(long, value_name = "L", default_value_t = default_sgnht_steps()))]
    #[serde(default = "default_sgnht_steps")]
    pub num_steps: usize,

    /// The thermostat.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = ThermostatChoice::Scalar))]
    #[serde(default)]
    pub thermostat: ThermostatChoice,
}

impl SgldSettings {
    /// SGLD with step size `h`, every other setting at its default.
    pub fn with_step_size(h: f64) -> Self {
        Self { sg: SgCommon::with_step_size(h), precondition: false }
    }
}

impl SghmcSettings {
    /// SG-HMC with step size `h`, every other setting at its default.
    pub fn with_step_size(h: f64) -> Self {
        Self {
            sg: SgCommon::with_step_size(h),
            num_steps: default_sghmc_steps(),
            precondition: false,
            minibatch: MinibatchChoice::default(),
        }
    }

    /// Checks the ranges that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.sg.validate()?;
        check_steps(self.num_steps)
    }
}

impl SgnhtSettings {
    /// SGNHT with step size `h`, every other setting at its default.
    pub fn with_step_size(h: f64) -> Self {
        Self {
            sg: SgCommon::with_step_size(h),
            num_steps: default_sgnht_steps(),
            thermostat: ThermostatChoice::default(),
        }
    }

    /// Checks the ranges that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.sg.validate()?;
        check_steps(self.num_steps)
    }
}

fn check_steps(l: usize) -> Result<(), Invalid> {
    if l == 0 {
        return Err(Invalid::new("num_steps", 0, "at least 1 step"));
    }
    Ok(())
}
