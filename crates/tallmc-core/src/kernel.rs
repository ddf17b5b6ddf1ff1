//! The kernel trait: one Markov transition, with typed per-step statistics.

use std::fmt::Debug;

use rand::Rng;
use serde::Serialize;

use crate::{EvalCounts, Result};

/// Typed statistics of one kernel step.
///
/// Each kernel has its own struct; the trait gives the driver and the sinks what every kernel
/// reports: evaluation counts (the cost), an acceptance statistic, a divergence flag and the
/// batch of data used. The CSV columns are the struct's own fields, read through its
/// `Serialize` definition by [`StatColumns`](crate::columns::StatColumns) (`accept_stat__`,
/// `n_terms__`, ...); `Default` gives the value the column names are read from before the
/// first step.
pub trait StepStats: Clone + Default + Send + Serialize {
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

    /// Whether the step stopped at its trajectory-length limit rather than by its own
    /// criterion (NUTS at `max_depth`: CmdStan's "hit the maximum treedepth"). Such steps are
    /// valid but inefficient. `false` for kernels without such a limit.
    fn hit_length_limit(&self) -> bool {
        false
    }
}

/// A kernel's adapted tuning (step size, metric, scale, θ*, subsample size, ...): a typed value
/// that run reports carry and `summary.json` serializes as it is.
pub trait Tuning: Clone + Debug + Send + Serialize {
    /// CmdStan-style comment lines for the CSV files (without the leading `#`), written after
    /// warmup. The default writes one `key = value` line per field of the JSON form.
    fn comment_lines(&self) -> Vec<String> {
        key_value_lines(self).unwrap_or_default()
    }
}

/// The tuning of a kernel that adapts nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NoTuning;

impl Tuning for NoTuning {
    fn comment_lines(&self) -> Vec<String> {
        Vec::new()
    }
}

/// `key = value` lines of a value's fields, through the flat column reader: numbers only.
fn key_value_lines<T: Serialize + ?Sized>(value: &T) -> Option<Vec<String>> {
    let names = crate::columns::StatColumns::names(value).ok()?;
    let mut values = Vec::with_capacity(names.len());
    crate::columns::StatColumns::values(value, &mut values).ok()?;
    Some(
        names
            .iter()
            .zip(values)
            .map(|(n, v)| format!("{} = {v}", n.trim_end_matches("__").replace('_', " ")))
            .collect(),
    )
}

/// A Markov transition kernel, as its immutable, validated settings.
///
/// Settings are checked when the value is made (each kernel's `new`), so a `Kernel` is always
/// valid; [`Kernel::build_chain`] checks them against the model and builds a [`Chain`] at a
/// position. The chain owns its state and scratch buffers; there is no way to step a kernel
/// that was not built. One settings value builds every chain of a run (the driver shares it
/// between threads).
///
/// `M` is the model; an implementation states in its where-clause exactly what it needs from
/// the model (e.g. `M: TermGradients + LogPrior`).
pub trait Kernel<M: ?Sized>: Sync {
    /// The running chain these settings build.
    type Chain: Chain<M>;

    /// Builds a chain at `position`, validating its length and finiteness, the settings'
    /// dimensions against the model, and that the log density is finite there.
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain>;
}

/// One running Markov chain: state, scratch and tuning of a built [`Kernel`].
///
/// The driver calls [`Chain::begin_warmup`] once, then for every warmup iteration
/// [`Chain::step`] followed by [`Chain::adapt`], then [`Chain::end_warmup`], then `step` for
/// every draw. Chains without adaptation keep the provided no-op hooks. `step` allocates
/// nothing; the random number generator is always borrowed.
pub trait Chain<M: ?Sized>: Send {
    /// The typed per-step statistics.
    type Stats: StepStats;
    /// The typed adapted tuning.
    type Tuning: Tuning;

    /// Current position θ.
    fn position(&self) -> &[f64];

    /// The chain's current value of the log target at θ (the log posterior for exact kernels,
    /// the kernel's estimate of it for subsampling kernels): CmdStan's `lp__` column.
    fn log_density(&self) -> f64;

    /// Makes one transition. Numerical trouble inside the step is reported as a divergence in
    /// the stats; an `Err` means the run cannot continue.
    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<Self::Stats>;

    /// Called once before the first warmup step with the number of warmup iterations.
    fn begin_warmup(&mut self, num_warmup: usize) {
        let _ = num_warmup;
    }

    /// Called after every warmup step: adapt tuning parameters. May re-evaluate cached
    /// quantities and draw random numbers.
    fn adapt<R: Rng + ?Sized>(
        &mut self, model: &M, stats: &Self::Stats, rng: &mut R,
    ) -> Result<()> {
        let _ = (model, stats, rng);
        Ok(())
    }

    /// Called once after the last warmup step: fix the tuning parameters for sampling.
    fn end_warmup(&mut self) {}

    /// The current (after warmup: the adapted) tuning.
    fn tuning(&self) -> Self::Tuning;
}
