//! The design matrix X̃ the regression models read: the data set's covariates with an optional
//! intercept column (prepended) and optional standardization, applied **on the fly** so that a
//! memory-mapped data set is never copied.
//!
//! With intercept flag c ∈ {0, 1}, column means m_j and population standard deviations s_j
//! (divisor n) of the p covariates, row i of X̃ has dimension c + p:
//!
//! ```text
//! x̃_i = (1, (x_i1 − m_1)/s_1, …, (x_ip − m_p)/s_p)    (intercept, standardized)
//! x̃_i = (x_i1, …, x_ip)                                (no options: the raw row)
//! ```
//!
//! The hot-path operations are [`Rows::dot`] (x̃_iᵀθ, four accumulators), [`Rows::add_row`]
//! (out += a·x̃_i) and [`Rows::set_row`] (out = a·x̃_i); each is O(p), allocates nothing, and has
//! a fast path ([`PlainRows`]) when there is no standardization. Models match once per batch on
//! [`DesignMatrix::rows`] and run a loop generic over [`Rows`].

use std::sync::Arc;

use rayon::prelude::*;

use super::{ColumnMoments, Dataset, PASS_CHUNK_ROWS};
use crate::error::{Error, Result};

/// How a [`DesignMatrix`] derives its columns from a data set's covariates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DesignOptions {
    /// Prepend a column of ones (default `false`). Leave off for files that already hold an
    /// intercept column, like the higgs-like binary files (d = 29 including x_i0 = 1).
    pub intercept: bool,
    /// Centre every covariate column by its mean and scale it by its population standard
    /// deviation (divisor n), computed once over all n rows (default `false`). A constant
    /// column is an error.
    pub standardize: bool,
}

impl DesignOptions {
    /// Sets [`DesignOptions::intercept`].
    pub fn with_intercept(mut self, intercept: bool) -> Self {
        self.intercept = intercept;
        self
    }

    /// Sets [`DesignOptions::standardize`].
    pub fn with_standardize(mut self, standardize: bool) -> Self {
        self.standardize = standardize;
        self
    }
}

/// The name of the intercept column a design adds ([`DesignMatrix::column_names`]).
pub const INTERCEPT_NAME: &str = "intercept";

/// Column means and inverse standard deviations of a standardized design.
#[derive(Debug, Clone)]
struct Affine {
    mean: Vec<f64>,
    sd: Vec<f64>,
    inv_sd: Vec<f64>,
}

impl From<ColumnMoments> for Affine {
    fn from(m: ColumnMoments) -> Self {
        let inv_sd = m.sd.iter().map(|s| 1.0 / s).collect();
        Self { mean: m.mean, sd: m.sd, inv_sd }
    }
}

/// Covariates with an optional intercept and optional standardization, shared by the
/// regression models (see the module docs for the definition of x̃_i).
///
/// Holds an `Arc<Dataset>`, so several models can share one (memory-mapped) data set.
#[derive(Debug, Clone)]
pub struct DesignMatrix {
    data: Arc<Dataset>,
    options: DesignOptions,
    offset: usize,
    affine: Option<Affine>,
    /// An offset o_i added to every linear predictor (`with_offset`).
    eta_offset: Option<Arc<[f64]>>,
}

impl DesignMatrix {
    /// A design over `data` with the given options. With standardization this makes two
    /// deterministic parallel passes over the covariates (means, then sums of squared
    /// deviations) and fails with [`Error::ConstantColumn`] naming a constant column.
    ///
    /// With an intercept, a covariate named `intercept` is an error ([`Error::ReservedName`]):
    /// the design's first column has that name ([`DesignMatrix::column_names`]).
    pub fn new(data: impl Into<Arc<Dataset>>, options: DesignOptions) -> Result<Self> {
        let data = data.into();
        if options.intercept && data.covariate_names().iter().any(|n| n == INTERCEPT_NAME) {
            return Err(Error::ReservedName {
                source_name: data.source_name(),
                name: INTERCEPT_NAME.to_string(),
                reserved_for: "the intercept column the design adds",
                remedy: "rename the covariate; or, if it is a column of ones, drop it and keep the added intercept, or turn the added intercept off",
            });
        }
        let affine = if options.standardize && data.num_covariates() > 0 {
            Some(Affine::from(ColumnMoments::of(&data)?))
        } else {
            None
        };
        Ok(Self { data, options, offset: usize::from(options.intercept), affine, eta_offset: None })
    }

    /// A design over `data` standardized by given column `moments` — those of all the rows
    /// these are part of (computed over shards elsewhere, [`ColumnMoments::from_shard_partials`])
    /// — instead of the moments of `data`'s own rows. `options.standardize` must be on.
    ///
    /// # Errors
    /// As [`DesignMatrix::new`]; moments not for `data`'s covariates ([`ColumnMoments::check`]);
    /// standardization off.
    pub fn with_moments(
        data: impl Into<Arc<Dataset>>, options: DesignOptions, moments: &ColumnMoments,
    ) -> Result<Self> {
        if !options.standardize {
            return Err(Error::invalid(
                "column moments",
                "given for a design that does not standardize",
                "standardize on, or no moments",
            ));
        }
        let data = data.into();
        moments.check(data.covariate_names())?;
        let plain = DesignOptions { standardize: false, ..options };
        let mut design = Self::new(data, plain)?;
        design.options = options;
        if !moments.mean.is_empty() {
            design.affine = Some(Affine::from(moments.clone()));
        }
        Ok(design)
    }

    /// The design with an offset: the linear predictor of row i becomes η_i = x̃_iᵀθ + o_i
    /// ([`Rows::predictor`]), e.g. o_i = log t_i for a count observed over an exposure t_i. The
    /// offset has no coefficient. `name` names it in messages.
    ///
    /// Errors: a length other than n, or a NaN or infinite value (naming its row). With an
    /// offset, minibatches are not copied into a gathered batch ([`DesignMatrix::gather_raw_rows`]
    /// returns `false`): the models read the rows in place.
    pub fn with_offset(mut self, offset: Vec<f64>, name: &str) -> Result<Self> {
        if offset.len() != self.len() {
            return Err(Error::invalid(
                "offset",
                format!("{name} with {} values", offset.len()),
                format!("one value per row ({} rows)", self.len()),
            ));
        }
        if let Some(row) = offset.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite {
                source_name: self.data.source_name(),
                row,
                column: name.to_string(),
                value: offset[row],
            });
        }
        self.eta_offset = Some(offset.into());
        Ok(self)
    }

    /// The offset o of the linear predictors, if the design has one.
    pub fn offset(&self) -> Option<&[f64]> {
        self.eta_offset.as_deref()
    }

    /// The underlying data set.
    pub fn data(&self) -> &Arc<Dataset> {
        &self.data
    }

    /// The options this design was built with.
    pub fn options(&self) -> DesignOptions {
        self.options
    }

    /// Number of rows n.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Always `false` (a data set has at least one row).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Number of columns of X̃: p, plus one with an intercept.
    pub fn dim(&self) -> usize {
        self.offset + self.data.num_covariates()
    }

    /// Names of the columns of X̃: `intercept` first when the design adds one, then the
    /// covariate names exactly as the data name them (a CSV header `y,age,income` gives
    /// `intercept, age, income`; data without names, `x0, x1, …`). The names are unique
    /// ([`DesignMatrix::new`] rejects a covariate named `intercept` when it adds one) and valid
    /// CSV column names. The regression models use them as parameter names.
    pub fn column_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(self.dim());
        if self.options.intercept {
            names.push(INTERCEPT_NAME.to_string());
        }
        names.extend(self.data.covariate_names().iter().cloned());
        names
    }

    /// Column means m_j of the covariates, when standardizing.
    pub fn means(&self) -> Option<&[f64]> {
        self.affine.as_ref().map(|a| a.mean.as_slice())
    }

    /// Population standard deviations s_j of the covariates, when standardizing.
    pub fn sds(&self) -> Option<&[f64]> {
        self.affine.as_ref().map(|a| a.sd.as_slice())
    }

    /// The responses y (n values).
    pub fn y(&self) -> &[f64] {
        self.data.y()
    }

    /// Checks what every regression model needs of its design: at most u32::MAX rows (terms are
    /// addressed by u32 indices) and at least one column.
    pub(crate) fn check_regression_shape(&self) -> Result<()> {
        super::check_indexable(self.len())?;
        if self.dim() == 0 {
            return Err(Error::invalid(
                "design columns",
                0,
                "at least one column (add covariates or an intercept)",
            ));
        }
        Ok(())
    }

    /// A view of the rows for a batch of work: match on it once, then call the [`Rows`]
    /// methods in the loop.
    pub fn rows(&self) -> RowView<'_> {
        let x = self.data.x();
        let n = self.data.len();
        let p = self.data.num_covariates();
        let eta_offset = self.eta_offset.as_deref();
        match &self.affine {
            None => RowView::Plain(PlainRows { x, n, p, offset: self.offset, eta_offset }),
            Some(a) => RowView::Affine(AffineRows {
                plain: PlainRows { x, n, p, offset: self.offset, eta_offset },
                mean: &a.mean,
                inv_sd: &a.inv_sd,
            }),
        }
    }

    /// Overwrites `out` with the raw covariate rows `indices` (p values each, before the
    /// intercept and standardization), one after the other: a gathered minibatch for
    /// [`DesignMatrix::gathered_rows`]. Returns `false` (and gathers nothing) when the data have
    /// no covariate columns, whose rows a buffer cannot count, or an offset, which a gathered
    /// batch does not carry.
    pub fn gather_raw_rows(&self, indices: &[u32], out: &mut Vec<f64>) -> bool {
        let (x, p) = (self.data.x(), self.data.num_covariates());
        out.clear();
        if p == 0 || self.eta_offset.is_some() {
            return false;
        }
        let rows = self.rows();
        for (k, &i) in indices.iter().enumerate() {
            // Rows a few indices ahead start loading while this one is copied.
            if let Some(&ahead) = indices.get(k + GATHER_PREFETCH_AHEAD) {
                match &rows {
                    RowView::Plain(r) => r.prefetch(ahead as usize),
                    RowView::Affine(r) => r.prefetch(ahead as usize),
                }
            }
            let i = i as usize;
            out.extend_from_slice(&x[i * p..(i + 1) * p]);
        }
        true
    }

    /// Overwrites row `positions[j]` of `out` (rows gathered by
    /// [`DesignMatrix::gather_raw_rows`]) with the raw covariate row `indices[j]`, for every j:
    /// the few new points of a gathered batch that is otherwise reused. Returns `false` (and
    /// copies nothing) when the data have no covariate columns or a position is outside `out`.
    pub fn regather_raw_rows(&self, positions: &[usize], indices: &[u32], out: &mut [f64]) -> bool {
        let (x, p) = (self.data.x(), self.data.num_covariates());
        if p == 0 || self.eta_offset.is_some() || positions.iter().any(|&k| (k + 1) * p > out.len())
        {
            return false;
        }
        for (&k, &i) in positions.iter().zip(indices) {
            let i = i as usize;
            out[k * p..(k + 1) * p].copy_from_slice(&x[i * p..(i + 1) * p]);
        }
        true
    }

    /// A view of rows gathered by [`DesignMatrix::gather_raw_rows`] (`raw` holds whole rows):
    /// row k of the view is x̃ of the k-th gathered index, with this design's intercept and
    /// standardization, so the [`Rows`] methods give the bits they give on the original rows.
    pub fn gathered_rows<'a>(&'a self, raw: &'a [f64]) -> RowView<'a> {
        let p = self.data.num_covariates();
        let n = raw.len().checked_div(p).unwrap_or(0);
        let plain = PlainRows { x: raw, n, p, offset: self.offset, eta_offset: None };
        match &self.affine {
            None => RowView::Plain(plain),
            Some(a) => RowView::Affine(AffineRows { plain, mean: &a.mean, inv_sd: &a.inv_sd }),
        }
    }

    /// η_i = x̃_iᵀθ + o_i, the linear predictor with the offset if any (convenience; batch code
    /// should use [`DesignMatrix::rows`]).
    pub fn predictor(&self, i: usize, theta: &[f64]) -> f64 {
        match self.rows() {
            RowView::Plain(r) => r.predictor(i, theta),
            RowView::Affine(r) => r.predictor(i, theta),
        }
    }

    /// x̃_iᵀθ (convenience; batch code should use [`DesignMatrix::rows`]).
    pub fn dot(&self, i: usize, theta: &[f64]) -> f64 {
        match self.rows() {
            RowView::Plain(r) => r.dot(i, theta),
            RowView::Affine(r) => r.dot(i, theta),
        }
    }

    /// out += a·x̃_i (convenience; batch code should use [`DesignMatrix::rows`]).
    pub fn add_row(&self, i: usize, a: f64, out: &mut [f64]) {
        match self.rows() {
            RowView::Plain(r) => r.add_row(i, a, out),
            RowView::Affine(r) => r.add_row(i, a, out),
        }
    }

    /// The entry x̃_ij.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        match self.rows() {
            RowView::Plain(r) => r.get(i, j),
            RowView::Affine(r) => r.get(i, j),
        }
    }

    /// ‖x̃_i‖₂.
    pub fn row_norm(&self, i: usize) -> f64 {
        match self.rows() {
            RowView::Plain(r) => r.row_norm_sq(i).sqrt(),
            RowView::Affine(r) => r.row_norm_sq(i).sqrt(),
        }
    }

    /// max_i ‖x̃_i‖₂. Cost: one parallel pass over the data (max is exact in any order).
    pub fn max_row_norm(&self) -> f64 {
        fn pass<R: Rows>(r: &R) -> f64 {
            let n = r.len();
            (0..n.div_ceil(PASS_CHUNK_ROWS))
                .into_par_iter()
                .map(|c| {
                    let lo = c * PASS_CHUNK_ROWS;
                    let hi = (lo + PASS_CHUNK_ROWS).min(n);
                    (lo..hi).map(|i| r.row_norm_sq(i)).fold(0.0, f64::max)
                })
                .reduce(|| 0.0, f64::max)
                .sqrt()
        }
        match self.rows() {
            RowView::Plain(r) => pass(&r),
            RowView::Affine(r) => pass(&r),
        }
    }
}

/// Row operations on a design matrix X̃ (dimension [`Rows::dim`]): what every GLM-type model's
/// hot loop needs. Implementations are O(dim) per call and allocate nothing.
pub trait Rows: Sync {
    /// Number of rows n.
    fn len(&self) -> usize;
    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of columns d of X̃.
    fn dim(&self) -> usize;
    /// x̃_iᵀθ, with `theta.len() == dim()`.
    fn dot(&self, i: usize, theta: &[f64]) -> f64;
    /// [x̃_{i₀}ᵀθ, …, x̃_{i₃}ᵀθ] with the bits of four [`Rows::dot`] calls; implementations
    /// interleave the four rows so that their sums are independent chains the CPU overlaps.
    #[inline(always)]
    fn dots4(&self, rows: [usize; 4], theta: &[f64]) -> [f64; 4] {
        rows.map(|i| self.dot(i, theta))
    }
    /// The linear predictor η_i = x̃_iᵀθ + o_i: [`Rows::dot`] plus the design's offset o_i
    /// (none by default). Models evaluate their terms at it; directions (x̃_iᵀv) use `dot`.
    #[inline(always)]
    fn predictor(&self, i: usize, theta: &[f64]) -> f64 {
        self.dot(i, theta)
    }
    /// [η_{i₀}, …, η_{i₃}] with the bits of four [`Rows::predictor`] calls.
    #[inline(always)]
    fn predictors4(&self, rows: [usize; 4], theta: &[f64]) -> [f64; 4] {
        self.dots4(rows, theta)
    }
    /// out += a·x̃_i.
    fn add_row(&self, i: usize, a: f64, out: &mut [f64]);
    /// out += a₀x̃_{i₀} + a₁x̃_{i₁} + a₂x̃_{i₂} + a₃x̃_{i₃}, with the bits of four
    /// [`Rows::add_row`] calls in that order (each entry gets its four products added one after
    /// the other) but each entry of `out` loaded and stored once, not four times.
    #[inline(always)]
    fn add_rows4(&self, rows: [usize; 4], a: [f64; 4], out: &mut [f64]) {
        for (i, a) in rows.into_iter().zip(a) {
            self.add_row(i, a, out);
        }
    }
    /// out = a·x̃_i (overwrites).
    fn set_row(&self, i: usize, a: f64, out: &mut [f64]);
    /// x̃_ij.
    fn get(&self, i: usize, j: usize) -> f64;
    /// ‖x̃_i‖₂².
    fn row_norm_sq(&self, i: usize) -> f64;
    /// Asks the CPU to start loading row i into cache (a hint with no effect on results): gather
    /// loops over random indices call it a few rows ahead, so several rows' memory latencies
    /// overlap. The default does nothing.
    #[inline(always)]
    fn prefetch(&self, _i: usize) {}
}

/// How many rows ahead [`DesignMatrix::gather_raw_rows`] prefetches.
const GATHER_PREFETCH_AHEAD: usize = 8;

/// Cache lines are at most this many bytes on the targets we build for.
const CACHE_LINE_BYTES: usize = 64;

/// A prefetch hint for the cache line holding `value` (x86-64: `prefetcht0`; elsewhere nothing).
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch_line(value: &f64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has; a prefetch never faults and
    // changes no memory, and the pointer comes from a reference, so it is valid anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Either kind of row view (see [`DesignMatrix::rows`]).
#[derive(Debug, Clone, Copy)]
pub enum RowView<'a> {
    /// No standardization: x̃_i is the raw row, after an optional 1.
    Plain(PlainRows<'a>),
    /// Standardization applied on the fly.
    Affine(AffineRows<'a>),
}

/// Rows without standardization: x̃_i = (1?, x_i).
#[derive(Debug, Clone, Copy)]
pub struct PlainRows<'a> {
    x: &'a [f64],
    n: usize,
    p: usize,
    offset: usize,
    /// The design's offset of the linear predictors, indexed by row.
    eta_offset: Option<&'a [f64]>,
}

impl PlainRows<'_> {
    /// s + o_i (s alone without an offset).
    #[inline(always)]
    fn offset_by(&self, i: usize, s: f64) -> f64 {
        match self.eta_offset {
            Some(o) => s + o[i],
            None => s,
        }
    }
}

/// Rows standardized on the fly: x̃_i = (1?, (x_i − m) ⊙ s⁻¹).
#[derive(Debug, Clone, Copy)]
pub struct AffineRows<'a> {
    /// The raw rows x̃_i = (1?, x_i) before standardization.
    plain: PlainRows<'a>,
    mean: &'a [f64],
    inv_sd: &'a [f64],
}

/// aᵀb with four independent accumulators (instruction-level parallelism without relying on
/// the compiler to reassociate floating-point sums).
#[inline(always)]
pub(crate) fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let ca = a.chunks_exact(4);
    let cb = b.chunks_exact(4);
    let mut tail = 0.0;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    let (mut s0, mut s1, mut s2, mut s3) = (0.0, 0.0, 0.0, 0.0);
    for (x, y) in ca.zip(cb) {
        s0 += x[0] * y[0];
        s1 += x[1] * y[1];
        s2 += x[2] * y[2];
        s3 += x[3] * y[3];
    }
    (s0 + s1) + (s2 + s3) + tail
}

impl<'a> PlainRows<'a> {
    #[inline(always)]
    fn raw(&self, i: usize) -> &'a [f64] {
        &self.x[i * self.p..(i + 1) * self.p]
    }
}

/// [`dot4_rows`], with explicit AVX2 vectors when the CPU has them: one 4-lane accumulator
/// per vector, lane l holding [`dot4`]'s s_l (LLVM's own vectorization of the portable loop
/// packs the four vectors across lanes instead and shuffles every load).
#[inline(always)]
fn dot4_rows_dispatch(a: &[f64], b: [&[f64]; 4]) -> [f64; 4] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `dot4_rows_avx2` needs AVX2, which the CPU has just reported.
        #[allow(unsafe_code)]
        unsafe {
            return dot4_rows_avx2(a, b);
        }
    }
    dot4_rows(a, b)
}

/// [`dot4_rows`] in AVX2 registers: the same products and sums per lane, so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unsafe_code)]
fn dot4_rows_avx2(a: &[f64], b: [&[f64]; 4]) -> [f64; 4] {
    use std::arch::x86_64::{__m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd};
    use std::arch::x86_64::{_mm256_setzero_pd, _mm256_storeu_pd};
    let n = b.iter().fold(a.len(), |n, r| n.min(r.len()));
    let body = n - n % 4;
    let mut acc: [__m256d; 4] = [_mm256_setzero_pd(); 4];
    let mut j = 0;
    while j < body {
        // SAFETY: j + 4 ≤ body ≤ n, and n is at most the length of `a` and of every `b[r]`,
        // so each unaligned 4-value load reads inside its slice.
        let t = unsafe { _mm256_loadu_pd(a.as_ptr().add(j)) };
        for (s, row) in acc.iter_mut().zip(&b) {
            // SAFETY: as above.
            let x = unsafe { _mm256_loadu_pd(row.as_ptr().add(j)) };
            *s = _mm256_add_pd(*s, _mm256_mul_pd(t, x));
        }
        j += 4;
    }
    let mut out = [0.0; 4];
    for ((o, s), row) in out.iter_mut().zip(acc).zip(&b) {
        let mut lanes = [0.0; 4];
        // SAFETY: `lanes` has room for the 4 values stored.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), s) };
        let mut tail = 0.0;
        for (x, y) in a[body..n].iter().zip(&row[body..n]) {
            tail += x * y;
        }
        *o = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tail;
    }
    out
}

/// [`dot4`]`(a, b_r)` for four vectors b_r at once, the same operations per vector in the same
/// order (so the same bits), interleaved: four independent sets of accumulators.
#[inline(always)]
fn dot4_rows(a: &[f64], b: [&[f64]; 4]) -> [f64; 4] {
    let n = b.iter().fold(a.len(), |n, r| n.min(r.len()));
    let (a, b) = (&a[..n], b.map(|r| &r[..n]));
    let body = n - n % 4;
    let mut s = [[0.0_f64; 4]; 4];
    let mut tail = [0.0_f64; 4];
    for (r, row) in b.iter().enumerate() {
        for (x, y) in a[body..].iter().zip(&row[body..]) {
            tail[r] += x * y;
        }
    }
    /// acc_l += x_l·y_l for the four lanes l: one vector multiply and add.
    #[inline(always)]
    fn lanes(acc: &mut [f64; 4], x: &[f64], y: &[f64]) {
        acc[0] += x[0] * y[0];
        acc[1] += x[1] * y[1];
        acc[2] += x[2] * y[2];
        acc[3] += x[3] * y[3];
    }
    let [b0, b1, b2, b3] = b.map(|r| r[..body].chunks_exact(4));
    let [s0, s1, s2, s3] = &mut s;
    for ((((x, y0), y1), y2), y3) in a[..body].chunks_exact(4).zip(b0).zip(b1).zip(b2).zip(b3) {
        lanes(s0, x, y0);
        lanes(s1, x, y1);
        lanes(s2, x, y2);
        lanes(s3, x, y3);
    }
    let mut out = [0.0; 4];
    for ((o, acc), t) in out.iter_mut().zip(s).zip(tail) {
        *o = (acc[0] + acc[1]) + (acc[2] + acc[3]) + t;
    }
    out
}

/// `apply(out[0], a)` when there is an intercept (`offset == 1`), then
/// `apply(out[offset + j], a·z_j)` for the row values z_j: `apply` adds (`out += a·x̃_i`) or
/// overwrites (`out = a·x̃_i`).
#[inline(always)]
fn apply_scaled_row(
    offset: usize, a: f64, z: impl Iterator<Item = f64>, out: &mut [f64],
    apply: impl Fn(&mut f64, f64),
) {
    if offset == 1 {
        apply(&mut out[0], a);
    }
    for (o, v) in out[offset..].iter_mut().zip(z) {
        apply(o, a * v);
    }
}

impl Rows for PlainRows<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.n
    }
    #[inline]
    fn dim(&self) -> usize {
        self.offset + self.p
    }
    #[inline(always)]
    fn dot(&self, i: usize, theta: &[f64]) -> f64 {
        let row = self.raw(i);
        if self.offset == 1 { theta[0] + dot4(&theta[1..], row) } else { dot4(theta, row) }
    }
    #[inline(always)]
    fn dots4(&self, rows: [usize; 4], theta: &[f64]) -> [f64; 4] {
        let rows = rows.map(|i| self.raw(i));
        if self.offset == 1 {
            dot4_rows_dispatch(&theta[1..], rows).map(|s| theta[0] + s)
        } else {
            dot4_rows_dispatch(theta, rows)
        }
    }
    #[inline(always)]
    fn predictor(&self, i: usize, theta: &[f64]) -> f64 {
        self.offset_by(i, self.dot(i, theta))
    }
    #[inline(always)]
    fn predictors4(&self, rows: [usize; 4], theta: &[f64]) -> [f64; 4] {
        let dots = self.dots4(rows, theta);
        match self.eta_offset {
            Some(_) => [0, 1, 2, 3].map(|k| self.offset_by(rows[k], dots[k])),
            None => dots,
        }
    }
    #[inline(always)]
    fn add_row(&self, i: usize, a: f64, out: &mut [f64]) {
        apply_scaled_row(self.offset, a, self.raw(i).iter().copied(), out, |o, v| *o += v);
    }
    #[inline(always)]
    fn add_rows4(&self, rows: [usize; 4], a: [f64; 4], out: &mut [f64]) {
        let [r0, r1, r2, r3] = rows.map(|i| self.raw(i));
        if self.offset == 1 {
            // add_row adds a itself to the intercept entry (a·1 = a).
            out[0] = (((out[0] + a[0]) + a[1]) + a[2]) + a[3];
        }
        let rows = r0.iter().zip(r1).zip(r2).zip(r3);
        for (o, (((v0, v1), v2), v3)) in out[self.offset..].iter_mut().zip(rows) {
            let mut acc = *o;
            acc += a[0] * v0;
            acc += a[1] * v1;
            acc += a[2] * v2;
            acc += a[3] * v3;
            *o = acc;
        }
    }
    #[inline(always)]
    fn set_row(&self, i: usize, a: f64, out: &mut [f64]) {
        apply_scaled_row(self.offset, a, self.raw(i).iter().copied(), out, |o, v| *o = v);
    }
    #[inline]
    fn get(&self, i: usize, j: usize) -> f64 {
        if j < self.offset { 1.0 } else { self.x[i * self.p + j - self.offset] }
    }
    #[inline]
    fn row_norm_sq(&self, i: usize) -> f64 {
        let row = self.raw(i);
        self.offset as f64 + dot4(row, row)
    }
    /// Every cache line of the row: one value per 64 bytes, and the last value.
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        let row = self.raw(i);
        for v in row.iter().step_by(CACHE_LINE_BYTES / size_of::<f64>()) {
            prefetch_line(v);
        }
        if let Some(last) = row.last() {
            prefetch_line(last);
        }
    }
}

impl<'a> AffineRows<'a> {
    /// The standardized values (x_ij − m_j)·s_j⁻¹ of row i.
    #[inline(always)]
    fn standardized(&self, i: usize) -> impl Iterator<Item = f64> + 'a {
        let row = self.plain.raw(i).iter().zip(self.mean).zip(self.inv_sd);
        row.map(|((v, m), s)| (v - m) * s)
    }
}

impl Rows for AffineRows<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.plain.len()
    }
    #[inline]
    fn dim(&self) -> usize {
        self.plain.dim()
    }
    #[inline(always)]
    fn dot(&self, i: usize, theta: &[f64]) -> f64 {
        let PlainRows { p, offset, .. } = self.plain;
        let row = self.plain.raw(i);
        let th = &theta[offset..offset + p];
        let (m, s) = (&self.mean[..p], &self.inv_sd[..p]);
        let mut acc = [0.0; 4];
        let mut j = 0;
        while j + 4 <= p {
            for k in 0..4 {
                acc[k] += th[j + k] * ((row[j + k] - m[j + k]) * s[j + k]);
            }
            j += 4;
        }
        let mut tail = 0.0;
        while j < p {
            tail += th[j] * ((row[j] - m[j]) * s[j]);
            j += 1;
        }
        let base = if offset == 1 { theta[0] } else { 0.0 };
        base + ((acc[0] + acc[1]) + (acc[2] + acc[3]) + tail)
    }
    #[inline(always)]
    fn predictor(&self, i: usize, theta: &[f64]) -> f64 {
        self.plain.offset_by(i, self.dot(i, theta))
    }
    #[inline(always)]
    fn predictors4(&self, rows: [usize; 4], theta: &[f64]) -> [f64; 4] {
        rows.map(|i| self.predictor(i, theta))
    }
    #[inline(always)]
    fn add_row(&self, i: usize, a: f64, out: &mut [f64]) {
        apply_scaled_row(self.plain.offset, a, self.standardized(i), out, |o, v| *o += v);
    }
    #[inline(always)]
    fn add_rows4(&self, rows: [usize; 4], a: [f64; 4], out: &mut [f64]) {
        let offset = self.plain.offset;
        let [r0, r1, r2, r3] = rows.map(|i| self.plain.raw(i));
        if offset == 1 {
            out[0] = (((out[0] + a[0]) + a[1]) + a[2]) + a[3];
        }
        let p = r0.len();
        let (m, s) = (&self.mean[..p], &self.inv_sd[..p]);
        let rows = r0.iter().zip(r1).zip(r2).zip(r3);
        for ((o, (((v0, v1), v2), v3)), (mj, sj)) in
            out[offset..].iter_mut().zip(rows).zip(m.iter().zip(s))
        {
            // The standardized value (v − m)·s, then a·value, as `add_row` computes them.
            let mut acc = *o;
            acc += a[0] * ((v0 - mj) * sj);
            acc += a[1] * ((v1 - mj) * sj);
            acc += a[2] * ((v2 - mj) * sj);
            acc += a[3] * ((v3 - mj) * sj);
            *o = acc;
        }
    }
    #[inline(always)]
    fn set_row(&self, i: usize, a: f64, out: &mut [f64]) {
        apply_scaled_row(self.plain.offset, a, self.standardized(i), out, |o, v| *o = v);
    }
    #[inline]
    fn get(&self, i: usize, j: usize) -> f64 {
        let PlainRows { x, p, offset, .. } = self.plain;
        if j < offset {
            1.0
        } else {
            let k = j - offset;
            (x[i * p + k] - self.mean[k]) * self.inv_sd[k]
        }
    }
    #[inline]
    fn row_norm_sq(&self, i: usize) -> f64 {
        let mut s = self.plain.offset as f64;
        for t in self.standardized(i) {
            s += t * t;
        }
        s
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        self.plain.prefetch(i);
    }
}

/// Runs `$body` with `$r` bound to the concrete row view of `$design` (monomorphized loops);
/// `with_rows!(view $v, r => …)` does the same for a [`RowView`] `$v`.
macro_rules! with_rows {
    (view $view:expr, $r:ident => $body:expr) => {
        match $view {
            $crate::data::RowView::Plain($r) => $body,
            $crate::data::RowView::Affine($r) => $body,
        }
    };
    ($design:expr, $r:ident => $body:expr) => {
        with_rows!(view $design.rows(), $r => $body)
    };
}
pub(crate) use with_rows;

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Dataset {
        let x = vec![1.0, 2.0, 3.0, 5.0, 4.0, 1.0, 2.0, 0.5, 7.0];
        Dataset::with_default_names(x, vec![0.0, 1.0, 1.0], 3).unwrap()
    }

    /// The transformed matrix, materialized the slow way.
    fn dense(d: &DesignMatrix) -> Vec<Vec<f64>> {
        (0..d.len()).map(|i| (0..d.dim()).map(|j| d.get(i, j)).collect()).collect()
    }

    /// The portable and the AVX2 four-row dot products give [`dot4`]'s bits for every tail
    /// length (the CPU running the tests may take either path in the model code).
    #[test]
    fn four_row_dot_products_give_the_bits_of_dot4() {
        for n in 0..23 {
            let v = |k: usize| -> Vec<f64> {
                (0..n)
                    .map(|j| ((j * 7 + k * 13) % 11) as f64 / 3.0 - 1.7 + 1e-9 * j as f64)
                    .collect()
            };
            let (a, b) = (v(0), [v(1), v(2), v(3), v(4)]);
            let rows = [&b[0][..], &b[1][..], &b[2][..], &b[3][..]];
            let want = rows.map(|r| dot4(&a, r).to_bits());
            assert_eq!(dot4_rows(&a, rows).map(f64::to_bits), want, "portable, n = {n}");
            assert_eq!(dot4_rows_dispatch(&a, rows).map(f64::to_bits), want, "dispatch, n = {n}");
        }
    }

    #[test]
    fn dot_and_axpy_match_the_materialized_matrix() {
        for (intercept, standardize) in [(false, false), (true, false), (false, true), (true, true)]
        {
            let opts = DesignOptions { intercept, standardize };
            let d = DesignMatrix::new(small(), opts).unwrap();
            assert_eq!(d.dim(), 3 + usize::from(intercept));
            let dense = dense(&d);
            let theta: Vec<f64> = (0..d.dim()).map(|j| 0.3 * j as f64 - 0.7).collect();
            for i in 0..3 {
                let want: f64 = dense[i].iter().zip(&theta).map(|(a, b)| a * b).sum();
                assert!((d.dot(i, &theta) - want).abs() < 1e-12);
                let mut out = vec![1.0; d.dim()];
                d.add_row(i, 2.0, &mut out);
                for j in 0..d.dim() {
                    assert!((out[j] - (1.0 + 2.0 * dense[i][j])).abs() < 1e-12);
                }
                let norm: f64 = dense[i].iter().map(|v| v * v).sum::<f64>().sqrt();
                assert!((d.row_norm(i) - norm).abs() < 1e-12);
            }
            if standardize {
                // Standardized columns have mean 0 and population sd 1.
                for j in usize::from(intercept)..d.dim() {
                    let col: Vec<f64> = dense.iter().map(|r| r[j]).collect();
                    let m = col.iter().sum::<f64>() / 3.0;
                    let v = col.iter().map(|c| (c - m).powi(2)).sum::<f64>() / 3.0;
                    assert!(m.abs() < 1e-12 && (v - 1.0).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn constant_column_is_named() {
        let x = vec![1.0, 2.0, 1.0, 3.0, 1.0, 4.0];
        let ds = Dataset::new(x, vec![0.0; 3], vec!["c".into(), "v".into()]).unwrap();
        let err =
            DesignMatrix::new(ds, DesignOptions::default().with_standardize(true)).unwrap_err();
        assert!(err.to_string().contains("column `c` is constant"), "{err}");
    }

    #[test]
    fn dot4_handles_every_remainder() {
        for n in 0..11 {
            let a: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
            let b: Vec<f64> = (0..n).map(|i| 1.0 - i as f64).collect();
            let want: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot4(&a, &b) - want).abs() < 1e-12);
        }
    }
}
