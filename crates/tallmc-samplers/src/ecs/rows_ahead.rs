//! A chain's rows declared ahead, for a model whose rows live elsewhere
//! ([`tallmc_core::RowService`]): every [`WINDOW`] iterations the chain declares the rows it
//! reads in the coming window (u and the window's proposals, known ahead because the subsample
//! draws them from a stream of its own) and the rows of the window after, whose fetch then runs
//! while the chain samples. A model without a row service (every row here) costs nothing.

use tallmc_core::{Error, Result, Terms};
use tallmc_estimators::GibbsSubsample;

/// Iterations per declaration: the fetch of a window's rows has the previous window's sampling
/// time to arrive.
pub(crate) const WINDOW: usize = 128;

/// A chain's declarations to its model's row service.
#[derive(Debug, Clone)]
pub(crate) struct RowsAhead {
    reader: usize,
    /// Iterations left before the next declaration.
    until_next: usize,
    now: Vec<u32>,
    ahead: Vec<u32>,
}

impl RowsAhead {
    /// Registers a chain with the model's row service, if it has one, and declares the rows of
    /// its first window (u, which the start evaluates, included).
    ///
    /// # Errors
    /// A subsample that cannot say its indices ahead; a failed fetch.
    pub(crate) fn start<M: Terms + ?Sized, S: GibbsSubsample>(
        model: &M, u: &S,
    ) -> Result<Option<Self>> {
        let Some(service) = model.row_service() else { return Ok(None) };
        let mut rows =
            Self { reader: service.register(), until_next: 0, now: Vec::new(), ahead: Vec::new() };
        rows.declare(model, u)?;
        Ok(Some(rows))
    }

    /// Before an iteration's u-step: declares the next window when this one is over.
    ///
    /// # Errors
    /// A failed fetch.
    pub(crate) fn before_step<M: Terms + ?Sized, S: GibbsSubsample>(
        &mut self, model: &M, u: &S,
    ) -> Result<()> {
        if self.until_next == 0 {
            self.declare(model, u)?;
        }
        self.until_next -= 1;
        Ok(())
    }

    fn declare<M: Terms + ?Sized, S: GibbsSubsample>(&mut self, model: &M, u: &S) -> Result<()> {
        let service = model.row_service().ok_or(Error::Internal("the row service went away"))?;
        self.now.clear();
        self.ahead.clear();
        let known = u.current_indices(&mut self.now)
            && u.upcoming_indices(0, WINDOW, &mut self.now)
            && u.upcoming_indices(WINDOW, WINDOW, &mut self.ahead);
        if !known {
            return Err(Error::invalid(
                "subsample",
                "one drawn with the kernel's random numbers",
                "indices known ahead (a subsample with a stream of its own) to read rows that \
                 live elsewhere",
            ));
        }
        service.declare(self.reader, &self.now, &self.ahead)?;
        self.until_next = WINDOW;
        Ok(())
    }
}
