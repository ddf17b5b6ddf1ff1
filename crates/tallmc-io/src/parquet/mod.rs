//! Parquet data: one `.parquet` file, or a directory of them (the shards of a table, as Dask,
//! Spark, pyarrow and polars write them), read through the Apache Arrow crates.
//!
//! **Shards and their order.** A directory's shards are its `*.parquet` files and those of its
//! subdirectories, skipping names that start with `_` or `.` (`_metadata`, `_SUCCESS`, `.crc`
//! files), in *natural* order of their paths relative to the directory: runs of digits compare
//! as numbers, so `part.2.parquet` comes before `part.10.parquet` (Dask's and Spark's
//! partition order). Rows are numbered through the shards in that order; the data set is the
//! concatenation. Hive-style partition values in directory names (`year=2024/`) are not read
//! as columns.
//!
//! **Columns.** The response is the column named by [`ColumnSelection::response`] (`y` by
//! default). The covariates are [`ColumnSelection::covariates`] in the order given, or else
//! every other column that holds numbers, in the file's order; the columns left out for their
//! type (strings, dates, …) are listed by [`ParquetSource::skipped_columns`]. The column names
//! name the parameters. Every shard must hold the selected columns as numbers; their types may
//! differ between shards (float32 in one, float64 in another).
//!
//! **Values.** float64 as they are; float32, integers up to 32 bits and booleans (0, 1)
//! converted exactly; 64-bit integers too, and an error beyond ±2⁵³ (f64 would round them).
//! A null, NaN or ±∞ is an error naming the shard, the column and the row.

mod values;

use std::cmp::Ordering;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use tallmc_models::Dataset;

use crate::error::{Error, Result};
use values::{is_number, scatter};

/// Which columns are the response and the covariates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSelection {
    /// The response's column (default `y`).
    pub response: String,
    /// The covariates' columns, in this order; `None`: every other column holding numbers.
    pub covariates: Option<Vec<String>>,
}

impl Default for ColumnSelection {
    fn default() -> Self {
        Self { response: "y".to_string(), covariates: None }
    }
}

impl ColumnSelection {
    /// The response column `response`, covariates chosen by type.
    pub fn with_response(response: impl Into<String>) -> Self {
        Self { response: response.into(), covariates: None }
    }

    /// Sets the covariate columns.
    pub fn with_covariates(mut self, covariates: Vec<String>) -> Self {
        self.covariates = Some(covariates);
        self
    }

    /// Errors: an empty response name or covariate list, a column named twice, the response
    /// among the covariates.
    pub fn validate(&self) -> Result<()> {
        if self.response.is_empty() {
            return Err(Error::invalid("response column", "\"\"", "a column name"));
        }
        if let Some(cols) = &self.covariates {
            if cols.is_empty() {
                return Err(Error::invalid(
                    "covariate columns",
                    "an empty list",
                    "at least one column name",
                ));
            }
            for (k, c) in cols.iter().enumerate() {
                if c == &self.response {
                    return Err(Error::invalid(
                        "covariate columns",
                        cols.join(","),
                        format!("columns other than the response `{c}`"),
                    ));
                }
                if cols[..k].contains(c) {
                    return Err(Error::invalid(
                        "covariate columns",
                        cols.join(","),
                        format!("each column once (`{c}` is named twice)"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One shard of a Parquet source: its file and its number of rows (from the file's footer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParquetShard {
    /// The file.
    pub path: PathBuf,
    /// Its rows.
    pub rows: u64,
}

/// A column left out of the covariates because it does not hold numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedColumn {
    /// The column.
    pub name: String,
    /// Its Arrow type, as Arrow prints it (`Utf8`, `Date32`, …).
    pub data_type: String,
}

/// A Parquet file or directory of shards, opened: the shards with their row counts and the
/// selected columns, checked in every shard's footer (no data read yet). See the
/// [module docs](self) for the rules.
#[derive(Debug, Clone)]
pub struct ParquetSource {
    path: PathBuf,
    shards: Vec<ParquetShard>,
    response: String,
    covariates: Vec<String>,
    skipped: Vec<SkippedColumn>,
}

impl ParquetSource {
    /// Opens `path` (a `.parquet` file or a directory of shards) and checks `selection`
    /// against every shard's schema.
    ///
    /// Errors: no such file, a directory without Parquet files, an unreadable footer, a
    /// selected column missing from a shard or not holding numbers (naming the shard and
    /// listing its columns), a bad selection.
    pub fn open(path: impl AsRef<Path>, selection: &ColumnSelection) -> Result<Self> {
        selection.validate()?;
        let path = path.as_ref();
        let files = shard_files(path)?;
        let mut shards = Vec::with_capacity(files.len());
        let mut chosen: Option<(Vec<String>, Vec<SkippedColumn>)> = None;
        for file in files {
            let builder = open_builder(&file)?;
            let schema = builder.schema().clone();
            let rows = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
            let (covariates, _) =
                chosen.get_or_insert_with(|| choose_covariates(&schema, selection));
            check_column(&file, &schema, &selection.response, "the response")?;
            for c in covariates.iter() {
                check_column(&file, &schema, c, "a covariate")?;
            }
            shards.push(ParquetShard { path: file, rows });
        }
        let (covariates, skipped) = chosen.unwrap_or_default();
        Ok(Self {
            path: path.to_path_buf(),
            shards,
            response: selection.response.clone(),
            covariates,
            skipped,
        })
    }

    /// The file or directory as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The shards, in row order.
    pub fn shards(&self) -> &[ParquetShard] {
        &self.shards
    }

    /// The shards' row counts, in order.
    pub fn shard_lengths(&self) -> Vec<u64> {
        self.shards.iter().map(|s| s.rows).collect()
    }

    /// Rows over every shard.
    pub fn num_rows(&self) -> u64 {
        self.shards.iter().map(|s| s.rows).sum()
    }

    /// The response's column.
    pub fn response(&self) -> &str {
        &self.response
    }

    /// The covariates' columns, in order: the parameters' names.
    pub fn covariate_names(&self) -> &[String] {
        &self.covariates
    }

    /// The columns left out for their type (only when the covariates were not named).
    pub fn skipped_columns(&self) -> &[SkippedColumn] {
        &self.skipped
    }

    /// A reader of every row, shard after shard, in chunks of at most `batch_rows` rows (it
    /// keeps its own copy of the source's description: the shard list and the names).
    pub fn rows(&self, batch_rows: usize) -> ParquetRows {
        ParquetRows {
            source: self.clone(),
            batch_rows: batch_rows.max(1),
            shard: 0,
            reader: None,
            shard_row: 0,
            global_row: 0,
        }
    }

    /// Reads shard `k` into memory: its covariates (row-major, rows × p) and responses.
    pub fn read_shard(&self, k: usize) -> Result<(Vec<f64>, Vec<f64>)> {
        let shard = self.shards.get(k).ok_or_else(|| {
            Error::invalid("shard", k, format!("a shard index below {}", self.shards.len()))
        })?;
        let first: u64 = self.shards[..k].iter().map(|s| s.rows).sum();
        let rows = usize::try_from(shard.rows).unwrap_or(usize::MAX);
        let p = self.covariates.len();
        let (mut x, mut y) = (Vec::with_capacity(rows * p), Vec::with_capacity(rows));
        let mut reader = self.open_shard(k, 64 * 1024)?;
        let (mut row, mut bx, mut by) = (0u64, Vec::new(), Vec::new());
        while let Some(batch) = next_batch(&mut reader, &shard.path)? {
            self.batch_values(&batch, &shard.path, row, first + row, &mut bx, &mut by)?;
            x.extend_from_slice(&bx);
            y.extend_from_slice(&by);
            row += batch.num_rows() as u64;
        }
        Ok((x, y))
    }

    /// Reads every row into memory as a [`Dataset`] (covariates named by their columns). Its
    /// metadata record the source: `source_format` = `"parquet"`, `source`, and `shards` (file
    /// and rows of each). Its full-data passes reduce the rows as one shard, as for the same
    /// data in CSV or binary form (the same draws, bit for bit); [`ParquetSource::shard_lengths`]
    /// with [`Dataset::with_shard_lengths`] gives the reduction of a cluster that holds the
    /// shards apart.
    ///
    /// For data larger than memory, convert them once to the binary format instead
    /// ([`crate::convert()`]), which the samplers memory-map.
    pub fn read(&self) -> Result<Dataset> {
        let total = self.num_rows();
        let n = usize::try_from(total).map_err(|_| {
            Error::invalid("rows", total, "a number of rows this machine can address")
        })?;
        let p = self.covariates.len();
        let (mut x, mut y) = (Vec::with_capacity(n * p), Vec::with_capacity(n));
        let mut rows = self.rows(64 * 1024);
        let (mut bx, mut by) = (Vec::new(), Vec::new());
        while rows.read_chunk(&mut bx, &mut by)? > 0 {
            x.extend_from_slice(&bx);
            y.extend_from_slice(&by);
        }
        let mut data = Dataset::new(x, y, self.covariates.clone())?;
        data.set_metadata("source_format", "parquet".into());
        data.set_metadata("source", self.path.display().to_string().into());
        let shards: Vec<serde_json::Value> = self
            .shards
            .iter()
            .map(|s| serde_json::json!({ "file": s.path.display().to_string(), "rows": s.rows }))
            .collect();
        data.set_metadata("shards", shards.into());
        Ok(data)
    }

    /// A reader of shard `k`'s selected columns, in batches of at most `batch_rows` rows.
    fn open_shard(&self, k: usize, batch_rows: usize) -> Result<ParquetRecordBatchReader> {
        let path = &self.shards[k].path;
        let builder = open_builder(path)?;
        let schema = builder.schema().clone();
        let mut roots: Vec<usize> = std::iter::once(&self.response)
            .chain(&self.covariates)
            .filter_map(|name| schema.index_of(name).ok())
            .collect();
        roots.sort_unstable();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        builder
            .with_projection(mask)
            .with_batch_size(batch_rows)
            .build()
            .map_err(|e| Error::parquet(path, "cannot start reading", e))
    }

    /// The covariates (row-major) and responses of one record batch, into `x` and `y`
    /// (overwritten). `row` and `global_row`: the batch's first row in its shard and overall.
    fn batch_values(
        &self, batch: &RecordBatch, path: &Path, row: u64, global_row: u64, x: &mut Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<()> {
        let (rows, p) = (batch.num_rows(), self.covariates.len());
        x.clear();
        x.resize(rows * p, 0.0);
        y.clear();
        y.resize(rows, 0.0);
        let column = |name: &str| {
            batch.column_by_name(name).ok_or_else(|| Error::Parquet {
                path: path.to_path_buf(),
                message: format!("column `{name}` missing from a record batch"),
            })
        };
        let bad = |name: &str, e: values::ValueProblem| Error::BadValue {
            path: path.to_path_buf(),
            column: name.to_string(),
            row: row + e.row as u64,
            global_row: global_row + e.row as u64,
            problem: e.problem,
        };
        let response = column(&self.response)?;
        scatter(response.as_ref(), y, 1, 0).map_err(|e| bad(&self.response, e))?;
        for (j, name) in self.covariates.iter().enumerate() {
            let array = column(name)?;
            scatter(array.as_ref(), x, p.max(1), j).map_err(|e| bad(name, e))?;
        }
        Ok(())
    }
}

/// Reads `path` (a `.parquet` file or a directory of shards) into memory:
/// [`ParquetSource::open`] then [`ParquetSource::read`].
pub fn read_parquet(path: impl AsRef<Path>, selection: &ColumnSelection) -> Result<Dataset> {
    ParquetSource::open(path, selection)?.read()
}

/// Whether `path` is Parquet data: a `.parquet` file, or a directory (of shards).
pub fn is_parquet_path(path: &Path) -> bool {
    path.is_dir()
        || path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Reads a source's rows shard after shard, in chunks (see [`ParquetSource::rows`]).
pub struct ParquetRows {
    source: ParquetSource,
    batch_rows: usize,
    shard: usize,
    reader: Option<ParquetRecordBatchReader>,
    /// The next row's index within the current shard, and overall.
    shard_row: u64,
    global_row: u64,
}

impl std::fmt::Debug for ParquetRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetRows")
            .field("shard", &self.shard)
            .field("global_row", &self.global_row)
            .finish_non_exhaustive()
    }
}

impl ParquetRows {
    /// Overwrites `x` (row-major) and `y` with the next rows (at most the batch size, within
    /// one shard) and returns how many; 0 after the last row.
    pub fn read_chunk(&mut self, x: &mut Vec<f64>, y: &mut Vec<f64>) -> Result<usize> {
        loop {
            if self.shard >= self.source.shards.len() {
                x.clear();
                y.clear();
                return Ok(0);
            }
            let path = &self.source.shards[self.shard].path;
            if self.reader.is_none() {
                self.reader = Some(self.source.open_shard(self.shard, self.batch_rows)?);
            }
            let reader = self.reader.as_mut().expect("opened above");
            match next_batch(reader, path)? {
                Some(batch) => {
                    let (row, global) = (self.shard_row, self.global_row);
                    self.source.batch_values(&batch, path, row, global, x, y)?;
                    let k = batch.num_rows();
                    self.shard_row += k as u64;
                    self.global_row += k as u64;
                    if k > 0 {
                        return Ok(k);
                    }
                }
                None => {
                    self.reader = None;
                    self.shard += 1;
                    self.shard_row = 0;
                }
            }
        }
    }

    /// Rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.global_row
    }

    /// The source being read.
    pub fn source(&self) -> &ParquetSource {
        &self.source
    }
}

/// The next batch of `reader`, with the shard named in an error.
fn next_batch(reader: &mut ParquetRecordBatchReader, path: &Path) -> Result<Option<RecordBatch>> {
    reader.next().transpose().map_err(|e| Error::parquet(path, "cannot read a record batch", e))
}

/// The reader builder of one file (its footer read and checked).
fn open_builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| Error::parquet(path, "not a readable Parquet file", e))
}

/// The covariates of `selection` in `schema` (the first shard's): as named, or every numeric
/// column other than the response; and the columns left out for their type.
fn choose_covariates(
    schema: &Schema, selection: &ColumnSelection,
) -> (Vec<String>, Vec<SkippedColumn>) {
    if let Some(cols) = &selection.covariates {
        return (cols.clone(), Vec::new());
    }
    let (mut covariates, mut skipped) = (Vec::new(), Vec::new());
    for f in schema.fields() {
        if f.name() == &selection.response {
            continue;
        }
        if is_number(f.data_type()) {
            covariates.push(f.name().clone());
        } else {
            skipped.push(SkippedColumn {
                name: f.name().clone(),
                data_type: f.data_type().to_string(),
            });
        }
    }
    (covariates, skipped)
}

/// Errors unless `schema` has a column `name` holding numbers.
fn check_column(path: &Path, schema: &Schema, name: &str, role: &'static str) -> Result<()> {
    match schema.field_with_name(name) {
        Err(_) => Err(Error::MissingColumn {
            path: path.to_path_buf(),
            column: name.to_string(),
            role,
            available: schema
                .fields()
                .iter()
                .map(|f| format!("{} ({})", f.name(), f.data_type()))
                .collect::<Vec<_>>()
                .join(", "),
            hint: if role == "the response" {
                " (name the response's column with --y COLUMN)"
            } else {
                ""
            },
        }),
        Ok(f) if !is_number(f.data_type()) => Err(Error::NotNumeric {
            path: path.to_path_buf(),
            column: name.to_string(),
            data_type: f.data_type().to_string(),
            hint: if role == "a covariate" {
                " (name the covariates with --columns to leave it out)"
            } else {
                ""
            },
        }),
        Ok(_) => Ok(()),
    }
}

/// The shard files of `path`: itself if it is a file, else the Parquet files under it in
/// natural order (see the [module docs](self)).
fn shard_files(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "open", e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    collect_parquet_files(path, &mut files)?;
    if files.is_empty() {
        return Err(Error::NoShards { path: path.to_path_buf() });
    }
    files.sort_by(|a, b| natural_cmp(&rel(path, a), &rel(path, b)));
    Ok(files)
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned()
}

fn collect_parquet_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, "list", e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, "list", e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        let p = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&p, "inspect", e))?;
        if kind.is_dir() {
            collect_parquet_files(&p, files)?;
        } else if is_parquet_name(&name) {
            files.push(p);
        }
    }
    Ok(())
}

fn is_parquet_name(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("parquet"))
}

/// Natural order: runs of ASCII digits compare as numbers (then by length, so `01` after `1`),
/// everything else character by character.
pub(crate) fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (&a[..da], &b[..db]);
                let (ta, tb) = (trim_zeros(na), trim_zeros(nb));
                let ord = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb)).then(da.cmp(&db));
                if ord != Ordering::Equal {
                    return ord;
                }
                (a, b) = (&a[da..], &b[db..]);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let k = digits.iter().take_while(|&&c| c == b'0').count();
    &digits[k..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_puts_part_2_before_part_10() {
        let mut v = vec!["part.10.parquet", "part.2.parquet", "part.1.parquet", "part.02.parquet"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["part.1.parquet", "part.2.parquet", "part.02.parquet", "part.10.parquet"]);
        assert_eq!(natural_cmp("a/b9", "a/b10"), Ordering::Less);
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
    }

    #[test]
    fn selection_rules() {
        assert!(ColumnSelection::with_response("").validate().is_err());
        let twice = ColumnSelection::default().with_covariates(vec!["a".into(), "a".into()]);
        assert!(twice.validate().unwrap_err().to_string().contains("named twice"));
        let resp = ColumnSelection::default().with_covariates(vec!["y".into()]);
        assert!(resp.validate().is_err());
        assert!(ColumnSelection::default().with_covariates(vec![]).validate().is_err());
    }
}
