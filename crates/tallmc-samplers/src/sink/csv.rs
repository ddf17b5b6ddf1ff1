//! CmdStan's CSV layout.
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

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tallmc_core::{StatColumns, StepStats};

use super::{ChainFooter, ChainHeader, DrawRecord, DrawSink};

/// Writes one chain to a CSV file in CmdStan's layout.
#[derive(Debug)]
pub struct CsvSink {
    path: PathBuf,
    out: BufWriter<File>,
    line: String,
    values: Vec<f64>,
}

impl CsvSink {
    /// Creates (truncates) the file.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let out = BufWriter::new(File::create(&path)?);
        Ok(Self { path, out, line: String::new(), values: Vec::new() })
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

/// Appends `x` in shortest round-trip form (`nan`, `inf`, `-inf` for non-finite values).
pub(crate) fn push_number(line: &mut String, x: f64) {
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
        writeln!(self.out, "# tallmc {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(self.out, "# method = sample (Default)")?;
        writeln!(self.out, "#   num_samples = {}", h.num_draws)?;
        writeln!(self.out, "#   num_warmup = {}", h.num_warmup)?;
        writeln!(self.out, "#   save_warmup = {}", u8::from(h.save_warmup))?;
        writeln!(self.out, "#   thin = 1 (Default)")?;
        writeln!(self.out, "# id = {}", h.chain + 1)?;
        writeln!(self.out, "# seed = {}", h.seed)?;
        for (k, v) in h.config {
            writeln!(self.out, "# {k} = {v}")?;
        }
        let header = csv_header(&["lp__"], &[("", h.stat_columns), ("", h.parameter_names)]);
        writeln!(self.out, "{header}")
    }

    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        writeln!(self.out, "# Adaptation terminated")?;
        for l in tuning {
            writeln!(self.out, "# {l}")?;
        }
        Ok(())
    }

    fn record(&mut self, d: &DrawRecord<'_, S>) -> io::Result<()> {
        self.values.clear();
        StatColumns::values(d.stats, &mut self.values)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        self.line.clear();
        push_number(&mut self.line, d.log_density);
        for &x in self.values.iter().chain(d.position) {
            self.line.push(',');
            push_number(&mut self.line, x);
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn finish(&mut self, f: &ChainFooter) -> io::Result<()> {
        writeln!(self.out, "# ")?;
        writeln!(self.out, "#  Elapsed Time: {:.6} seconds (Warm-up)", f.warmup_seconds)?;
        writeln!(self.out, "#                {:.6} seconds (Sampling)", f.sampling_seconds)?;
        writeln!(
            self.out,
            "#                {:.6} seconds (Total)",
            f.warmup_seconds + f.sampling_seconds
        )?;
        writeln!(self.out, "# ")?;
        writeln!(
            self.out,
            "# per-datum evaluations (warmup): terms = {}, gradients = {}, hessians = {}",
            f.warmup_evals.terms, f.warmup_evals.gradients, f.warmup_evals.hessians
        )?;
        writeln!(
            self.out,
            "# per-datum evaluations (sampling): terms = {}, gradients = {}, hessians = {}",
            f.sampling_evals.terms, f.sampling_evals.gradients, f.sampling_evals.hessians
        )?;
        self.out.flush()
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}
