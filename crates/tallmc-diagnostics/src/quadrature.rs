//! Gauss–Legendre quadrature, plain and composite.
//!
//! The n-point Gauss–Legendre rule on [−1, 1] has nodes ξ_i, the roots of the Legendre
//! polynomial P_n, and weights w_i = 2 / ((1 − ξ_i²) P_n′(ξ_i)²):
//!
//! ```text
//! ∫_{−1}^{1} g(ξ) dξ ≈ Σ_{i<n} w_i g(ξ_i),
//! ```
//!
//! **exact for every polynomial of degree ≤ 2n − 1**. On [a, b] the rule is applied after the
//! affine map t = (a + b)/2 + ξ (b − a)/2. The **composite** rule splits [a, b] into
//! m = ⌈(b − a)/h⌉ equal sub-intervals of length ≤ h (the `max_step`) and applies the rule on
//! each; it is still exact for polynomials of degree ≤ 2n − 1 and, for a smooth g, its error
//! is O(m · ((b − a)/m)^{2n+1} · max|g^{(2n)}|), i.e. O(h^{2n}) per unit length.
//!
//! Nodes and weights are computed once by Newton's method on the three-term recurrence of the
//! Legendre polynomials (to machine precision; tested against the closed forms for n ≤ 3).
//!
//! Cost: n evaluations of g per sub-interval.
//!
//! ```
//! use tallmc_diagnostics::quadrature::GaussLegendre;
//! let rule = GaussLegendre::new(3).unwrap(); // exact up to degree 5
//! let i = rule.integrate(0.0, 2.0, |t| t.powi(5));
//! assert!((i - 64.0 / 6.0).abs() < 1e-13);
//! let s = rule.integrate_composite(0.0, std::f64::consts::PI, 0.1, f64::sin);
//! assert!((s - 2.0).abs() < 1e-12);
//! ```

use crate::error::{Error, Result};

/// Largest number of nodes [`GaussLegendre::new`] accepts.
pub const MAX_NODES: usize = 128;

/// Newton iterations allowed per node (convergence takes fewer than 10).
const NEWTON_ITERATIONS: usize = 100;

/// An n-point Gauss–Legendre rule on [−1, 1] (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussLegendre {
    nodes: Vec<f64>,
    weights: Vec<f64>,
}

impl GaussLegendre {
    /// The rule with `n` nodes, exact for polynomials of degree ≤ 2n − 1.
    ///
    /// # Errors
    /// `n` = 0 or `n` > [`MAX_NODES`].
    pub fn new(n: usize) -> Result<Self> {
        if n == 0 || n > MAX_NODES {
            return Err(Error::invalid(
                "quadrature nodes",
                n,
                "a number of Gauss-Legendre nodes in 1..=128",
            ));
        }
        let mut nodes = vec![0.0; n];
        let mut weights = vec![0.0; n];
        let nf = n as f64;
        for i in 0..n.div_ceil(2) {
            // Tricomi's initial guess for the i-th largest root.
            let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..NEWTON_ITERATIONS {
                let (p, d) = legendre(n, z);
                dp = d;
                let step = p / d;
                z -= step;
                if step.abs() <= 1e-16 * z.abs().max(1.0) {
                    break;
                }
            }
            let (_, d) = legendre(n, z);
            if d.is_finite() {
                dp = d;
            }
            let w = 2.0 / ((1.0 - z * z) * dp * dp);
            nodes[i] = -z;
            nodes[n - 1 - i] = z;
            weights[i] = w;
            weights[n - 1 - i] = w;
        }
        if !n.is_multiple_of(2) {
            nodes[n / 2] = 0.0;
        }
        Ok(Self { nodes, weights })
    }

    /// Number of nodes n.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false (a rule has at least one node).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Highest polynomial degree integrated exactly: 2n − 1.
    pub fn degree(&self) -> usize {
        2 * self.len() - 1
    }

    /// Nodes ξ_i on [−1, 1], increasing.
    pub fn nodes(&self) -> &[f64] {
        &self.nodes
    }

    /// Weights w_i (summing to 2).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// ∫_a^b g(t) dt by the n-point rule on [a, b] (one interval): n evaluations of g.
    pub fn integrate(&self, a: f64, b: f64, mut g: impl FnMut(f64) -> f64) -> f64 {
        let half = 0.5 * (b - a);
        let mid = a + half;
        let mut sum = 0.0;
        for (&xi, &w) in self.nodes.iter().zip(&self.weights) {
            sum += w * g(mid + half * xi);
        }
        sum * half
    }

    /// ∫_a^b g(t) dt by the composite rule: [a, b] split into ⌈(b − a)/`max_step`⌉ equal
    /// sub-intervals (one when `max_step` is infinite or b − a ≤ `max_step`), n evaluations
    /// of g on each. `max_step` must be > 0 (it is validated by the callers in this crate, see
    /// [`QuadratureConfig`](crate::continuous::QuadratureConfig)); b ≥ a.
    pub fn integrate_composite(
        &self, a: f64, b: f64, max_step: f64, mut g: impl FnMut(f64) -> f64,
    ) -> f64 {
        let pieces = sub_intervals(b - a, max_step);
        if pieces == 1 {
            return self.integrate(a, b, g);
        }
        let h = (b - a) / pieces as f64;
        let mut sum = 0.0;
        for k in 0..pieces {
            let lo = a + k as f64 * h;
            let hi = if k + 1 == pieces { b } else { a + (k + 1) as f64 * h };
            sum += self.integrate(lo, hi, &mut g);
        }
        sum
    }
}

/// Number of equal sub-intervals of length ≤ `max_step` covering a length `len` ≥ 0 (at
/// least 1).
pub(crate) fn sub_intervals(len: f64, max_step: f64) -> usize {
    if len <= max_step || !max_step.is_finite() {
        1
    } else {
        // len / max_step > 1 and finite; the cast saturates for absurd ratios.
        (len / max_step).ceil() as usize
    }
}

/// P_n(z) and P_n′(z) by the three-term recurrence.
fn legendre(n: usize, z: f64) -> (f64, f64) {
    let (mut p0, mut p1) = (1.0, z);
    for j in 2..=n {
        let jf = j as f64;
        let p2 = ((2.0 * jf - 1.0) * z * p1 - (jf - 1.0) * p0) / jf;
        p0 = p1;
        p1 = p2;
    }
    let (p, pm1) = if n == 0 { (1.0, 0.0) } else { (p1, p0) };
    let d = n as f64 * (z * p - pm1) / (z * z - 1.0);
    (p, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_rules() {
        let r1 = GaussLegendre::new(1).unwrap();
        assert_eq!(r1.nodes(), &[0.0]);
        assert!((r1.weights()[0] - 2.0).abs() < 1e-15);
        let r2 = GaussLegendre::new(2).unwrap();
        let x = 1.0 / 3f64.sqrt();
        assert!((r2.nodes()[1] - x).abs() < 1e-15 && (r2.nodes()[0] + x).abs() < 1e-15);
        assert!((r2.weights()[0] - 1.0).abs() < 1e-15);
        let r3 = GaussLegendre::new(3).unwrap();
        assert!((r3.nodes()[2] - 0.6f64.sqrt()).abs() < 1e-15);
        assert!((r3.weights()[1] - 8.0 / 9.0).abs() < 1e-15);
        assert!((r3.weights()[0] - 5.0 / 9.0).abs() < 1e-15);
    }

    #[test]
    fn exact_up_to_degree_2n_minus_1_and_not_beyond() {
        for n in [1usize, 2, 3, 5, 8, 13, 20, 40] {
            let rule = GaussLegendre::new(n).unwrap();
            assert_eq!(rule.degree(), 2 * n - 1);
            let wsum: f64 = rule.weights().iter().sum();
            assert!((wsum - 2.0).abs() < 1e-13, "n = {n}: weights sum to {wsum}");
            assert!(rule.nodes().windows(2).all(|w| w[0] < w[1]));
            // ∫_{-0.5}^{1.5} t^p dt, with the composite rule too (3 pieces).
            for p in 0..=rule.degree() as i32 {
                let exact = (1.5f64.powi(p + 1) - (-0.5f64).powi(p + 1)) / f64::from(p + 1);
                let one = rule.integrate(-0.5, 1.5, |t| t.powi(p));
                let comp = rule.integrate_composite(-0.5, 1.5, 0.7, |t| t.powi(p));
                let tol = 1e-13 * exact.abs().max(1.0);
                assert!((one - exact).abs() < tol, "n = {n}, degree {p}: {one} vs {exact}");
                assert!((comp - exact).abs() < tol, "n = {n}, degree {p}: {comp} vs {exact}");
            }
            // Degree 2n is not exact (visibly above rounding while n is small).
            let p = 2 * n as i32;
            let exact = (1.5f64.powi(p + 1) - (-0.5f64).powi(p + 1)) / f64::from(p + 1);
            let err = (rule.integrate(-0.5, 1.5, |t| t.powi(p)) - exact).abs();
            if n <= 8 {
                assert!(err > 1e-12 * exact, "n = {n}: degree 2n integrated exactly ({err})");
            }
        }
    }

    #[test]
    fn composite_converges_on_sin() {
        let rule = GaussLegendre::new(5).unwrap();
        let exact = 1.0 - 10f64.cos();
        let coarse = rule.integrate(0.0, 10.0, f64::sin);
        let fine = rule.integrate_composite(0.0, 10.0, 0.5, f64::sin);
        assert!((coarse - exact).abs() > 1e-4);
        assert!((fine - exact).abs() < 1e-13, "{fine} vs {exact}");
        assert_eq!(sub_intervals(10.0, 0.5), 20);
        assert_eq!(sub_intervals(10.0, f64::INFINITY), 1);
        assert_eq!(sub_intervals(0.0, 0.5), 1);
    }

    #[test]
    fn bad_node_counts() {
        let e = GaussLegendre::new(0).unwrap_err();
        assert!(e.to_string().contains("quadrature nodes = 0"), "{e}");
        assert!(GaussLegendre::new(MAX_NODES + 1).is_err());
        assert!(GaussLegendre::new(MAX_NODES).is_ok());
    }
}
