//! Superposition of independent clocks.

/// The earliest of several independent first arrivals: `(index, time)` of the smallest
/// finite time (the first index on ties), or `None` when no clock fires (every time infinite).
///
/// With independent clocks of rates λ₁, …, λ_K this is the first arrival of the superposed
/// process of rate Σλ_k together with the clock that produced it (module docs). NaN times are
/// never chosen.
pub fn earliest<I: IntoIterator<Item = f64>>(times: I) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for (k, t) in times.into_iter().enumerate() {
        if t.is_finite() && best.is_none_or(|(_, b)| t < b) {
            best = Some((k, t));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_smallest_finite_time() {
        assert_eq!(earliest([3.0, 1.0, 2.0]), Some((1, 1.0)));
        assert_eq!(earliest([f64::INFINITY, f64::NAN, 5.0]), Some((2, 5.0)));
        assert_eq!(earliest([f64::INFINITY, f64::INFINITY]), None);
        assert_eq!(earliest([1.0, 1.0]), Some((0, 1.0)));
        assert_eq!(earliest(std::iter::empty()), None);
    }
}
