//! The kernel trait: one Markov transition, with typed per-step statistics.

use rand::Rng;
use serde::Serialize;

use crate::{EvalCounts, Result};

/// The state of one chain: its position plus whatever the method carries (momentum, subsample,
/// velocity, cached log density and gradient, ...).
pub trait ChainState: Clone + Send {
    /// Current position θ.
    fn position(&self) -> &[f64];

    /// The kernel's current value of the log target at θ (the log posterior for exact kernels,
    /// the kernel's estimate of it for subsampling kernels). This is CmdStan's `lp__` column.
    fn log_density(&self) -> f64;
}

/// Typed statistics of one kernel step.
///
/// Each kernel has its own struct; the trait gives the driver and the sinks what every kernel
/// reports: evaluation counts (the cost), an acceptance statistic, a divergence flag and the
/// batch of data used, plus the CmdStan-style columns that go to CSV.
pub trait StepStats: Clone + Send + Serialize {
    /// Names of the per-step columns written to CSV, each ending in `__` as in CmdStan
    /// (e.g. `accept_stat__`, `n_terms__`), in the order of [`StepStats::write_columns`].
    const COLUMNS: &'static [&'static str];

    /// Writes this step's column values into `out` (length `COLUMNS.len()`).
    fn write_columns(&self, out: &mut [f64]);

    /// Per-datum evaluations this step made.
    fn evals(&self) -> EvalCounts;

    /// The acceptance statistic: the MH acceptance probability of the proposal (or 1/0 when a
    /// kernel makes a hard decision).
    fn accept_stat(&self) -> f64;

    /// Whether the step diverged (numerical trouble: a non-finite or huge energy error). A
    /// divergent step leaves the chain where it was.
    fn divergent(&self) -> bool;

    /// Number of data points the step looked at (N for full-data kernels).
    fn batch_size(&self) -> u64;
}

/// One Markov transition kernel.
///
/// `M` is the model; an implementation states in its where-clause exactly what it needs from the
/// model (e.g. `M: TermGradients + LogPrior`). Scratch buffers belong to the kernel, built once,
/// so that [`Kernel::step`] allocates nothing. The random number generator is always borrowed.
///
/// The driver calls [`Kernel::begin_warmup`] once, then for every warmup iteration
/// [`Kernel::step`] followed by [`Kernel::adapt`], then [`Kernel::end_warmup`], then `step` for
/// every draw. Kernels without adaptation keep the provided no-op hooks.
pub trait Kernel<M: ?Sized> {
    /// The chain state this kernel moves.
    type State: ChainState;
    /// The typed per-step statistics this kernel reports.
    type Stats: StepStats;

    /// Builds the initial state at `position`, validating its length and finiteness and that the
    /// log density is finite there.
    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        rng: &mut R,
    ) -> Result<Self::State>;

    /// Makes one transition. Numerical trouble inside the step is reported as a divergence in
    /// the stats; an `Err` means the run cannot continue.
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut Self::State,
        rng: &mut R,
    ) -> Result<Self::Stats>;

    /// Called once before the first warmup step with the number of warmup iterations.
    fn begin_warmup(&mut self, num_warmup: usize) {
        let _ = num_warmup;
    }

    /// Called after every warmup step: adapt tuning parameters. May modify the state (e.g. to
    /// re-evaluate cached quantities after a re-centring) and draw random numbers (e.g. to
    /// re-initialize a step size).
    fn adapt<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut Self::State,
        stats: &Self::Stats,
        rng: &mut R,
    ) -> Result<()> {
        let _ = (model, state, stats, rng);
        Ok(())
    }

    /// Called once after the last warmup step: fix the tuning parameters for sampling.
    fn end_warmup(&mut self) {}

    /// Lines describing the adapted tuning (step size, mass matrix, ...) for the CSV comments,
    /// without the leading `#`.
    fn adaptation_report(&self) -> Vec<String> {
        Vec::new()
    }
}
