//! Design diagnostics: the columns of a design X̃ (n × d, as the model sees it: intercept and
//! standardization included) whose coefficients the data cannot identify, so that the
//! posterior along them is driven by the prior.
//!
//! [`diagnose_design`] reports, as typed [`DesignFinding`]s:
//!
//! * **constant columns** (x̃_ij = c for every i). A column of zeros leaves the likelihood
//!   independent of its coefficient. A nonzero constant column is collinear with the design's
//!   first nonzero constant column (the intercept, when the design adds one; or a stored
//!   column of ones, as in the higgs-like files): only their coefficients' combination
//!   Σ_j c_j θ_j is identified.
//! * **(near) collinear columns**: column k is, to a relative tolerance τ, a linear combination
//!   of the columns before it (and of the constant column, when there is one).
//! * **separation** (responses all 0 or 1): one column alone separates the classes, so the
//!   logistic likelihood increases without bound along its coefficient; or all responses are
//!   equal.
//!
//! [`separates`] checks the multivariate case at a given θ (typically the posterior mode): a θ
//! with x̃_iᵀθ > 0 for every y_i = 1 and x̃_iᵀθ < 0 for every y_i = 0 is a separating
//! hyperplane, so every multiple tθ (t → ∞) raises the likelihood toward its supremum 1.
//!
//! # Collinearity: the definition and the tolerance
//!
//! Let K be the non-constant columns of X̃, in order. When X̃ has a nonzero constant column
//! (an *anchor*: the intercept or a stored constant), the span of X̃ is the anchor plus the
//! span of the **centred** columns x̃_k − m_k 1 (m_k the column mean), so the check runs on
//! centred columns and finds dependencies "up to a constant" (x₃ = x₁ + 2x₂ + 5 with an
//! intercept); without an anchor it runs on the raw columns. Each column z_k (centred or raw)
//! is scaled to unit norm, u_k = z_k/‖z_k‖, and C = UᵀU (unit diagonal: the correlation matrix
//! in the centred case) is factorized by a Cholesky decomposition **in column order**, skipping
//! columns that fail: at column k,
//!
//! ```text
//! r_k = C_kk − Σ_{j accepted, j < k} L_kj² = 1 − R_k²,
//! ```
//!
//! where R_k² is the (centred or uncentred) coefficient of determination of the least-squares
//! regression of u_k on the accepted earlier columns. Column k is reported when
//! **r_k ≤ τ** (default [`DEFAULT_COLLINEARITY_TOLERANCE`] = 10⁻¹⁰: a variance inflation factor
//! 1/r_k ≥ 10¹⁰; equivalently a pivot below τ · trace(C)/d of the unit-diagonal C), and left
//! out of the factor, so later columns are compared with the accepted ones only. The finding
//! gives the regression coefficients in the design's units, from the triangular solves
//! L_Aᵀ β = l_k. Exact dependencies give r_k at the rounding level (≈ 10⁻¹⁶ n^{1/2}), far
//! below τ; a tolerance near 10⁻⁶ flags near-collinearity (|correlation| > 0.999 999 5 for two
//! columns) too.
//!
//! # Separation
//!
//! With responses in {0, 1} and both classes present, a non-constant column j separates the
//! classes when its values for y = 0 and y = 1 lie on two sides of a threshold t:
//! max_{y_i=0} x̃_ij < min_{y_i=1} x̃_ij (or the reverse) is **complete** separation; with ≤
//! (the classes touch at t) it is **quasi-complete**. In both, the direction θ_j = s,
//! θ_anchor = −s t / c (s → ∞) never lowers and eventually strictly raises every term, so the
//! likelihood has no maximum. Without an anchor the threshold must be t = 0 (x̃_ij < 0 for one
//! class, > 0 for the other). If every response is equal, the intercept alone "separates"
//! ([`DesignFinding::SingleClass`]). A column can separate only with the others' help (the
//! multivariate case); [`separates`] detects that at a given θ.
//!
//! # Cost
//!
//! Two passes over the rows in chunks of 8192 (an O(n d) pass for the column ranges and means,
//! then an O(n d²) pass for C), parallel, with partial results summed in a fixed chunk order, so
//! the findings do not depend on the thread count; memory O(d²) per chunk in flight, nothing
//! proportional to n. Then O(d³) for the factorization.
//!
//! ```
//! use tallmc_models::data::{DEFAULT_COLLINEARITY_TOLERANCE, DesignFinding, diagnose_design};
//! use tallmc_models::{Dataset, DesignMatrix, DesignOptions};
//!
//! // x3 = x1 + 2·x2, and a constant column c, with an intercept.
//! let rows = [[0.5, 1.0], [1.5, -1.0], [2.0, 0.5], [-1.0, 2.0], [0.0, 0.3]];
//! let mut x = Vec::new();
//! for [a, b] in rows {
//!     x.extend([a, b, a + 2.0 * b, 7.0]);
//! }
//! let names = ["x1", "x2", "x3", "c"].map(String::from).to_vec();
//! let data = Dataset::new(x, vec![0.0, 1.0, 0.0, 1.0, 1.0], names)?;
//! let design = DesignMatrix::new(data, DesignOptions::default().with_intercept(true))?;
//! let findings = diagnose_design(&design, DEFAULT_COLLINEARITY_TOLERANCE)?;
//! assert_eq!(findings.len(), 2);
//! assert!(matches!(&findings[0], DesignFinding::ConstantColumn { column, .. } if column == "c"));
//! assert!(matches!(&findings[1], DesignFinding::Collinear { column, .. } if column == "x3"));
//! println!("{}", findings[1].message(10.0));
//! // column `x3` is (nearly) a linear combination of earlier columns: x3 ≈ 1·x1 + 2·x2 …
//! # Ok::<(), tallmc_models::Error>(())
//! ```

use rayon::prelude::*;
use tallmc_core::{Parallelism, ShardLayout, fold_sharded};

use super::PASS_CHUNK_ROWS;
use super::design::{DesignMatrix, Rows, with_rows};
use crate::error::{Error, Result};

/// The default relative tolerance τ of the collinearity check of [`diagnose_design`]: column k
/// is reported when 1 − R_k² ≤ τ (see the [module docs](self)).
pub const DEFAULT_COLLINEARITY_TOLERANCE: f64 = 1e-10;

/// A coefficient of a reported linear combination is listed when its magnitude, in units of
/// the unit-norm columns, is at least this fraction of the largest one (smaller ones are
/// rounding noise for exact dependencies, and negligible for near ones).
const COMBINATION_TERM_FRACTION: f64 = 1e-6;

/// The constant term of a reported combination is listed when it is at least this fraction of
/// the sizes of the centring terms it is computed from.
const COMBINATION_CONSTANT_FRACTION: f64 = 1e-8;

/// A problem of a design that makes some coefficient's posterior driven by the prior (see the
/// [module docs](self) for the definitions). [`DesignFinding::message`] explains it in a
/// sentence; the fields are there for programs (and serialize, tagged by `kind`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DesignFinding {
    /// Column `column` is `value` in every row. With `collinear_with` = `None` the value is 0
    /// and the likelihood does not depend on the column's coefficient; otherwise it is
    /// collinear with that earlier constant column (the intercept, or a stored constant).
    ConstantColumn {
        /// The column's name.
        column: String,
        /// Its value in every row.
        value: f64,
        /// The first nonzero constant column (`intercept` when the design adds one), when
        /// `value` ≠ 0.
        collinear_with: Option<String>,
    },
    /// Column `column` is, up to 1 − R² = `one_minus_r_squared` ≤ `tolerance`, the linear
    /// combination Σ coefficient · column of `combination` (earlier columns, and the constant
    /// column when the check is centred).
    Collinear {
        /// The column's name.
        column: String,
        /// (name, coefficient) of the combination's non-negligible terms, in the design's units:
        /// x̃_column ≈ Σ coefficient · x̃_name.
        combination: Vec<(String, f64)>,
        /// 1 − R² of the regression of the column on the earlier accepted ones.
        one_minus_r_squared: f64,
        /// The tolerance τ it was compared with.
        tolerance: f64,
    },
    /// Column `column` alone separates responses 0 and 1.
    Separation {
        /// The column's name.
        column: String,
        /// (min, max) of the column over the rows with y = 0.
        y0_range: (f64, f64),
        /// (min, max) of the column over the rows with y = 1.
        y1_range: (f64, f64),
        /// `true`: the ranges do not touch (complete separation); `false`: they share their
        /// boundary value (quasi-complete).
        complete: bool,
        /// `true` when the design has no constant column, so the separating threshold is 0.
        through_origin: bool,
    },
    /// Every response is `value` (all 0 or all 1).
    SingleClass {
        /// The one response value.
        value: f64,
        /// The number of rows.
        rows: usize,
    },
}

impl DesignFinding {
    /// The column the finding is about, if one.
    pub fn column(&self) -> Option<&str> {
        match self {
            Self::ConstantColumn { column, .. }
            | Self::Collinear { column, .. }
            | Self::Separation { column, .. } => Some(column),
            Self::SingleClass { .. } => None,
        }
    }

    /// One sentence saying what was found and why it matters, with the model's prior
    /// standard deviation `prior_sd` (the posterior along the unidentified direction is that
    /// prior's).
    pub fn message(&self, prior_sd: f64) -> String {
        let prior = format!(
            "so the posterior along it is driven by the prior (prior sd {})",
            num(prior_sd)
        );
        match self {
            Self::ConstantColumn { column, value, collinear_with: None } => format!(
                "column `{column}` is {} in every row: the likelihood does not depend on its coefficient, {prior}",
                num(*value)
            ),
            Self::ConstantColumn { column, value, collinear_with: Some(other) } => format!(
                "column `{column}` is constant (value {}), so it is collinear with column `{other}`: the data inform only one combination of their two coefficients, {}",
                num(*value),
                prior.replace("along it", "along the other direction")
            ),
            Self::Collinear { column, combination, one_minus_r_squared, tolerance } => {
                let terms: Vec<String> =
                    combination.iter().map(|(name, c)| format!("{}·{name}", num(*c))).collect();
                let sum = if terms.is_empty() { "0".to_string() } else { terms.join(" + ") };
                format!(
                    "column `{column}` is (nearly) a linear combination of earlier columns: {column} ≈ {} (1 − R² = {} ≤ tolerance {}): the data cannot tell its coefficient from theirs, {}",
                    sum.replace("+ -", "− "),
                    num(*one_minus_r_squared),
                    num(*tolerance),
                    prior.replace("along it", "along that direction")
                )
            }
            Self::Separation { column, y0_range, y1_range, complete, through_origin } => {
                let kind = if *complete {
                    "complete separation"
                } else {
                    "quasi-complete separation: the classes touch at one value"
                };
                let origin = if *through_origin {
                    "; the design has no constant column, so the boundary is at 0"
                } else {
                    ""
                };
                format!(
                    "column `{column}` alone separates the responses: it lies in [{}, {}] where y = 0 and in [{}, {}] where y = 1 ({kind}{origin}): the likelihood keeps increasing as its coefficient grows (no finite maximum-likelihood estimate), {prior}",
                    num(y0_range.0),
                    num(y0_range.1),
                    num(y1_range.0),
                    num(y1_range.1),
                )
            }
            Self::SingleClass { value, rows } => format!(
                "every response is {} ({rows} {}): the likelihood keeps increasing as the linear predictor grows toward {} (no finite maximum-likelihood estimate), {}",
                num(*value),
                if *rows == 1 { "row" } else { "rows" },
                if *value == 0.0 { "−∞" } else { "+∞" },
                prior.replace("along it", "along that direction")
            ),
        }
    }
}

/// `x` rounded to 6 significant digits, printed in its shortest form, with an exponent outside
/// [10⁻⁴, 10⁶) (`2`, `0.333333`, `3.33067e-16`).
fn num(x: f64) -> String {
    let r: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    if r == 0.0 || !r.is_finite() || (1e-4..1e6).contains(&r.abs()) {
        format!("{r}")
    } else {
        format!("{r:e}")
    }
}

/// The first pass of the design checks over some rows: column means and ranges, overall and
/// per class. A whole design's comes from [`DesignRanges::of`]; the partials of shards checked
/// apart ([`DesignRanges::to_partial`]) are merged in shard order by
/// [`DesignRanges::from_partials`], with the bits of the pass over the same shards here.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignRanges {
    /// Σ_i x̃_ij / N (the mean over all N rows, accumulated scaled so that it cannot overflow).
    mean: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    /// (min, max) per column over the rows with y = 0 and with y = 1.
    class_min: [Vec<f64>; 2],
    class_max: [Vec<f64>; 2],
    class_rows: [usize; 2],
    /// Whether every response is 0 or 1.
    binary: bool,
    /// Whether every entry is finite.
    finite: bool,
}

impl DesignRanges {
    fn empty(d: usize) -> Self {
        let lo = vec![f64::INFINITY; d];
        let hi = vec![f64::NEG_INFINITY; d];
        Self {
            mean: vec![0.0; d],
            min: lo.clone(),
            max: hi.clone(),
            class_min: [lo.clone(), lo],
            class_max: [hi.clone(), hi],
            class_rows: [0, 0],
            binary: true,
            finite: true,
        }
    }

    fn merge(&mut self, o: Self) {
        for (a, b) in self.mean.iter_mut().zip(&o.mean) {
            *a += b;
        }
        merge_min(&mut self.min, &o.min);
        merge_max(&mut self.max, &o.max);
        for c in 0..2 {
            merge_min(&mut self.class_min[c], &o.class_min[c]);
            merge_max(&mut self.class_max[c], &o.class_max[c]);
            self.class_rows[c] += o.class_rows[c];
        }
        self.binary &= o.binary;
        self.finite &= o.finite;
    }

    /// The first pass over `design`'s rows, reduced over its data's shards (one when it has
    /// none), the means taken over `total_rows` rows: `design.len()` for a whole design, the
    /// whole data set's N for one shard of it.
    pub fn of(design: &DesignMatrix, total_rows: usize) -> Self {
        let y = design.y();
        let d = design.dim();
        let layout = layout_of(design);
        let ranges = with_rows!(design, r => fold_sharded(
            &layout,
            PASS_CHUNK_ROWS,
            Parallelism::Rayon,
            |lo, hi| ranges(&r, y, lo as usize, hi as usize, total_rows),
            Self::merge,
        ));
        ranges.unwrap_or_else(|| Self::empty(d))
    }

    /// The numbers of one partial for a design of `d` columns: 7d + 4.
    pub fn partial_len(d: usize) -> usize {
        7 * d + 4
    }

    /// The pass's results as [`DesignRanges::partial_len`] numbers: the means, minima,
    /// maxima, per-class minima and maxima (y = 0, then 1), the two class counts, and the
    /// binary and finite flags (1 or 0).
    pub fn to_partial(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(Self::partial_len(self.mean.len()));
        for part in [&self.mean, &self.min, &self.max] {
            out.extend_from_slice(part);
        }
        for c in 0..2 {
            out.extend_from_slice(&self.class_min[c]);
            out.extend_from_slice(&self.class_max[c]);
        }
        out.extend(self.class_rows.map(|n| n as f64));
        out.extend([f64::from(u8::from(self.binary)), f64::from(u8::from(self.finite))]);
        out
    }

    /// The partials of shards checked apart ([`DesignRanges::to_partial`], each over its own
    /// rows with the means over all N), merged in shard order.
    ///
    /// # Errors
    /// No partial, or one of a length other than 7d + 4.
    pub fn from_partials(d: usize, partials: &[Vec<f64>]) -> Result<Self> {
        let mut total: Option<Self> = None;
        for (s, p) in partials.iter().enumerate() {
            if p.len() != Self::partial_len(d) {
                return Err(Error::invalid(
                    "design ranges partial length",
                    format!("{} (shard {s})", p.len()),
                    format!("7d + 4 = {} numbers", Self::partial_len(d)),
                ));
            }
            let part = |k: usize| p[k * d..(k + 1) * d].to_vec();
            let next = Self {
                mean: part(0),
                min: part(1),
                max: part(2),
                class_min: [part(3), part(5)],
                class_max: [part(4), part(6)],
                class_rows: [p[7 * d] as usize, p[7 * d + 1] as usize],
                binary: p[7 * d + 2] != 0.0,
                finite: p[7 * d + 3] != 0.0,
            };
            match &mut total {
                Some(acc) => acc.merge(next),
                None => total = Some(next),
            }
        }
        total.ok_or_else(|| Error::invalid("design ranges partials", "none", "one per shard"))
    }
}

fn merge_min(a: &mut [f64], b: &[f64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.min(*y);
    }
}

fn merge_max(a: &mut [f64], b: &[f64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.max(*y);
    }
}

fn layout_of(design: &DesignMatrix) -> ShardLayout {
    design.data().shard_layout().cloned().unwrap_or_else(|| ShardLayout::single(design.len()))
}

/// The first pass over rows lo..hi, means over `total_rows`.
fn ranges<R: Rows>(r: &R, y: &[f64], lo: usize, hi: usize, total_rows: usize) -> DesignRanges {
    let d = r.dim();
    let inv_n = 1.0 / total_rows as f64;
    let mut acc = DesignRanges::empty(d);
    let mut row = vec![0.0; d];
    for (i, &yi) in (lo..hi).zip(&y[lo..hi]) {
        r.set_row(i, 1.0, &mut row);
        let class = if yi == 0.0 {
            Some(0)
        } else if yi == 1.0 {
            Some(1)
        } else {
            acc.binary = false;
            None
        };
        if let Some(c) = class {
            acc.class_rows[c] += 1;
        }
        for (j, &v) in row.iter().enumerate() {
            acc.finite &= v.is_finite();
            acc.mean[j] += v * inv_n;
            acc.min[j] = acc.min[j].min(v);
            acc.max[j] = acc.max[j].max(v);
            if let Some(c) = class {
                acc.class_min[c][j] = acc.class_min[c][j].min(v);
                acc.class_max[c][j] = acc.class_max[c][j].max(v);
            }
        }
    }
    acc
}

/// What the second pass of the design checks needs from the first: the non-constant columns
/// `cols` of X̃, and z_ij = (x̃_ij − centre_j) / scale_j for each.
#[derive(Debug, Clone, PartialEq)]
pub struct GramPlan {
    cols: Vec<usize>,
    centre: Vec<f64>,
    scale: Vec<f64>,
}

impl GramPlan {
    /// The number k of columns compared (the Gram matrix is k × k).
    pub fn len(&self) -> usize {
        self.cols.len()
    }

    /// Whether no column is compared.
    pub fn is_empty(&self) -> bool {
        self.cols.is_empty()
    }

    /// The plan as 3k numbers: the columns' indices, their centres, their scales (how a
    /// cluster's tasks receive it).
    pub fn to_values(&self) -> Vec<f64> {
        let mut out: Vec<f64> = self.cols.iter().map(|&j| j as f64).collect();
        out.extend_from_slice(&self.centre);
        out.extend_from_slice(&self.scale);
        out
    }

    /// The plan of [`GramPlan::to_values`], for a design of `d` columns.
    ///
    /// # Errors
    /// A length that is not a multiple of 3, a column index that is not one of 0..d in
    /// increasing order.
    pub fn from_values(values: &[f64], d: usize) -> Result<Self> {
        let k = values.len() / 3;
        let bad = |what: String| {
            Error::invalid(
                "Gram plan",
                what,
                "3k numbers: k increasing column indices < d, k centres, k scales",
            )
        };
        if values.len() != 3 * k {
            return Err(bad(format!("{} numbers", values.len())));
        }
        let mut cols = Vec::with_capacity(k);
        for &v in &values[..k] {
            let ok = v >= 0.0 && v.fract() == 0.0 && v < d as f64;
            if !ok || cols.last().is_some_and(|&last| last as f64 >= v) {
                return Err(bad(format!("column index {v} (d = {d})")));
            }
            cols.push(v as usize);
        }
        Ok(Self { cols, centre: values[k..2 * k].to_vec(), scale: values[2 * k..].to_vec() })
    }
}

/// The second pass over `design`'s rows, reduced over its data's shards: the upper triangle
/// of ZᵀZ (row-major k × k, k = `plan.len()`), z_ij = (x̃_ij − centre_j) / scale_j over the
/// plan's columns.
pub fn design_gram(design: &DesignMatrix, plan: &GramPlan) -> Vec<f64> {
    let k = plan.len();
    let layout = layout_of(design);
    let g = with_rows!(design, r => fold_sharded(
        &layout,
        PASS_CHUNK_ROWS,
        Parallelism::Rayon,
        |lo, hi| gram(&r, plan, lo as usize, hi as usize),
        |acc: &mut Vec<f64>, next| add_gram(acc, &next),
    ));
    g.unwrap_or_else(|| vec![0.0; k * k])
}

/// The Gram partials of shards checked apart ([`design_gram`] on each), added in shard order.
///
/// # Errors
/// No partial, or one of a length other than k².
pub fn gram_from_partials(k: usize, partials: &[Vec<f64>]) -> Result<Vec<f64>> {
    let mut total: Option<Vec<f64>> = None;
    for (s, p) in partials.iter().enumerate() {
        if p.len() != k * k {
            return Err(Error::invalid(
                "Gram partial length",
                format!("{} (shard {s})", p.len()),
                format!("k² = {} numbers", k * k),
            ));
        }
        match &mut total {
            Some(acc) => add_gram(acc, p),
            None => total = Some(p.clone()),
        }
    }
    total.ok_or_else(|| Error::invalid("Gram partials", "none", "one per shard"))
}

fn add_gram(acc: &mut [f64], next: &[f64]) {
    for (a, b) in acc.iter_mut().zip(next) {
        *a += b;
    }
}

/// The second pass over rows lo..hi.
fn gram<R: Rows>(r: &R, plan: &GramPlan, lo: usize, hi: usize) -> Vec<f64> {
    let (d, k) = (r.dim(), plan.len());
    let (mut g, mut row, mut z) = (vec![0.0; k * k], vec![0.0; d], vec![0.0; k]);
    for i in lo..hi {
        r.set_row(i, 1.0, &mut row);
        for (t, &j) in plan.cols.iter().enumerate() {
            z[t] = (row[j] - plan.centre[t]) / plan.scale[t];
        }
        for a in 0..k {
            let za = z[a];
            for b in a..k {
                g[a * k + b] += za * z[b];
            }
        }
    }
    g
}

/// Finds the constant, (near) collinear and separating columns of `design` (see the
/// [module docs](self) for the definitions, the tolerance and the cost), in the order:
/// constant columns, collinear columns, separating columns (each in column order), then a
/// single-class response. An empty list means none was found.
///
/// `collinearity_tolerance` is τ of the collinearity check (1 − R² ≤ τ is reported); use
/// [`DEFAULT_COLLINEARITY_TOLERANCE`] for exact (up to rounding) dependencies. Separation is
/// checked only when every response is 0 or 1.
///
/// Errors: τ not in [0, 1); a NaN or infinite design entry (memory-mapped data may skip the
/// loader's check), naming its row and column.
pub fn diagnose_design(
    design: &DesignMatrix, collinearity_tolerance: f64,
) -> Result<Vec<DesignFinding>> {
    if design.dim() == 0 {
        check_tolerance(collinearity_tolerance)?;
        return Ok(Vec::new());
    }
    let ranges = DesignRanges::of(design, design.len());
    if !ranges.finite {
        design.data().check_finite()?;
    }
    let names = design.column_names();
    findings_from(&names, collinearity_tolerance, &ranges, |plan| {
        Ok::<_, Error>(design_gram(design, plan))
    })
}

fn check_tolerance(tolerance: f64) -> Result<()> {
    if !(0.0..1.0).contains(&tolerance) {
        return Err(Error::invalid(
            "collinearity_tolerance",
            tolerance,
            "a number in [0, 1) (1 − R² at or below it is reported; default 1e-10)",
        ));
    }
    Ok(())
}

/// [`diagnose_design`] from the first pass's `ranges` over all rows of a design whose columns
/// are `names`, with `gram` making the second pass for a plan (here, or over shards elsewhere:
/// [`design_gram`] on each, added by [`gram_from_partials`]).
///
/// # Errors
/// τ not in [0, 1); ranges with a non-finite entry; `gram`'s error.
pub fn findings_from<E: From<Error>>(
    names: &[String], collinearity_tolerance: f64, ranges: &DesignRanges,
    gram: impl FnOnce(&GramPlan) -> std::result::Result<Vec<f64>, E>,
) -> std::result::Result<Vec<DesignFinding>, E> {
    check_tolerance(collinearity_tolerance)?;
    let stats = ranges;
    let d = names.len();
    if d == 0 {
        return Ok(Vec::new());
    }
    if !stats.finite {
        return Err(Error::invalid(
            "design",
            "a non-finite entry",
            "finite entries (the standardization overflowed: rescale the covariates)",
        )
        .into());
    }
    let mut findings = Vec::new();

    // Constant columns; the anchor is the first nonzero one.
    let constant: Vec<bool> = (0..d).map(|j| stats.min[j] == stats.max[j]).collect();
    let anchor = (0..d).find(|&j| constant[j] && stats.min[j] != 0.0);
    for j in (0..d).filter(|&j| constant[j]) {
        let value = stats.min[j];
        if value == 0.0 {
            findings.push(DesignFinding::ConstantColumn {
                column: names[j].clone(),
                value,
                collinear_with: None,
            });
        } else if let Some(a) = anchor.filter(|&a| a != j) {
            findings.push(DesignFinding::ConstantColumn {
                column: names[j].clone(),
                value,
                collinear_with: Some(names[a].clone()),
            });
        }
    }

    // Collinearity among the non-constant columns (centred when there is an anchor).
    let cols: Vec<usize> = (0..d).filter(|&j| !constant[j]).collect();
    let centre: Vec<f64> =
        cols.iter().map(|&j| if anchor.is_some() { stats.mean[j] } else { 0.0 }).collect();
    // Scaling each column by its largest |x̃_ij − centre_j| before squaring avoids overflow
    // and underflow; it cancels in the unit-norm columns.
    let scale: Vec<f64> = cols
        .iter()
        .zip(&centre)
        .map(|(&j, c)| (stats.max[j] - c).abs().max((stats.min[j] - c).abs()))
        .collect();
    let plan = GramPlan { cols, centre, scale };
    if !plan.is_empty() {
        let g = gram(&plan)?;
        findings.extend(collinear_columns(
            &g,
            &plan.cols,
            &plan.centre,
            &plan.scale,
            names,
            anchor.map(|a| (names[a].as_str(), stats.min[a])),
            collinearity_tolerance,
        ));
    }
    let cols = plan.cols;

    // Separation, for 0/1 responses.
    if stats.binary {
        let [n0, n1] = stats.class_rows;
        if n0 == 0 || n1 == 0 {
            let value = if n0 == 0 { 1.0 } else { 0.0 };
            findings.push(DesignFinding::SingleClass { value, rows: n0 + n1 });
        } else {
            for &j in &cols {
                let y0 = (stats.class_min[0][j], stats.class_max[0][j]);
                let y1 = (stats.class_min[1][j], stats.class_max[1][j]);
                if let Some(complete) = separation(y0, y1, anchor.is_none()) {
                    findings.push(DesignFinding::Separation {
                        column: names[j].clone(),
                        y0_range: y0,
                        y1_range: y1,
                        complete,
                        through_origin: anchor.is_none(),
                    });
                }
            }
        }
    }
    Ok(findings)
}

/// Whether a column with ranges `y0` (over y = 0) and `y1` (over y = 1) separates the classes:
/// `Some(true)` completely, `Some(false)` quasi-completely, `None` not at all. With
/// `through_origin` the threshold must be 0.
fn separation(y0: (f64, f64), y1: (f64, f64), through_origin: bool) -> Option<bool> {
    // (low class range, high class range), in both orders.
    for (low, high) in [(y0, y1), (y1, y0)] {
        let (complete, quasi) = if through_origin {
            (low.1 < 0.0 && high.0 > 0.0, low.1 <= 0.0 && high.0 >= 0.0)
        } else {
            (low.1 < high.0, low.1 <= high.0)
        };
        if complete {
            return Some(true);
        }
        if quasi {
            return Some(false);
        }
    }
    None
}

/// The in-order Cholesky factorization with skipping of the module docs, over the scaled Gram
/// matrix `g` (upper triangle, k × k) of the columns `cols`; one finding per skipped column.
fn collinear_columns(
    g: &[f64], cols: &[usize], centre: &[f64], scale: &[f64], names: &[String],
    anchor: Option<(&str, f64)>, tolerance: f64,
) -> Vec<DesignFinding> {
    let k = cols.len();
    // ‖z_a‖ ≥ 1: the row attaining the scale has |z_ia| = 1.
    let norm: Vec<f64> = (0..k).map(|a| g[a * k + a].sqrt()).collect();
    let corr = |a: usize, b: usize| {
        let (lo, hi) = (a.min(b), a.max(b));
        g[lo * k + hi] / (norm[lo] * norm[hi])
    };
    let mut findings = Vec::new();
    // Accepted columns (indices into `cols`) and the rows of their factor L (lower triangular).
    let mut accepted: Vec<usize> = Vec::new();
    let mut factor: Vec<Vec<f64>> = Vec::new();
    for a in 0..k {
        // l = L_A⁻¹ C_{A,a} by forward substitution.
        let mut l = Vec::with_capacity(accepted.len());
        for (t, &b) in accepted.iter().enumerate() {
            let row = &factor[t];
            let s: f64 = (0..t).map(|u| l[u] * row[u]).sum();
            l.push((corr(a, b) - s) / row[t]);
        }
        let r = 1.0 - l.iter().map(|v| v * v).sum::<f64>();
        if r > tolerance {
            l.push(r.sqrt());
            factor.push(l);
            accepted.push(a);
            continue;
        }
        // β = L_A⁻ᵀ l by back substitution: u_a ≈ Σ_t β_t u_{accepted[t]}.
        let m = accepted.len();
        let mut beta = vec![0.0; m];
        for t in (0..m).rev() {
            let s: f64 = (t + 1..m).map(|u| factor[u][t] * beta[u]).sum();
            beta[t] = (l[t] - s) / factor[t][t];
        }
        // In the design's units: x̃_a − c_a ≈ Σ_t γ_t (x̃_b − c_b), γ_t = β_t ‖z_a‖ s_a / (‖z_b‖ s_b).
        let largest = beta.iter().fold(0.0_f64, |m, b| m.max(b.abs()));
        let mut combination = Vec::new();
        let (mut constant, mut constant_size) = (centre[a], centre[a].abs());
        for (t, &b) in accepted.iter().enumerate() {
            let gamma = beta[t] * norm[a] * scale[a] / (norm[b] * scale[b]);
            constant -= gamma * centre[b];
            constant_size += (gamma * centre[b]).abs();
            if beta[t].abs() >= COMBINATION_TERM_FRACTION * largest && beta[t] != 0.0 {
                combination.push((names[cols[b]].clone(), gamma));
            }
        }
        if let Some((name, value)) = anchor
            && constant.abs() > COMBINATION_CONSTANT_FRACTION * constant_size
        {
            combination.insert(0, (name.to_string(), constant / value));
        }
        findings.push(DesignFinding::Collinear {
            column: names[cols[a]].clone(),
            combination,
            one_minus_r_squared: r.max(0.0),
            tolerance,
        });
    }
    findings
}

/// Whether θ separates the responses: x̃_iᵀθ > 0 for every row with y_i = 1 and x̃_iᵀθ < 0 for
/// every row with y_i = 0, i.e. the hyperplane x̃ᵀθ = 0 classifies every row correctly with
/// the right sign. Applied at the posterior mode of a logistic regression, `true` means
/// (multivariate) complete separation: the likelihood increases without bound along θ, so the
/// posterior in that direction is driven by the prior.
///
/// Cost: at most one parallel pass over the rows (n dot products), stopping at the first row
/// that is not separated.
///
/// Errors: `theta.len()` ≠ `design.dim()`, `y.len()` ≠ `design.len()`, a non-finite θ, or a
/// response other than 0 and 1 (naming its row and, for CSV data, the line).
pub fn separates(design: &DesignMatrix, y: &[f64], theta: &[f64]) -> Result<bool> {
    if theta.len() != design.dim() {
        return Err(Error::dimension(
            "θ (one coefficient per design column)",
            design.dim(),
            theta.len(),
        ));
    }
    if y.len() != design.len() {
        return Err(Error::dimension("responses y (one per design row)", design.len(), y.len()));
    }
    if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid("θ", format!("θ[{j}] = {}", theta[j]), "finite coefficients"));
    }
    if let Some(i) = y.iter().position(|&v| v != 0.0 && v != 1.0) {
        return Err(Error::InvalidResponse {
            at: design.data().response_location(i),
            value: y[i],
            expected: "0 or 1",
        });
    }
    fn all_separated<R: Rows>(r: &R, y: &[f64], theta: &[f64]) -> bool {
        let n = r.len();
        (0..n.div_ceil(PASS_CHUNK_ROWS)).into_par_iter().all(|c| {
            let lo = c * PASS_CHUNK_ROWS;
            (lo..(lo + PASS_CHUNK_ROWS).min(n)).all(|i| {
                let eta = r.predictor(i, theta);
                if y[i] == 1.0 { eta > 0.0 } else { eta < 0.0 }
            })
        })
    }
    Ok(with_rows!(design, r => all_separated(&r, y, theta)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_printed_with_six_significant_digits() {
        let cases = [
            (2.0, "2"),
            (2.0000000000000004, "2"),
            (1.0 / 3.0, "0.333333"),
            (-2.5, "-2.5"),
            (1e-10, "1e-10"),
            (3.33066907387547e-16, "3.33067e-16"),
            (123_456_789.0, "1.23457e8"),
            (0.0, "0"),
        ];
        for (x, want) in cases {
            assert_eq!(num(x), want, "{x}");
        }
    }

    #[test]
    fn separation_needs_disjoint_or_touching_ranges() {
        // (y = 0 range, y = 1 range, through the origin) → finding.
        assert_eq!(separation((0.0, 1.0), (1.5, 2.0), false), Some(true));
        assert_eq!(separation((1.5, 2.0), (0.0, 1.0), false), Some(true));
        assert_eq!(separation((0.0, 1.0), (1.0, 2.0), false), Some(false));
        assert_eq!(separation((0.0, 1.1), (1.0, 2.0), false), None);
        assert_eq!(separation((-2.0, -0.5), (0.5, 2.0), true), Some(true));
        assert_eq!(separation((-2.0, 0.0), (0.0, 2.0), true), Some(false));
        assert_eq!(separation((0.1, 1.0), (1.5, 2.0), true), None);
        assert_eq!(separation((0.5, 2.0), (-2.0, -0.5), true), Some(true));
    }
}
