//! Settings of minibatch Metropolis–Hastings: Austerity (a sequential t-test), the confidence
//! sampler (concentration bounds), and the exact kernels with Poisson minibatches (SMH, TunaMH,
//! MH-SS).

use serde::{Deserialize, Serialize};
use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, MeanTest,
};

use super::{Invalid, at_most_n};

fn default_epsilon() -> f64 {
    0.05
}

/// Default minibatch size of Austerity: min(500, N).
pub const DEFAULT_AUSTERITY_BATCH: usize = 500;

/// `tallmc sample austerity`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct AusteritySettings {
    /// ε ∈ [0, 1), the per-look error level of the t-test (0 = exact MH).
    #[cfg_attr(feature = "clap", arg(long, value_name = "E", default_value_t = default_epsilon()))]
    #[serde(default = "default_epsilon")]
    pub epsilon: f64,

    /// Minibatch size m added at each look, 1 ≤ m ≤ N. [default: min(500, N)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "M"))]
    #[serde(default)]
    pub batch: Option<usize>,

    /// Size of the first look, ≥ 2. [default: the batch]
    #[cfg_attr(feature = "clap", arg(long, value_name = "K"))]
    #[serde(default)]
    pub first_batch: Option<usize>,
}

impl Default for AusteritySettings {
    fn default() -> Self {
        Self { epsilon: default_epsilon(), batch: None, first_batch: None }
    }
}

impl AusteritySettings {
    /// The Austerity test, checked against N data points.
    pub fn test(&self, n: usize) -> Result<AusterityTest, Invalid> {
        if let Some(m) = self.batch {
            at_most_n("batch", m, n)?;
        }
        if let Some(k) = self.first_batch {
            at_most_n("first_batch", k, n)?;
        }
        let mut cfg = AusterityConfig::new(
            self.epsilon,
            self.batch.unwrap_or(n.min(DEFAULT_AUSTERITY_BATCH)),
        );
        if let Some(k) = self.first_batch {
            cfg = cfg.with_first_batch(k);
        }
        let test = AusterityTest::new(cfg).map_err(Invalid::library)?;
        test.check_population_size(n).map_err(Invalid::library)?;
        Ok(test)
    }
}

/// Concentration bound of the confidence sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum BoundChoice {
    /// Hoeffding–Serfling (range only).
    HoeffdingSerfling,
    /// Empirical Bernstein (Audibert et al. 2009).
    Bernstein,
    /// Empirical Bernstein–Serfling (Bardenet & Maillard 2015).
    #[default]
    BernsteinSerfling,
}

fn default_delta() -> f64 {
    0.01
}

fn default_gamma() -> f64 {
    2.0
}

fn default_p() -> f64 {
    2.0
}

/// Default size of the confidence sampler's first look: min(100, N).
pub const DEFAULT_FIRST_LOOK: usize = 100;

/// `tallmc sample confidence`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ConfidenceSettings {
    /// The concentration bound.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = BoundChoice::BernsteinSerfling))]
    #[serde(default)]
    pub bound: BoundChoice,

    /// δ ∈ (0, 1), the probability that a decision differs from exact MH.
    #[cfg_attr(feature = "clap", arg(long, value_name = "D", default_value_t = default_delta()))]
    #[serde(default = "default_delta")]
    pub delta: f64,

    /// Geometric growth γ > 1 of the subsample between looks.
    #[cfg_attr(feature = "clap", arg(long, value_name = "G", default_value_t = default_gamma()))]
    #[serde(default = "default_gamma")]
    pub gamma: f64,

    /// Exponent p > 1 of the error schedule δ_k = (p − 1)δ/(p k^p).
    #[cfg_attr(feature = "clap", arg(long, value_name = "P", default_value_t = default_p()))]
    #[serde(default = "default_p")]
    pub p: f64,

    /// Size of the first look, at most N. [default: min(100, N)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "K"))]
    #[serde(default)]
    pub first_batch: Option<usize>,

    /// 2nd-order Taylor proxies around the mode (Bardenet, Doucet & Holmes 2017): the test
    /// runs on the remainders, whose range comes from a bound on third derivatives (logistic,
    /// gaussian-mean).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub cv: bool,
}

impl Default for ConfidenceSettings {
    fn default() -> Self {
        Self {
            bound: BoundChoice::default(),
            delta: default_delta(),
            gamma: default_gamma(),
            p: default_p(),
            first_batch: None,
            cv: false,
        }
    }
}

impl ConfidenceSettings {
    /// The confidence test, checked against N data points.
    pub fn test(&self, n: usize) -> Result<ConfidenceTest, Invalid> {
        let bound = match self.bound {
            BoundChoice::HoeffdingSerfling => BoundKind::HoeffdingSerfling,
            BoundChoice::Bernstein => BoundKind::EmpiricalBernstein,
            BoundChoice::BernsteinSerfling => BoundKind::EmpiricalBernsteinSerfling,
        };
        let k = match self.first_batch {
            Some(k) => {
                at_most_n("first_batch", k, n)?;
                k
            }
            None => n.min(DEFAULT_FIRST_LOOK),
        };
        let cfg = ConfidenceConfig::new(bound, self.delta)
            .with_gamma(self.gamma)
            .with_p(self.p)
            .with_first_batch(k);
        let test = ConfidenceTest::new(cfg).map_err(Invalid::library)?;
        test.check_population_size(n).map_err(Invalid::library)?;
        Ok(test)
    }
}

/// A population size larger than any data set, to check the settings that do not depend on N.
const ANY_N: usize = u32::MAX as usize;

impl AusteritySettings {
    /// Checks the settings that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.test(ANY_N).map(drop)
    }
}

impl ConfidenceSettings {
    /// Checks the settings that do not depend on the data.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.test(ANY_N).map(drop)
    }
}

fn default_smh_order() -> u32 {
    2
}

/// `tallmc sample smh`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SmhSettings {
    /// Order k of the Taylor expansions at the mode, 1 or 2: the data read per iteration are
    /// O(1) for k = 1 and O(N^(−1/2)) for k = 2.
    #[cfg_attr(feature = "clap", arg(long, value_name = "K", default_value_t = default_smh_order()))]
    #[serde(default = "default_smh_order")]
    pub order: u32,

    /// Propose by preconditioned Crank–Nicolson around the Laplace approximation with
    /// autocorrelation ρ ∈ [0, 1) instead of a random walk: far better mixing on tall data,
    /// where the posterior is close to Gaussian (0.5 is a good start). [default: random walk]
    #[cfg_attr(feature = "clap", arg(long, value_name = "RHO"))]
    #[serde(default)]
    pub pcn: Option<f64>,
}

impl Default for SmhSettings {
    fn default() -> Self {
        Self { order: default_smh_order(), pcn: None }
    }
}

impl SmhSettings {
    /// Checks the order and ρ.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !(1..=2).contains(&self.order) {
            return Err(Invalid::new("order", self.order, "1 or 2"));
        }
        check_pcn(self.pcn)
    }
}

/// Checks a pCN ρ.
fn check_pcn(pcn: Option<f64>) -> Result<(), Invalid> {
    match pcn {
        Some(rho) if !(rho.is_finite() && (0.0..1.0).contains(&rho)) => {
            Err(Invalid::new("pcn", rho, "a number in [0, 1)"))
        }
        _ => Ok(()),
    }
}

fn default_tuna_chi() -> f64 {
    1e-4
}

/// `tallmc sample tunamh`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct TunaMhSettings {
    /// χ ≥ 0: the Poisson minibatch has mean χC²M² + CM (larger χ: more data per iteration,
    /// acceptance closer to MH's).
    #[cfg_attr(feature = "clap", arg(long, value_name = "X", default_value_t = default_tuna_chi()))]
    #[serde(default = "default_tuna_chi")]
    pub chi: f64,
}

impl Default for TunaMhSettings {
    fn default() -> Self {
        Self { chi: default_tuna_chi() }
    }
}

fn default_mhss_order() -> u32 {
    1
}

/// `tallmc sample mh-ss`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct MhSsSettings {
    /// Order k of the control variates at the mode, 1 (the paper's) or 2: the data read per
    /// iteration are O(1) for k = 1 and O(N^(−1/2)) for k = 2.
    #[cfg_attr(feature = "clap", arg(long, value_name = "K", default_value_t = default_mhss_order()))]
    #[serde(default = "default_mhss_order")]
    pub order: u32,

    /// χ ≥ 0 of TunaMH's Poisson minibatch on the control variates' remainders (MH-SS: 0).
    #[cfg_attr(feature = "clap", arg(long, value_name = "X", default_value_t = 0.0))]
    #[serde(default)]
    pub chi: f64,

    /// Propose by preconditioned Crank–Nicolson around the Laplace approximation with
    /// autocorrelation ρ ∈ [0, 1) instead of a random walk. [default: random walk]
    #[cfg_attr(feature = "clap", arg(long, value_name = "RHO"))]
    #[serde(default)]
    pub pcn: Option<f64>,
}

/// Checks a χ.
fn check_chi(chi: f64) -> Result<(), Invalid> {
    if !(chi >= 0.0 && chi.is_finite()) {
        return Err(Invalid::new("chi", chi, "a finite number ≥ 0"));
    }
    Ok(())
}

impl TunaMhSettings {
    /// Checks χ.
    pub fn validate(&self) -> Result<(), Invalid> {
        check_chi(self.chi)
    }
}

impl Default for MhSsSettings {
    fn default() -> Self {
        Self { order: default_mhss_order(), chi: 0.0, pcn: None }
    }
}

impl MhSsSettings {
    /// Checks the order, χ and ρ.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !(1..=2).contains(&self.order) {
            return Err(Invalid::new("order", self.order, "1 or 2"));
        }
        check_chi(self.chi)?;
        check_pcn(self.pcn)
    }
}
