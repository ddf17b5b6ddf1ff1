//! `convert`: Parquet, CSV, `.npy` or binary sources, streamed into one file of the row-major
//! binary format (`name.bin` + `name.json`, `docs/data-format.md`) that the samplers
//! memory-map.
//!
//! **Bounded memory.** Rows move in chunks ([`ConvertOptions::chunk_rows`], 65,536 by default):
//! a Parquet record batch or a chunk of CSV lines is read, checked and appended to the output's
//! covariates, the responses going to a side file appended at the end
//! ([`tallmc_models::BinaryWriter`]). Peak memory is a few chunks (tens of MB at 30 columns),
//! whatever the number of rows; `.npy` and binary inputs are memory-mapped, so their pages are
//! the operating system's file cache, not the process's own memory.
//!
//! **Several inputs** are concatenated in the order given; every one must give the same
//! covariate names after the column selection. A Parquet directory counts as one input (its
//! shards in natural order).
//!
//! **Columns.** The response is [`ConvertOptions::response`] for CSV and Parquet (the binary
//! format and `.npy` carry y apart); the covariates are [`ConvertOptions::columns`] when
//! given, else every other column (for Parquet, every other column holding numbers).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tallmc_models::{BinaryWriter, CsvRowReader, Dataset};

use crate::error::{Error, Result};
use crate::parquet::{ColumnSelection, ParquetRows, ParquetSource, is_parquet_path};

/// How to convert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertOptions {
    /// The response's column of CSV and Parquet inputs (default `y`).
    pub response: String,
    /// The covariates, by name and in this order (`None`: every other column).
    pub columns: Option<Vec<String>>,
    /// With a `.npy` input (the covariates X): the `.npy` file of y.
    pub y_npy: Option<PathBuf>,
    /// Rows per chunk (default 65,536).
    pub chunk_rows: usize,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        Self { response: "y".to_string(), columns: None, y_npy: None, chunk_rows: 1 << 16 }
    }
}

/// Where a conversion is, for a progress bar: rows written, and the share of the work done
/// when it can be known (from the Parquet footers' row counts, the CSV files' bytes read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConvertProgress {
    /// Rows written so far.
    pub rows: u64,
    /// The input being read (0-based) and how many there are.
    pub input: usize,
    /// How many inputs.
    pub inputs: usize,
    /// Share of the current input done, in [0, 1].
    pub input_fraction: f64,
}

/// What a conversion wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvertReport {
    /// Rows written.
    pub rows: u64,
    /// The covariates' names, in order.
    pub covariate_names: Vec<String>,
    /// The data file and its header.
    pub bin: PathBuf,
    /// The header (`name.json`).
    pub json: PathBuf,
    /// Columns left out of Parquet inputs for their type (name and type), per input.
    pub skipped_columns: Vec<(String, String)>,
}

/// Converts `inputs` into the binary format at `out` (`name.bin`, `name.json` or `name`),
/// calling `progress` after every chunk. See the [module docs](self).
///
/// Errors: no input; an input that cannot be read (naming file, line or row, and column);
/// inputs with different covariates; `--y-npy` with several inputs or with a non-`.npy` one;
/// an output path equal to an input's.
pub fn convert(
    inputs: &[PathBuf], out: &Path, options: &ConvertOptions,
    progress: &mut dyn FnMut(ConvertProgress),
) -> Result<ConvertReport> {
    if inputs.is_empty() {
        return Err(Error::invalid("inputs", "none", "at least one file or directory to convert"));
    }
    if options.chunk_rows == 0 {
        return Err(Error::invalid("chunk rows", 0, "at least 1"));
    }
    if options.y_npy.is_some() && (inputs.len() != 1 || !is_npy(&inputs[0])) {
        return Err(Error::invalid(
            "--y-npy",
            options.y_npy.as_ref().map_or(String::new(), |p| p.display().to_string()),
            "one .npy input (the covariates X) to go with it",
        ));
    }
    let bin = out.with_extension("bin");
    for input in inputs {
        if same_path(input, &bin) || same_path(input, &out.with_extension("json")) {
            return Err(Error::invalid(
                "--out",
                out.display(),
                format!("a path other than the input {}", input.display()),
            ));
        }
    }
    let mut writer: Option<BinaryWriter> = None;
    let mut skipped = Vec::new();
    let mut sources = Vec::new();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (k, input) in inputs.iter().enumerate() {
        let mut reader = Reader::open(input, options)?;
        for s in reader.skipped() {
            skipped.push(s);
        }
        let names = reader.covariate_names().to_vec();
        let w = match &mut writer {
            Some(w) => {
                if w.covariate_names() != names.as_slice() {
                    return Err(Error::invalid(
                        "inputs",
                        input.display(),
                        format!(
                            "the covariates of the first input ({}); this one has {}",
                            w.covariate_names().join(", "),
                            names.join(", ")
                        ),
                    ));
                }
                w
            }
            None => writer.insert(BinaryWriter::create(out, names)?),
        };
        loop {
            let rows = reader.read_chunk(options.chunk_rows, &mut x, &mut y)?;
            if rows == 0 {
                break;
            }
            w.write_rows(&x, &y)?;
            progress(ConvertProgress {
                rows: w.rows_written(),
                input: k,
                inputs: inputs.len(),
                input_fraction: reader.fraction(),
            });
        }
        sources.push(Value::from(input.display().to_string()));
    }
    let w = writer.expect("at least one input");
    let rows = w.rows_written();
    let covariate_names = w.covariate_names().to_vec();
    let mut metadata = Map::new();
    metadata.insert("converted_from".into(), Value::Array(sources));
    let (bin, json) = w.finish(metadata)?;
    Ok(ConvertReport { rows, covariate_names, bin, json, skipped_columns: skipped })
}

/// One input, read in chunks.
enum Reader {
    Parquet { rows: Box<ParquetRows> },
    Csv { reader: Box<CsvRowReader>, picks: Option<Vec<usize>>, names: Vec<String>, buf: Vec<f64> },
    Mapped { data: Box<Dataset>, picks: Option<Vec<usize>>, names: Vec<String>, next: usize },
}

impl Reader {
    fn open(input: &Path, options: &ConvertOptions) -> Result<Self> {
        let columns = options.columns.as_deref();
        if is_parquet_path(input) {
            let mut selection = ColumnSelection::with_response(&options.response);
            selection.covariates = options.columns.clone();
            let source = ParquetSource::open(input, &selection)?;
            return Ok(Self::Parquet { rows: Box::new(source.rows(options.chunk_rows)) });
        }
        if has_extension(input, "csv") {
            let reader = Box::new(CsvRowReader::open(input, &options.response)?);
            let all = reader.covariate_names().to_vec();
            let (picks, names) = pick(&all, columns, input)?;
            return Ok(Self::Csv { reader, picks, names, buf: Vec::new() });
        }
        if options.response != "y" {
            return Err(Error::invalid(
                "--y",
                &options.response,
                format!(
                    "a CSV or Parquet input: {} holds its responses apart (the binary format's y, or --y-npy)",
                    input.display()
                ),
            ));
        }
        let mut load = tallmc_models::LoadOptions::default().with_check_finite(true);
        if let Some(y) = &options.y_npy {
            load = load.with_npy_response(y);
        }
        let data = tallmc_models::load(input, &load)?;
        let (picks, names) = pick(data.covariate_names(), columns, input)?;
        Ok(Self::Mapped { data: Box::new(data), picks, names, next: 0 })
    }

    fn covariate_names(&self) -> &[String] {
        match self {
            Self::Parquet { rows } => rows.source().covariate_names(),
            Self::Csv { names, .. } | Self::Mapped { names, .. } => names,
        }
    }

    fn skipped(&self) -> Vec<(String, String)> {
        match self {
            Self::Parquet { rows } => rows
                .source()
                .skipped_columns()
                .iter()
                .map(|s| (s.name.clone(), s.data_type.clone()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Overwrites `x` and `y` with the next rows (at most `max_rows`); 0 at the end.
    fn read_chunk(&mut self, max_rows: usize, x: &mut Vec<f64>, y: &mut Vec<f64>) -> Result<usize> {
        match self {
            // The batch size was fixed when the reader was made (the same `chunk_rows`).
            Self::Parquet { rows } => rows.read_chunk(x, y),
            Self::Csv { reader, picks, buf, .. } => match picks {
                None => Ok(reader.read_chunk(max_rows, x, y)?),
                Some(picks) => {
                    let k = reader.read_chunk(max_rows, buf, y)?;
                    let p = reader.num_covariates();
                    x.clear();
                    for row in buf.chunks_exact(p.max(1)).take(k) {
                        x.extend(picks.iter().map(|&j| row[j]));
                    }
                    Ok(k)
                }
            },
            Self::Mapped { data, picks, next, .. } => {
                let (n, p) = (data.len(), data.num_covariates());
                let end = (*next + max_rows).min(n);
                let k = end - *next;
                x.clear();
                y.clear();
                y.extend_from_slice(&data.y()[*next..end]);
                let rows = &data.x()[*next * p..end * p];
                match picks {
                    None => x.extend_from_slice(rows),
                    Some(picks) => {
                        for row in rows.chunks_exact(p.max(1)) {
                            x.extend(picks.iter().map(|&j| row[j]));
                        }
                    }
                }
                *next = end;
                Ok(k)
            }
        }
    }

    /// Share of this input read, in [0, 1].
    fn fraction(&self) -> f64 {
        match self {
            Self::Parquet { rows } => {
                rows.rows_read() as f64 / rows.source().num_rows().max(1) as f64
            }
            Self::Csv { reader, .. } => {
                reader.bytes_read() as f64 / reader.total_bytes().max(1) as f64
            }
            Self::Mapped { data, next, .. } => *next as f64 / data.len().max(1) as f64,
        }
    }
}

/// `columns` as positions in `all` (`None` when not given), and the covariates' names.
fn pick(
    all: &[String], columns: Option<&[String]>, input: &Path,
) -> Result<(Option<Vec<usize>>, Vec<String>)> {
    let Some(cols) = columns else {
        return Ok((None, all.to_vec()));
    };
    let mut picks = Vec::with_capacity(cols.len());
    for c in cols {
        let j = all.iter().position(|a| a == c).ok_or_else(|| {
            Error::invalid(
                "column",
                c,
                format!("one of the covariate columns of {} ({})", input.display(), all.join(", ")),
            )
        })?;
        picks.push(j);
    }
    Ok((Some(picks), cols.to_vec()))
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

fn is_npy(path: &Path) -> bool {
    has_extension(path, "npy")
}

/// Whether two paths name the same file (by canonical path when both exist).
fn same_path(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
