//! The step-size scan of Supp. E (Pakman et al. 2017): for SGLD and mSGNHT, "the largest
//! (fastest-mixing) step size that did not lead to overly large bias compared to the Laplace
//! approximation".
//!
//! **Step sizes in the paper's units.** The authors' code (SBPS-public, `samplers.py`) updates
//! SGLD as w ← w + ε g + √(2ε/N) ζ and mSGNHT as p ← (1 − εξ)p + ε g + √(2ε/N) ζ,
//! ξ ← ξ + ε(p² − 1/N), w ← w + εp, with g the minibatch gradient of the *mean* log-likelihood
//! (the noise √(2ε/N) only makes sense then; \[DER\]). In this library's units (gradient of the
//! log posterior, `tallmc_samplers::{Sgld, Sgnht}`) that is
//!
//! * SGLD: h = 2ε/N (θ ← θ + (h/2)∇log π̂ + N(0, h));
//! * mSGNHT: p = q/√N, so h = ε/√N, diffusion A = √N and ξ' = √N ξ (the authors start at ξ = 1,
//!   ours at ξ' = A = √N: the same).
//!
//! The scan and the figures speak the paper's ε, so that its picks (0.1 for SGLD and mSGNHT,
//! and 0.01 for SGLD) are comparable.
//!
//! **The scan.** From the largest ε of the grid down, one run per ε from the posterior mode ŵ,
//! long enough for [`ScanPlan::relaxations`] relaxation times of the slowest direction at that
//! step ([`ScanPlan::iterations`]: a fixed number of data passes would leave the small steps
//! unmixed, their sds far too small, and call that bias), the first tenth discarded; the
//! iterates' means m̂_j and sds ŝ_j are compared with the Laplace approximation N(ŵ, Σ_L):
//!
//! ```text
//! mean bias = max_j |m̂_j − ŵ_j| / σ_L,j,     sd bias = max_j |ŝ_j / σ_L,j − 1|.
//! ```
//!
//! A step is **acceptable** when it made no divergence and both are below the thresholds of
//! [`ScanPlan`]; the pick is the largest acceptable ε, and the scan stops there. The thresholds are set from how far the
//! *exact* posterior (the HMC reference) is from the Laplace approximation, so that an
//! unbiased sampler passes: see [`ScanPlan::from_reference`].

use tallmc_core::rng::chain_rng;
use tallmc_core::{Chain, Kernel, StepStats};
use tallmc_models::LogisticRegression;
use tallmc_samplers::{Laplace, Sgld, SgldConfig, Sgnht, SgnhtConfig, Thermostat};

use super::chain_seed;
use super::problem::Reference;
use crate::Result;

/// The two stochastic-gradient baselines of Fig. 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SgMethod {
    /// Stochastic-gradient Langevin dynamics.
    Sgld,
    /// The multivariate (element-wise) stochastic-gradient Nosé–Hoover thermostat.
    Msgnht,
}

impl SgMethod {
    /// Key in the summary.
    pub fn key(self) -> &'static str {
        match self {
            Self::Sgld => "sgld",
            Self::Msgnht => "msgnht",
        }
    }

    /// Label in tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Self::Sgld => "SGLD",
            Self::Msgnht => "mSGNHT",
        }
    }

    /// This library's step size h for the paper's ε on N data (module docs).
    pub fn h(self, eps: f64, n: usize) -> f64 {
        match self {
            Self::Sgld => 2.0 * eps / n as f64,
            Self::Msgnht => eps / (n as f64).sqrt(),
        }
    }
}

/// SGLD with the paper's step ε (h = 2ε/N), minibatch `batch`, no preconditioner.
pub fn sgld(eps: f64, n: usize, batch: usize) -> tallmc_core::Result<Sgld> {
    Sgld::new(SgldConfig::new(SgMethod::Sgld.h(eps, n), batch)?)
}

/// mSGNHT with the paper's step ε (h = ε/√N, A = √N), minibatch `batch`, one update per step.
pub fn msgnht(eps: f64, n: usize, batch: usize) -> tallmc_core::Result<Sgnht> {
    let config = SgnhtConfig {
        step_size: SgMethod::Msgnht.h(eps, n),
        batch,
        diffusion: (n as f64).sqrt(),
        thermostat: Thermostat::ElementWise,
        ..SgnhtConfig::default()
    };
    config.validate()?;
    Sgnht::new(config)
}

/// The scan's sizes and thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanPlan {
    /// The grid of the paper's ε, decreasing: the scan stops at the first acceptable step.
    pub grid: Vec<f64>,
    /// Length of each run in relaxation times of the slowest direction (see [`ScanPlan::iterations`]).
    pub relaxations: f64,
    /// Minibatch size.
    pub batch: usize,
    /// N.
    pub n: usize,
    /// Smallest eigenvalue of the Laplace precision (1 / the largest posterior variance).
    pub min_precision: f64,
    /// Largest acceptable mean bias (in Laplace sds).
    pub max_mean_bias: f64,
    /// Largest acceptable sd bias (relative).
    pub max_sd_bias: f64,
}

impl ScanPlan {
    /// Thresholds from the exact posterior: an "overly large" bias is more than twice the
    /// HMC reference's own distance from the Laplace approximation (mean and sd measures of
    /// the module docs), and at least 0.2 sd and 20 %.
    pub fn from_reference(
        grid: Vec<f64>, relaxations: f64, batch: usize, reference: &Reference, laplace: &Laplace,
    ) -> Self {
        let (mean_bias, sd_bias) = bias(&reference.mean, &reference.sd, laplace);
        let d = laplace.mode.len();
        Self {
            grid,
            relaxations,
            batch,
            n: 0,
            min_precision: 1.0 / largest_eigenvalue(&laplace.covariance, d),
            max_mean_bias: (2.0 * mean_bias).max(0.2),
            max_sd_bias: (2.0 * sd_bias).max(0.2),
        }
    }

    /// Updates per run at the paper's step ε: `relaxations` × 2/(hλ_min) with h = 2ε/N, the
    /// relaxation time (in updates) of SGLD along the slowest direction of a Gaussian with
    /// precision λ_min — and of mSGNHT too, which at its friction ξ ≈ √N is overdamped and
    /// moves θ like SGLD with the same h.
    pub fn iterations(&self, eps: f64) -> usize {
        let h = 2.0 * eps / self.n as f64;
        (self.relaxations * 2.0 / (h * self.min_precision)).ceil() as usize
    }

    /// Data passes of the run at ε.
    pub fn epochs(&self, eps: f64) -> f64 {
        (self.iterations(eps) * self.batch) as f64 / self.n as f64
    }
}

/// The largest eigenvalue of the symmetric positive semi-definite d × d matrix `a` (row-major),
/// by power iteration from the all-ones vector (200 iterations, relative change < 10⁻¹²).
pub fn largest_eigenvalue(a: &[f64], d: usize) -> f64 {
    let mut x = vec![1.0 / (d as f64).sqrt(); d];
    let mut y = vec![0.0; d];
    let mut lambda = 0.0;
    for _ in 0..200 {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = (0..d).map(|j| a[i * d + j] * x[j]).sum();
        }
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm == 0.0 {
            return 0.0;
        }
        let next = norm;
        for (xi, yi) in x.iter_mut().zip(&y) {
            *xi = yi / norm;
        }
        if (next - lambda).abs() <= 1e-12 * next {
            return next;
        }
        lambda = next;
    }
    lambda
}

/// (mean bias, sd bias) of means `m` and sds `s` against the Laplace approximation.
pub fn bias(m: &[f64], s: &[f64], laplace: &Laplace) -> (f64, f64) {
    let sd = laplace.sds();
    let mean_bias =
        (0..sd.len()).map(|j| (m[j] - laplace.mode[j]).abs() / sd[j]).fold(0.0, f64::max);
    let sd_bias = (0..sd.len()).map(|j| (s[j] / sd[j] - 1.0).abs()).fold(0.0, f64::max);
    (mean_bias, sd_bias)
}

/// One step size of the scan.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanPoint {
    /// The paper's ε.
    pub eps: f64,
    /// This library's h.
    pub h: f64,
    /// max_j |m̂_j − ŵ_j| / σ_L,j.
    pub mean_bias: f64,
    /// max_j |ŝ_j / σ_L,j − 1|.
    pub sd_bias: f64,
    /// Divergent updates.
    pub divergences: u64,
    /// Whether the step is acceptable.
    pub acceptable: bool,
}

/// The scan of one method.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// Which method.
    pub method: SgMethod,
    /// Sizes and thresholds.
    pub plan: ScanPlan,
    /// One point per ε of the grid.
    pub points: Vec<ScanPoint>,
    /// The largest acceptable ε (None if none is).
    pub pick: Option<f64>,
}

/// Runs the scan of `method` on `model` from the Laplace mode, from the largest ε of the grid
/// down, stopping at the first acceptable one; the run at grid point k uses
/// `chain_rng(chain_seed(seed, tag), k)`.
pub fn scan(
    method: SgMethod, model: &LogisticRegression, laplace: &Laplace, plan: &ScanPlan, seed: u64,
    tag: u64,
) -> Result<Scan> {
    let n = tallmc_core::Terms::num_terms(model);
    let plan = ScanPlan { n, ..plan.clone() };
    let mut points = Vec::new();
    let mut pick = None;
    for (k, &eps) in plan.grid.iter().enumerate() {
        let mut rng = chain_rng(chain_seed(seed, tag), k);
        let iterations = plan.iterations(eps);
        let (m, s, divergences) = match method {
            SgMethod::Sgld => {
                moments(model, sgld(eps, n, plan.batch)?, laplace, iterations, &mut rng)?
            }
            SgMethod::Msgnht => {
                moments(model, msgnht(eps, n, plan.batch)?, laplace, iterations, &mut rng)?
            }
        };
        let (mean_bias, sd_bias) = bias(&m, &s, laplace);
        let acceptable =
            divergences == 0 && mean_bias <= plan.max_mean_bias && sd_bias <= plan.max_sd_bias;
        points.push(ScanPoint {
            eps,
            h: method.h(eps, n),
            mean_bias,
            sd_bias,
            divergences,
            acceptable,
        });
        if acceptable {
            pick = Some(eps);
            break;
        }
    }
    Ok(Scan { method, plan, points, pick })
}

/// Means and sds of the iterates after the first tenth, and the divergences, of `iterations`
/// steps of `kernel` from the mode. A non-finite iterate makes both NaN.
fn moments<K: Kernel<LogisticRegression>>(
    model: &LogisticRegression, kernel: K, laplace: &Laplace, iterations: usize,
    rng: &mut tallmc_core::rng::ChainRng,
) -> Result<(Vec<f64>, Vec<f64>, u64)> {
    let d = laplace.mode.len();
    let mut chain = kernel.build_chain(model, &laplace.mode, rng)?;
    let burn = iterations / 10;
    let (mut count, mut mean, mut m2) = (0.0, vec![0.0; d], vec![0.0; d]);
    let mut divergences = 0;
    for it in 0..iterations {
        let stats = chain.step(model, rng)?;
        divergences += u64::from(stats.divergent());
        if divergences > 0 {
            // Unacceptable whatever follows: stop (the moments are NaN).
            return Ok((vec![f64::NAN; d], vec![f64::NAN; d], divergences));
        }
        if it < burn {
            continue;
        }
        count += 1.0;
        for ((m, q), x) in mean.iter_mut().zip(&mut m2).zip(chain.position()) {
            let delta = x - *m;
            *m += delta / count;
            *q += delta * (x - *m);
        }
    }
    let sd = m2.iter().map(|q| (q / (count - 1.0)).sqrt()).collect();
    Ok((mean, sd, divergences))
}
