//! Pooling chains: per-coordinate summaries, covariance and test-function estimates.

use serde::{Deserialize, Serialize};

use super::bins::{mcse_from, weighted_squares};
use super::{TestFunctionAverage, TimeAverages};
use crate::error::{Error, Result};

/// Summary of one coordinate of one or more continuous-time chains (serializes as a flat JSON
/// object; NaN becomes `null`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContinuousSummary {
    /// Parameter name.
    pub name: String,
    /// Pooled time average Σ_k ∫_k x dt / Σ_k T_k.
    pub mean: f64,
    /// Pooled time standard deviation √((1/T) Σ_k ∫_k (x − mean)² dt).
    pub sd: f64,
    /// Batch-means MCSE of the mean, pooled over chains (NaN with fewer than 2 batches).
    pub mcse_mean: f64,
    /// sd² / MCSE²: the number of independent draws that would give the same precision.
    pub ess: f64,
    /// Total trajectory time T = Σ_k T_k.
    pub time: f64,
    /// Batches used by the MCSE, over all chains.
    pub batches: usize,
    /// Number of chains pooled.
    pub chains: usize,
}

/// Time average of a test function over one or more chains, with its MCSE.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContinuousEstimate {
    /// Pooled time average Σ_k ∫_k f dt / Σ_k T_k.
    pub mean: f64,
    /// Batch-means MCSE pooled over chains (NaN with fewer than 2 batches).
    pub mcse: f64,
    /// Total trajectory time.
    pub time: f64,
    /// Batches used, over all chains.
    pub batches: usize,
    /// Number of chains pooled.
    pub chains: usize,
}

/// Summaries of every coordinate of the chains `chains`, pooled (see the [module
/// docs](super) for the pooled mean and MCSE).
///
/// # Errors
/// No chains; chains of different dimensions; `names.len()` ≠ d; total time 0.
///
/// # Example
/// ```
/// use tallmc_diagnostics::continuous::{TimeAverageConfig, TimeAverages, summarize_continuous};
/// let mut a = TimeAverages::new(1, TimeAverageConfig::default()).unwrap();
/// let mut b = a.clone();
/// a.add(&[0.0], &[1.0], 1.0).unwrap(); // x(t) = t on [0, 1]
/// b.add(&[1.0], &[1.0], 3.0).unwrap(); // x(t) = 1 + t on [0, 3]
/// let s = summarize_continuous(&["x"], &[&a, &b]).unwrap();
/// // (1/2 + 7.5) / 4 = 2.
/// assert!((s[0].mean - 2.0).abs() < 1e-15);
/// assert_eq!((s[0].time, s[0].chains), (4.0, 2));
/// ```
pub fn summarize_continuous<S: AsRef<str>>(
    names: &[S], chains: &[&TimeAverages],
) -> Result<Vec<ContinuousSummary>> {
    let (dim, time) = check_chains(chains)?;
    if names.len() != dim {
        return Err(tallmc_core::Error::DimensionMismatch {
            what: "parameter names".to_owned(),
            expected: dim,
            found: names.len(),
        }
        .into());
    }
    let mean = pooled_mean(chains, time);
    Ok(names
        .iter()
        .enumerate()
        .map(|(j, name)| {
            let mu = mean[j];
            let (mut ss, mut nb, mut sq) = (0.0, 0, 0.0);
            for c in chains {
                let dc = c.center_of(j) - mu;
                let (s1, s2) = (c.centered_first()[j], c.centered_second()[j]);
                sq += s2 + 2.0 * dc * s1 + dc * dc * c.total_time();
                let (s, n) = weighted_squares(c.bins(), c.total_time(), j, -dc);
                ss += s;
                nb += n;
            }
            let sd = (sq / time).max(0.0).sqrt();
            let mcse_mean = mcse_from(ss, nb, time);
            ContinuousSummary {
                name: name.as_ref().to_owned(),
                mean: mu,
                sd,
                mcse_mean,
                ess: sd * sd / (mcse_mean * mcse_mean),
                time,
                batches: nb,
                chains: chains.len(),
            }
        })
        .collect())
}

/// The pooled time covariance (1/T) Σ_k ∫_k (x − mean)(x − mean)ᵀ dt, row-major d × d.
///
/// # Errors
/// As [`summarize_continuous`], or a chain without cross moments
/// ([`TimeAverageConfig::cross_moments`](super::TimeAverageConfig::cross_moments)).
pub fn pooled_covariance(chains: &[&TimeAverages]) -> Result<Vec<f64>> {
    let (d, time) = check_chains(chains)?;
    if let Some(k) = chains.iter().position(|c| !c.has_cross_moments()) {
        return Err(Error::invalid(
            "cross_moments",
            format!("false for chain {k}"),
            "true (TimeAverageConfig::cross_moments) to compute a covariance",
        ));
    }
    let mean = pooled_mean(chains, time);
    let mut cov = vec![0.0; d * d];
    for c in chains {
        let (s1, cs, t) = (c.centered_first(), c.centered_cross(), c.total_time());
        for j in 0..d {
            let dj = c.center_of(j) - mean[j];
            for k in j..d {
                let dk = c.center_of(k) - mean[k];
                cov[j * d + k] += cs[j * d + k] + dj * s1[k] + dk * s1[j] + dj * dk * t;
            }
        }
    }
    for j in 0..d {
        for k in j..d {
            let v = cov[j * d + k] / time;
            cov[j * d + k] = v;
            cov[k * d + j] = v;
        }
    }
    Ok(cov)
}

/// The pooled time average of a test function over chains, with its batch-means MCSE.
///
/// # Errors
/// No chains; total time 0.
pub fn pooled_estimate<F>(chains: &[&TestFunctionAverage<F>]) -> Result<ContinuousEstimate> {
    if chains.is_empty() {
        return Err(Error::NoChains);
    }
    let time: f64 = chains.iter().map(|c| c.total_time()).sum();
    check_time(time)?;
    let mean = chains.iter().map(|c| c.integral()).sum::<f64>() / time;
    let (mut ss, mut nb) = (0.0, 0);
    for c in chains {
        let (s, n) = weighted_squares(c.bins(), c.total_time(), 0, mean);
        ss += s;
        nb += n;
    }
    Ok(ContinuousEstimate {
        mean,
        mcse: mcse_from(ss, nb, time),
        time,
        batches: nb,
        chains: chains.len(),
    })
}

/// Checks that there is at least one chain, all of one dimension, with positive total time;
/// returns (d, T).
fn check_chains(chains: &[&TimeAverages]) -> Result<(usize, f64)> {
    let first = chains.first().ok_or(Error::NoChains)?;
    let dim = first.dim();
    if let Some(k) = chains.iter().position(|c| c.dim() != dim) {
        return Err(tallmc_core::Error::DimensionMismatch {
            what: format!("time averages of chain {k}"),
            expected: dim,
            found: chains[k].dim(),
        }
        .into());
    }
    let time: f64 = chains.iter().map(|c| c.total_time()).sum();
    check_time(time)?;
    Ok((dim, time))
}

fn check_time(time: f64) -> Result<()> {
    if time > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid("total time", time, "> 0 (no segment of positive duration was added)"))
    }
}

/// Pooled means: c₀ + Σ_k (S1_k + (c_k − c₀) T_k) / T, about chain 0's centre.
fn pooled_mean(chains: &[&TimeAverages], time: f64) -> Vec<f64> {
    let d = chains[0].dim();
    (0..d)
        .map(|j| {
            let c0 = chains[0].center_of(j);
            let s: f64 = chains
                .iter()
                .map(|c| c.centered_first()[j] + (c.center_of(j) - c0) * c.total_time())
                .sum();
            c0 + s / time
        })
        .collect()
}
