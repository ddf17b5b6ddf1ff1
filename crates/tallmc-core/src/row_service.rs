//! Rows that live elsewhere, fetched ahead of the kernels that read them.
//!
//! A model whose rows are on a cluster's workers holds only the rows its readers (the chains)
//! said they will read: [`Terms::row_service`] gives its [`RowService`]. A kernel whose
//! subsample indices come from a stream of their own (so the coming ones are known, e.g.
//! [`BlockSubsample::upcoming`]) declares, every few iterations, the rows it reads now and the
//! rows it will read next; the service makes the first present before it returns and starts
//! fetching the others, so that they arrive while the kernel works. A kernel sees only rows.
//!
//! [`Terms::row_service`]: crate::Terms::row_service
//! [`BlockSubsample::upcoming`]: crate::subsample::BlockSubsample::upcoming

use crate::Result;

/// Rows by global index, fetched ahead for each reader.
pub trait RowService: Send + Sync {
    /// A new reader (a chain); its key for [`RowService::declare`].
    fn register(&self) -> usize;

    /// Reader `reader` reads the rows at `now` from this call on (they are present when it
    /// returns) and the rows at `ahead` after its next declaration (their fetch starts now).
    /// Rows no reader declared in its last call may be dropped.
    ///
    /// # Errors
    /// A fetch failed (a lost worker, an unreadable shard): the message says which.
    fn declare(&self, reader: usize, now: &[u32], ahead: &[u32]) -> Result<()>;
}
