//! CmdStan's CSV layout ([`CsvSink`]).
//!
//! ```text
//! # key = value              configuration comments (model, sampler, num_warmup, seed, ...)
//! lp__,accept_stat__,...,n_gradients__,theta.1,...,theta.d
//! [warmup draws, if saved]
//! # Adaptation terminated
//! # Step size = 0.51
//! # Diagonal elements of inverse mass matrix:
//! # 0.9, 1.1, ...
//! draws...
//! #
//! #  Elapsed Time: 1.2 seconds (Warm-up)
//! #                3.4 seconds (Sampling)
//! #                4.6 seconds (Total)
//! ```
//!
//! Numbers are written with Rust's shortest round-trip formatting, so parsing them gives back
//! the exact f64.

use std::io;
use std::path::{Path, PathBuf};

use tallmc_core::{StatColumns, StepStats};

use super::row_file::{RowFile, RowFileHandle, RowTarget};
use super::{ChainFooter, ChainHeader, DrawRecord, DrawSink};

/// Writes one chain to a CSV file in CmdStan's layout (readable by `arviz.from_cmdstan`):
///
/// ```text
/// # key = value              configuration comments (model, sampler, num_warmup, seed, ...)
/// lp__,accept_stat__,...,n_gradients__,theta.1,...,theta.d
/// [warmup draws, if saved]
/// # Adaptation terminated
/// # Step size = 0.51
/// # Diagonal elements of inverse mass matrix:
/// # 0.9, 1.1, ...
/// draws...
/// #
/// #  Elapsed Time: 1.2 seconds (Warm-up)
/// #                3.4 seconds (Sampling)
/// #                4.6 seconds (Total)
/// ```
///
/// Numbers are written with Rust's shortest round-trip formatting, so parsing them gives back
/// the exact f64.
///
/// # What the file holds
///
/// The file is written through a [`RowFile`] (see [its guarantees](super::row_file)):
///
/// * after a normal run, or a run stopped by the driver's stop flag (a first Ctrl-C), the
///   layout above in full, the footer included;
/// * after a run killed at any moment (SIGKILL), whole lines — the rows made up to about
///   [`WRITE_INTERVAL`](super::WRITE_INTERVAL) (0.25 s) before the kill — and no footer; a
///   kill that lands during a write can add one unterminated fragment of a line at the end
///   (readers drop a last line without its newline);
/// * after a write error (a full disk), the file cut back to its last whole line, nothing
///   written after it, and an error naming the file: `cannot write runs/h/chain_2.csv (No space
///   left on device); the file was cut back to its last whole row (1,234 rows)`;
/// * after [`CsvSink::handle`]`().`[`abandon`](RowFileHandle::abandon)`(footer)` from another
///   thread (a second Ctrl-C), the whole rows made so far, then the footer's comment lines,
///   nothing after them.
#[derive(Debug)]
pub struct CsvSink {
    path: PathBuf,
    file: RowFileHandle,
    values: Vec<f64>,
}

impl CsvSink {
    /// Creates (truncates) the file.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = RowFile::create(&path)?;
        Ok(Self::from_row_file(file))
    }

    /// Writes to `target` (an empty file or stream), naming it `path` in error messages; for
    /// tests with a target that fails on purpose, and for files opened by the caller.
    pub fn with_target(target: impl RowTarget + 'static, path: impl Into<PathBuf>) -> Self {
        Self::from_row_file(RowFile::with_target(target, path))
    }

    fn from_row_file(file: RowFile) -> Self {
        Self { path: file.path().to_path_buf(), file: RowFileHandle::new(file), values: Vec::new() }
    }

    /// A handle to the file, to [abandon](RowFileHandle::abandon) it from another thread (a
    /// second Ctrl-C): the buffered rows and a footer are written, and this sink's later
    /// writes are ignored.
    pub fn handle(&self) -> RowFileHandle {
        self.file.clone()
    }
}

/// A CSV header line: the `fixed` column names, then every name of each group with the
/// group's prefix (`("v.", names)` gives `v.x1,v.x2,…`).
pub(crate) fn csv_header(fixed: &[&str], groups: &[(&str, &[String])]) -> String {
    let mut columns: Vec<String> = fixed.iter().map(|c| (*c).to_string()).collect();
    for (prefix, names) in groups {
        columns.extend(names.iter().map(|n| format!("{prefix}{n}")));
    }
    columns.join(",")
}

/// Appends `x` in shortest round-trip form (`nan`, `inf`, `-inf` for non-finite values): how
/// every CSV file of tallmc writes a number, so that parsing it gives back the exact f64.
pub fn push_number(line: &mut String, x: f64) {
    use std::fmt::Write as _;
    if x.is_nan() {
        line.push_str("nan");
    } else if x.is_infinite() {
        line.push_str(if x > 0.0 { "inf" } else { "-inf" });
    } else {
        let _ = write!(line, "{x}");
    }
}

impl<S: StepStats> DrawSink<S> for CsvSink {
    fn begin(&mut self, h: &ChainHeader<'_>) -> io::Result<()> {
        let mut f = self.file.lock();
        f.line_fmt(format_args!("# tallmc {}", env!("CARGO_PKG_VERSION")))?;
        f.line("# method = sample (Default)")?;
        f.line_fmt(format_args!("#   num_samples = {}", h.num_draws))?;
        f.line_fmt(format_args!("#   num_warmup = {}", h.num_warmup))?;
        f.line_fmt(format_args!("#   save_warmup = {}", u8::from(h.save_warmup)))?;
        f.line("#   thin = 1 (Default)")?;
        f.line_fmt(format_args!("# id = {}", h.chain + 1))?;
        f.line_fmt(format_args!("# seed = {}", h.seed))?;
        for (k, v) in h.config {
            f.line_fmt(format_args!("# {k} = {v}"))?;
        }
        f.line(&csv_header(&["lp__"], &[("", h.stat_columns), ("", h.parameter_names)]))
    }

    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        let mut f = self.file.lock();
        f.line("# Adaptation terminated")?;
        for l in tuning {
            f.line_fmt(format_args!("# {l}"))?;
        }
        Ok(())
    }

    fn record(&mut self, d: &DrawRecord<'_, S>) -> io::Result<()> {
        self.values.clear();
        StatColumns::values(d.stats, &mut self.values)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let values = &self.values;
        self.file.lock().row_with(|line| {
            push_number(line, d.log_density);
            for &x in values.iter().chain(d.position) {
                line.push(',');
                push_number(line, x);
            }
        })
    }

    fn finish(&mut self, f: &ChainFooter) -> io::Result<()> {
        let mut o = self.file.lock();
        o.line("# ")?;
        o.line_fmt(format_args!("#  Elapsed Time: {:.6} seconds (Warm-up)", f.warmup_seconds))?;
        o.line_fmt(format_args!("#                {:.6} seconds (Sampling)", f.sampling_seconds))?;
        o.line_fmt(format_args!(
            "#                {:.6} seconds (Total)",
            f.warmup_seconds + f.sampling_seconds
        ))?;
        o.line("# ")?;
        o.line_fmt(format_args!(
            "# per-datum evaluations (warmup): terms = {}, gradients = {}, hessians = {}",
            f.warmup_evals.terms, f.warmup_evals.gradients, f.warmup_evals.hessians
        ))?;
        o.line_fmt(format_args!(
            "# per-datum evaluations (sampling): terms = {}, gradients = {}, hessians = {}",
            f.sampling_evals.terms, f.sampling_evals.gradients, f.sampling_evals.hessians
        ))?;
        o.finish()
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}
