//! Running piecewise-deterministic kernels for the suite, and what every part reads from a run:
//! pooled time averages, totals, cost per unit time, mean segment length, grid draws, ACFs and
//! quantiles.

use std::io;
use std::sync::Arc;

use tallmc_core::{EventTotals, PdmpKernel, Segment, SegmentStats};
use tallmc_diagnostics::continuous::{
    ContinuousEstimate, ContinuousSummary, QuadratureConfig, TimeAverageConfig, pooled_estimate,
    summarize_continuous,
};
use tallmc_samplers::GridStats;
use tallmc_samplers::continuous::{
    ContinuousChainOutput, ContinuousDriver, ContinuousRunConfig, GridDraws, MemorySkeleton,
    PROGRESS_TICKS, PdmpTuningOf, SegmentFooter, SegmentHeader, SegmentSink, TimeAverageSink,
};
use tallmc_samplers::sink::{MemorySink, Tee};

use super::linalg::project;
use crate::{Reporter, Result};

/// A shared, thread-safe f: ℝ^d → ℝ.
pub type ScalarFn = Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;

/// A test function f: ℝ^d → ℝ to time-average along every chain by quadrature.
#[derive(Clone)]
pub struct TestFunction {
    /// Name (key of [`PdmpRun::function`]).
    pub name: String,
    /// f.
    pub f: ScalarFn,
    /// Nodes and longest sub-interval of the quadrature.
    pub quadrature: QuadratureConfig,
}

impl std::fmt::Debug for TestFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestFunction")
            .field("name", &self.name)
            .field("quadrature", &self.quadrature)
            .finish()
    }
}

impl TestFunction {
    /// The test function `f` named `name`, integrated with `quadrature`.
    pub fn new(
        name: impl Into<String>, f: impl Fn(&[f64]) -> f64 + Send + Sync + 'static,
        quadrature: QuadratureConfig,
    ) -> Self {
        Self { name: name.into(), f: Arc::new(f), quadrature }
    }
}

/// What a run keeps of every chain besides the time averages of x.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Grid draws every Δ (`None`: none).
    pub grid_step: Option<f64>,
    /// Keep the skeleton (velocity changes) in memory.
    pub skeleton: bool,
    /// Test functions to time-average.
    pub functions: Vec<TestFunction>,
}

/// One chain's sinks: exact time averages (with the test functions), and optionally the
/// skeleton and grid draws.
#[derive(Debug)]
pub struct RunSink {
    /// Time averages of x and of the test functions.
    pub averages: TimeAverageSink,
    /// The skeleton, if kept.
    pub skeleton: Option<MemorySkeleton>,
    /// Grid draws, if asked.
    pub grid: Option<GridDraws<MemorySink<GridStats>>>,
}

impl RunSink {
    fn new(options: &RunOptions) -> Result<Self> {
        let mut averages = TimeAverageSink::new(TimeAverageConfig::default())?;
        for t in &options.functions {
            let f = Arc::clone(&t.f);
            averages =
                averages.with_function(t.name.clone(), move |x: &[f64]| f(x), t.quadrature)?;
        }
        let grid = match options.grid_step {
            Some(step) => Some(GridDraws::new(MemorySink::new(), step)?),
            None => None,
        };
        Ok(Self { averages, skeleton: options.skeleton.then(MemorySkeleton::new), grid })
    }

    /// The grid draws (`None` without a grid).
    pub fn draws(&self) -> Option<&MemorySink<GridStats>> {
        self.grid.as_ref().map(GridDraws::inner)
    }

    /// The three sinks as one: every call goes to the averages, then the skeleton, then the grid.
    fn tee(&mut self) -> impl SegmentSink + '_ {
        Tee(&mut self.averages, Tee(&mut self.skeleton, &mut self.grid))
    }
}

impl SegmentSink for RunSink {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        self.tee().begin(header)
    }
    fn segment(&mut self, segment: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        self.tee().segment(segment, stats)
    }
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.tee().finish(footer)
    }
}

/// The ratio `a / b` of two ESS rates, each `(rate, B)` with `B` the number of batches of its
/// batch-means variance, and the standard error of the ratio's logarithm: a batch-means
/// variance from `B` batches has relative variance ≈ 2/(B − 1) (B < 2 counts as 2), so
/// se(log(a / b)) ≈ √(2/(B_a − 1) + 2/(B_b − 1)).
pub fn ess_rate_ratio(a: (f64, usize), b: (f64, usize)) -> (f64, f64) {
    let v = |batches: usize| 2.0 / (batches.max(2) - 1) as f64;
    (a.0 / b.0, (v(a.1) + v(b.1)).sqrt())
}

/// A finished continuous-time run: every chain's sinks and typed tuning `T`, and the pooled
/// per-coordinate summaries of the exact time averages.
#[derive(Debug)]
pub struct PdmpRun<T> {
    /// The chains.
    pub chains: Vec<ContinuousChainOutput<RunSink, T>>,
    /// Pooled time averages per coordinate (mean, sd, batch-means MCSE, ESS).
    pub summaries: Vec<ContinuousSummary>,
}

impl<T> PdmpRun<T> {
    /// Sampling totals over chains (evaluations, segments, proposals, bounces, violations).
    pub fn totals(&self) -> EventTotals {
        let mut t = EventTotals::default();
        for c in &self.chains {
            t += c.report.sampling;
        }
        t
    }

    /// Sampled trajectory time over chains.
    pub fn time(&self) -> f64 {
        self.chains.iter().map(|c| c.report.sampling_time).sum()
    }

    /// Per-datum evaluations (all kinds) per unit of trajectory time, while sampling.
    pub fn evals_per_time(&self) -> f64 {
        self.totals().evals.total() as f64 / self.time()
    }

    /// The average segment length b: trajectory time per segment, i.e. per kernel step (for
    /// SBPS a step ends at a second-stage proposal, a refreshment or the band's horizon; with
    /// unit-speed velocities this is the distance travelled per segment).
    pub fn mean_segment(&self) -> f64 {
        self.time() / self.totals().segments as f64
    }

    /// Trajectory time per velocity change (bounce, refreshment or divergence).
    pub fn mean_event_spacing(&self) -> f64 {
        self.time() / self.totals().events() as f64
    }

    /// Sampling epochs over chains: per-datum gradient evaluations / `n` (N, the data size).
    pub fn epochs(&self, n: usize) -> f64 {
        self.totals().evals.gradients as f64 / n as f64
    }

    /// Epochs per unit of trajectory time (`n` = N).
    pub fn epochs_per_time(&self, n: usize) -> f64 {
        self.epochs(n) / self.time()
    }

    /// Bound violations per second-stage proposal.
    pub fn violation_rate(&self) -> f64 {
        self.totals().violation_rate()
    }

    /// The grid draws of chain `k` projected on the unit direction `u` through `c`.
    pub fn grid_projection(&self, k: usize, c: &[f64], u: &[f64]) -> Vec<f64> {
        match self.chains.get(k).and_then(|ch| ch.sink.draws()) {
            Some(d) => (0..d.num_draws()).map(|i| project(d.draw(i), c, u)).collect(),
            None => Vec::new(),
        }
    }

    /// Coordinate `j` of every chain's grid draws, chains concatenated.
    pub fn grid_coordinate(&self, j: usize) -> Vec<f64> {
        self.chains.iter().filter_map(|ch| ch.sink.draws()).flat_map(|d| d.coordinate(j)).collect()
    }

    /// The pooled time average of the test function `name` over chains, with its MCSE.
    pub fn function(&self, name: &str) -> Option<ContinuousEstimate> {
        let avgs: Option<Vec<_>> =
            self.chains.iter().map(|c| c.sink.averages.function(name)).collect();
        pooled_estimate(&avgs?).ok()
    }

    /// The time average of the test function `name` along chain `k` alone, with its MCSE.
    pub fn chain_function(&self, k: usize, name: &str) -> Option<ContinuousEstimate> {
        self.chains.get(k)?.sink.averages.function(name)?.estimate().ok()
    }
}

/// Runs the chains `kernel` builds on `model` with `config`, every chain into a [`RunSink`]
/// built from `options`, with a progress bar labelled `label`.
pub fn run_pdmp<M, K>(
    model: &M, config: ContinuousRunConfig, inits: &[Vec<f64>], kernel: &K, options: &RunOptions,
    reporter: &dyn Reporter, label: &str,
) -> Result<PdmpRun<PdmpTuningOf<K, M>>>
where
    M: Sync + ?Sized,
    K: PdmpKernel<M>,
{
    let sinks =
        (0..config.num_chains).map(|_| RunSink::new(options)).collect::<Result<Vec<_>>>()?;
    let phases = if config.warmup.is_zero() { 1 } else { 2 };
    let task = reporter.task(label, (config.num_chains * phases * PROGRESS_TICKS) as u64);
    let chains = ContinuousDriver::new(config).progress(&*task).run(model, inits, kernel, sinks)?;
    drop(task);
    let avgs = chains
        .iter()
        .map(|c| c.sink.averages.averages().ok_or(tallmc_diagnostics::Error::NoChains))
        .collect::<tallmc_diagnostics::Result<Vec<_>>>()?;
    let names = chains.first().map_or(&[][..], |c| c.sink.averages.parameter_names());
    let summaries = summarize_continuous(names, &avgs)?;
    Ok(PdmpRun { chains, summaries })
}

/// The autocorrelations of `x` at lags 0 ..= `max_lag` (fewer if `x` is short).
pub fn acf(x: &[f64], max_lag: usize) -> Vec<f64> {
    match tallmc_diagnostics::autocorr(x) {
        Ok(mut r) => {
            r.truncate(max_lag + 1);
            r
        }
        Err(_) => Vec::new(),
    }
}

/// The sample quantiles of `x` at `probs` (linear interpolation between order statistics,
/// type 7).
pub fn quantiles(x: &[f64], probs: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return vec![f64::NAN; probs.len()];
    }
    probs
        .iter()
        .map(|&p| {
            let h = (s.len() - 1) as f64 * p.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(s.len() - 1);
            s[lo] + (h - lo as f64) * (s[hi] - s[lo])
        })
        .collect()
}

/// The standard normal quantile Φ⁻¹(p) = −√2 erfc⁻¹(2p).
pub fn normal_quantile(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p)
}

/// Mean and standard error (sd/√n) of `x`.
pub fn mean_se(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, (v / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_normal_quantiles() {
        let q = quantiles(&[3.0, 1.0, 2.0, 4.0], &[0.0, 0.5, 1.0]);
        assert_eq!(q, [1.0, 2.5, 4.0]);
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!(normal_quantile(0.5).abs() < 1e-15);
        let (m, se) = mean_se(&[1.0, 2.0, 3.0]);
        assert!((m - 2.0).abs() < 1e-15 && (se - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
    }
}
