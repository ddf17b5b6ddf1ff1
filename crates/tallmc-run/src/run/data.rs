//! Reading a run's data file: the format by its path (Parquet, CSV, binary, `.npy`), the
//! response column by name, and the covariates by name when the run names them.

use std::path::Path;

use anyhow::{Result, bail};
use tallmc_io::{ColumnSelection, is_parquet_path, read_parquet};
use tallmc_models::{Dataset, LoadOptions};

/// Reads `path`: Parquet (a `.parquet` file or a directory of shards) through `tallmc_io`,
/// anything else through `tallmc_models::load`. `response` names the response's column of a
/// CSV or Parquet source (default `y`); `columns` chooses and orders the covariates, to which
/// `keep` (the model's offset or exposure column, split off later) is added when missing.
pub(crate) fn load_file(
    path: &Path, y_npy: Option<&Path>, response: Option<&str>, columns: Option<&[String]>,
    keep: Option<&str>,
) -> Result<Dataset> {
    let columns: Option<Vec<String>> = columns.map(|cols| {
        let mut cols = cols.to_vec();
        if let Some(k) = keep.filter(|k| !cols.iter().any(|c| c == k)) {
            cols.push(k.to_string());
        }
        cols
    });
    let columns = columns.as_deref();
    if is_parquet_path(path) {
        if y_npy.is_some() {
            bail!(
                "--y-npy goes with a .npy --data file; {} is Parquet (its response is a column: --y NAME)",
                path.display()
            );
        }
        let mut selection = ColumnSelection::with_response(response.unwrap_or("y"));
        selection.covariates = columns.map(<[String]>::to_vec);
        return Ok(read_parquet(path, &selection)?);
    }
    let is_csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut options =
        LoadOptions { npy_response: y_npy.map(Path::to_path_buf), ..LoadOptions::default() };
    if let Some(r) = response {
        if !is_csv && r != "y" {
            bail!(
                "--y {r}: only CSV and Parquet data have named response columns; {} holds its responses apart from the covariates (the binary format's y, or --y-npy)",
                path.display()
            );
        }
        options.response = r.to_string();
    }
    let data = tallmc_models::load(path, &options)?;
    match columns {
        Some(cols) => Ok(data.select_covariates(cols)?),
        None => Ok(data),
    }
}
