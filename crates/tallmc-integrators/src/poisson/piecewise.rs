//! Piecewise-linear rates given by their knots, inverted exactly piece by piece.

use tallmc_core::{Error, Result};

use super::{AffineRate, Rate};

/// λ(t) = [γ(t)]⁺ where γ interpolates linearly between knots (t₀ = 0 ≤ t₁ ≤ … ≤ t_K, values
/// γ₀, …, γ_K of any sign; two knots at the same time make a jump, so a piecewise-*constant*
/// rate is the special case of two knots per level) and λ(t) = 0 beyond the last knot t_K (the *horizon*: a caller that
/// finds no arrival before it moves there and builds the next band, which is exact because
/// Poisson processes are memoryless).
///
/// On piece k, with h = t − t_k, γ is the affine a + bh (a = γ_k, b = (γ_{k+1} − γ_k)/(t_{k+1} −
/// t_k)), so the piece's mass and the arrival inside it come from [`AffineRate`]: only the
/// positive part of a piece that crosses zero counts (SBPS-public integrates signed trapezoids
/// there, REFERENCES §5), and a piece with a ≈ 0 is handled by the affine inversion's stable
/// form (no 0/0). Zero-length pieces (jumps) carry no mass; at a jump the rate is the value
/// after it.
///
/// The knots are held in reusable buffers ([`PiecewiseLinearRate::clear`],
/// [`PiecewiseLinearRate::push`]), so rebuilding a band allocates nothing once the largest band
/// has been seen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PiecewiseLinearRate {
    knots: Vec<f64>,
    values: Vec<f64>,
}

impl PiecewiseLinearRate {
    /// An empty rate (no knots: λ = 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// The rate with the given knots and values; errors unless the lengths agree, there are at
    /// least two knots, the first is 0, they never decrease and everything is finite.
    pub fn from_knots(knots: &[f64], values: &[f64]) -> Result<Self> {
        if knots.len() != values.len() {
            return Err(Error::dimension(
                "piecewise-linear rate values",
                knots.len(),
                values.len(),
            ));
        }
        if knots.len() < 2 {
            return Err(Error::invalid("number of knots", knots.len(), "at least 2"));
        }
        let mut r = Self::new();
        for (&t, &v) in knots.iter().zip(values) {
            r.push(t, v)?;
        }
        Ok(r)
    }

    /// Removes every knot (keeps the buffers).
    pub fn clear(&mut self) {
        self.knots.clear();
        self.values.clear();
    }

    /// Appends the knot (t, γ(t)); errors unless t and γ are finite, the first knot is at 0 and
    /// no knot is before the previous one (a knot at the previous time makes a jump).
    pub fn push(&mut self, t: f64, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(Error::invalid("rate value at a knot", value, "a finite number"));
        }
        match self.knots.last() {
            None if t != 0.0 => {
                return Err(Error::invalid("first knot", t, "0 (rates start at t = 0)"));
            }
            Some(&prev) if !(t >= prev && t.is_finite()) => {
                return Err(Error::invalid(
                    "knot time",
                    t,
                    format!("a finite time not before the previous knot {prev}"),
                ));
            }
            _ => {}
        }
        self.knots.push(t);
        self.values.push(value);
        Ok(())
    }

    /// The knot times.
    pub fn knots(&self) -> &[f64] {
        &self.knots
    }

    /// γ at the knots.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The last knot t_K (0 with fewer than one knot): no arrival happens after it.
    pub fn horizon(&self) -> f64 {
        self.knots.last().copied().unwrap_or(0.0)
    }

    /// Piece k as an affine rate in h = t − t_k, with its length (a jump has length 0 and a
    /// zero rate).
    fn piece(&self, k: usize) -> (AffineRate, f64) {
        let len = self.knots[k + 1] - self.knots[k];
        if len <= 0.0 {
            return (AffineRate { a: 0.0, b: 0.0 }, 0.0);
        }
        let a = self.values[k];
        let b = (self.values[k + 1] - a) / len;
        (AffineRate { a, b }, len)
    }

    /// The piece holding t (t inside [t₀, t_K]): the last piece starting at or before t, by
    /// binary search (after a jump, the piece after it).
    fn piece_of(&self, t: f64) -> usize {
        let k = self.knots.partition_point(|&s| s <= t);
        k.saturating_sub(1).min(self.knots.len().saturating_sub(2))
    }
}

impl Rate for PiecewiseLinearRate {
    fn rate(&self, t: f64) -> f64 {
        if self.knots.len() < 2 || t < 0.0 || t > self.horizon() {
            return 0.0;
        }
        let k = self.piece_of(t);
        let (line, _) = self.piece(k);
        line.rate(t - self.knots[k])
    }

    fn integrated(&self, t: f64) -> f64 {
        let mut total = 0.0;
        for k in 0..self.knots.len().saturating_sub(1) {
            let (line, len) = self.piece(k);
            let start = self.knots[k];
            if t <= start {
                break;
            }
            total += line.integrated((t - start).min(len));
        }
        total
    }

    fn arrival_for(&self, e: f64) -> f64 {
        let mut remaining = e;
        for k in 0..self.knots.len().saturating_sub(1) {
            let (line, len) = self.piece(k);
            let mass = line.integrated(len);
            if remaining < mass {
                // The arrival is inside this piece; clamp the rounding to the piece.
                return self.knots[k] + line.arrival_for(remaining).min(len);
            }
            remaining -= mass;
        }
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_part_of_pieces_that_cross_zero() {
        // γ: 1 at 0, −1 at 2, 3 at 4. λ = [γ]⁺: mass 0.5 on [0, 1], 0 on [1, 2.5], then the
        // line from 0 at 2.5 to 3 at 4: mass 1.5·3/2 = 2.25.
        let r = PiecewiseLinearRate::from_knots(&[0.0, 2.0, 4.0], &[1.0, -1.0, 3.0]).unwrap();
        assert!((r.integrated(4.0) - 2.75).abs() < 1e-14);
        assert!((r.integrated(2.0) - 0.5).abs() < 1e-14);
        assert_eq!(r.rate(1.5), 0.0);
        assert!((r.rate(3.0) - 1.0).abs() < 1e-14);
        assert_eq!(r.rate(5.0), 0.0);
        // E = 0.5 + 1 lands in the last piece at 2.5 + √(2·1/2) = 3.5.
        assert!((r.arrival_for(1.5) - 3.5).abs() < 1e-12);
        assert_eq!(r.arrival_for(3.0), f64::INFINITY);
        for e in [1e-9, 0.1, 0.49, 0.5 + 1e-9, 1.0, 2.7] {
            let t = r.arrival_for(e);
            assert!((r.integrated(t) - e).abs() < 1e-12, "e = {e}");
        }
    }

    #[test]
    fn invalid_knots_are_errors_naming_the_value() {
        assert!(PiecewiseLinearRate::from_knots(&[0.0], &[1.0]).is_err());
        assert!(PiecewiseLinearRate::from_knots(&[0.0, 1.0], &[1.0]).is_err());
        let e = PiecewiseLinearRate::from_knots(&[0.5, 1.0], &[1.0, 1.0]).unwrap_err();
        assert!(e.to_string().contains("0.5"), "{e}");
        let e = PiecewiseLinearRate::from_knots(&[0.0, 1.0, 0.9], &[1.0, 1.0, 1.0]).unwrap_err();
        assert!(e.to_string().contains("not before the previous knot 1"), "{e}");
        assert!(PiecewiseLinearRate::from_knots(&[0.0, 1.0], &[1.0, f64::NAN]).is_err());
        assert_eq!(PiecewiseLinearRate::new().arrival_for(0.1), f64::INFINITY);
    }

    #[test]
    fn jumps_make_piecewise_constant_rates() {
        // 2 on [0, 1), 0.5 on [1, 3].
        let r =
            PiecewiseLinearRate::from_knots(&[0.0, 1.0, 1.0, 3.0], &[2.0, 2.0, 0.5, 0.5]).unwrap();
        assert_eq!(r.rate(0.5), 2.0);
        assert_eq!(r.rate(1.0), 0.5);
        assert_eq!(r.rate(2.0), 0.5);
        assert!((r.integrated(3.0) - 3.0).abs() < 1e-15);
        assert!((r.arrival_for(1.0) - 0.5).abs() < 1e-15);
        assert!((r.arrival_for(2.5) - 2.0).abs() < 1e-15);
        assert_eq!(r.arrival_for(3.5), f64::INFINITY);
    }

    #[test]
    fn clearing_reuses_buffers() {
        let mut r = PiecewiseLinearRate::from_knots(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).unwrap();
        let cap = r.knots.capacity();
        r.clear();
        r.push(0.0, 2.0).unwrap();
        r.push(1.0, 2.0).unwrap();
        assert_eq!(r.knots.capacity(), cap);
        assert!((r.arrival_for(1.0) - 0.5).abs() < 1e-15);
        assert_eq!(r.horizon(), 1.0);
    }
}
