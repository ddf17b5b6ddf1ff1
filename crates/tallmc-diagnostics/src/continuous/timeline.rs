//! Where a trajectory stands: the segments added so far, their total time and the batch bins,
//! shared by every time-average accumulator ([`TimeAverages`](super::TimeAverages),
//! [`TestFunctionAverage`](super::TestFunctionAverage)).

use super::bins::{BatchConfig, TimeBins};
use crate::error::{Error, Result};

/// The clock of one trajectory: its dimension d, the segments added, their total time T and
/// the time bins of `k` integrals. Segments are consecutive: segment n starts at Σ_{m<n} τ_m.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    dim: usize,
    time: f64,
    segments: u64,
    bins: TimeBins,
}

impl Timeline {
    /// An empty trajectory of dimension `dim` with bins for `k` integrals.
    ///
    /// # Errors
    /// `dim` = 0, or an invalid [`BatchConfig`].
    pub(crate) fn new(dim: usize, k: usize, batches: &BatchConfig) -> Result<Self> {
        if dim == 0 {
            return Err(Error::invalid("dim", dim, "at least 1 coordinate"));
        }
        batches.validate()?;
        Ok(Self { dim, time: 0.0, segments: 0, bins: TimeBins::new(k, batches) })
    }

    /// Checks the next segment: lengths = d, finite coordinates, a finite duration ≥ 0.
    pub(crate) fn check(&self, position: &[f64], velocity: &[f64], duration: f64) -> Result<()> {
        let (dim, n) = (self.dim, self.segments);
        for (what, v) in [("segment position", position), ("segment velocity", velocity)] {
            if v.len() != dim {
                return Err(tallmc_core::Error::DimensionMismatch {
                    what: format!("{what} (segment {n})"),
                    expected: dim,
                    found: v.len(),
                }
                .into());
            }
            if let Some(j) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::invalid(
                    what,
                    format!("{} at coordinate {j} of segment {n}", v[j]),
                    "finite numbers",
                ));
            }
        }
        if !(duration.is_finite() && duration >= 0.0) {
            return Err(Error::invalid(
                "segment duration",
                format!("{duration} (segment {n})"),
                "a finite number >= 0",
            ));
        }
        Ok(())
    }

    /// Appends a (checked) segment of duration `tau`: `piece(a, h, bin)` adds the integrals of
    /// each part [a, a + h] of it (segment-local times) between bin edges into `bin`.
    pub(crate) fn advance(&mut self, tau: f64, piece: impl FnMut(f64, f64, &mut [f64])) {
        self.bins.add(self.time, tau, piece);
        self.time += tau;
        self.segments += 1;
    }

    /// Dimension d.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// Total time T = Σ τ.
    pub(crate) fn time(&self) -> f64 {
        self.time
    }

    /// Segments added.
    pub(crate) fn segments(&self) -> u64 {
        self.segments
    }

    /// The time bins.
    pub(crate) fn bins(&self) -> &TimeBins {
        &self.bins
    }
}
