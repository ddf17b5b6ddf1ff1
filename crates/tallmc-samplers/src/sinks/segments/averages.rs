//! Exact time averages as a segment sink.

use std::io;

use tallmc_core::{Segment, SegmentStats};
use tallmc_diagnostics::continuous::{
    ContinuousSummary, QuadratureConfig, TestFunctionAverage, TimeAverageConfig, TimeAverages,
};

use super::{SegmentFooter, SegmentHeader, SegmentSink, data_error};

/// A boxed test function f: ℝ^d → ℝ, as [`TimeAverageSink::with_function`] stores it.
pub type TestFn = Box<dyn FnMut(&[f64]) -> f64 + Send>;

/// Accumulates the exact time averages of one chain's trajectory —
/// [`TimeAverages`] (mean, variance, optional covariance of x, batch-means MCSE) and any
/// number of named test functions by quadrature ([`TestFunctionAverage`]) — as segments
/// arrive. The accumulators are built in [`SegmentSink::begin`], when the dimension is known;
/// a sink serves one chain.
///
/// Cost per segment: O(d) (O(d²) with cross moments), plus the test functions' quadrature.
/// No allocation per segment.
pub struct TimeAverageSink {
    config: TimeAverageConfig,
    names: Vec<String>,
    averages: Option<TimeAverages>,
    pending: Vec<(String, QuadratureConfig, TestFn)>,
    functions: Vec<(String, TestFunctionAverage<TestFn>)>,
    footer: SegmentFooter,
}

impl std::fmt::Debug for TimeAverageSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeAverageSink")
            .field("config", &self.config)
            .field("names", &self.names)
            .field("averages", &self.averages)
            .field("functions", &self.functions)
            .finish_non_exhaustive()
    }
}

impl TimeAverageSink {
    /// A sink for the time averages of x with `config`.
    ///
    /// # Errors
    /// An invalid [`BatchConfig`](tallmc_diagnostics::continuous::BatchConfig).
    pub fn new(config: TimeAverageConfig) -> tallmc_diagnostics::Result<Self> {
        config.batches.validate()?;
        Ok(Self {
            config,
            names: Vec::new(),
            averages: None,
            pending: Vec::new(),
            functions: Vec::new(),
            footer: SegmentFooter::default(),
        })
    }

    /// Also averages the test function `f` (named `name`) by composite Gauss–Legendre
    /// quadrature with `quadrature`, with the same batches as the moments.
    ///
    /// # Errors
    /// An invalid [`QuadratureConfig`].
    pub fn with_function(
        mut self, name: impl Into<String>, f: impl FnMut(&[f64]) -> f64 + Send + 'static,
        quadrature: QuadratureConfig,
    ) -> tallmc_diagnostics::Result<Self> {
        quadrature.validate()?;
        self.pending.push((name.into(), quadrature, Box::new(f)));
        Ok(self)
    }

    /// The moments' accumulator (`None` before [`SegmentSink::begin`]).
    pub fn averages(&self) -> Option<&TimeAverages> {
        self.averages.as_ref()
    }

    /// The accumulator of the test function `name` (`None` if unknown or before `begin`).
    pub fn function(&self, name: &str) -> Option<&TestFunctionAverage<TestFn>> {
        self.functions.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// Names of the test functions, in the order they were added.
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        self.functions.iter().map(|(n, _)| n.as_str()).chain(self.pending.iter().map(|p| &*p.0))
    }

    /// Parameter names from the header.
    pub fn parameter_names(&self) -> &[String] {
        &self.names
    }

    /// Totals and timings of the chain (after `finish`).
    pub fn footer(&self) -> &SegmentFooter {
        &self.footer
    }

    /// Per-coordinate summaries of this chain (see
    /// [`summarize_continuous`](tallmc_diagnostics::summarize_continuous) to pool chains).
    ///
    /// # Errors
    /// Nothing was sampled yet (no `begin`, or total time 0).
    pub fn summary(&self) -> tallmc_diagnostics::Result<Vec<ContinuousSummary>> {
        match &self.averages {
            Some(a) => a.summary(&self.names),
            None => Err(tallmc_diagnostics::Error::NoChains),
        }
    }
}

impl SegmentSink for TimeAverageSink {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        let dim = header.parameter_names.len();
        self.names = header.parameter_names.to_vec();
        self.averages = Some(TimeAverages::new(dim, self.config).map_err(data_error)?);
        for (name, q, f) in self.pending.drain(..) {
            let avg =
                TestFunctionAverage::new(dim, f, q, self.config.batches).map_err(data_error)?;
            self.functions.push((name, avg));
        }
        Ok(())
    }

    fn segment(&mut self, segment: &Segment<'_>, _stats: &SegmentStats) -> io::Result<()> {
        let avg = self.averages.as_mut().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "TimeAverageSink: segment before begin")
        })?;
        avg.add_segment(segment).map_err(data_error)?;
        for (name, f) in &mut self.functions {
            f.add_segment(segment).map_err(|e| data_error(format!("test function {name}: {e}")))?;
        }
        Ok(())
    }

    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.footer = *footer;
        Ok(())
    }
}
