//! Data: the [`Dataset`] (n rows of p covariates plus a response), its loaders (CSV and the
//! memory-mapped binary format), and the [`DesignMatrix`] view the regression models read.
//!
//! The file formats are specified in `docs/data-format.md`; in short:
//!
//! * **CSV** ([`read_csv`], [`write_csv`]): a header line, a response column (`y` by default),
//!   every other column a covariate, in order; [`CsvRowReader`] reads the same format in chunks
//!   of rows, in memory that does not grow with the file;
//! * **binary** ([`read_binary`], [`write_binary`]): `name.bin` holds X (row-major, n × d) then y
//!   as little-endian f64 with no header bytes; `name.json` beside it holds `n`, `d`, `dtype`,
//!   `endianness`, `x_offset_bytes`, `y_offset_bytes` and optional extra fields. The `.bin` file
//!   is memory-mapped, never copied. [`BinaryWriter`] writes the format chunk by chunk without
//!   knowing n in advance (the header last).
//!
//! * **NumPy** ([`read_npy`]): X (n × p) and y (n) as two `.npy` files of float64 in C order,
//!   as `np.save` writes them; both are memory-mapped.
//!
//! [`load`] dispatches on the extension.
//!
//! [`diagnose_design`] finds the columns of a design whose coefficients the data cannot
//! identify (constant, collinear, separating columns), and [`separates`] checks a θ for
//! perfect separation.

mod binary;
mod column_moments;
mod csv;
mod design;
mod design_stats;
pub mod diagnostics;
mod npy;
mod shared;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{Map, Value};
use tallmc_core::ShardLayout;

use crate::error::{Error, Result, RowLocation};

pub use binary::{BinaryWriter, read_binary, write_binary};
pub use column_moments::{ColumnMoments, column_deviations, column_sums, means_from_shard_sums};
pub use csv::{CsvRowReader, read_csv, write_csv};
pub use design::{
    AffineRows, DesignMatrix, DesignOptions, INTERCEPT_NAME, PlainRows, RowView, Rows,
};
pub(crate) use design::{dot4, prefetch_line, with_rows};
pub use design_stats::DesignBounds;
pub use diagnostics::{
    DEFAULT_COLLINEARITY_TOLERANCE, DesignFinding, DesignRanges, GramPlan, design_gram,
    diagnose_design, findings_from, gram_from_partials, separates,
};
pub use npy::read_npy;
pub use shared::SharedF64;

/// Rows per chunk of the deterministic parallel passes over a data set (validation, column
/// statistics): the chunking depends only on n, so results never depend on the thread count.
pub(crate) const PASS_CHUNK_ROWS: usize = 8192;

/// Where a data set's numbers live.
enum Storage {
    /// Owned vectors: X row-major (n × p), y (n).
    Owned { x: Vec<f64>, y: Vec<f64> },
    /// Read-only numbers owned elsewhere: a memory-mapped file (binary format, `.npy`) or a
    /// caller's buffer (a NumPy array), checked at construction to be aligned and in bounds.
    Shared { x: SharedF64, y: SharedF64 },
}

/// n observations: a response y_i and p covariates x_i (row-major f64), with column names.
///
/// The numbers are either owned vectors or a read-only memory map of a binary file (see
/// [`read_binary`]); either way they are exposed as `&[f64]` slices, so a 10⁹-row file is never
/// copied. **A memory-mapped data set requires that the file is not modified or truncated while
/// the `Dataset` (or any model built on it) is alive**; doing so is undefined behaviour at the
/// operating-system level (tallmc never writes to a file it has mapped).
///
/// Every constructor checks that all values are finite and n ≥ 1.
pub struct Dataset {
    n: usize,
    p: usize,
    names: Vec<String>,
    storage: Storage,
    source: Option<PathBuf>,
    /// The file of the responses, when it is not `source` (`.npy` data: X and y in two files).
    response_source: Option<PathBuf>,
    /// The lines of a text file the rows were read from (CSV), for messages.
    lines: Option<RowLines>,
    metadata: Map<String, Value>,
    /// How the rows are cut into shards (a Parquet directory's files), when they are.
    shards: Option<ShardLayout>,
}

/// The 1-based line of every row of a data set read from a text file, stored sparsely: one
/// `(first row, its line)` pair per run of rows on consecutive lines, so a file without blank
/// lines costs one pair and the map never grows with n unless the file has that many gaps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RowLines {
    runs: Vec<(usize, usize)>,
}

impl RowLines {
    /// Records that row `row` is on line `line` (rows are pushed in order, lines increasing).
    pub(crate) fn push(&mut self, row: usize, line: usize) {
        match self.runs.last() {
            Some(&(r, l)) if line - l == row - r => {}
            _ => self.runs.push((row, line)),
        }
    }

    /// The line of `row`, if a row at or before it was recorded.
    fn line(&self, row: usize) -> Option<usize> {
        let k = self.runs.partition_point(|&(r, _)| r <= row);
        let (r, l) = *self.runs.get(k.checked_sub(1)?)?;
        Some(l + (row - r))
    }
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("n", &self.n)
            .field("p", &self.p)
            .field("names", &self.names)
            .field("memory_mapped", &self.is_memory_mapped())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Dataset {
    /// A data set from row-major covariates `x` (n × p, p = `names.len()`) and responses `y`
    /// (n). Errors when n = 0, when the lengths disagree, when a name is repeated or not a
    /// valid column name of a CSV header (empty, `y`, with a comma, quote, control character
    /// or surrounding spaces, or ending in `__`: the rules of `docs/data-format.md`), or when a
    /// value is NaN or infinite.
    pub fn new(x: Vec<f64>, y: Vec<f64>, names: Vec<String>) -> Result<Self> {
        let n = y.len();
        let p = names.len();
        check_shape(n, x.len(), &names)?;
        let ds = Self {
            n,
            p,
            names,
            storage: Storage::Owned { x, y },
            source: None,
            response_source: None,
            lines: None,
            metadata: Map::new(),
            shards: None,
        };
        ds.check_finite()?;
        Ok(ds)
    }

    /// Like [`Dataset::new`] with covariate names `x0`, `x1`, …, `x{p−1}`.
    pub fn with_default_names(x: Vec<f64>, y: Vec<f64>, p: usize) -> Result<Self> {
        Self::new(x, y, default_names(p))
    }

    /// A data set with a response only (p = 0 covariates), as the Gaussian models use.
    pub fn from_response(y: Vec<f64>) -> Result<Self> {
        Self::new(Vec::new(), y, Vec::new())
    }

    /// A data set read in place from numbers it does not own: row-major covariates `x`
    /// (n × p, p = `names.len()`) and responses `y` (n), e.g. memory maps or NumPy arrays
    /// ([`SharedF64`]); `source` names the file for error messages. Nothing is copied. Errors
    /// as [`Dataset::new`]; the finiteness pass (one parallel pass over the numbers) runs only
    /// with `check_finite`.
    pub fn from_shared(
        x: SharedF64, y: SharedF64, names: Vec<String>, source: Option<PathBuf>, check_finite: bool,
    ) -> Result<Self> {
        let (n, p) = (y.len(), names.len());
        check_shape(n, x.len(), &names)?;
        let storage = Storage::Shared { x, y };
        let ds = Self {
            n,
            p,
            names,
            storage,
            source,
            response_source: None,
            lines: None,
            metadata: Map::new(),
            shards: None,
        };
        if check_finite {
            ds.check_finite()?;
        }
        Ok(ds)
    }

    /// The data set without covariate column `name`, and that column's values: how a column
    /// becomes a model's offset or exposure rather than a covariate. Copies the covariates once
    /// (n × (p − 1) numbers, also for memory-mapped data); keeps the source, the rows' lines and
    /// the metadata, so messages still name the file and line.
    ///
    /// Errors: no covariate named `name` (the message lists the columns).
    pub fn split_off_column(&self, name: &str) -> Result<(Dataset, Vec<f64>)> {
        let Some(j) = self.names.iter().position(|c| c == name) else {
            return Err(Error::invalid(
                "column",
                name,
                format!("one of the data's covariate columns ({})", self.names.join(", ")),
            ));
        };
        let (n, p) = (self.n, self.p);
        let x = self.x();
        let mut column = Vec::with_capacity(n);
        let mut rest = Vec::with_capacity(n * (p - 1));
        for i in 0..n {
            let row = &x[i * p..(i + 1) * p];
            column.push(row[j]);
            rest.extend_from_slice(&row[..j]);
            rest.extend_from_slice(&row[j + 1..]);
        }
        let mut names = self.names.clone();
        names.remove(j);
        let data = Self {
            n,
            p: p - 1,
            names,
            storage: Storage::Owned { x: rest, y: self.y().to_vec() },
            source: self.source.clone(),
            response_source: self.response_source.clone(),
            lines: self.lines.clone(),
            metadata: self.metadata.clone(),
            shards: self.shards.clone(),
        };
        Ok((data, column))
    }

    /// The data set with the covariate columns `names` only, in that order: how a run chooses
    /// its covariates by name (`--columns`). Copies the covariates once (n × k numbers, also
    /// for memory-mapped data); keeps the responses, the source, the rows' lines and the
    /// metadata, so messages still name the file and line.
    ///
    /// Errors: an empty list, a name that is not a covariate column (the message lists the
    /// columns), a name given twice.
    pub fn select_covariates(&self, names: &[String]) -> Result<Dataset> {
        if names.is_empty() {
            return Err(Error::invalid(
                "columns",
                "an empty list",
                "at least one covariate column",
            ));
        }
        let mut picks = Vec::with_capacity(names.len());
        for (k, name) in names.iter().enumerate() {
            let Some(j) = self.names.iter().position(|c| c == name) else {
                return Err(Error::invalid(
                    "column",
                    name,
                    format!("one of the data's covariate columns ({})", self.names.join(", ")),
                ));
            };
            if names[..k].contains(name) {
                return Err(Error::invalid("columns", names.join(","), "each column once"));
            }
            picks.push(j);
        }
        let (n, p) = (self.n, self.p);
        let x = self.x();
        let mut chosen = Vec::with_capacity(n * picks.len());
        for i in 0..n {
            let row = &x[i * p..(i + 1) * p];
            chosen.extend(picks.iter().map(|&j| row[j]));
        }
        Ok(Self {
            n,
            p: picks.len(),
            names: names.to_vec(),
            storage: Storage::Owned { x: chosen, y: self.y().to_vec() },
            source: self.source.clone(),
            response_source: self.response_source.clone(),
            lines: self.lines.clone(),
            metadata: self.metadata.clone(),
            shards: self.shards.clone(),
        })
    }

    /// The same data set, its rows cut into shards of `lengths` rows in order (the files of a
    /// Parquet directory): full-data passes over a model of it reduce shard by shard
    /// (`tallmc_core::shards`), so that a shard reduced where it lives gives the same bits.
    /// Errors unless the lengths add up to n.
    pub fn with_shard_lengths(mut self, lengths: &[u64]) -> Result<Self> {
        let total: u64 = lengths.iter().sum();
        if total != self.n as u64 {
            return Err(Error::invalid(
                "shard lengths",
                format!("{lengths:?} (adding up to {total})"),
                format!("lengths adding up to the {} rows", self.n),
            ));
        }
        let layout = ShardLayout::from_lengths(lengths)
            .map_err(|e| Error::invalid("shard lengths", format!("{lengths:?}"), e.to_string()))?;
        self.shards = Some(layout);
        Ok(self)
    }

    /// The rows' shards, when the data set has them ([`Dataset::with_shard_lengths`]).
    pub fn shard_layout(&self) -> Option<&ShardLayout> {
        self.shards.as_ref()
    }

    /// Number of observations n.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always `false`: a data set has at least one row.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of covariates p (columns of X, not counting y).
    pub fn num_covariates(&self) -> usize {
        self.p
    }

    /// Covariates, row-major n × p: `x()[i * p + j]` is x_ij.
    pub fn x(&self) -> &[f64] {
        match &self.storage {
            Storage::Owned { x, .. } => x,
            Storage::Shared { x, .. } => x.as_slice(),
        }
    }

    /// Responses y_0, …, y_{n−1}.
    pub fn y(&self) -> &[f64] {
        match &self.storage {
            Storage::Owned { y, .. } => y,
            Storage::Shared { y, .. } => y.as_slice(),
        }
    }

    /// Row i of X (p values).
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x()[i * self.p..(i + 1) * self.p]
    }

    /// Covariate names, one per column of X.
    pub fn covariate_names(&self) -> &[String] {
        &self.names
    }

    /// Whether the numbers are a memory map of a file (rather than owned vectors or a
    /// caller's buffer).
    pub fn is_memory_mapped(&self) -> bool {
        matches!(&self.storage, Storage::Shared { y, .. } if y.is_memory_mapped())
    }

    /// Sets the extra metadata fields (the binary reader keeps its header's extras here).
    pub(crate) fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = metadata;
        self
    }

    /// The file the data came from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The 1-based line of the file that holds row `row` (0-based), for data read from CSV
    /// (the header is line 1; blank lines the reader skipped are counted); `None` for binary,
    /// `.npy` and in-memory data, and for a row ≥ n.
    pub fn line_of_row(&self, row: usize) -> Option<usize> {
        if row >= self.n {
            return None;
        }
        self.lines.as_ref().and_then(|l| l.line(row))
    }

    /// Where row `row` (0-based) is, for messages: the file, the row and, for CSV data, the
    /// line (see [`RowLocation`]).
    pub fn location(&self, row: usize) -> RowLocation {
        RowLocation { source: self.source.clone(), row, line: self.line_of_row(row) }
    }

    /// The file of the responses: [`Dataset::source`], except for `.npy` data, whose responses
    /// have their own file.
    pub fn response_source(&self) -> Option<&Path> {
        self.response_source.as_deref().or(self.source())
    }

    /// Where the response of row `row` is, for messages: like [`Dataset::location`], with the
    /// responses' file ([`Dataset::response_source`]).
    pub fn response_location(&self, row: usize) -> RowLocation {
        RowLocation {
            source: self.response_source().map(Path::to_path_buf),
            row,
            line: self.line_of_row(row),
        }
    }

    /// Sets the responses' file (for `.npy` data).
    pub(crate) fn with_response_source(mut self, path: PathBuf) -> Self {
        self.response_source = Some(path);
        self
    }

    /// Extra fields kept from a binary header (e.g. `theta_true`, `seed`) or set by a
    /// synthetic generator; written back by [`write_binary`].
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// Sets an extra metadata field (see [`Dataset::metadata`]).
    pub fn set_metadata(&mut self, key: impl Into<String>, value: Value) {
        self.metadata.insert(key.into(), value);
    }

    /// Smallest and largest response, (min_i y_i, max_i y_i). Cost: one pass over y.
    pub fn response_range(&self) -> (f64, f64) {
        self.y()
            .par_chunks(PASS_CHUNK_ROWS)
            .map(|c| {
                c.iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)))
            })
            .reduce(|| (f64::INFINITY, f64::NEG_INFINITY), |a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// A name for error messages: the file, or `in-memory data`.
    pub(crate) fn source_name(&self) -> String {
        display_source(self.source())
    }

    /// A name for error messages about responses: their file, or `in-memory data`.
    pub(crate) fn response_source_name(&self) -> String {
        display_source(self.response_source())
    }

    /// Checks that every value is finite; the error names the first bad row and its column.
    /// Cost: one parallel pass over the data.
    pub(crate) fn check_finite(&self) -> Result<()> {
        let p = self.p;
        if p > 0 {
            let bad = self.x().par_chunks(PASS_CHUNK_ROWS * p).enumerate().find_map_first(
                |(c, chunk)| {
                    chunk
                        .iter()
                        .position(|v| !v.is_finite())
                        .map(|k| (c * PASS_CHUNK_ROWS + k / p, k % p, chunk[k]))
                },
            );
            if let Some((row, col, value)) = bad {
                return Err(Error::NonFinite {
                    source_name: self.source_name(),
                    row,
                    column: self.names[col].clone(),
                    value,
                });
            }
        }
        let bad = self.y().par_chunks(PASS_CHUNK_ROWS).enumerate().find_map_first(|(c, chunk)| {
            chunk.iter().position(|v| !v.is_finite()).map(|k| (c * PASS_CHUNK_ROWS + k, chunk[k]))
        });
        if let Some((row, value)) = bad {
            return Err(Error::NonFinite {
                source_name: self.response_source_name(),
                row,
                column: "y".to_string(),
                value,
            });
        }
        Ok(())
    }
}

/// `path`, or `in-memory data`.
fn display_source(path: Option<&Path>) -> String {
    path.map_or_else(|| "in-memory data".to_string(), |p| p.display().to_string())
}

/// The checks every constructor makes: n ≥ 1 rows, `x_len` = n × p numbers (p =
/// `names.len()`), and valid, unique covariate names.
fn check_shape(n: usize, x_len: usize, names: &[String]) -> Result<()> {
    let p = names.len();
    if n == 0 {
        return Err(Error::invalid("number of observations", 0, "at least one row"));
    }
    if x_len != n * p {
        return Err(tallmc_core::Error::DimensionMismatch {
            what: format!("covariates (n × p = {n} × {p}, row-major)"),
            expected: n * p,
            found: x_len,
        }
        .into());
    }
    check_names(names)
}

/// `x0`, …, `x{p−1}`: the covariate names of a binary file whose header names none (the
/// names the peer scripts' CSV header uses).
pub fn default_names(p: usize) -> Vec<String> {
    (0..p).map(|j| format!("x{j}")).collect()
}

/// What a covariate name must be, for messages.
pub(crate) const NAME_RULES: &str = "a non-empty name other than `y`, without commas, quotes, control characters (line breaks, tabs) or surrounding spaces, not ending in `__`";

/// Why `name` cannot be a covariate name, or `None` when it can.
///
/// Covariate names become parameter names and so column names of the CmdStan-style CSV files
/// of draws (`lp__,accept_stat__,…,intercept,age,…`) and of data (`y,age,…`), written without
/// quoting. So a name must not contain a comma or a double quote (they would split or quote
/// the header), nor a control character such as a line break or tab (it would end or garble
/// the line); it must not start or end with spaces (the CSV reader trims them, so the name
/// would not survive a round trip); it must not be `y` (the response's column in the data
/// files tallmc writes), and it must not end in `__` (CmdStan's suffix of the sampler's own
/// columns, `lp__`, `treedepth__`, …).
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("the name is empty")
    } else if name == "y" {
        Some("`y` is the response's column in the data files tallmc writes")
    } else if name.contains(',') {
        Some("a comma would split the CSV header")
    } else if name.contains('"') {
        Some("a quote would garble the CSV header")
    } else if name.chars().any(char::is_control) {
        Some("a control character (line break, tab, …) would garble the CSV header")
    } else if name.trim() != name {
        Some("surrounding spaces are trimmed when a CSV header is read")
    } else if name.ends_with("__") {
        Some("names ending in `__` are the sampler's columns in CmdStan-style output (`lp__`, …)")
    } else {
        None
    }
}

/// Checks that covariate names are valid ([`name_problem`]) and unique.
fn check_names(names: &[String]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for name in names {
        if let Some(why) = name_problem(name) {
            return Err(Error::invalid(
                "covariate name",
                format!("`{}` ({why})", name.escape_debug()),
                NAME_RULES,
            ));
        }
        if !seen.insert(name.as_str()) {
            return Err(Error::invalid("covariate name", format!("`{name}`"), "unique names"));
        }
    }
    Ok(())
}

/// How [`load`] reads a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// Name of the response column of a CSV file (default `y`).
    pub response: String,
    /// Whether to check a binary file for NaN / infinite values (one parallel pass over the
    /// map; default `true`). CSV values are always checked while parsing.
    pub check_finite: bool,
    /// The `.npy` file of the responses y, when the data file is a `.npy` covariate matrix X
    /// (required then; ignored for other formats).
    pub npy_response: Option<PathBuf>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self { response: "y".to_string(), check_finite: true, npy_response: None }
    }
}

impl LoadOptions {
    /// Sets the response column name of CSV files.
    pub fn with_response(mut self, response: impl Into<String>) -> Self {
        self.response = response.into();
        self
    }

    /// Sets the `.npy` file of the responses, for a `.npy` covariate file.
    pub fn with_npy_response(mut self, path: impl Into<PathBuf>) -> Self {
        self.npy_response = Some(path.into());
        self
    }

    /// Turns the finiteness pass over binary files on or off.
    pub fn with_check_finite(mut self, check: bool) -> Self {
        self.check_finite = check;
        self
    }
}

/// Loads a data set, choosing the reader by extension: `.csv` → [`read_csv`]; `.bin` or
/// `.json` → [`read_binary`] (memory-mapped); `.npy` → [`read_npy`] with the responses' file
/// [`LoadOptions::npy_response`] (both memory-mapped).
pub fn load(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Dataset> {
    let path = path.as_ref();
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("csv") => read_csv(path, &options.response),
        Some("bin") | Some("json") => read_binary(path, options.check_finite),
        Some("npy") => match &options.npy_response {
            Some(y) => read_npy(path, y, options.check_finite),
            None => Err(Error::binary(
                path,
                "a .npy file holds the covariates X only; the responses y need their own .npy file (--y-npy FILE on the command line, LoadOptions::with_npy_response in Rust)",
            )),
        },
        _ => Err(Error::UnknownFormat { path: path.to_path_buf() }),
    }
}

/// Errors when a model over `n` terms could not address them all with `u32` indices.
pub(crate) fn check_indexable(n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::invalid(
            "number of observations",
            n,
            format!("at most {} (terms are addressed by u32 indices)", u32::MAX),
        ));
    }
    Ok(())
}

/// Sum of `values` in a fixed chunked order (the same bits for any thread count).
pub(crate) fn deterministic_sum(values: &[f64]) -> f64 {
    let partials: Vec<f64> = values.par_chunks(PASS_CHUNK_ROWS).map(|c| c.iter().sum()).collect();
    partials.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_lines_map_rows_across_gaps() {
        let mut l = RowLines::default();
        // Rows 0-2 on lines 2-4, a blank line 5, rows 3-4 on lines 6-7, two blanks, row 5 on 10.
        for (row, line) in [(0, 2), (1, 3), (2, 4), (3, 6), (4, 7), (5, 10)] {
            l.push(row, line);
        }
        assert_eq!(l.runs, [(0, 2), (3, 6), (5, 10)]);
        let lines: Vec<_> = (0..6).map(|r| l.line(r)).collect();
        assert_eq!(lines, [2, 3, 4, 6, 7, 10].map(Some));
        assert_eq!(RowLines::default().line(0), None);
    }

    #[test]
    fn names_that_would_break_a_csv_header_are_rejected() {
        for bad in ["", "y", "a,b", "a\"b", "a\nb", "a\tb", " a", "a ", "lp__", "x__"] {
            let why = name_problem(bad);
            assert!(why.is_some(), "{bad:?}");
            let err = check_names(&[bad.to_string()]).unwrap_err().to_string();
            assert!(err.contains("covariate name") && err.contains(why.unwrap()), "{err}");
        }
        for good in ["x0", "age", "income (USD)", "âge", "a b", "_x", "x_", "intercept"] {
            assert_eq!(name_problem(good), None, "{good:?}");
        }
        let err = check_names(&["a".into(), "a".into()]).unwrap_err().to_string();
        assert!(err.contains("unique"), "{err}");
    }

    #[test]
    fn locations_of_in_memory_data_have_no_line() {
        let ds = Dataset::with_default_names(vec![1.0, 2.0], vec![0.0, 1.0], 1).unwrap();
        assert_eq!(ds.line_of_row(1), None);
        assert_eq!(ds.location(1).to_string(), "in-memory data, row 1 (0-based)");
    }
}
