//! The full-data range loops of [`Glm`](super::Glm) compiled twice: for the build's baseline
//! (SSE2 on x86-64) and with AVX2, picked at run time by what the CPU reports.
//!
//! **Same bits either way.** Only AVX2 is enabled, not FMA: every lane still rounds each product
//! and each sum as the scalar code does, the reductions keep their order (the source fixes it,
//! and Rust never reassociates floating-point arithmetic), and the family's functions are the
//! same IEEE operations in every lane. What changes is the width of the registers LLVM uses
//! for the dot products, the row updates and the family's branch-free `exp`/`log1p`
//! ([`FastLogisticFamily`](super::FastLogisticFamily)). `tests/logistic_fast_math.rs` and the
//! quick reproduction snapshots run whichever path the machine takes.

use super::family::GlmFamily;
use super::terms::RangeValues;
use crate::data::Rows;

/// [`RangeValues::sum`], with AVX2 if the CPU has it.
#[inline(always)]
pub(super) fn range_values<F: GlmFamily, R: Rows>(job: &RangeValues<'_, F, R>) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `sum_avx2` only needs AVX2, which the CPU has just reported.
        #[allow(unsafe_code)]
        unsafe {
            return sum_avx2(job);
        }
    }
    job.sum()
}

/// [`RangeValues::sum_and_gradient`], with AVX2 if the CPU has it.
#[inline(always)]
pub(super) fn range_values_and_gradient<F: GlmFamily, R: Rows>(
    job: &RangeValues<'_, F, R>, grad_sum: &mut [f64],
) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `sum_and_gradient_avx2` only needs AVX2, which the CPU has just reported.
        #[allow(unsafe_code)]
        unsafe {
            return sum_and_gradient_avx2(job, grad_sum);
        }
    }
    job.sum_and_gradient(grad_sum)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_avx2<F: GlmFamily, R: Rows>(job: &RangeValues<'_, F, R>) -> f64 {
    job.sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_and_gradient_avx2<F: GlmFamily, R: Rows>(
    job: &RangeValues<'_, F, R>, grad_sum: &mut [f64],
) -> f64 {
    job.sum_and_gradient(grad_sum)
}
