//! Importance-sampled per-datum bounds for the subsampling piecewise-deterministic samplers:
//! [`WeightedGradients`] (lipSBPS and ZZ-SS on models with bounded per-datum gradients) and
//! [`WeightedLipschitzGradients`] (lipSBPS on models with Lipschitz per-datum gradients).
//!
//! The uniform bounds of [`datum_bounds`](super::datum_bounds) give every datum the clock of the
//! *worst* datum, so the data clock runs at N × the largest constant. Bierkens, Fearnhead &
//! Roberts (2019, §4, "importance sampling") and the factor view of lipSBPS instead give datum J
//! a clock bounded by its own constant; the data clock is their superposition, of rate the *sum*
//! of the constants, and a proposal belongs to datum J with probability proportional to J's bound
//! (an alias table, [`AliasTable`], built when a chain starts). With heavy-tailed covariates the
//! sum is orders of magnitude below N × the maximum, and so is the number of proposals; the
//! acceptance ratio of a proposal rises by the same factor.
//!
//! **lipSBPS** ([`DatumRateBound`]), with s = ‖v‖₂:
//!
//! * bounded gradients: ‖∇ℓ_J(θ)‖₂ ≤ c_J for every θ ([`TermLipschitz`]: the Lipschitz constant
//!   of ℓ_J is sup_θ ‖∇ℓ_J(θ)‖₂), so |⟨∇ℓ_J(x + vt), v⟩| ≤ s c_J: total rate s Σ_J c_J, J drawn
//!   ∝ c_J. At each step the smaller of this and the uniform N·B(v) is used (both are exact; the
//!   choice depends only on the current state, and lipSBPS redraws its clocks at every step).
//! * Lipschitz gradients around x* (the mode): ‖∇ℓ_J(y)‖₂ ≤ g_J + L_J‖y − x*‖₂ with
//!   g_J = ‖∇ℓ_J(x*)‖₂ (one set-up pass) and L_J the Lipschitz constant of ∇ℓ_J
//!   ([`TermCurvatureConstants::term_gradient_lipschitz`]); with r = ‖x − x*‖₂,
//!   |⟨∇ℓ_J(x + vt), v⟩| ≤ s(g_J + L_J r) + s²L_J t. The total is
//!   s(Σg + rΣL) + s²ΣL t, never above the uniform N·s(G* + C(r + st)) (G* = max g_J,
//!   C ≥ max L_J), and a proposal at τ belongs to J with probability ∝ g_J + L_J(r + sτ): a
//!   mixture, drawn as table ∝ g with probability Σg / (Σg + (r + sτ)ΣL), else table ∝ L.
//!
//! **ZZ-SS** ([`SwitchingRateEstimator`], bounded gradients; Bierkens, Fearnhead & Roberts
//! 2019, §4): the estimator ∂_iÊ^J = −∂_i log p − ∂_iℓ_J / p_iJ is unbiased for any p_iJ that
//! is positive wherever ∂_iℓ_J can be nonzero. With the per-datum, per-coordinate bounds
//! |∂_iℓ_J| ≤ B_Ji ([`TermGradientBounds::term_coordinate_gradient_bound`]; logistic:
//! |x̃_Ji|) and p_iJ = B_Ji / Σ_K B_Ki it is bounded by Σ_K B_Ki, against N·B_i = N max_J B_Ji
//! for J uniform: a_i = θ_i∂_iU₀(ξ) + Σ_J B_Ji, b_i = κ. The d tables are built once and shared
//! by every chain of the kernel (a chain on another model builds its own). When they would take
//! more than [`PER_COORDINATE_TABLE_BYTES`] one table ∝ c_J (the row constants above) serves
//! every coordinate, with Σ_J c_J in place of Σ_J B_Ji; either way each coordinate uses the
//! smaller of its weighted and uniform bounds (uniform for a constant column such as the
//! intercept, where they are equal).
//!
//! Cost: O(N d) to read the constants and O(N) to build each table (lipSBPS: once per chain;
//! plus, for [`WeightedLipschitzGradients`], N terms and gradients at x*, counted); per
//! proposal, one alias draw (two uniforms) instead of one. Memory: 8 bytes per datum per
//! constant and 12 per table entry; ZZ-SS's d tables 20 bytes per datum and coordinate, shared.

use std::sync::{Arc, Mutex, PoisonError};

use rand::{Rng, RngExt};
use tallmc_core::{
    AliasTable, Error, EvalCounts, LogPrior, LogPriorCurvature, Result, TermCurvatureConstants,
    TermGradientBounds, TermGradients, TermLipschitz,
};
use tallmc_estimators::{DatumRateBound, SwitchingRateEstimator};

use super::common::{VelocityKey, dot};
use super::datum_bounds::{
    DatumScratch, ReferenceGradients, checked_constant, checked_num_terms, distance, prior_kappa,
};
use super::zigzag_taylor::PER_COORDINATE_TABLE_BYTES;

/// Every datum's constant `f(J)`, checked finite and ≥ 0 (an error names the datum, 0-based).
fn datum_constants(name: &'static str, n: usize, f: impl Fn(usize) -> f64) -> Result<Vec<f64>> {
    (0..n)
        .map(|j| {
            let c = f(j);
            if c.is_finite() && c >= 0.0 {
                Ok(c)
            } else {
                Err(Error::invalid(name, format!("{c} (datum {j})"), "a finite number >= 0"))
            }
        })
        .collect()
}

/// The alias table of `weights`, `None` when they are all 0 (a clock that never fires).
fn table_of(weights: &[f64]) -> Result<Option<AliasTable>> {
    if weights.iter().all(|&w| w == 0.0) { Ok(None) } else { AliasTable::new(weights).map(Some) }
}

/// Draws from `table` (never called on an absent one: its clock has rate 0).
fn draw<R: Rng + ?Sized>(table: &Option<AliasTable>, rng: &mut R) -> u32 {
    table.as_ref().map_or(0, |t| t.sample(rng))
}

/// Per-datum gradients bounded uniformly in θ, each datum by its own constants (module docs):
/// for lipSBPS c_J ≥ sup_θ ‖∇ℓ_J(θ)‖₂ ([`TermLipschitz`]), J drawn ∝ c_J; for ZZ-SS, per
/// coordinate i, B_Ji ([`TermGradientBounds::term_coordinate_gradient_bound`]), J drawn
/// ∝ B_Ji. For models such as logistic regression; needs no pass over the likelihood, only the
/// constants.
#[derive(Debug, Clone, Default)]
pub struct WeightedGradients {
    /// c_J, filled when a chain is built.
    constants: Vec<f64>,
    /// The table ∝ c_J (`None` when every c_J is 0).
    table: Option<AliasTable>,
    /// Σ_J c_J.
    total: f64,
    /// lipSBPS: ‖v‖ at the current step, and the uniform bound B(v) when the step uses it.
    speed: f64,
    uniform: Option<f64>,
    /// lipSBPS: the data rate and the velocity it was computed for. It depends on v only, which
    /// changes at bounces and refreshments, so B(v) (O(d²) in whitened coordinates) is
    /// recomputed only then, with the same bits.
    rate: (f64, f64),
    rate_velocity: VelocityKey,
    /// ZZ-SS: the per-coordinate tables, built by the first chain and shared with the others.
    shared: Arc<Mutex<Option<Arc<CoordinateTables>>>>,
    /// ZZ-SS, per chain: the tables it uses, each coordinate's draw and bound, κ, the weight
    /// 1/p of the last datum drawn, and scratch.
    coordinate_tables: Option<Arc<CoordinateTables>>,
    draws: Vec<CoordinateDraw>,
    data_bound: Vec<f64>,
    kappa: f64,
    inverse_probability: f64,
    scratch: DatumScratch,
}

/// How ZZ-SS draws the datum of a proposal for one coordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CoordinateDraw {
    /// J uniform on 0..N (bound N·B_i).
    Uniform,
    /// J ∝ c_J (bound Σ_J c_J).
    Rows,
    /// J ∝ B_Ji from the coordinate's own table (bound Σ_J B_Ji).
    Coordinate,
}

/// ZZ-SS's d alias tables ∝ B_Ji, with the constants (coordinate-major) and their sums.
#[derive(Debug)]
struct CoordinateTables {
    num_terms: usize,
    /// Σ_J B_Ji per coordinate: with N, what a chain compares before sharing the tables.
    totals: Vec<f64>,
    constants: Vec<f64>,
    tables: Vec<Option<AliasTable>>,
}

impl CoordinateTables {
    /// Σ_J B_Ji per coordinate, every constant checked. O(N d), no allocation but the sums.
    fn totals<M: TermGradientBounds + ?Sized>(model: &M) -> Result<Vec<f64>> {
        let (n, d) = (model.num_terms(), model.dim());
        let mut totals = vec![0.0; d];
        for j in 0..n {
            for (i, total) in totals.iter_mut().enumerate() {
                let c = model.term_coordinate_gradient_bound(j, i);
                if !(c.is_finite() && c >= 0.0) {
                    return Err(Error::invalid(
                        "per-datum coordinate gradient bound B_Ji",
                        format!("{c} (datum {j}, coordinate {})", i + 1),
                        "a finite number >= 0",
                    ));
                }
                *total += c;
            }
        }
        Ok(totals)
    }

    /// The tables of `model`, whose sums are `totals`.
    fn build<M: TermGradientBounds + ?Sized>(model: &M, totals: Vec<f64>) -> Result<Self> {
        let n = model.num_terms();
        let constants: Vec<f64> = (0..totals.len())
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| model.term_coordinate_gradient_bound(j, i))
            .collect();
        let tables =
            constants.chunks_exact(n).map(table_of).collect::<Result<Vec<Option<AliasTable>>>>()?;
        Ok(Self { num_terms: n, totals, constants, tables })
    }
}

impl WeightedGradients {
    /// The bound source; the constants are read from the model when a chain starts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Σ_J c_J (0 before a chain started).
    pub fn total(&self) -> f64 {
        self.total
    }

    /// ZZ-SS: the data part of each coordinate's bound, min(N·B_i, Σ_J B_Ji) (or Σ_J c_J with
    /// one shared table); empty before a chain started.
    pub fn coordinate_data_bounds(&self) -> &[f64] {
        &self.data_bound
    }

    /// Reads c_J and builds the table.
    fn read_constants<M: TermLipschitz + ?Sized>(&mut self, model: &M) -> Result<()> {
        checked_num_terms(model)?;
        self.rate_velocity.forget();
        self.constants =
            datum_constants("per-datum Lipschitz constant c_J", model.num_terms(), |j| {
                model.term_lipschitz(j)
            })?;
        self.table = table_of(&self.constants)?;
        self.total = self.constants.iter().sum();
        Ok(())
    }

    /// ZZ-SS: the per-coordinate tables of `model`, shared with the other chains when they were
    /// built on the same constants (compared through N and the sums), or `None` when they would
    /// take more than [`PER_COORDINATE_TABLE_BYTES`].
    fn coordinate_tables<M: TermGradientBounds + ?Sized>(
        &self, model: &M,
    ) -> Result<Option<Arc<CoordinateTables>>> {
        let (n, d) = (model.num_terms(), model.dim());
        if n.saturating_mul(d).saturating_mul(20) > PER_COORDINATE_TABLE_BYTES {
            return Ok(None);
        }
        let totals = CoordinateTables::totals(model)?;
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = shared.as_ref().filter(|t| t.num_terms == n && t.totals == totals) {
            return Ok(Some(Arc::clone(t)));
        }
        let built = Arc::new(CoordinateTables::build(model, totals)?);
        if shared.is_none() {
            *shared = Some(Arc::clone(&built));
        }
        Ok(Some(built))
    }
}

impl<M: TermGradientBounds + TermLipschitz + ?Sized> DatumRateBound<M> for WeightedGradients {
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        self.read_constants(model)?;
        Ok(EvalCounts::ZERO)
    }

    /// The uniform sup: a = B(v), b = 0.
    fn datum_bound(&self, model: &M, _x: &[f64], v: &[f64]) -> (f64, f64) {
        (model.directional_gradient_bound(v), 0.0)
    }

    /// min(N·B(v), ‖v‖ Σ_J c_J), constant along the line; recomputed only when v changed
    /// since the last call (the chain's model and N do not change).
    fn data_rate(&mut self, model: &M, _x: &[f64], v: &[f64], num_terms: u32) -> (f64, f64) {
        if !self.rate_velocity.changed(v) {
            return self.rate;
        }
        self.speed = dot(v, v).sqrt();
        let uniform = model.directional_gradient_bound(v);
        let (n_uniform, weighted) = (f64::from(num_terms) * uniform, self.speed * self.total);
        self.rate = if n_uniform <= weighted {
            self.uniform = Some(uniform);
            (n_uniform, 0.0)
        } else {
            self.uniform = None;
            (weighted, 0.0)
        };
        self.rate
    }

    /// J uniform with (B(v), 0), or J ∝ c_J with (‖v‖c_J, 0), as [`data_rate`](Self::data_rate)
    /// chose.
    fn draw_datum<R: Rng + ?Sized>(
        &mut self, _model: &M, _x: &[f64], _v: &[f64], _tau: f64, num_terms: u32,
        _total: (f64, f64), rng: &mut R,
    ) -> (u32, (f64, f64)) {
        match self.uniform {
            Some(a) => (rng.random_range(0..num_terms), (a, 0.0)),
            None => {
                let j = draw(&self.table, rng);
                (j, (self.speed * self.constants[j as usize], 0.0))
            }
        }
    }

    fn describe(&self) -> String {
        format!(
            "importance-sampled bounded per-datum gradients: min(N·B(v), ‖v‖Σc_J), Σc_J = {}",
            self.total
        )
    }
}

impl<M> SwitchingRateEstimator<M> for WeightedGradients
where
    M: TermGradientBounds + TermLipschitz + TermGradients + LogPriorCurvature + ?Sized,
{
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        checked_num_terms(model)?;
        let (d, n) = (model.dim(), model.num_terms() as f64);
        let uniform = (0..d)
            .map(|j| {
                checked_constant(
                    "coordinate gradient bound B_j",
                    Some(j),
                    model.coordinate_gradient_bound(j),
                )
                .map(|b| n * b)
            })
            .collect::<Result<Vec<f64>>>()?;
        self.coordinate_tables = self.coordinate_tables(model)?;
        if self.coordinate_tables.is_none() {
            self.read_constants(model)?;
        }
        (self.draws, self.data_bound) = uniform
            .iter()
            .enumerate()
            .map(|(i, &nb)| {
                let (weighted, draw) = match &self.coordinate_tables {
                    Some(t) => (t.totals[i], CoordinateDraw::Coordinate),
                    None => (self.total, CoordinateDraw::Rows),
                };
                if weighted < nb { (draw, weighted) } else { (CoordinateDraw::Uniform, nb) }
            })
            .unzip();
        self.kappa = prior_kappa(model)?;
        self.scratch = DatumScratch::new(d);
        Ok(EvalCounts::ZERO)
    }

    /// a_i = θ_i∂_iU₀(ξ) + min(N·B_i, Σ_J B_Ji), b_i = κ.
    fn bounds(&mut self, model: &M, xi: &[f64], theta: &[f64], a: &mut [f64], b: &mut [f64]) {
        self.scratch.prior_gradient(model, xi);
        for i in 0..theta.len() {
            a[i] = -theta[i] * self.scratch.prior[i] + self.data_bound[i];
            b[i] = self.kappa;
        }
    }

    /// J as coordinate i draws it (uniform, ∝ c_J or ∝ B_Ji); remembers 1/p_iJ for
    /// [`estimate`](SwitchingRateEstimator::estimate).
    fn draw_datum<R: Rng + ?Sized>(
        &mut self, num_terms: u32, coordinate: usize, rng: &mut R,
    ) -> u32 {
        match self.draws[coordinate] {
            CoordinateDraw::Uniform => {
                self.inverse_probability = f64::from(num_terms);
                rng.random_range(0..num_terms)
            }
            CoordinateDraw::Rows => {
                let j = draw(&self.table, rng);
                self.inverse_probability = self.total / self.constants[j as usize];
                j
            }
            CoordinateDraw::Coordinate => {
                let t = self.coordinate_tables.as_deref().expect("tables of a weighted coordinate");
                let j = draw(&t.tables[coordinate], rng);
                let c = t.constants[coordinate * t.num_terms + j as usize];
                self.inverse_probability = t.totals[coordinate] / c;
                j
            }
        }
    }

    /// ∂_iÊ^J(y) = −∂_i log p(y) − ∂_iℓ_J(y)/p_iJ for the datum of the last
    /// [`draw_datum`](SwitchingRateEstimator::draw_datum): one term and gradient.
    fn estimate(&mut self, model: &M, y: &[f64], datum: u32, i: usize) -> (f64, EvalCounts) {
        let counts = self.scratch.datum_gradient(model, y, datum);
        self.scratch.prior_gradient(model, y);
        (-self.scratch.prior[i] - self.inverse_probability * self.scratch.grad[i], counts)
    }

    fn describe(&self) -> String {
        let weighted = self.draws.iter().filter(|&&w| w != CoordinateDraw::Uniform).count();
        let by = if self.coordinate_tables.is_some() { "B_Ji" } else { "c_J" };
        format!(
            "ZZ-SS with importance-sampled bounded per-datum gradients (a_i = θ_i∂_iU₀(ξ) + \
             min(N·B_i, Σ_J {by}), b_i = κ; J drawn ∝ {by} on {weighted} of {} coordinates)",
            self.draws.len()
        )
    }
}

/// Per-datum gradients Lipschitz in θ, each datum by its own constants around a reference point
/// x*: g_J = ‖∇ℓ_J(x*)‖₂ (one set-up pass) and L_J
/// ([`TermCurvatureConstants::term_gradient_lipschitz`]); a proposal's datum is drawn from the
/// mixture of the tables ∝ g and ∝ L (module docs). For lipSBPS on models with unbounded
/// gradients (Gaussian, probit).
#[derive(Debug, Clone)]
pub struct WeightedLipschitzGradients {
    reference: Vec<f64>,
    /// g_J and L_J, filled when a chain is built.
    at_reference: Vec<f64>,
    lipschitz: Vec<f64>,
    table_g: Option<AliasTable>,
    table_l: Option<AliasTable>,
    /// Σg, ΣL, max g, max L.
    sum_g: f64,
    sum_l: f64,
    max_g: f64,
    max_l: f64,
    /// ‖v‖ and ‖x − x*‖ at the current step.
    speed: f64,
    radius: f64,
}

impl WeightedLipschitzGradients {
    /// The bound source around `reference` (x*, e.g. the posterior mode); errors if an entry is
    /// not finite (its length is checked against the model when a chain starts).
    pub fn new(reference: Vec<f64>) -> Result<Self> {
        tallmc_core::error::check_finite("reference point x*", &reference)?;
        Ok(Self {
            reference,
            at_reference: Vec::new(),
            lipschitz: Vec::new(),
            table_g: None,
            table_l: None,
            sum_g: 0.0,
            sum_l: 0.0,
            max_g: 0.0,
            max_l: 0.0,
            speed: 0.0,
            radius: 0.0,
        })
    }

    /// The reference point x*.
    pub fn reference(&self) -> &[f64] {
        &self.reference
    }

    /// (Σ_J g_J, Σ_J L_J) (zeros before a chain started).
    pub fn totals(&self) -> (f64, f64) {
        (self.sum_g, self.sum_l)
    }
}

impl<M> DatumRateBound<M> for WeightedLipschitzGradients
where
    M: TermCurvatureConstants + TermGradients + LogPrior + ?Sized,
{
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        checked_num_terms(model)?;
        let mut norms = Vec::new();
        let (_, evals) =
            ReferenceGradients::compute_with_norms(model, &self.reference, Some(&mut norms))?;
        self.lipschitz =
            datum_constants("per-datum gradient Lipschitz constant L_J", model.num_terms(), |j| {
                model.term_gradient_lipschitz(j)
            })?;
        self.at_reference = norms;
        self.table_g = table_of(&self.at_reference)?;
        self.table_l = table_of(&self.lipschitz)?;
        self.sum_g = self.at_reference.iter().sum();
        self.sum_l = self.lipschitz.iter().sum();
        self.max_g = self.at_reference.iter().fold(0.0, |m, &g| m.max(g));
        self.max_l = self.lipschitz.iter().fold(0.0, |m, &l| m.max(l));
        Ok(evals)
    }

    /// The uniform sup: a = ‖v‖(max g + max L·‖x − x*‖), b = max L·‖v‖².
    fn datum_bound(&self, _model: &M, x: &[f64], v: &[f64]) -> (f64, f64) {
        let s = dot(v, v).sqrt();
        let r = distance(x, &self.reference);
        (s * (self.max_g + self.max_l * r), self.max_l * s * s)
    }

    /// A = ‖v‖(Σg + ‖x − x*‖ΣL), B = ‖v‖²ΣL.
    fn data_rate(&mut self, _model: &M, x: &[f64], v: &[f64], _num_terms: u32) -> (f64, f64) {
        self.speed = dot(v, v).sqrt();
        self.radius = distance(x, &self.reference);
        let s = self.speed;
        (s * (self.sum_g + self.radius * self.sum_l), s * s * self.sum_l)
    }

    /// J from the table ∝ g with probability Σg / (Σg + (r + ‖v‖τ)ΣL), else from the table
    /// ∝ L, with (‖v‖(g_J + L_J r), ‖v‖²L_J).
    fn draw_datum<R: Rng + ?Sized>(
        &mut self, _model: &M, _x: &[f64], _v: &[f64], tau: f64, _num_terms: u32,
        _total: (f64, f64), rng: &mut R,
    ) -> (u32, (f64, f64)) {
        let (s, r) = (self.speed, self.radius);
        let from_l = (r + s * tau) * self.sum_l;
        let u: f64 = rng.random();
        let j = if u * (self.sum_g + from_l) < self.sum_g {
            draw(&self.table_g, rng)
        } else {
            draw(&self.table_l, rng)
        } as usize;
        (j as u32, (s * (self.at_reference[j] + self.lipschitz[j] * r), s * s * self.lipschitz[j]))
    }

    fn describe(&self) -> String {
        format!(
            "importance-sampled Lipschitz per-datum gradients around x*: ‖v‖(Σg_J + ΣL_J(‖x − \
             x*‖ + ‖v‖t)), Σg_J = {}, ΣL_J = {}",
            self.sum_g, self.sum_l
        )
    }
}
