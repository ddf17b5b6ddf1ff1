//! Where a discrete-time run's draws go: every chain into memory (the summary and the caller's
//! arrays are made from there) and, when the run has an output directory, into its CSV file;
//! every kernel's tuning kept as CSV comment lines and as the typed value's JSON.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context as _, Result};
use serde::Serialize;
use tallmc_core::{Kernel, StepStats, Tuning};
use tallmc_samplers::sink::{
    ABANDONED_FOOTER, ChainFooter, ChainHeader, ColumnMemorySink, CsvSink, DrawRecord, DrawSink,
    RowFileHandle, Tee,
};
use tallmc_samplers::{ChainOutput, Driver};

/// A kernel's adapted tuning as a run reports it: the CSV comment lines, and the typed value
/// serialized (`summary.json`'s `tuning`).
#[derive(Debug, Clone, Serialize)]
pub struct AnyTuning {
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

/// A chain's CSV file when the run writes files, nothing otherwise.
#[derive(Debug, Default)]
pub struct MaybeCsv(pub Option<CsvSink>);

impl MaybeCsv {
    /// `chain_{k}.csv` in `dir` (k = `chain` + 1), or nothing without a directory.
    pub(crate) fn for_chain(dir: Option<&Path>, chain: usize) -> Result<Self> {
        let Some(dir) = dir else { return Ok(Self(None)) };
        let path = chain_path(dir, chain);
        let csv =
            CsvSink::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        register_open_file(csv.handle());
        Ok(Self(Some(csv)))
    }
}

/// The files of the run in progress, which [`abandon_open_files`] can close from another
/// thread (the command's handler of a second Ctrl-C).
static OPEN_FILES: Mutex<Vec<RowFileHandle>> = Mutex::new(Vec::new());

/// Registers a file of the run in progress.
pub(crate) fn register_open_file(handle: RowFileHandle) {
    if let Ok(mut files) = OPEN_FILES.lock() {
        files.push(handle);
    }
}

/// Forgets the files of a run that has ended.
pub(crate) fn forget_open_files() {
    if let Ok(mut files) = OPEN_FILES.lock() {
        files.clear();
    }
}

/// Ends every file of the run in progress now, from any thread: the whole rows written so far
/// reach the disk, then a footer comment saying the run was stopped at once; later writes of
/// the chains are ignored. For a process about to exit (a second Ctrl-C): its files stay
/// readable, row by row. Errors are ignored (there is nobody left to tell).
pub fn abandon_open_files() {
    let files = match OPEN_FILES.lock() {
        Ok(files) => files.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for file in files {
        let _ = file.abandon(ABANDONED_FOOTER);
    }
}

/// `chain_{chain + 1}.csv` in `dir`.
pub(crate) fn chain_path(dir: &Path, chain: usize) -> PathBuf {
    dir.join(format!("chain_{}.csv", chain + 1))
}

impl<S: StepStats> DrawSink<S> for MaybeCsv {
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()> {
        self.0.as_mut().map_or(Ok(()), |s| DrawSink::<S>::begin(s, header))
    }

    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        self.0.as_mut().map_or(Ok(()), |s| DrawSink::<S>::end_warmup(s, tuning))
    }

    fn record(&mut self, draw: &DrawRecord<'_, S>) -> io::Result<()> {
        self.0.as_mut().map_or(Ok(()), |s| s.record(draw))
    }

    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()> {
        self.0.as_mut().map_or(Ok(()), |s| DrawSink::<S>::finish(s, footer))
    }

    fn path(&self) -> Option<&Path> {
        self.0.as_ref().and_then(|s| DrawSink::<S>::path(s))
    }
}

/// One chain's sinks: numeric stat columns in memory, and the CSV file if there is one.
pub type Sinks = Tee<ColumnMemorySink, MaybeCsv>;

/// The sinks of `chains` chains, writing into `dir` if given.
pub(crate) fn sinks(chains: usize, dir: Option<&Path>) -> Result<Vec<Sinks>> {
    (0..chains).map(|k| Ok(Tee(ColumnMemorySink::new(), MaybeCsv::for_chain(dir, k)?))).collect()
}

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
