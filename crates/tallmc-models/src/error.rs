//! The error type of tallmc-models: bad data files, bad data values, bad model settings.
//!
//! Every message names where the problem is (file, line and column for CSV; file, row and
//! column for binary data; the parameter for settings) and what was expected.

use std::path::{Path, PathBuf};

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors reported while loading data or building a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused to open, read, write or map a file.
    #[error("{}: {action} failed: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, `memory-map`).
        action: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV file is malformed: the message names the file, the 1-based line and, when the
    /// problem is a single cell, the 1-based column and its header name.
    #[error("{}:{line}{}: {message}", path.display(), column_suffix(column))]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line number (the header is line 1).
        line: usize,
        /// 1-based column number and header name, when one cell is at fault.
        column: Option<(usize, String)>,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The JSON header of a binary data file is missing, unreadable or inconsistent.
    #[error("{}: invalid header: {message}", path.display())]
    Header {
        /// The `.json` file.
        path: PathBuf,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The `.bin` file of a binary data set does not match its header (size, alignment).
    #[error("{}: {message}", path.display())]
    Binary {
        /// The `.bin` file.
        path: PathBuf,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A data value is NaN or infinite.
    #[error(
        "{source_name}: non-finite value {value} at row {row} (0-based), column `{column}`; expected a finite number"
    )]
    NonFinite {
        /// The file, or `in-memory data`.
        source_name: String,
        /// 0-based row (observation) index.
        row: usize,
        /// Column name (`y` for the response).
        column: String,
        /// The value.
        value: f64,
    },
    /// The response of a row is not allowed by the model (e.g. not 0 or 1 for logistic
    /// regression). The message starts with where the row is ([`RowLocation`]: the file and,
    /// for CSV, its line).
    #[error("{at}: invalid response y = {value}; expected {expected}")]
    InvalidResponse {
        /// Where the row is: file (or in-memory data), 0-based row, and line of a CSV file.
        at: RowLocation,
        /// The value.
        value: f64,
        /// What the model accepts.
        expected: &'static str,
    },
    /// A class label is not an integer in 0..K (classification models).
    #[error(
        "{at}: invalid class label y = {value}; expected an integer in 0..{classes} (K = {classes} classes)"
    )]
    InvalidLabel {
        /// Where the row is: file (or in-memory data), 0-based row, and line of a CSV file.
        at: RowLocation,
        /// The value.
        value: f64,
        /// The number of classes K.
        classes: usize,
    },
    /// A row of the design is so large that its squared Euclidean norm ‖x̃_i‖₂² overflows to
    /// infinity (the GLM bounds need it finite).
    #[error(
        "{at}: covariates too large: ‖x̃_i‖² = {norm_sq} overflows (largest entry |x̃_ij| = {max_abs:e}, column `{column}`); expected rows whose squared Euclidean norm is finite (rescale the covariates, e.g. standardize them)"
    )]
    RowNormOverflow {
        /// The first row whose squared norm is not finite.
        at: RowLocation,
        /// Its squared norm (+∞).
        norm_sq: f64,
        /// The design column of its largest entry in absolute value.
        column: String,
        /// That entry's absolute value.
        max_abs: f64,
    },
    /// A covariate has a name the model gives another parameter (`intercept` when the design
    /// adds an intercept, `log_sigma` in linear regression): the parameter names would repeat.
    #[error(
        "{source_name}: covariate `{name}` has the name of {reserved_for}; expected another name ({remedy})"
    )]
    ReservedName {
        /// The file, or `in-memory data`.
        source_name: String,
        /// The covariate's name.
        name: String,
        /// What the name is reserved for (e.g. `the intercept the design adds`).
        reserved_for: &'static str,
        /// What to do about it.
        remedy: &'static str,
    },
    /// A covariate column is constant, so it cannot be standardized.
    #[error(
        "column `{column}` is constant (value {value}); it cannot be standardized — drop it or turn standardization off"
    )]
    ConstantColumn {
        /// Column name.
        column: String,
        /// Its value.
        value: f64,
    },
    /// A model or generator setting is outside its allowed range, or another error of
    /// tallmc's one vocabulary ([`tallmc_core::Error`]; e.g. `InvalidParameter`).
    #[error(transparent)]
    Core(#[from] tallmc_core::Error),
    /// The file's extension is not one of `.csv`, `.bin`, `.json`, `.npy`.
    #[error("{}: unknown data file extension; expected .csv, .bin or .json (tallmc's binary format) or .npy", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// Memory-mapping little-endian data is only possible on a little-endian host.
    #[error("{}: the binary format is little-endian and this host is big-endian; memory-mapping is not supported here (convert the file to CSV or load it on a little-endian machine)", path.display())]
    BigEndianHost {
        /// The file.
        path: PathBuf,
    },
}

fn column_suffix(column: &Option<(usize, String)>) -> String {
    match column {
        Some((c, name)) => format!(":{c} (column `{name}`)"),
        None => String::new(),
    }
}

/// Where a row of a data set is, for messages: the file (or `in-memory data`), the 0-based row,
/// and, for data read from CSV, the 1-based physical line of the file (the header is line 1;
/// skipped blank lines counted).
///
/// Displayed as `data.csv line 7 (row 5, 0-based)` for CSV data, `data.bin row 5 (0-based)` for
/// binary and `.npy` data, and `in-memory data, row 5 (0-based)` for data built in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLocation {
    /// The file the data came from, if any.
    pub source: Option<PathBuf>,
    /// The 0-based row (observation) index.
    pub row: usize,
    /// The 1-based line of a text file holding the row, when known.
    pub line: Option<usize>,
}

impl std::fmt::Display for RowLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let row = self.row;
        match (&self.source, self.line) {
            (Some(path), Some(line)) => {
                write!(f, "{} line {line} (row {row}, 0-based)", path.display())
            }
            (Some(path), None) => write!(f, "{} row {row} (0-based)", path.display()),
            (None, Some(line)) => write!(f, "in-memory data, line {line} (row {row}, 0-based)"),
            (None, None) => write!(f, "in-memory data, row {row} (0-based)"),
        }
    }
}

impl Error {
    /// A [`tallmc_core::Error::DimensionMismatch`] naming `what`.
    pub fn dimension(what: impl ToString, expected: usize, found: usize) -> Self {
        Self::Core(tallmc_core::Error::dimension(what, expected, found))
    }

    /// A [`tallmc_core::Error::InvalidParameter`] naming the setting.
    pub fn invalid(name: &'static str, value: impl ToString, expected: impl ToString) -> Self {
        Self::Core(tallmc_core::Error::invalid(name, value, expected))
    }

    pub(crate) fn io(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), action, source }
    }

    pub(crate) fn header(path: &Path, message: impl Into<String>) -> Self {
        Self::Header { path: path.to_path_buf(), message: message.into() }
    }

    pub(crate) fn binary(path: &Path, message: impl Into<String>) -> Self {
        Self::Binary { path: path.to_path_buf(), message: message.into() }
    }
}

/// Checks that `value` is finite and strictly positive.
pub(crate) fn check_positive(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(name, value, "a finite number > 0"))
    }
}

/// Checks that `value` is finite.
pub(crate) fn check_finite_value(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() { Ok(()) } else { Err(Error::invalid(name, value, "a finite number")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_message_names_file_line_and_column() {
        let e = Error::Csv {
            path: PathBuf::from("data.csv"),
            line: 7,
            column: Some((3, "x2".into())),
            message: "`abc` is not a number".into(),
        };
        assert_eq!(e.to_string(), "data.csv:7:3 (column `x2`): `abc` is not a number");
        let e = Error::Csv {
            path: PathBuf::from("data.csv"),
            line: 1,
            column: None,
            message: "no column named `y`".into(),
        };
        assert_eq!(e.to_string(), "data.csv:1: no column named `y`");
    }

    #[test]
    fn row_locations_name_file_line_and_row() {
        let at = |source: Option<&str>, line| RowLocation {
            source: source.map(PathBuf::from),
            row: 5,
            line,
        };
        assert_eq!(at(Some("data.csv"), Some(7)).to_string(), "data.csv line 7 (row 5, 0-based)");
        assert_eq!(at(Some("X.npy"), None).to_string(), "X.npy row 5 (0-based)");
        assert_eq!(at(None, None).to_string(), "in-memory data, row 5 (0-based)");
        let e = Error::InvalidResponse {
            at: at(Some("data.csv"), Some(7)),
            value: 2.0,
            expected: "0 or 1",
        };
        assert_eq!(
            e.to_string(),
            "data.csv line 7 (row 5, 0-based): invalid response y = 2; expected 0 or 1"
        );
    }
}
