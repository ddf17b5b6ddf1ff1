//! Per-parameter summaries of multi-chain draws, like ArviZ's `summary` (and posterior's
//! `summarise_draws`): mean, sd, 5/50/95 % quantiles, MCSE of mean and sd, bulk and tail ESS,
//! rank-normalized R̂.
//!
//! Draws come as the driver stores them: per chain, a row-major buffer of draws × d
//! parameters ([`Draws`]).

use serde::Serialize;

use crate::chains::{Matrix, mean_unchecked, validate, var_unchecked};
use crate::error::{Error, Result};
use crate::ess::{MIN_DRAWS, ess_core, tail_ess};
use crate::mcse::{mean_mcse, sd_mcse};
use crate::rhat::rank_rhat_of_split;
use crate::stats::quantile_sorted;

/// A borrowed view of multi-chain draws of a d-dimensional parameter: chain c is a row-major
/// buffer of `n_draws × dim` values, draw t's parameter j at `[t * dim + j]`.
#[derive(Debug, Clone)]
pub struct Draws<'a> {
    chains: Vec<&'a [f64]>,
    dim: usize,
    n_draws: usize,
}

impl<'a> Draws<'a> {
    /// Views `chains` (each `n_draws × dim`, row-major) as draws of a `dim`-dimensional
    /// parameter.
    ///
    /// # Errors
    /// No chains, `dim` = 0, a chain whose length is not a multiple of `dim`, chains of
    /// different lengths. (Values are checked by the diagnostics that use them.)
    ///
    /// # Example
    /// ```
    /// use tallmc_diagnostics::Draws;
    /// // One chain, 3 draws of a 2-d parameter.
    /// let chains = vec![vec![1.0, 10.0, 2.0, 20.0, 3.0, 30.0]];
    /// let draws = Draws::new(&chains, 2).unwrap();
    /// assert_eq!(draws.parameter(1).unwrap(), vec![vec![10.0, 20.0, 30.0]]);
    /// ```
    pub fn new<C: AsRef<[f64]>>(chains: &'a [C], dim: usize) -> Result<Self> {
        if chains.is_empty() {
            return Err(Error::NoChains);
        }
        if dim == 0 {
            return Err(Error::invalid("dim", dim, "at least 1 parameter"));
        }
        let len = chains[0].as_ref().len();
        for (chain, c) in chains.iter().enumerate() {
            let found = c.as_ref().len();
            if found % dim != 0 {
                return Err(tallmc_core::Error::DimensionMismatch {
                    what: format!(
                        "chain {chain} (length {found} is not a multiple of dim = {dim})"
                    ),
                    expected: found.next_multiple_of(dim),
                    found,
                }
                .into());
            }
            if found != len {
                return Err(Error::UnequalChains {
                    chain,
                    expected: len / dim,
                    found: found / dim,
                });
            }
        }
        Ok(Self { chains: chains.iter().map(AsRef::as_ref).collect(), dim, n_draws: len / dim })
    }

    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.chains.len()
    }

    /// Draws per chain.
    pub fn n_draws(&self) -> usize {
        self.n_draws
    }

    /// Dimension d of the parameter.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The chains of parameter `j` (one `Vec` of `n_draws` values per chain), ready for the
    /// scalar diagnostics ([`ess_bulk`](crate::ess_bulk), [`rhat`](crate::rhat()), …).
    ///
    /// # Errors
    /// `j ≥ dim`.
    pub fn parameter(&self, j: usize) -> Result<Vec<Vec<f64>>> {
        if j >= self.dim {
            return Err(Error::invalid("parameter index", j, "an index < dim"));
        }
        Ok(self
            .chains
            .iter()
            .map(|c| c.iter().skip(j).step_by(self.dim).copied().collect())
            .collect())
    }
}

/// Summary of one scalar parameter (serializes as a flat JSON object; NaN becomes `null`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Parameter name.
    pub name: String,
    /// Mean of all draws.
    pub mean: f64,
    /// Standard deviation of all draws (divisor S − 1).
    pub sd: f64,
    /// 5 % quantile (type 7, [`quantile`](crate::quantile)).
    pub q5: f64,
    /// Median (type 7).
    pub q50: f64,
    /// 95 % quantile (type 7).
    pub q95: f64,
    /// MCSE of the mean ([`mcse_mean`](crate::mcse_mean)).
    pub mcse_mean: f64,
    /// MCSE of the sd ([`mcse_sd`](crate::mcse_sd)).
    pub mcse_sd: f64,
    /// Bulk ESS ([`ess_bulk`](crate::ess_bulk)).
    pub ess_bulk: f64,
    /// Tail ESS ([`ess_tail`](crate::ess_tail)).
    pub ess_tail: f64,
    /// Rank-normalized split R̂ ([`rhat`](crate::rhat())); NaN for a single chain.
    pub rhat: f64,
}

impl Summary {
    /// Summarizes the chains of one scalar parameter. Every field equals the corresponding
    /// function of this crate on the same chains (and hence ArviZ's value).
    ///
    /// ArviZ's `summary` differs from its own `rhat` in one corner, which this follows `rhat`
    /// on: for chains of *odd* length, `summary` folds the tail around the median of all draws
    /// rather than of the split draws (which omit each chain's middle draw).
    ///
    /// # Errors
    /// No chains, unequal lengths, fewer than [`MIN_DRAWS`] draws per chain, a non-finite draw.
    ///
    /// # Example
    /// ```
    /// use tallmc_diagnostics::Summary;
    /// let a = [0.3, -1.2, 0.8, 0.1, -0.4, 1.5, -0.7, 0.2];
    /// let b = [0.5, 0.9, -0.3, -1.1, 0.6, 0.0, -0.2, 1.0];
    /// let s = Summary::from_chains("theta", &[&a[..], &b[..]]).unwrap();
    /// assert_eq!(s.name, "theta");
    /// assert!(s.q5 < s.q50 && s.q50 < s.q95);
    /// ```
    pub fn from_chains<C: AsRef<[f64]>>(name: &str, chains: &[C]) -> Result<Self> {
        let (m, _) = validate(chains, "summary", MIN_DRAWS)?;
        let x = Matrix::stack(chains);
        let sorted = x.sorted();
        let split = x.split();
        Ok(Self {
            name: name.to_owned(),
            mean: mean_unchecked(&x.data),
            sd: var_unchecked(&x.data, 1).sqrt(),
            q5: quantile_sorted(&sorted, 0.05),
            q50: quantile_sorted(&sorted, 0.5),
            q95: quantile_sorted(&sorted, 0.95),
            mcse_mean: mean_mcse(&x),
            mcse_sd: sd_mcse(&x),
            ess_bulk: ess_core(&split.z_scale()),
            ess_tail: tail_ess(&x, &sorted),
            rhat: if m < 2 { f64::NAN } else { rank_rhat_of_split(&split) },
        })
    }
}

/// Summaries of every parameter of `draws`, one per name, in order.
///
/// # Errors
/// `names.len() != draws.dim()`, or any error of [`Summary::from_chains`] (e.g. a NaN draw,
/// fewer than [`MIN_DRAWS`] draws).
///
/// # Example
/// ```
/// use tallmc_diagnostics::{Draws, summarize};
/// // Two chains, 6 draws each of (alpha, beta), row-major.
/// let chains = vec![
///     vec![0.1, 5.0, 0.3, 5.2, -0.2, 4.9, 0.0, 5.1, 0.2, 4.8, -0.1, 5.0],
///     vec![0.2, 5.1, -0.3, 4.9, 0.1, 5.3, 0.4, 5.0, -0.2, 4.7, 0.0, 5.2],
/// ];
/// let draws = Draws::new(&chains, 2).unwrap();
/// let table = summarize(&["alpha", "beta"], &draws).unwrap();
/// assert_eq!(table[1].name, "beta");
/// assert!((table[1].mean - 5.0).abs() < 0.1);
/// let json = serde_json::to_string(&table).unwrap();
/// assert!(json.starts_with("[{\"name\":\"alpha\""));
/// ```
pub fn summarize<S: AsRef<str>>(names: &[S], draws: &Draws<'_>) -> Result<Vec<Summary>> {
    if names.len() != draws.dim() {
        return Err(tallmc_core::Error::DimensionMismatch {
            what: "parameter names".to_owned(),
            expected: draws.dim(),
            found: names.len(),
        }
        .into());
    }
    names
        .iter()
        .enumerate()
        .map(|(j, name)| {
            Summary::from_chains(name.as_ref(), &draws.parameter(j)?).map_err(|e| {
                Error::InParameter { name: name.as_ref().to_owned(), source: Box::new(e) }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_errors() {
        let none: [Vec<f64>; 0] = [];
        assert_eq!(Draws::new(&none, 2).unwrap_err(), Error::NoChains);
        assert!(Draws::new(&[vec![1.0, 2.0, 3.0]], 2).is_err());
        assert!(Draws::new(&[vec![1.0, 2.0]], 0).is_err());
        assert!(matches!(
            Draws::new(&[vec![0.0; 8], vec![0.0; 6]], 2),
            Err(Error::UnequalChains { chain: 1, expected: 4, found: 3 })
        ));
        let chains = [vec![0.0; 8]];
        let d = Draws::new(&chains, 2).unwrap();
        assert!(summarize(&["a"], &d).is_err());
        assert!(d.parameter(2).is_err());
    }

    #[test]
    fn nan_draw_is_reported() {
        let chains = [vec![0.0, 1.0, 2.0, f64::NAN, 1.0, 0.5, 0.2, 0.3]];
        let d = Draws::new(&chains, 2).unwrap();
        let e = summarize(&["a", "b"], &d).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter b: non-finite draw NaN in chain 0 at draw 1: all draws must be finite"
        );
    }
}
