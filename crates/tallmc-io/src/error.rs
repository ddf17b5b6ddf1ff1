//! The crate's errors: each names the file (and, for a value, its column and row) and what
//! was expected.

use std::path::{Path, PathBuf};

/// Errors of reading Parquet data and of `convert`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be opened, listed, read or written.
    #[error("{path}: cannot {action}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`open`, `list`, `read`, …).
        action: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The Parquet reader failed (a corrupt file, an unsupported encoding or codec, …).
    #[error("{path}: {message}")]
    Parquet {
        /// The shard.
        path: PathBuf,
        /// The reader's message, with what it was doing.
        message: String,
    },
    /// A directory with no Parquet file in it (files named `*.parquet`, not starting with `_`
    /// or `.`, in it or in its subdirectories).
    #[error(
        "{path}: no Parquet files in this directory (looked for *.parquet files, also in subdirectories, skipping names that start with `_` or `.`)"
    )]
    NoShards {
        /// The directory.
        path: PathBuf,
    },
    /// A column the selection names is not in a shard.
    #[error("{path}: no column `{column}` ({role}); the file's columns are: {available}{hint}")]
    MissingColumn {
        /// The shard.
        path: PathBuf,
        /// The missing column.
        column: String,
        /// What the column was for (`the response`, `a covariate`).
        role: &'static str,
        /// The shard's columns with their types.
        available: String,
        /// How to name another column.
        hint: &'static str,
    },
    /// A selected column whose type is not a number tallmc can read exactly as f64.
    #[error(
        "{path}: column `{column}` has type {data_type}; expected numbers (float64, float32, integers of up to 64 bits, or booleans){hint}"
    )]
    NotNumeric {
        /// The shard.
        path: PathBuf,
        /// The column.
        column: String,
        /// Its Arrow type.
        data_type: String,
        /// How to leave the column out, when that is possible.
        hint: &'static str,
    },
    /// A value that cannot be used: a null, NaN or ±∞, or an integer beyond 2⁵³ (not exactly
    /// representable as f64).
    #[error(
        "{path}: column `{column}`, row {row} of this file (row {global_row} overall): {problem}"
    )]
    BadValue {
        /// The shard.
        path: PathBuf,
        /// The column.
        column: String,
        /// 0-based row within the shard.
        row: u64,
        /// 0-based row over every shard, in shard order.
        global_row: u64,
        /// What is wrong, and what was expected.
        problem: String,
    },
    /// A bad setting (an empty column list, a column named twice, …).
    #[error("{what} = {value}: expected {expected}")]
    Invalid {
        /// The setting.
        what: &'static str,
        /// Its value.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// An error of the data layer (a name the binary format cannot hold, a bad CSV line, …).
    #[error(transparent)]
    Models(#[from] tallmc_models::Error),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn io(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), action, source }
    }

    pub(crate) fn parquet(path: &Path, doing: &str, e: impl std::fmt::Display) -> Self {
        Self::Parquet { path: path.to_path_buf(), message: format!("{doing}: {e}") }
    }

    pub(crate) fn invalid(
        what: &'static str, value: impl std::fmt::Display, expected: impl Into<String>,
    ) -> Self {
        Self::Invalid { what, value: value.to_string(), expected: expected.into() }
    }
}
