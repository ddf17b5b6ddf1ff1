//! A binary Markov random field with a potential on every triple of variables: the model of
//! Austerity's Gibbs experiment (Korattikara, Chen & Welling 2014, §6.3).
//!
//! # The model
//!
//! D binary variables x ∈ {0, 1}^D and one potential ψ_{ijk}(x_i, x_j, x_k) > 0 for every
//! unordered triple i < j < k — D(D−1)(D−2)/6 potentials of 2³ = 8 entries each:
//!
//! ```text
//! P(x) = (1/Z) Π_{i<j<k} ψ_{ijk}(x_i, x_j, x_k),   log ψ_{ijk}(·) ~ N(0, s²) i.i.d.
//! ```
//!
//! The paper writes log ψ ~ 𝒩(0, 0.02). In the same paper (§6.2) the SGLD noise is written
//! η ~ 𝒩(0, α) with α the step size, which is the noise *variance* of Langevin dynamics, so the
//! second argument of 𝒩 is a variance: the paper's entries have **variance 0.02**, i.e.
//! s = √0.02 ≈ 0.1414 ([`PAPER_LOG_POTENTIAL_SD`]). Our constructor takes the standard
//! deviation s.
//!
//! # The Gibbs population of a variable
//!
//! The factors touching variable i are the potentials ψ_{ijk} with {j, k} any pair of the other
//! D − 1 variables: N_i = (D−1)(D−2)/2 factors (4851 at D = 100). Factor number p of variable i
//! is the pair {j, k} defined as follows. Give the other variables *ranks* 0, …, D − 2 in
//! increasing order (rank r is variable r + [r ≥ i]); factor p is the pair of ranks (a, b),
//! a < b, with
//!
//! ```text
//! p = b(b − 1)/2 + a            (colexicographic order: (0,1), (0,2), (1,2), (0,3), …)
//! ```
//!
//! ([`ThreeWayMrf::factor_pair`] gives the variables). Its value in the Gibbs test is the
//! log-ratio
//!
//! ```text
//! l_p(x) = log ψ_{ijk}(x_i = 1, x_j, x_k) − log ψ_{ijk}(x_i = 0, x_j, x_k),
//! ```
//!
//! and log P(x_i = 1 | x_−i) / P(x_i = 0 | x_−i) = Σ_p l_p(x). The model precomputes the four
//! possible values of l_p (one per (x_j, x_k)) for every (i, p): 32·D·N_i bytes (15.5 MB at
//! D = 100), so one factor evaluation is one table read.
//!
//! # Storage and limits
//!
//! The log-potentials (64 bytes per triple) and the log-ratio tables take about 27·D³ bytes
//! (26 MB at D = 100, 211 MB at D = [`MAX_VARIABLES`] = 200). Exact enumeration of the joint
//! ([`ThreeWayMrf::enumerate`]) is offered for D ≤ [`MAX_ENUMERATED_VARIABLES`] = 20.
//!
//! # Randomness
//!
//! [`ThreeWayMrf::random`] draws the log-potentials from ChaCha8 keyed by the seed and the tag
//! `"mrf3-way"` ([`crate::synthetic::data_rng`], stream 0), triple by triple in colexicographic
//! order of (i < j < k) (the order of [`ThreeWayMrf::triple_index`]) and, within a triple, in
//! the order of [`entry_index`]. Since colexicographic order lists the triples of the first D
//! variables first, the MRF on D variables is the sub-field on the first D variables of the MRF
//! on D + 1 variables with the same seed and scale.
//!
//! ```
//! use tallmc_core::BinaryFactors;
//! use tallmc_models::ThreeWayMrf;
//!
//! let mrf = ThreeWayMrf::random(8, 0.5, 7)?;
//! assert_eq!(mrf.num_factors(0), 21); // (8 − 1)(8 − 2)/2
//! let x = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0];
//! // The log-odds of x_3 is the sum of its 21 factor log-ratios.
//! let all: Vec<u32> = (0..21).collect();
//! let mut ratios = vec![0.0; 21];
//! mrf.factor_log_ratios(3, &x, &all, &mut ratios);
//! let p1 = mrf.exact_conditional(3, &x);
//! assert!((p1 - 1.0 / (1.0 + (-ratios.iter().sum::<f64>()).exp())).abs() < 1e-12);
//! // Small fields can be enumerated exactly.
//! let joint = mrf.enumerate()?;
//! assert!((joint.conditional(3, &x)? - p1).abs() < 1e-9);
//! # Ok::<(), tallmc_models::Error>(())
//! ```

use rand_distr::{Distribution, StandardNormal};
use tallmc_core::BinaryFactors;

use crate::error::{Error, Result};
use crate::synthetic::data_rng;

/// Largest number of variables [`ThreeWayMrf`] accepts (memory ≈ 27·D³ bytes: 211 MB at 200).
pub const MAX_VARIABLES: usize = 200;

/// Largest number of variables for which [`ThreeWayMrf::enumerate`] lists the joint
/// (2^20 states: 8 MB of log-probabilities).
pub const MAX_ENUMERATED_VARIABLES: usize = 20;

/// The standard deviation of the log-potentials in Austerity §6.3: √0.02 (the paper's
/// 𝒩(0, 0.02) has variance 0.02; see the module docs).
pub const PAPER_LOG_POTENTIAL_SD: f64 = 0.141_421_356_237_309_5;

/// The number of variables in Austerity §6.3.
pub const PAPER_VARIABLES: usize = 100;

/// Tag of the keyed ChaCha8 stream the potentials are drawn from.
const TAG_MRF: u64 = u64::from_le_bytes(*b"mrf3-way");

/// Index of the entry ψ(x_i, x_j, x_k) of a potential on variables i < j < k in its table of 8:
/// 4 x_i + 2 x_j + x_k (the smallest variable is the most significant bit).
pub fn entry_index(xi: bool, xj: bool, xk: bool) -> usize {
    (usize::from(xi) << 2) | (usize::from(xj) << 1) | usize::from(xk)
}

/// Reads a position entry as a bit: values ≥ 0.5 are 1 (positions hold 0.0 and 1.0).
#[inline]
fn bit(v: f64) -> usize {
    usize::from(v >= 0.5)
}

/// Numerically stable logistic function σ(s) = 1/(1 + e^{−s}).
#[inline]
fn sigmoid(s: f64) -> f64 {
    if s >= 0.0 {
        1.0 / (1.0 + (-s).exp())
    } else {
        let e = s.exp();
        e / (1.0 + e)
    }
}

/// The D-variable MRF with a potential on every triple (see the module docs).
#[derive(Debug, Clone)]
pub struct ThreeWayMrf {
    d: usize,
    /// N_i = (D−1)(D−2)/2.
    pairs_per_variable: usize,
    /// log ψ for triple t at `8 t + entry_index(x_i, x_j, x_k)`.
    log_potentials: Vec<f64>,
    /// Rank pairs (a, b), a < b, of factor p, in colexicographic order.
    pairs: Vec<[u16; 2]>,
    /// l_p for variable i, factor p and (x_j, x_k) at `4 (i N_i + p) + 2 x_j + x_k`.
    log_ratios: Vec<f64>,
    /// max_p,x |l_p| per variable.
    bounds: Vec<f64>,
    /// The scale s the potentials were drawn with (None if given explicitly).
    log_potential_sd: Option<f64>,
}

impl ThreeWayMrf {
    /// D variables with log ψ entries i.i.d. N(0, s²), s = `log_potential_sd`, drawn from
    /// `seed` (see the module docs for the stream and order).
    ///
    /// Errors: D < 3 or D > [`MAX_VARIABLES`]; s not a finite number ≥ 0.
    pub fn random(d: usize, log_potential_sd: f64, seed: u64) -> Result<Self> {
        check_variables(d)?;
        if !(log_potential_sd.is_finite() && log_potential_sd >= 0.0) {
            return Err(Error::invalid(
                "log_potential_sd",
                log_potential_sd,
                "a finite number ≥ 0",
            ));
        }
        let mut rng = data_rng(seed, TAG_MRF, 0);
        let n = 8 * num_triples(d);
        let log_potentials = (0..n)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                log_potential_sd * z
            })
            .collect();
        let mut mrf = Self::build(d, log_potentials);
        mrf.log_potential_sd = Some(log_potential_sd);
        Ok(mrf)
    }

    /// The MRF of Austerity §6.3: D = 100 variables, log ψ ~ N(0, 0.02) (variance 0.02).
    pub fn paper(seed: u64) -> Result<Self> {
        Self::random(PAPER_VARIABLES, PAPER_LOG_POTENTIAL_SD, seed)
    }

    /// An MRF with given log-potentials: `log_potentials[8 t + e]` is log ψ of triple
    /// t = [`ThreeWayMrf::triple_index`] at entry e = [`entry_index`], for all
    /// D(D−1)(D−2)/6 triples.
    ///
    /// Errors: D out of range, wrong length, a non-finite entry.
    pub fn from_log_potentials(d: usize, log_potentials: Vec<f64>) -> Result<Self> {
        check_variables(d)?;
        let expected = 8 * num_triples(d);
        if log_potentials.len() != expected {
            return Err(tallmc_core::Error::DimensionMismatch {
                what: format!("log-potentials of a {d}-variable three-way MRF (8 per triple)"),
                expected,
                found: log_potentials.len(),
            }
            .into());
        }
        if let Some(k) = log_potentials.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "log-potential",
                format!("{} (entry {k})", log_potentials[k]),
                "a finite number",
            ));
        }
        Ok(Self::build(d, log_potentials))
    }

    fn build(d: usize, log_potentials: Vec<f64>) -> Self {
        let np = (d - 1) * (d - 2) / 2;
        let mut pairs = Vec::with_capacity(np);
        for b in 1..d - 1 {
            for a in 0..b {
                // d ≤ MAX_VARIABLES = 200 fits in u16.
                pairs.push([a as u16, b as u16]);
            }
        }
        let pair_number = |a: usize, b: usize| b * (b - 1) / 2 + a;
        let mut log_ratios = vec![0.0; 4 * d * np];
        for c in 2..d {
            for b in 1..c {
                for a in 0..b {
                    let t = triple_number(a, b, c);
                    let lp = &log_potentials[8 * t..8 * t + 8];
                    // Variable a: other ranks (b − 1, c − 1); index (x_b, x_c).
                    let base = 4 * (a * np + pair_number(b - 1, c - 1));
                    for (xb, xc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        log_ratios[base + 2 * xb + xc] = lp[4 + 2 * xb + xc] - lp[2 * xb + xc];
                    }
                    // Variable b: other ranks (a, c − 1); index (x_a, x_c).
                    let base = 4 * (b * np + pair_number(a, c - 1));
                    for (xa, xc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        log_ratios[base + 2 * xa + xc] = lp[4 * xa + 2 + xc] - lp[4 * xa + xc];
                    }
                    // Variable c: other ranks (a, b); index (x_a, x_b).
                    let base = 4 * (c * np + pair_number(a, b));
                    for (xa, xb) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        log_ratios[base + 2 * xa + xb] =
                            lp[4 * xa + 2 * xb + 1] - lp[4 * xa + 2 * xb];
                    }
                }
            }
        }
        let bounds = log_ratios
            .chunks(4 * np)
            .map(|row| row.iter().fold(0.0_f64, |m, v| m.max(v.abs())))
            .collect();
        Self {
            d,
            pairs_per_variable: np,
            log_potentials,
            pairs,
            log_ratios,
            bounds,
            log_potential_sd: None,
        }
    }

    /// The standard deviation s the log-potentials were drawn with (`None` if they were given).
    pub fn log_potential_sd(&self) -> Option<f64> {
        self.log_potential_sd
    }

    /// Number of potentials D(D−1)(D−2)/6.
    pub fn num_potentials(&self) -> usize {
        num_triples(self.d)
    }

    /// All log-potentials, 8 per triple, at `8 t + entry_index(x_i, x_j, x_k)` with
    /// t = [`ThreeWayMrf::triple_index`]`(i, j, k)`.
    pub fn log_potentials(&self) -> &[f64] {
        &self.log_potentials
    }

    /// The number t of the triple {i, j, k} (distinct variables, any order) in colexicographic
    /// order: with a < b < c the sorted triple, t = c(c−1)(c−2)/6 + b(b−1)/2 + a. `None` if the
    /// variables are not distinct or not all < D.
    pub fn triple_index(&self, i: usize, j: usize, k: usize) -> Option<usize> {
        let mut v = [i, j, k];
        v.sort_unstable();
        if v[0] == v[1] || v[1] == v[2] || v[2] >= self.d {
            return None;
        }
        Some(triple_number(v[0], v[1], v[2]))
    }

    /// The two variables (j, k), j < k, of factor `p` of variable `i` (see the module docs for
    /// the numbering). `None` if i ≥ D or p ≥ N_i.
    pub fn factor_pair(&self, i: usize, p: usize) -> Option<(usize, usize)> {
        if i >= self.d || p >= self.pairs_per_variable {
            return None;
        }
        let [a, b] = self.pairs[p];
        let (a, b) = (usize::from(a), usize::from(b));
        Some((a + usize::from(a >= i), b + usize::from(b >= i)))
    }

    /// The unnormalized log-probability log P̃(x) = Σ_{i<j<k} log ψ_{ijk}(x_i, x_j, x_k).
    /// Cost: D(D−1)(D−2)/6 table reads.
    ///
    /// # Panics
    /// If `x.len()` ≠ D (entries ≥ 0.5 read as 1).
    pub fn log_unnormalized(&self, x: &[f64]) -> f64 {
        assert_eq!(x.len(), self.d, "state length");
        let mut total = 0.0;
        let mut t = 0;
        for c in 2..self.d {
            let xc = bit(x[c]);
            for b in 1..c {
                let xbc = 2 * bit(x[b]) + xc;
                for a in 0..b {
                    total += self.log_potentials[8 * t + 4 * bit(x[a]) + xbc];
                    t += 1;
                }
            }
        }
        total
    }

    /// The conditional log-odds log P(x_i = 1 | x_−i) / P(x_i = 0 | x_−i) = Σ_p l_p(x), the
    /// sum of the N_i factor log-ratios (x_i itself is ignored). Cost: N_i table reads.
    ///
    /// # Panics
    /// If i ≥ D or `x.len()` ≠ D.
    pub fn log_odds(&self, i: usize, x: &[f64]) -> f64 {
        assert!(i < self.d, "variable {i} out of range (D = {})", self.d);
        assert_eq!(x.len(), self.d, "state length");
        let np = self.pairs_per_variable;
        let row = &self.log_ratios[4 * i * np..4 * (i + 1) * np];
        let mut total = 0.0;
        for (quad, &[a, b]) in row.chunks_exact(4).zip(&self.pairs) {
            let (a, b) = (usize::from(a), usize::from(b));
            let j = a + usize::from(a >= i);
            let k = b + usize::from(b >= i);
            total += quad[2 * bit(x[j]) + bit(x[k])];
        }
        total
    }

    /// The exact Gibbs conditional P(x_i = 1 | x_−i) = σ(Σ_p l_p(x)), with σ the logistic
    /// function evaluated without overflow. Cost: N_i table reads.
    ///
    /// # Panics
    /// If i ≥ D or `x.len()` ≠ D.
    pub fn exact_conditional(&self, i: usize, x: &[f64]) -> f64 {
        sigmoid(self.log_odds(i, x))
    }

    /// Lists the normalized joint distribution of all 2^D states (D ≤
    /// [`MAX_ENUMERATED_VARIABLES`]). States are enumerated in Gray-code order, each from the
    /// previous one by adding ± the log-odds of the flipped variable: cost 2^D · N_i table reads
    /// (0.2·10⁹ at D = 20), then normalized in log space (log-sum-exp).
    ///
    /// Errors: D > [`MAX_ENUMERATED_VARIABLES`].
    pub fn enumerate(&self) -> Result<ExactJoint> {
        let d = self.d;
        if d > MAX_ENUMERATED_VARIABLES {
            return Err(Error::invalid(
                "number of variables for exact enumeration",
                d,
                format!("at most {MAX_ENUMERATED_VARIABLES} (2^D states are listed)"),
            ));
        }
        let n = 1usize << d;
        let mut log_probs = vec![0.0; n];
        let mut x = vec![0.0; d];
        let mut current = self.log_unnormalized(&x);
        log_probs[0] = current;
        for g in 1..n {
            let v = g.trailing_zeros() as usize;
            let odds = self.log_odds(v, &x);
            if x[v] == 0.0 {
                x[v] = 1.0;
                current += odds;
            } else {
                x[v] = 0.0;
                current -= odds;
            }
            log_probs[g ^ (g >> 1)] = current;
        }
        let max = log_probs.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        let log_z = max + log_probs.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
        log_probs.iter_mut().for_each(|v| *v -= log_z);
        Ok(ExactJoint { d, log_probs })
    }
}

impl BinaryFactors for ThreeWayMrf {
    fn num_variables(&self) -> usize {
        self.d
    }

    /// N_i = (D−1)(D−2)/2 for every i.
    fn num_factors(&self, _i: usize) -> usize {
        self.pairs_per_variable
    }

    /// One table read per factor: `out[k]` = l_p(x) for p = `factors[k]` (numbering in the
    /// module docs; entries of x ≥ 0.5 read as 1).
    fn factor_log_ratios(&self, i: usize, x: &[f64], factors: &[u32], out: &mut [f64]) {
        let np = self.pairs_per_variable;
        let row = &self.log_ratios[4 * i * np..4 * (i + 1) * np];
        for (o, &p) in out.iter_mut().zip(factors) {
            let p = p as usize;
            let [a, b] = self.pairs[p];
            let (a, b) = (usize::from(a), usize::from(b));
            let j = a + usize::from(a >= i);
            let k = b + usize::from(b >= i);
            *o = row[4 * p + 2 * bit(x[j]) + bit(x[k])];
        }
    }

    /// The exact max over factors and states of |l_p|, precomputed.
    fn log_ratio_bound(&self, i: usize) -> f64 {
        self.bounds[i]
    }
}

/// The normalized joint distribution of a small binary model, listed state by state.
///
/// State index s encodes x by bits: x_v = (s >> v) & 1 (variable 0 is the least significant
/// bit; see [`state_index`]).
#[derive(Debug, Clone)]
pub struct ExactJoint {
    d: usize,
    log_probs: Vec<f64>,
}

impl ExactJoint {
    /// Number of variables D.
    pub fn num_variables(&self) -> usize {
        self.d
    }

    /// log P(x) for every state index s (length 2^D), normalized: Σ_s exp = 1.
    pub fn log_probs(&self) -> &[f64] {
        &self.log_probs
    }

    /// P(x) for every state index (length 2^D).
    pub fn probs(&self) -> Vec<f64> {
        self.log_probs.iter().map(|v| v.exp()).collect()
    }

    /// The conditional P(x_i = 1 | x_−i) = P(x^{i←1}) / (P(x^{i←0}) + P(x^{i←1})) read from the
    /// table.
    ///
    /// Errors: i ≥ D, wrong length of x.
    pub fn conditional(&self, i: usize, x: &[f64]) -> Result<f64> {
        if i >= self.d {
            return Err(Error::invalid("variable", i, format!("an index < D = {}", self.d)));
        }
        let s = state_index(x, self.d)?;
        let l1 = self.log_probs[s | (1 << i)];
        let l0 = self.log_probs[s & !(1 << i)];
        Ok(sigmoid(l1 - l0))
    }

    /// The marginal distribution of the variables `vars` (distinct, each < D, at most
    /// [`MAX_ENUMERATED_VARIABLES`]): entry c is P(x_{vars\[m\]} = (c >> m) & 1 for all m), so
    /// `vars[0]` is the least significant bit. Cost: 2^D · |vars|.
    ///
    /// Errors: a repeated or out-of-range variable.
    pub fn marginal(&self, vars: &[usize]) -> Result<Vec<f64>> {
        check_subset(vars, self.d)?;
        let mut out = vec![0.0; 1 << vars.len()];
        for (s, lp) in self.log_probs.iter().enumerate() {
            out[subset_config(s, vars)] += lp.exp();
        }
        Ok(out)
    }
}

/// The index s = Σ_v x_v 2^v of a binary state of `d` variables (entries must be 0.0 or 1.0).
///
/// Errors: wrong length, d > [`MAX_ENUMERATED_VARIABLES`], an entry other than 0 or 1.
pub fn state_index(x: &[f64], d: usize) -> Result<usize> {
    if d > MAX_ENUMERATED_VARIABLES {
        return Err(Error::invalid(
            "number of variables for a state index",
            d,
            format!("at most {MAX_ENUMERATED_VARIABLES}"),
        ));
    }
    if x.len() != d {
        return Err(Error::dimension("binary state", d, x.len()));
    }
    let mut s = 0;
    for (v, &xv) in x.iter().enumerate() {
        if xv == 1.0 {
            s |= 1 << v;
        } else if xv != 0.0 {
            return Err(Error::invalid(
                "binary state entry",
                format!("{xv} (variable {v})"),
                "0 or 1",
            ));
        }
    }
    Ok(s)
}

/// The empirical distribution of the variables `vars` over `draws` (each a binary state with
/// entries 0.0 / 1.0; entries ≥ 0.5 count as 1), in the layout of [`ExactJoint::marginal`]:
/// entry c is the fraction of draws with x_{vars\[m\]} = (c >> m) & 1 for all m.
///
/// The accuracy measure of Austerity §6.3 (eq. 12) is the average over random 5-variable subsets
/// of Σ_c |empirical_c − exact_c|.
///
/// Errors: no draws, a repeated variable, a variable outside a draw, more than
/// [`MAX_ENUMERATED_VARIABLES`] variables.
pub fn empirical_marginal<'a, I>(draws: I, vars: &[usize]) -> Result<Vec<f64>>
where
    I: IntoIterator<Item = &'a [f64]>,
{
    check_subset(vars, usize::MAX)?;
    let mut counts = vec![0u64; 1 << vars.len()];
    let mut n = 0u64;
    for x in draws {
        let mut c = 0;
        for (m, &v) in vars.iter().enumerate() {
            let Some(&xv) = x.get(v) else {
                return Err(Error::invalid(
                    "variable",
                    v,
                    format!("an index < the draw's length {}", x.len()),
                ));
            };
            c |= bit(xv) << m;
        }
        counts[c] += 1;
        n += 1;
    }
    if n == 0 {
        return Err(Error::invalid("number of draws", 0, "at least 1"));
    }
    Ok(counts.iter().map(|&k| k as f64 / n as f64).collect())
}

fn subset_config(s: usize, vars: &[usize]) -> usize {
    vars.iter().enumerate().fold(0, |c, (m, &v)| c | (((s >> v) & 1) << m))
}

fn check_subset(vars: &[usize], d: usize) -> Result<()> {
    if vars.len() > MAX_ENUMERATED_VARIABLES {
        return Err(Error::invalid(
            "number of variables in a marginal",
            vars.len(),
            format!("at most {MAX_ENUMERATED_VARIABLES}"),
        ));
    }
    for (m, &v) in vars.iter().enumerate() {
        if v >= d {
            return Err(Error::invalid("variable", v, format!("an index < D = {d}")));
        }
        if vars[..m].contains(&v) {
            return Err(Error::invalid("variable", v, "distinct variables (it is repeated)"));
        }
    }
    Ok(())
}

fn check_variables(d: usize) -> Result<()> {
    if !(3..=MAX_VARIABLES).contains(&d) {
        return Err(Error::invalid(
            "number of variables D",
            d,
            format!(
                "3 ≤ D ≤ {MAX_VARIABLES} (a potential needs 3 variables; the tables take about \
                 27·D³ bytes, 211 MB at D = {MAX_VARIABLES})"
            ),
        ));
    }
    Ok(())
}

fn num_triples(d: usize) -> usize {
    d * (d - 1) * (d - 2) / 6
}

/// Colexicographic number of the triple a < b < c.
fn triple_number(a: usize, b: usize, c: usize) -> usize {
    c * (c - 1) * (c - 2) / 6 + b * (b - 1) / 2 + a
}
