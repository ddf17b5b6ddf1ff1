//! # tallmc-io
//!
//! Tall data where it lives.
//!
//! * [`parquet`](mod@parquet): a `.parquet` file or a directory of shards, read through the
//!   Apache Arrow crates — [`read_parquet`] into memory, or [`ParquetSource`] for the shards,
//!   their row counts and a chunked reader. Column names name the parameters.
//!
//! * [`convert()`]: Parquet, CSV, `.npy` or binary inputs streamed into one file of the
//!   row-major binary format, in bounded memory, with progress reports.
//!
//! Errors name the file, and for a value its column and row ([`Error`]).

#![warn(missing_docs)]

pub mod convert;
pub mod error;
pub mod parquet;

pub use convert::{ConvertOptions, ConvertProgress, ConvertReport, convert};
pub use error::{Error, Result};
pub use parquet::{
    ColumnSelection, ParquetRows, ParquetShard, ParquetSource, SkippedColumn, is_parquet_path,
    read_parquet,
};
