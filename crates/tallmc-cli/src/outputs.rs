//! What a discrete-time run hands to the summary: every chain's report and sinks, whatever the
//! kernel, with its tuning kept as CSV comment lines and as the typed value's JSON.

use anyhow::Result;
use serde::Serialize;
use tallmc_core::{Kernel, Tuning};
use tallmc_samplers::sink::{ColumnMemorySink, CsvSink, Tee};
use tallmc_samplers::{ChainOutput, Driver};

/// A kernel's adapted tuning as the CLI reports it: the CSV comment lines, and the typed value
/// serialized (`summary.json`'s `tuning`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AnyTuning {
    /// CmdStan-style comment lines (`Step size = …`, the metric, …).
    pub lines: Vec<String>,
    /// The kernel's tuning value as JSON.
    pub value: serde_json::Value,
}

impl AnyTuning {
    /// `tuning`'s lines and JSON form (`null` if it cannot be written as JSON).
    pub fn of<T: Tuning>(tuning: &T) -> Self {
        Self {
            lines: tuning.comment_lines(),
            value: serde_json::to_value(tuning).unwrap_or(serde_json::Value::Null),
        }
    }
}

impl Tuning for AnyTuning {
    fn comment_lines(&self) -> Vec<String> {
        self.lines.clone()
    }
}

/// One chain's sinks: numeric stat columns in memory, and the CSV file.
pub(crate) type Sinks = Tee<ColumnMemorySink, CsvSink>;

/// Every chain's output.
pub(crate) type Outputs = Vec<ChainOutput<Sinks, AnyTuning>>;

/// Runs chains of `kernel` with `driver` into `sinks`.
pub(crate) fn run_kernel<M, K>(
    driver: &Driver<'_>, model: &M, inits: &[Vec<f64>], kernel: &K, sinks: Vec<Sinks>,
) -> Result<Outputs>
where
    M: Sync + ?Sized,
    K: Kernel<M>,
{
    let out = driver.run(model, inits, kernel, sinks)?;
    Ok(out.into_iter().map(|o| o.map(|s| s, |t| AnyTuning::of(&t))).collect())
}
