//! A regression's design from the run's data: the intercept and standardization, and a count
//! model's offset or exposure column, which leaves the covariates for the linear predictor.

use anyhow::{Result, bail};
use tallmc_models::{Dataset, DesignMatrix, DesignOptions};

use crate::spec::{OffsetSpec, RegressionSpec};

/// The design of `r` on `data`, with the offset `offset` names (a column split off the
/// covariates; an exposure's values must be > 0 and their logs are the offset).
pub(crate) fn regression_design(
    data: Dataset, r: &RegressionSpec, offset: Option<&OffsetSpec>,
) -> Result<DesignMatrix> {
    let options = DesignOptions { intercept: r.intercept, standardize: r.standardize };
    let design = |data: Dataset| match &r.column_moments {
        Some(moments) if r.standardize => DesignMatrix::with_moments(data, options, moments),
        _ => DesignMatrix::new(data, options),
    };
    let (data, offset) = split_offset(data, offset)?;
    let design = design(data)?;
    Ok(match offset {
        Some((values, name)) => design.with_offset(values, name)?,
        None => design,
    })
}

/// The covariates of a regression's design on `data` (before the intercept and
/// standardization): `data` without the offset or exposure column the model reads.
pub(crate) fn design_covariates(data: Dataset, offset: Option<&OffsetSpec>) -> Result<Dataset> {
    Ok(split_offset(data, offset)?.0)
}

/// An offset's values (an exposure's logs) and the column's name.
type OffsetColumn<'a> = (Vec<f64>, &'a str);

/// `data` without the offset or exposure column `offset` names, and that column.
fn split_offset(
    data: Dataset, offset: Option<&OffsetSpec>,
) -> Result<(Dataset, Option<OffsetColumn<'_>>)> {
    let Some((name, exposure)) = offset.and_then(OffsetSpec::column) else {
        return Ok((data, None));
    };
    let flag = if exposure { "--exposure" } else { "--offset" };
    if !data.covariate_names().iter().any(|c| c == name) {
        bail!(
            "{flag} {name}: no such column in {}; its columns besides y are {}",
            data.source().map_or("the data".to_string(), |p| p.display().to_string()),
            data.covariate_names().join(", ")
        );
    }
    let (data, mut values) = data.split_off_column(name)?;
    if exposure {
        if let Some(row) = values.iter().position(|&t| !(t > 0.0 && t.is_finite())) {
            let at = data.location(row);
            bail!(
                "--exposure {name}: expected values > 0 (an exposure, whose log is the offset), \
                 and {at} has {}",
                values[row]
            );
        }
        values.iter_mut().for_each(|t| *t = t.ln());
    }
    Ok((data, Some((values, name))))
}
