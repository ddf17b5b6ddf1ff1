//! Exact first and second moments of a piecewise-linear trajectory.

use serde::{Deserialize, Serialize};
use tallmc_core::Segment;

use super::bins::{BatchConfig, TimeBins, mcse_from, weighted_squares};
use super::timeline::Timeline;
use crate::error::Result;

/// Options of [`TimeAverages`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeAverageConfig {
    /// How time is cut into batches for the MCSE.
    pub batches: BatchConfig,
    /// Also accumulate the d × d cross moments ∫ x_j x_k dt (O(d²) per segment instead of
    /// O(d)), for [`TimeAverages::covariance`]. Default off.
    pub cross_moments: bool,
}

/// Exact time averages of a piecewise-linear trajectory: ∫ x dt, ∫ x² dt (and optionally
/// ∫ x xᵀ dt) over the segments fed to it, with time bins for the batch-means MCSE of the
/// mean. See the [module docs](super) for the formulas.
///
/// Segments are taken as consecutive pieces of one trajectory: the accumulator uses their
/// positions, velocities and durations, and places segment n at time Σ_{m<n} τ_m (their own
/// `start_time` is not read). To keep the second moments accurate when |mean| ≫ sd, every
/// integral is taken about the first segment's start position c (∫ (x − c) dt, …); the
/// results are shifted back.
///
/// Cost per segment: O(d) (O(d²) with cross moments) plus O(d) per bin edge crossed.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeAverages {
    /// Segments, time and the bins of ∫ (x − c) dt.
    timeline: Timeline,
    cross: bool,
    center: Option<Vec<f64>>,
    /// ∫ (x − c) dt.
    first: Vec<f64>,
    /// ∫ (x − c)² dt.
    second: Vec<f64>,
    /// ∫ (x − c)(x − c)ᵀ dt, upper triangle used (row-major d × d), when `cross`.
    cross_sums: Vec<f64>,
    /// Scratch: the centred start position of the current segment.
    y: Vec<f64>,
}

impl TimeAverages {
    /// An empty accumulator for a `dim`-dimensional trajectory.
    ///
    /// # Errors
    /// `dim` = 0, or an invalid [`BatchConfig`].
    pub fn new(dim: usize, config: TimeAverageConfig) -> Result<Self> {
        Ok(Self {
            timeline: Timeline::new(dim, dim, &config.batches)?,
            cross: config.cross_moments,
            center: None,
            first: vec![0.0; dim],
            second: vec![0.0; dim],
            cross_sums: if config.cross_moments { vec![0.0; dim * dim] } else { Vec::new() },
            y: vec![0.0; dim],
        })
    }

    /// Adds the segment x(s) = `position` + s·`velocity`, 0 ≤ s ≤ `duration`, after the
    /// segments already added:
    ///
    /// ```text
    /// ∫ x_j = τ (x₀ⱼ + vⱼ τ/2),   ∫ x_j² = τ (x₀ⱼ² + x₀ⱼ vⱼ τ + vⱼ² τ²/3),
    /// ∫ x_j x_k = τ [x₀ⱼ x₀ₖ + (x₀ⱼ vₖ + x₀ₖ vⱼ) τ/2 + vⱼ vₖ τ²/3]
    /// ```
    ///
    /// (each about the centre c). A segment that crosses bin edges is split there exactly.
    ///
    /// # Errors
    /// Lengths ≠ d, a non-finite coordinate, a negative or non-finite duration. The
    /// accumulator is unchanged on error.
    pub fn add(&mut self, position: &[f64], velocity: &[f64], duration: f64) -> Result<()> {
        self.timeline.check(position, velocity, duration)?;
        let center = self.center.get_or_insert_with(|| position.to_vec());
        for ((y, x), c) in self.y.iter_mut().zip(position).zip(center.iter()) {
            *y = x - c;
        }
        let (tau, d) = (duration, self.dim());
        for j in 0..d {
            let (y, v) = (self.y[j], velocity[j]);
            self.first[j] += tau * (y + 0.5 * v * tau);
            self.second[j] += tau * (y * y + y * v * tau + v * v * tau * tau / 3.0);
        }
        if self.cross {
            for j in 0..d {
                let (yj, vj) = (self.y[j], velocity[j]);
                for k in j..d {
                    let (yk, vk) = (self.y[k], velocity[k]);
                    self.cross_sums[j * d + k] += tau
                        * (yj * yk + 0.5 * (yj * vk + yk * vj) * tau + vj * vk * tau * tau / 3.0);
                }
            }
        }
        let y = &self.y;
        self.timeline.advance(tau, |a, h, bin| {
            for ((b, &yj), &vj) in bin.iter_mut().zip(y).zip(velocity) {
                *b += h * (yj + vj * (a + 0.5 * h));
            }
        });
        Ok(())
    }

    /// [`TimeAverages::add`] for a [`Segment`] (its `start_time` is not read).
    pub fn add_segment(&mut self, segment: &Segment<'_>) -> Result<()> {
        self.add(segment.position, segment.velocity, segment.duration)
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.timeline.dim()
    }

    /// Total time T = Σ τ.
    pub fn total_time(&self) -> f64 {
        self.timeline.time()
    }

    /// Segments added.
    pub fn segments(&self) -> u64 {
        self.timeline.segments()
    }

    /// Number of batches B the MCSE uses now (see [`BatchConfig`]).
    pub fn num_batches(&self) -> usize {
        self.bins().len()
    }

    /// Current batch length w.
    pub fn batch_length(&self) -> f64 {
        self.bins().width()
    }

    /// Whether cross moments are accumulated.
    pub fn has_cross_moments(&self) -> bool {
        self.cross
    }

    /// ∫_0^T x_j dt for every j.
    pub fn integrals(&self) -> Vec<f64> {
        let t = self.total_time();
        (0..self.dim()).map(|j| self.first[j] + self.center_of(j) * t).collect()
    }

    /// The time average (1/T) ∫ x dt (NaN when T = 0).
    pub fn mean(&self) -> Vec<f64> {
        let t = self.total_time();
        (0..self.dim()).map(|j| self.center_of(j) + self.first[j] / t).collect()
    }

    /// The time variance (1/T) ∫ x_j² dt − mean_j² per coordinate (computed about the centre c,
    /// clamped at 0; NaN when T = 0).
    pub fn variance(&self) -> Vec<f64> {
        let t = self.total_time();
        (0..self.dim())
            .map(|j| {
                let m = self.first[j] / t;
                (self.second[j] / t - m * m).max(0.0)
            })
            .collect()
    }

    /// The time covariance matrix (1/T) ∫ x xᵀ dt − mean meanᵀ, row-major d × d.
    ///
    /// # Errors
    /// Cross moments were not asked for ([`TimeAverageConfig::cross_moments`]).
    pub fn covariance(&self) -> Result<Vec<f64>> {
        super::summary::pooled_covariance(&[self])
    }

    /// The batch-means MCSE of each coordinate's mean (NaN when B < 2).
    pub fn mcse_mean(&self) -> Vec<f64> {
        let t = self.total_time();
        (0..self.dim())
            .map(|j| {
                let mu = self.first[j] / t;
                let (ss, b) = weighted_squares(self.bins(), t, j, mu);
                mcse_from(ss, b, t)
            })
            .collect()
    }

    /// Per-coordinate summaries of this chain alone ([`summarize_continuous`] with one chain).
    ///
    /// [`summarize_continuous`]: super::summarize_continuous
    pub fn summary<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<super::ContinuousSummary>> {
        super::summarize_continuous(names, &[self])
    }

    pub(crate) fn center_of(&self, j: usize) -> f64 {
        self.center.as_ref().map_or(0.0, |c| c[j])
    }

    pub(crate) fn centered_first(&self) -> &[f64] {
        &self.first
    }

    pub(crate) fn centered_second(&self) -> &[f64] {
        &self.second
    }

    /// Centred cross sums (upper triangle filled), empty without cross moments.
    pub(crate) fn centered_cross(&self) -> &[f64] {
        &self.cross_sums
    }

    pub(crate) fn bins(&self) -> &TimeBins {
        self.timeline.bins()
    }
}
