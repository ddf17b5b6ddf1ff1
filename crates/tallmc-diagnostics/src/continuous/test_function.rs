//! Time averages of a user test function by composite Gauss–Legendre quadrature.

use serde::{Deserialize, Serialize};
use tallmc_core::Segment;

use super::bins::{BatchConfig, TimeBins};
use super::timeline::Timeline;
use crate::error::{Error, Result};
use crate::quadrature::GaussLegendre;

/// How [`TestFunctionAverage`] integrates f along a segment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuadratureConfig {
    /// Gauss–Legendre nodes n per sub-interval, in 1..=128: exact when f∘x(t) is a polynomial
    /// of degree ≤ 2n − 1 in t (e.g. f a polynomial of that degree in x). Default 5 (degree 9).
    pub nodes: usize,
    /// Longest sub-interval h > 0 (trajectory time): a segment piece of length ℓ is split into
    /// ⌈ℓ/h⌉ equal sub-intervals. Default ∞ (one sub-interval per piece: segments are split
    /// only at batch edges). For a smooth non-polynomial f choose h small against the time the
    /// particle needs to cross the scale on which f varies (e.g. posterior sd / speed); the
    /// error per unit time is O(h^{2n}).
    pub max_step: f64,
}

impl Default for QuadratureConfig {
    fn default() -> Self {
        Self { nodes: 5, max_step: f64::INFINITY }
    }
}

impl QuadratureConfig {
    /// Checks `nodes` (1..=128) and `max_step` (> 0; infinity allowed).
    pub fn validate(&self) -> Result<()> {
        GaussLegendre::new(self.nodes)?;
        if self.max_step.is_nan() || self.max_step <= 0.0 {
            return Err(Error::invalid(
                "max_step",
                self.max_step,
                "a number > 0 (infinity: no splitting)",
            ));
        }
        Ok(())
    }
}

/// The time average (1/T) ∫_0^T f(x(t)) dt of a test function f: ℝ^d → ℝ along a
/// piecewise-linear trajectory, by composite Gauss–Legendre quadrature on every segment
/// ([`QuadratureConfig`]), with the same time bins and batch-means MCSE as
/// [`TimeAverages`](super::TimeAverages).
///
/// Segments are consecutive pieces of one trajectory (their `start_time` is not read). Cost per
/// segment: n evaluations of f per sub-interval, at least one sub-interval per batch crossed.
///
/// ```
/// use tallmc_diagnostics::continuous::{BatchConfig, QuadratureConfig, TestFunctionAverage};
/// // f(x) = x₀² x₁ along x(t) = (t, 1 − t), t ∈ [0, 1]: ∫ t²(1 − t) dt = 1/12.
/// let mut avg = TestFunctionAverage::new(
///     2, |x: &[f64]| x[0] * x[0] * x[1], QuadratureConfig::default(), BatchConfig::default(),
/// ).unwrap();
/// avg.add(&[0.0, 1.0], &[1.0, -1.0], 1.0).unwrap();
/// assert!((avg.mean() - 1.0 / 12.0).abs() < 1e-15);
/// ```
#[derive(Clone)]
pub struct TestFunctionAverage<F> {
    f: F,
    rule: GaussLegendre,
    max_step: f64,
    timeline: Timeline,
    integral: f64,
    x: Vec<f64>,
}

impl<F> std::fmt::Debug for TestFunctionAverage<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestFunctionAverage")
            .field("nodes", &self.rule.len())
            .field("max_step", &self.max_step)
            .field("dim", &self.timeline.dim())
            .field("time", &self.timeline.time())
            .field("segments", &self.timeline.segments())
            .field("integral", &self.integral)
            .field("batches", &self.timeline.bins().len())
            .finish_non_exhaustive()
    }
}

impl<F: FnMut(&[f64]) -> f64> TestFunctionAverage<F> {
    /// An empty accumulator of f over a `dim`-dimensional trajectory.
    ///
    /// # Errors
    /// `dim` = 0, `nodes` outside 1..=128, `max_step` not > 0 (NaN included), an invalid
    /// [`BatchConfig`].
    pub fn new(
        dim: usize, f: F, quadrature: QuadratureConfig, batches: BatchConfig,
    ) -> Result<Self> {
        let timeline = Timeline::new(dim, 1, &batches)?;
        quadrature.validate()?;
        Ok(Self {
            f,
            rule: GaussLegendre::new(quadrature.nodes)?,
            max_step: quadrature.max_step,
            timeline,
            integral: 0.0,
            x: vec![0.0; dim],
        })
    }

    /// Adds the segment x(s) = `position` + s·`velocity`, 0 ≤ s ≤ `duration`, after the
    /// segments already added: ∫_0^τ f(x(s)) ds by the composite rule on each part of the
    /// segment between batch edges.
    ///
    /// # Errors
    /// Lengths ≠ d, a non-finite coordinate, a negative or non-finite duration (accumulator
    /// unchanged), or f non-finite somewhere on the segment (then the accumulator holds a
    /// non-finite integral and every later estimate is NaN or infinite).
    pub fn add(&mut self, position: &[f64], velocity: &[f64], duration: f64) -> Result<()> {
        self.timeline.check(position, velocity, duration)?;
        let Self { f, rule, max_step, x, timeline, .. } = &mut *self;
        let mut seg_integral = 0.0;
        timeline.advance(duration, |a, h, bin| {
            let piece = rule.integrate_composite(a, a + h, *max_step, |s| {
                for ((xi, p), v) in x.iter_mut().zip(position).zip(velocity) {
                    *xi = p + s * v;
                }
                f(x)
            });
            bin[0] += piece;
            seg_integral += piece;
        });
        self.integral += seg_integral;
        if !seg_integral.is_finite() {
            return Err(Error::invalid(
                "test function integral",
                format!("{seg_integral} on segment {}", self.timeline.segments() - 1),
                "a finite number (f must be finite along the trajectory)",
            ));
        }
        Ok(())
    }

    /// [`TestFunctionAverage::add`] for a [`Segment`] (its `start_time` is not read).
    pub fn add_segment(&mut self, segment: &Segment<'_>) -> Result<()> {
        self.add(segment.position, segment.velocity, segment.duration)
    }
}

impl<F> TestFunctionAverage<F> {
    /// ∫_0^T f(x(t)) dt.
    pub fn integral(&self) -> f64 {
        self.integral
    }

    /// Total time T.
    pub fn total_time(&self) -> f64 {
        self.timeline.time()
    }

    /// Segments added.
    pub fn segments(&self) -> u64 {
        self.timeline.segments()
    }

    /// Number of batches B.
    pub fn num_batches(&self) -> usize {
        self.timeline.bins().len()
    }

    /// (1/T) ∫ f dt (NaN when T = 0).
    pub fn mean(&self) -> f64 {
        self.integral / self.timeline.time()
    }

    /// Batch-means MCSE of [`TestFunctionAverage::mean`] (NaN when B < 2).
    pub fn mcse(&self) -> f64 {
        super::summary::pooled_estimate(&[self]).map_or(f64::NAN, |e| e.mcse)
    }

    /// Mean, MCSE, time and batches of this chain ([`super::pooled_estimate`] with one chain).
    ///
    /// # Errors
    /// T = 0.
    pub fn estimate(&self) -> Result<super::ContinuousEstimate> {
        super::summary::pooled_estimate(&[self])
    }

    pub(crate) fn bins(&self) -> &TimeBins {
        self.timeline.bins()
    }
}
