//! The squared-affine rate λ(t) = c (r + s t)², inverted exactly: the growth of a Taylor
//! remainder bound along a line (Zig-Zag with control variates of order two).

use tallmc_core::{Error, Result};

use super::Rate;

/// λ(t) = c (r + s t)² with c, r, s finite and ≥ 0.
///
/// Λ(t) = c[(r + st)³ − r³]/(3s) (c r² t when s = 0). Inversion, with q = ∛(1 + 3sE/(c r³)):
///
/// ```text
/// r > 0:   τ = 3E / (c r² (q² + q + 1))        (from q³ − 1 = (q − 1)(q² + q + 1): no cancellation)
/// r = 0:   τ = ∛(3E / (c s²))
/// ```
///
/// and τ = ∞ when c = 0, or when r = s = 0. At s = 0 the first form is E/(c r²) exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SquaredAffineRate {
    /// Scale c ≥ 0.
    pub c: f64,
    /// r ≥ 0: the root of the rate at t = 0.
    pub r: f64,
    /// s ≥ 0: its growth per unit time.
    pub s: f64,
}

impl SquaredAffineRate {
    /// The rate c (r + st)²; errors unless c, r and s are finite and ≥ 0 (naming the value).
    pub fn new(c: f64, r: f64, s: f64) -> Result<Self> {
        for (name, v) in [("c", c), ("r", r), ("s", s)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::invalid(
                    "squared-affine Poisson rate c (r + s t)²",
                    format!("{name} = {v}"),
                    "finite numbers >= 0",
                ));
            }
        }
        Ok(Self { c, r, s })
    }
}

impl Rate for SquaredAffineRate {
    fn rate(&self, t: f64) -> f64 {
        let u = self.r + self.s * t;
        self.c * u * u
    }

    fn integrated(&self, t: f64) -> f64 {
        let Self { c, r, s } = *self;
        if c == 0.0 {
            return 0.0;
        }
        // c[(r + st)³ − r³]/(3s) = c t (r² + r(r + st) + (r + st)²)/3, which has no cancellation.
        let u = r + s * t;
        c * t * (r * r + r * u + u * u) / 3.0
    }

    fn arrival_for(&self, e: f64) -> f64 {
        let Self { c, r, s } = *self;
        if c == 0.0 || (r == 0.0 && s == 0.0) {
            return f64::INFINITY;
        }
        if r == 0.0 {
            return (3.0 * e / (c * s * s)).cbrt();
        }
        let q = (1.0 + 3.0 * s * e / (c * r * r * r)).cbrt();
        3.0 * e / (c * r * r * (q * q + q + 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrival_inverts_the_integrated_rate() {
        for &(c, r, s) in &[
            (1.0, 1.0, 1.0),
            (0.3, 0.0, 2.0),
            (2.0, 5.0, 0.0),
            (1e-3, 1e3, 1e-2),
            (7.0, 1e-9, 3.0),
        ] {
            let rate = SquaredAffineRate::new(c, r, s).unwrap();
            for &e in &[1e-12, 0.1, 1.0, 17.0] {
                let tau = rate.arrival_for(e);
                let back = rate.integrated(tau);
                assert!((back - e).abs() <= 1e-12 * e.max(1.0), "c={c} r={r} s={s} e={e}: {back}");
            }
        }
        assert_eq!(SquaredAffineRate::new(0.0, 1.0, 1.0).unwrap().arrival_for(1.0), f64::INFINITY);
        assert_eq!(SquaredAffineRate::new(1.0, 0.0, 0.0).unwrap().arrival_for(1.0), f64::INFINITY);
        assert_eq!(SquaredAffineRate::new(2.0, 5.0, 0.0).unwrap().arrival_for(1.0), 1.0 / 50.0);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = SquaredAffineRate::new(1.0, -1.0, 0.0).unwrap_err();
        assert!(e.to_string().contains("r = -1"), "{e}");
        assert!(SquaredAffineRate::new(f64::NAN, 1.0, 0.0).is_err());
    }
}
