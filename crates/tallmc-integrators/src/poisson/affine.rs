//! Constant and affine rates, inverted exactly.

use tallmc_core::{Error, Result};

use super::Rate;

/// λ(t) = c ≥ 0: τ = E/c (∞ when c = 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstantRate(pub f64);

impl ConstantRate {
    /// The rate c; errors unless c is finite and ≥ 0.
    pub fn new(c: f64) -> Result<Self> {
        if c.is_finite() && c >= 0.0 {
            Ok(Self(c))
        } else {
            Err(Error::invalid("Poisson rate", c, "a finite number >= 0"))
        }
    }
}

impl Rate for ConstantRate {
    fn rate(&self, _t: f64) -> f64 {
        self.0
    }

    fn integrated(&self, t: f64) -> f64 {
        if self.0 == 0.0 { 0.0 } else { self.0 * t }
    }

    fn arrival_for(&self, e: f64) -> f64 {
        if self.0 > 0.0 { e / self.0 } else { f64::INFINITY }
    }
}

/// λ(t) = [a + bt]⁺ = max(a + bt, 0), for finite a and b of any sign.
///
/// Inversion (REFERENCES §5; solve aτ + bτ²/2 = E for the smaller positive root):
///
/// ```text
/// b = 0:           τ = E/a if a > 0, else ∞
/// b > 0, a ≥ 0:    τ = 2E / (a + √(a² + 2bE))
/// b > 0, a < 0:    τ = −a/b + √(2E/b)               (the rate is 0 until −a/b)
/// b < 0, a ≤ 0:    τ = ∞                            (the rate is 0 for all t ≥ 0)
/// b < 0, a > 0:    τ = 2E / (a + √(a² + 2bE)) if E < a²/(2|b|) = Λ(∞), else ∞
/// ```
///
/// The form 2E/(a + √(a² + 2bE)) is the root E/(a/2 + …) rationalized: it has no cancellation
/// when bE ≪ a², and it is exact at b = 0 (τ = E/a) — the textbook (−a + √(a² + 2bE))/b loses
/// every digit there. The square root is taken as |a|·√(1 + 2bE/a²) when a² would overflow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AffineRate {
    /// Rate at t = 0 (may be negative: the rate is its positive part).
    pub a: f64,
    /// Slope.
    pub b: f64,
}

impl AffineRate {
    /// The rate [a + bt]⁺; errors unless a and b are finite.
    pub fn new(a: f64, b: f64) -> Result<Self> {
        if !a.is_finite() {
            return Err(Error::invalid("affine rate intercept a", a, "a finite number"));
        }
        if !b.is_finite() {
            return Err(Error::invalid("affine rate slope b", b, "a finite number"));
        }
        Ok(Self { a, b })
    }
}

/// √(a² + r) without overflow for huge |a| (the caller guarantees a² + r ≥ 0).
fn sqrt_a2_plus(a: f64, r: f64) -> f64 {
    let abs = a.abs();
    if abs > 1e150 {
        abs * (1.0 + (r / abs) / abs).max(0.0).sqrt()
    } else {
        (a * a + r).max(0.0).sqrt()
    }
}

impl Rate for AffineRate {
    fn rate(&self, t: f64) -> f64 {
        (self.a + self.b * t).max(0.0)
    }

    fn integrated(&self, t: f64) -> f64 {
        let (a, b) = (self.a, self.b);
        if t <= 0.0 {
            return 0.0;
        }
        if b == 0.0 {
            return if a > 0.0 { a * t } else { 0.0 };
        }
        // The rate is positive on an interval [lo, hi] ∩ [0, t]; integrate the line there.
        let zero = -a / b;
        let (lo, hi) = if b > 0.0 { (zero.max(0.0), t) } else { (0.0, zero.min(t)) };
        if hi <= lo {
            return 0.0;
        }
        // ∫_lo^hi (a + bs) ds = (hi − lo)·(a + b(lo + hi)/2)
        (hi - lo) * (a + 0.5 * b * (lo + hi))
    }

    fn arrival_for(&self, e: f64) -> f64 {
        let (a, b) = (self.a, self.b);
        if b == 0.0 {
            return if a > 0.0 { e / a } else { f64::INFINITY };
        }
        if b > 0.0 {
            if a >= 0.0 {
                2.0 * e / (a + sqrt_a2_plus(a, 2.0 * b * e))
            } else {
                -a / b + (2.0 * e / b).sqrt()
            }
        } else {
            if a <= 0.0 {
                return f64::INFINITY;
            }
            // Total mass a²/(2|b|); compare without forming a² when it would overflow.
            let total = if a > 1e150 { f64::INFINITY } else { a * a / (-2.0 * b) };
            if e >= total {
                return f64::INFINITY;
            }
            2.0 * e / (a + sqrt_a2_plus(a, 2.0 * b * e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Λ(τ) = E at the returned τ, in every sign case, with full relative accuracy.
    #[test]
    fn arrival_inverts_the_integrated_rate_in_every_case() {
        let cases = [
            (2.0, 0.0),
            (2.0, 3.0),
            (0.0, 3.0),
            (-2.0, 3.0),
            (2.0, -3.0),
            (1e-300, 1e-10),
            (1e8, 1e-8),
            (-1e-12, 5.0),
            (5.0, -1e-12),
        ];
        for (a, b) in cases {
            let r = AffineRate::new(a, b).unwrap();
            for e in [1e-12, 0.01, 0.5, 1.0, 3.0, 40.0] {
                let tau = r.arrival_for(e);
                if tau.is_finite() {
                    let lam = r.integrated(tau);
                    assert!((lam - e).abs() <= 1e-12 * e.max(1.0), "a={a} b={b} e={e}: Λ(τ)={lam}");
                } else {
                    assert!(r.integrated(1e300) <= e, "a={a} b={b} e={e}: τ = ∞ but Λ(∞) > E");
                }
            }
        }
    }

    #[test]
    fn degenerate_and_never_firing_rates() {
        assert_eq!(AffineRate { a: 0.0, b: 0.0 }.arrival_for(1.0), f64::INFINITY);
        assert_eq!(AffineRate { a: -1.0, b: 0.0 }.arrival_for(1.0), f64::INFINITY);
        assert_eq!(AffineRate { a: -1.0, b: -1.0 }.arrival_for(1e-9), f64::INFINITY);
        // b < 0: total mass a²/(2|b|) = 0.5; E above it never fires.
        assert_eq!(AffineRate { a: 1.0, b: -1.0 }.arrival_for(0.6), f64::INFINITY);
        assert!(AffineRate { a: 1.0, b: -1.0 }.arrival_for(0.4).is_finite());
        assert_eq!(ConstantRate(0.0).arrival_for(1.0), f64::INFINITY);
        assert_eq!(ConstantRate(2.0).arrival_for(1.0), 0.5);
        // Huge intercepts do not overflow.
        let tau = AffineRate { a: 1e200, b: 1e200 }.arrival_for(1.0);
        assert!((tau * 1e200 - 1.0).abs() < 1e-12, "{tau}");
        assert!(AffineRate::new(f64::NAN, 1.0).is_err());
        assert!(AffineRate::new(1.0, f64::INFINITY).unwrap_err().to_string().contains("slope"));
        assert!(ConstantRate::new(-1.0).is_err());
    }

    /// At b → 0 the stable form tends to E/a (the textbook root would cancel to 0/0).
    #[test]
    fn small_slopes_keep_full_accuracy() {
        let r = AffineRate { a: 2.0, b: 1e-17 };
        assert!((r.arrival_for(1.0) - 0.5).abs() < 1e-15);
    }
}
