//! The [`StepStats`](tallmc_core::StepStats) impls of stats structs that store the four
//! quantities as fields (a trait cannot read a struct's fields, hence a macro).

/// Implements [`StepStats`](tallmc_core::StepStats) for stats structs that keep `evals` and
/// `divergent` as fields, and:
///
/// * `step_stats_from_fields!(A, B)` — `accept_stat` and `batch_size` fields too, read as
///   they are;
/// * `step_stats_from_fields!(decided: A, B)` — a hard accept/reject decision `accepted`
///   (acceptance statistic 1 or 0) that looked at `used` data points;
/// * `step_stats_from_fields!(always_accepted: A, B)` — every move accepted (acceptance
///   statistic 1), `num_steps` updates on minibatches of `batch` points (L·n points looked at,
///   with repeats across updates);
/// * `step_stats_from_fields!(length_limited: A, B)` — `accept_stat` and `batch_size` fields,
///   and a `hit_max_depth` field read as `StepStats::hit_length_limit`.
macro_rules! step_stats_from_fields {
    (length_limited: $($stats:ty),+ $(,)?) => {$(
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
            fn hit_length_limit(&self) -> bool {
                self.hit_max_depth
            }
        }
    )+};
    (@impl $stats:ty, |$s:ident| $accept:expr, $batch:expr) => {
        impl ::tallmc_core::StepStats for $stats {
            fn evals(&self) -> ::tallmc_core::EvalCounts {
                self.evals
            }
            fn accept_stat(&self) -> f64 {
                let $s = self;
                $accept
            }
            fn divergent(&self) -> bool {
                self.divergent
            }
            fn batch_size(&self) -> u64 {
                let $s = self;
                $batch
            }
        }
    };
    (decided: $($stats:ty),+ $(,)?) => {$(
        step_stats_from_fields!(@impl $stats, |s| f64::from(u8::from(s.accepted)), s.used as u64);
    )+};
    (always_accepted: $($stats:ty),+ $(,)?) => {$(
        step_stats_from_fields!(@impl $stats, |_s| 1.0, (_s.batch * _s.num_steps) as u64);
    )+};
    ($($stats:ty),+ $(,)?) => {$(
        step_stats_from_fields!(@impl $stats, |s| s.accept_stat, s.batch_size);
    )+};
}
