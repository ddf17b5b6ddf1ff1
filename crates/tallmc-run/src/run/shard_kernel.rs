//! The per-shard kernel of a distributed pass: the partial sums of one shard's rows, computed
//! where the shard lives (a Dask worker), with the bits the whole run's reduction gives that
//! shard (`tallmc_core::shards`). The driver adds the partials in shard order with
//! `tallmc_core::add_shard_partials`.

use anyhow::{Result, bail};
use tallmc_core::{FullData, Parallelism, PassKind, ShardLayout, reduce_sharded};
use tallmc_estimators::{ControlVariate, CvOrder};
use tallmc_models::{
    Dataset, DesignMatrix, DesignRanges, GramPlan, column_deviations, column_sums, design_gram,
    separates,
};

use super::design_of::design_covariates;
use super::{SpecModel, WithModel, build_model};
use crate::spec::ModelSpec;

/// The partial sums of `kind` at `theta` over `rows` — one shard of a data set of
/// `total_rows` rows — for the model `model` describes: the numbers the whole run's
/// reduction gives this shard, bit for bit (the model's range sums do not depend on where the
/// rows sit). Runs on the current rayon pool. On rows that carry their own shards
/// (`Dataset::with_shard_lengths`), the whole reduction over them: what the driver's local
/// run computes.
///
/// The column passes ([`PassKind::ColumnSums`], [`PassKind::ColumnDeviations`] at θ = the
/// means) read the design's covariates: the rows without the offset or exposure column.
/// [`PassKind::TermConstants`] gives one number per row: the model's per-datum constant.
///
/// Errors: a model that standardizes its covariates without the moments of all the shards in
/// its spec (`RegressionSpec::column_moments`, which [`setup_on_shards`](super::setup_on_shards)
/// computes first), a column pass for a model without covariates, a model defined in code, a θ
/// of the wrong length, a bad order.
pub fn shard_sums(
    model: &ModelSpec, rows: Dataset, theta: &[f64], kind: PassKind, total_rows: usize,
) -> Result<Vec<f64>> {
    if matches!(kind, PassKind::ColumnSums | PassKind::ColumnDeviations) {
        return column_pass(model, rows, theta, kind);
    }
    if model.regression().is_some_and(|r| r.standardize && r.column_moments.is_none()) {
        bail!(
            "a pass over one shard cannot standardize the covariates by that shard's rows alone: \
             the model's spec needs the column means and sds of all the shards \
             (column_moments, computed first by the set-up over shards)"
        );
    }
    build_model(model, rows, ShardPass { theta, kind, total_rows })
}

/// A pass of the design checks over one shard's design.
fn design_pass(
    design: &DesignMatrix, theta: &[f64], kind: PassKind, total_rows: usize,
) -> Result<Vec<f64>> {
    Ok(match kind {
        PassKind::DesignRanges => DesignRanges::of(design, total_rows).to_partial(),
        PassKind::DesignGram => design_gram(design, &GramPlan::from_values(theta, design.dim())?),
        _ => vec![f64::from(u8::from(separates(design, design.y(), theta)?))],
    })
}

/// A column pass of standardization over `rows`' design covariates.
fn column_pass(
    model: &ModelSpec, rows: Dataset, means: &[f64], kind: PassKind,
) -> Result<Vec<f64>> {
    if model.regression().is_none() {
        bail!(
            "the column passes standardize a regression's covariates; {} has none",
            model.family()
        );
    }
    let covariates = design_covariates(rows, model.offset())?;
    Ok(if kind == PassKind::ColumnSums {
        column_sums(&covariates)
    } else {
        let p = covariates.num_covariates();
        if means.len() != p {
            bail!("the column deviations need {p} means (one per covariate); got {}", means.len());
        }
        column_deviations(&covariates, means)
    })
}

/// [`shard_sums`] on a built model.
struct ShardPass<'a> {
    theta: &'a [f64],
    kind: PassKind,
    total_rows: usize,
}

impl WithModel for ShardPass<'_> {
    type Out = Vec<f64>;
    fn with<M: SpecModel>(self, model: &M) -> Result<Vec<f64>> {
        let d = model.dim();
        let checks = matches!(
            self.kind,
            PassKind::DesignRanges | PassKind::DesignGram | PassKind::TermConstants { .. }
        );
        if !checks && self.theta.len() != d {
            bail!("θ has {} coordinates; the model has d = {d}", self.theta.len());
        }
        let theta = self.theta;
        let par = Parallelism::Rayon;
        Ok(match self.kind {
            PassKind::Value => vec![FullData::for_model(model, par).log_likelihood(model, theta)],
            PassKind::Gradient => {
                let mut out = vec![0.0; 1 + d];
                let (v, g) = out.split_first_mut().expect("1 + d numbers");
                *v = FullData::for_model(model, par).log_likelihood_grad(model, theta, g);
                out
            }
            PassKind::Hessian => {
                let mut out = vec![0.0; d * d];
                let layout = model
                    .shard_layout()
                    .cloned()
                    .unwrap_or_else(|| ShardLayout::single(model.num_terms()));
                let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
                    slot.fill(0.0);
                    model.sum_hessian_range(theta, lo, hi, slot);
                };
                let chunk = FullData::hessian_chunk(self.total_rows);
                reduce_sharded(&layout, chunk, par, partial, &mut out, &mut Vec::new());
                out
            }
            PassKind::ColumnSums | PassKind::ColumnDeviations => {
                bail!("the column passes read the covariates, not the model (column_pass)")
            }
            PassKind::DesignRanges | PassKind::DesignGram | PassKind::Separates => {
                let Some(design) = model.design_matrix() else {
                    bail!("the design checks read a regression's design; this model has none")
                };
                design_pass(design, theta, self.kind, self.total_rows)?
            }
            PassKind::TermConstants { constant } => model.term_constants(constant)?,
            PassKind::ControlVariate { order } => {
                let order = CvOrder::from_number(order)?;
                let (cv, _) = ControlVariate::new_on_all_cores(model, theta, order)?;
                let mut out = vec![cv.sum_at_center()];
                out.extend_from_slice(cv.gradient_sum());
                out.extend_from_slice(cv.hessian_sum());
                out
            }
        })
    }
}
