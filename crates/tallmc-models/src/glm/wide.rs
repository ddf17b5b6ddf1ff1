//! The hot loops of [`Glm`](super::Glm) compiled twice: for the build's baseline (SSE2 on
//! x86-64) and with AVX2, picked at run time by what the CPU reports. They are the full-data
//! range loops and the index-batch loops of the stochastic-gradient path (the gathered
//! predictors, the family's scores, the weighted row sums). AVX-512 was tried for the index-batch
//! loops and was slower (LLVM's 8-lane code for 29-column scattered rows); the loop over a
//! gathered minibatch takes it when the CPU has it (its 8-lane `exp` and division gained a few
//! per cent in SG-HMC), with the same bits (no FMA contraction in Rust, IEEE lanes).
//!
//! **Same bits either way.** Only AVX2 is enabled, not FMA: every lane still rounds each product
//! and each sum as the scalar code does, the reductions keep their order (the source fixes it,
//! and Rust never reassociates floating-point arithmetic), and the family's functions are the
//! same IEEE operations in every lane. What changes is the width of the registers LLVM uses
//! for the dot products, the row updates and the family's branch-free `exp`/`log1p`
//! ([`FastLogisticFamily`](super::FastLogisticFamily)). `tests/models/logistic_fast_math.rs` and the
//! quick reproduction snapshots run whichever path the machine takes.

use super::batch::{self, RangeValues, ScoreDifferences};
use super::family::GlmFamily;
use crate::data::Rows;

/// `$vis fn $name` calls `$body` with the same arguments, through a copy compiled with
/// AVX2 (`$avx2`) when the CPU has it.
macro_rules! avx2_dispatch {
    ($(#[$doc:meta])* $vis:vis fn $name:ident / $avx2:ident <$($g:ident: $bound:path),*>
        ($($arg:ident: $ty:ty),*) -> $ret:ty = $body:path) => {
        $(#[$doc])*
        #[inline(always)]
        $vis fn $name<$($g: $bound),*>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the copy only needs AVX2, which the CPU has just reported.
                #[allow(unsafe_code)]
                unsafe {
                    return $avx2($($arg),*);
                }
            }
            $body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2<$($g: $bound),*>($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }
    };
}

avx2_dispatch! {
    /// [`RangeValues::sum`].
    pub(super) fn range_values / range_values_avx2 <F: GlmFamily, R: Rows>
        (job: &RangeValues<'_, F, R>) -> f64 = RangeValues::sum
}

avx2_dispatch! {
    /// [`RangeValues::sum_and_gradient`].
    pub(super) fn range_values_and_gradient / range_values_and_gradient_avx2 <F: GlmFamily, R: Rows>
        (job: &RangeValues<'_, F, R>, grad_sum: &mut [f64]) -> f64 = RangeValues::sum_and_gradient
}

avx2_dispatch! {
    /// [`batch::batch_etas`]: η (and η′) of an index batch.
    pub(crate) fn gathered_etas / gathered_etas_avx2 <R: Rows>
        (rows: &R, theta: &[f64], indices: &[u32], eta: &mut [f64],
         other: Option<(&[f64], &mut [f64])>) -> () = batch::batch_etas
}

avx2_dispatch! {
    /// [`batch::family_scores`]: φ′ (and φ″) of an index batch.
    pub(super) fn family_scores / family_scores_avx2 <F: GlmFamily>
        (f: &F, y: &[f64], indices: &[u32], eta: &[f64], d1: &mut [f64],
         d2: Option<&mut [f64]>) -> () = batch::family_scores
}

avx2_dispatch! {
    /// [`batch::add_indexed_rows`]: out += Σ a_k x̃_{i_k}.
    pub(crate) fn add_weighted_rows / add_weighted_rows_avx2 <R: Rows>
        (rows: &R, indices: &[u32], a: &[f64], out: &mut [f64]) -> () = batch::add_indexed_rows
}

avx2_dispatch! {
    /// [`ScoreDifferences::add`]: the fused first-order control-variate gradient.
    pub(super) fn score_differences / score_differences_avx2 <F: GlmFamily, R: Rows>
        (job: &ScoreDifferences<'_, F>, rows: &R, indices: &[u32], out: &mut [f64]) -> ()
        = ScoreDifferences::add
}

/// [`ScoreDifferences::add_in_order`]: the same over a gathered batch, with AVX-512 when the
/// CPU has it (8-lane `exp` and division in the family's loop), else AVX2.
#[inline(always)]
pub(super) fn score_differences_in_order<F: GlmFamily, R: Rows>(
    job: &ScoreDifferences<'_, F>, rows: &R, out: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the copy only needs AVX-512F, which the CPU has just reported.
        #[allow(unsafe_code)]
        unsafe {
            return score_differences_in_order_avx512(job, rows, out);
        }
    }
    score_differences_in_order_up_to_avx2(job, rows, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn score_differences_in_order_avx512<F: GlmFamily, R: Rows>(
    job: &ScoreDifferences<'_, F>, rows: &R, out: &mut [f64],
) {
    job.add_in_order(rows, out);
}

avx2_dispatch! {
    /// [`ScoreDifferences::add_in_order`] on CPUs without AVX-512.
    pub(super) fn score_differences_in_order_up_to_avx2 / score_differences_in_order_avx2 <F: GlmFamily, R: Rows>
        (job: &ScoreDifferences<'_, F>, rows: &R, out: &mut [f64]) -> ()
        = ScoreDifferences::add_in_order
}

avx2_dispatch! {
    /// [`batch::batch_scores`]: η and φ′ over a gathered batch.
    pub(super) fn gathered_batch_scores / gathered_batch_scores_avx2 <F: GlmFamily, R: Rows>
        (f: &F, rows: &R, theta: &[f64], y: &[f64], eta: &mut [f64], d1: &mut [f64]) -> ()
        = batch::batch_scores
}

avx2_dispatch! {
    /// [`batch::batch_etas_in_order`]: η over a gathered batch.
    pub(super) fn gathered_etas_in_order / gathered_etas_in_order_avx2 <R: Rows>
        (rows: &R, theta: &[f64], eta: &mut [f64]) -> () = batch::batch_etas_in_order
}

avx2_dispatch! {
    /// [`batch::add_rows_in_order`]: out += Σ a_k x̃_k over a gathered batch.
    pub(super) fn add_weighted_rows_in_order / add_weighted_rows_in_order_avx2 <R: Rows>
        (rows: &R, a: &[f64], out: &mut [f64]) -> () = batch::add_rows_in_order
}
