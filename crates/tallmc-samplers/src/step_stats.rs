//! The [`StepStats`](tallmc_core::StepStats) impl of a stats struct that stores the four
//! quantities as fields of the same names.

/// Implements [`StepStats`](tallmc_core::StepStats) for stats structs whose fields `evals`,
/// `accept_stat`, `divergent` and `batch_size` are the trait's four quantities, read as they
/// are (a trait cannot read a struct's fields, hence a macro).
macro_rules! step_stats_from_fields {
    ($($stats:ty),+ $(,)?) => {$(
        impl ::tallmc_core::StepStats for $stats {
            fn evals(&self) -> ::tallmc_core::EvalCounts {
                self.evals
            }
            fn accept_stat(&self) -> f64 {
                self.accept_stat
            }
            fn divergent(&self) -> bool {
                self.divergent
            }
            fn batch_size(&self) -> u64 {
                self.batch_size
            }
        }
    )+};
}
