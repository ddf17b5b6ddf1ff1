//! Full-data passes computed where the shards live (a cluster's workers), and added here.
//!
//! A model whose rows are not in this process answers [`Terms::shard_passes`] with a
//! [`ShardPasses`]: for a pass kind and a θ it returns each shard's partial sums, computed
//! next to the shard by the same per-shard code a local pass runs on that shard's rows. The
//! passes of [`FullData`](crate::FullData) and the control variates' construction then add
//! them in shard order ([`add_shard_partials`]) instead of reducing rows here, which gives
//! the bits of a local pass over the same [`ShardLayout`](crate::ShardLayout):
//!
//! ```text
//! total = partial_0 + partial_1 + … + partial_{S−1}      partial_s = the shard's chunked sum
//! ```
//!
//! Those callers are infallible (a pass gives numbers), so a failed remote pass (a lost
//! worker, a shard that no longer reads) gives NaN there and is kept by the
//! [`ShardPasses`] ([`ShardPasses::note_failure`]); whoever started the work asks
//! [`ShardPasses::failure`] when a NaN stops it, and reports that error instead.
//!
//! [`Terms::shard_passes`]: crate::Terms::shard_passes

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::shards::add_shard_partials;
use crate::termwise_bounds::TermConstant;

/// Which sums one pass over the rows computes at θ (d = the model's dimension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PassKind {
    /// [Σℓ_i(θ)]: `FullData::log_likelihood`.
    Value,
    /// [Σℓ_i, Σ∇ℓ_i] (1 + d numbers): `FullData::log_likelihood_grad`.
    Gradient,
    /// Σ∇²ℓ_i (d × d, row-major): `FullData::hessian`, whose chunk size is fixed by the whole
    /// data's N ([`FullData::hessian_chunk`](crate::FullData::hessian_chunk)).
    Hessian,
    /// [Σℓ_i, Σ∇ℓ_i, Σ∇²ℓ_i] at θ* = θ (1 + d + d² numbers; the gradient part empty at
    /// order 0, the Hessian part below order 2): the control variates' construction pass.
    ControlVariate {
        /// The Taylor order, 0, 1 or 2.
        order: u32,
    },
    /// The column sums Σ_i x_ij of a regression's p covariates (before standardization; p
    /// numbers; θ is ignored): the first pass of standardizing over shards
    /// (`tallmc_models::ColumnMoments`).
    ColumnSums,
    /// At θ = the column means m (p numbers): [Σ_i (x_ij − m_j)², min_i x_ij, max_i x_ij] (3p
    /// numbers): the second pass. Its extremes are not sums: the caller combines these
    /// partials itself (`ColumnMoments::from_shard_partials`), not with [`add_shard_partials`].
    ColumnDeviations,
    /// The first pass of the design checks (`tallmc_models::DesignRanges`; θ is ignored):
    /// 7d + 4 numbers for a design of d columns, column sums beside extremes, counts and flags,
    /// merged by `DesignRanges::from_partials`.
    DesignRanges,
    /// The second pass of the design checks at θ = a `tallmc_models::GramPlan`'s 3k values:
    /// the upper triangle of a k × k Gram matrix (k² numbers).
    DesignGram,
    /// At θ (the posterior mode): 1 when θ classifies every row of the shard
    /// (`tallmc_models::separates`), else 0. All shards must give 1 for all rows.
    Separates,
    /// Every row's per-datum constant (θ is ignored): one number per row of the shard, in row
    /// order — not a sum; the caller concatenates the shards' (the exact minibatch MH kernels'
    /// bounds, `crate::termwise_bounds`).
    TermConstants {
        /// Which constant.
        constant: TermConstant,
    },
}

impl PassKind {
    /// How many numbers one partial of this kind holds, for dimension `d` (for the column
    /// passes, `d` is the number of covariates p; for the design checks, the design's columns,
    /// and for the Gram pass the plan's k); `None` for [`PassKind::TermConstants`], whose
    /// partial has one number per row of its shard.
    pub fn partial_len(self, d: usize) -> Option<usize> {
        Some(match self {
            Self::Value => 1,
            Self::Gradient => 1 + d,
            Self::Hessian => d * d,
            Self::ControlVariate { order: 0 } => 1 + d,
            Self::ControlVariate { order: 1 } => 1 + d,
            Self::ControlVariate { .. } => 1 + d + d * d,
            Self::ColumnSums => d,
            Self::ColumnDeviations => 3 * d,
            Self::DesignRanges => 7 * d + 4,
            Self::DesignGram => d * d,
            Self::Separates => 1,
            Self::TermConstants { .. } => return None,
        })
    }
}

/// The per-shard partial sums of a model's passes, computed where its shards live.
///
/// **Contract.** `shard_partials(θ, kind)` returns one partial per shard, in shard order,
/// each of `kind.partial_len(d)` numbers (one per row of the shard for
/// [`PassKind::TermConstants`]), equal bit for bit to what the shard's rows give as a
/// one-shard pass in this process (`tallmc_run::shard_sums` is that per-shard code).
pub trait ShardPasses: Send + Sync {
    /// Each shard's partial sums of `kind` at `theta`, in shard order.
    ///
    /// # Errors
    /// The pass could not be computed (a message for the user: which shard, why).
    fn shard_partials(&self, theta: &[f64], kind: PassKind) -> Result<Vec<Vec<f64>>, String>;

    /// Keeps the first failure of a pass whose caller could only give NaN.
    fn note_failure(&self, message: String);

    /// The first failure kept by [`ShardPasses::note_failure`], if any.
    fn failure(&self) -> Option<String>;
}

/// The first failure of a [`ShardPasses`], for implementors.
#[derive(Debug, Default)]
pub struct FirstFailure(Mutex<Option<String>>);

impl FirstFailure {
    /// Keeps `message` unless a failure is kept already.
    pub fn note(&self, message: String) {
        let mut slot = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.get_or_insert(message);
    }

    /// The failure kept, if any.
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// **Overwrites** `out` (of `kind.partial_len(d)` numbers) with the sum over shards of `kind` at
/// `theta`, partials added in shard order. On failure `out` is NaN and the failure is noted
/// with `passes` (see the [module](self) docs) and returned.
pub fn reduce_on_shards(
    passes: &dyn ShardPasses, theta: &[f64], kind: PassKind, out: &mut [f64],
) -> Result<(), String> {
    let result = passes.shard_partials(theta, kind).and_then(|partials| {
        let refs: Vec<&[f64]> = partials.iter().map(Vec::as_slice).collect();
        add_shard_partials(&refs, out).map_err(|e| format!("the shards' partial sums: {e}"))
    });
    if let Err(e) = &result {
        out.fill(f64::NAN);
        passes.note_failure(e.clone());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<Vec<f64>>, FirstFailure);

    impl ShardPasses for Fixed {
        fn shard_partials(&self, _: &[f64], _: PassKind) -> Result<Vec<Vec<f64>>, String> {
            if self.0.is_empty() { Err("worker lost".into()) } else { Ok(self.0.clone()) }
        }
        fn note_failure(&self, message: String) {
            self.1.note(message);
        }
        fn failure(&self) -> Option<String> {
            self.1.get()
        }
    }

    #[test]
    fn partials_are_added_in_shard_order_and_failures_are_kept() {
        let p =
            Fixed(vec![vec![1e16, 1.0], vec![1.0, 2.0], vec![-1e16, 3.0]], FirstFailure::default());
        let mut out = [0.0; 2];
        reduce_on_shards(&p, &[0.0], PassKind::Gradient, &mut out).unwrap();
        // (1e16 + 1) − 1e16 in that order is 0: the order is the shards'.
        assert_eq!(out, [(1e16 + 1.0) - 1e16, 6.0]);
        assert!(p.failure().is_none());
        let lost = Fixed(Vec::new(), FirstFailure::default());
        let e = reduce_on_shards(&lost, &[0.0], PassKind::Value, &mut out[..1]).unwrap_err();
        assert_eq!(e, "worker lost");
        assert!(out[0].is_nan());
        lost.note_failure("second".into());
        assert_eq!(lost.failure().as_deref(), Some("worker lost"), "the first is kept");
        let short = Fixed(vec![vec![1.0]], FirstFailure::default());
        let e = reduce_on_shards(&short, &[0.0], PassKind::Gradient, &mut out).unwrap_err();
        assert!(e.contains("shard partial length"), "{e}");
    }

    #[test]
    fn partial_lengths_follow_the_kind() {
        assert_eq!(PassKind::Value.partial_len(3), Some(1));
        assert_eq!(PassKind::Gradient.partial_len(3), Some(4));
        assert_eq!(PassKind::Hessian.partial_len(3), Some(9));
        assert_eq!(PassKind::ControlVariate { order: 1 }.partial_len(3), Some(4));
        assert_eq!(PassKind::ControlVariate { order: 2 }.partial_len(3), Some(13));
        let constants = PassKind::TermConstants { constant: TermConstant::Lipschitz };
        assert_eq!(constants.partial_len(3), None);
    }
}
