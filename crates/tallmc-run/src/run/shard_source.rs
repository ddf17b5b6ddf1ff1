//! Where the shards of a data set live, as the driver of a run over them reaches them: the
//! [`ShardSource`] trait (a Dask engine's workers, in the Python package).

use anyhow::Result;
use tallmc_core::PassKind;
use tallmc_models::Dataset;

use crate::spec::ModelSpec;

/// Where the shards of a data set live, as the driver reaches them: their lengths, a pass's
/// per-shard partial sums (each computed next to its shard by the per-shard kernel), and rows
/// by global index.
pub trait ShardSource: Send + Sync {
    /// Rows per shard, in shard order (at least one shard).
    fn shard_lengths(&self) -> Vec<u64>;

    /// Each shard's partial sums of `kind` at `theta` for `model`, in shard order: what
    /// [`shard_sums`](super::shard_sums) gives on that shard's rows. (The model travels with
    /// every pass: a standardizing model's spec gains its column moments after the first two.)
    ///
    /// # Errors
    /// A message naming the shard and what went wrong (a lost worker, an unreadable shard).
    fn partials(
        &self, model: &ModelSpec, theta: &[f64], kind: PassKind,
    ) -> Result<Vec<Vec<f64>>, String>;

    /// Starts fetching the rows at the global `indices` (ascending) and returns at once with a
    /// ticket for [`ShardSource::collect_rows`].
    ///
    /// # Errors
    /// The request could not be made (a row that no shard holds).
    fn request_rows(&self, indices: &[u32]) -> Result<u64>;

    /// The rows of a [`ShardSource::request_rows`] ticket, in the order asked, once they are
    /// here: their covariates under the data's column names (and the offset or exposure column
    /// the model reads), and their responses.
    ///
    /// # Errors
    /// A shard could not be read, or its worker was lost.
    fn collect_rows(&self, ticket: u64) -> Result<Dataset>;

    /// The rows at the global `indices` (ascending), fetched now.
    ///
    /// # Errors
    /// As [`ShardSource::request_rows`] and [`ShardSource::collect_rows`].
    fn take_rows(&self, indices: &[u32]) -> Result<Dataset> {
        let ticket = self.request_rows(indices)?;
        self.collect_rows(ticket)
    }
}
