//! Binning samples into a normalized density histogram.

/// `bins` equal-width bin edges spanning the finite samples (a degenerate span is widened to
/// ±10% of the value, or ±0.5 around zero). `bins == 0` is treated as 1. Without finite samples
/// the edges span `[0, 1]`.
pub fn equal_width_edges(samples: &[f64], bins: usize) -> Vec<f64> {
    let bins = bins.max(1);
    let (mut lo, mut hi) = samples
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (lo, hi) = (0.0, 1.0);
    } else if hi <= lo {
        let d = if lo == 0.0 { 0.5 } else { 0.1 * lo.abs() };
        (lo, hi) = (lo - d, hi + d);
    }
    let width = (hi - lo) / bins as f64;
    let mut edges: Vec<f64> = (0..bins).map(|i| lo + width * i as f64).collect();
    edges.push(hi);
    edges
}

/// The density of each bin: `count_i / (n × width_i)`, where `n` counts the finite samples
/// inside `[edges[0], edges[last]]` (the last bin includes its right edge; the others are
/// half-open `[left, right)`), so the histogram integrates to 1 as numpy's `density=True` does.
///
/// Returns `None` when the edges are fewer than two, not finite, or not strictly increasing.
/// All densities are 0 when no sample falls inside.
///
/// ```
/// use tallmc_reproduce::figure::density;
/// let d = density(&[0.1, 0.2, 0.6, 1.0], &[0.0, 0.5, 1.0]).unwrap();
/// assert_eq!(d, [1.0, 1.0]);
/// ```
pub fn density(samples: &[f64], edges: &[f64]) -> Option<Vec<f64>> {
    if edges.len() < 2
        || edges.iter().any(|e| !e.is_finite())
        || edges.windows(2).any(|w| w[1] <= w[0])
    {
        return None;
    }
    let bins = edges.len() - 1;
    let (first, last) = (edges[0], edges[bins]);
    let mut counts = vec![0_u64; bins];
    for &v in samples {
        if !(v >= first && v <= last) {
            continue;
        }
        // Number of edges ≤ v, minus one, is the bin; v == last falls in the last bin.
        let bin = edges.partition_point(|&e| e <= v).saturating_sub(1).min(bins - 1);
        counts[bin] += 1;
    }
    let n: u64 = counts.iter().sum();
    Some(
        counts
            .iter()
            .zip(edges.windows(2))
            .map(|(&c, w)| if n == 0 { 0.0 } else { c as f64 / (n as f64 * (w[1] - w[0])) })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_integrates_to_one() {
        let samples: Vec<f64> = (0..1000).map(|i| ((i * 37) % 101) as f64 / 7.0).collect();
        let edges = equal_width_edges(&samples, 13);
        assert_eq!(edges.len(), 14);
        let d = density(&samples, &edges).unwrap();
        let area: f64 = d.iter().zip(edges.windows(2)).map(|(d, w)| d * (w[1] - w[0])).sum();
        assert!((area - 1.0).abs() < 1e-12);
    }

    #[test]
    fn degenerate_and_invalid_input() {
        assert_eq!(equal_width_edges(&[2.0, 2.0], 2), [1.8, 2.0, 2.2]);
        assert_eq!(equal_width_edges(&[f64::NAN], 0), [0.0, 1.0]);
        assert_eq!(density(&[1.0], &[1.0]), None);
        assert_eq!(density(&[1.0], &[1.0, 0.0]), None);
        assert_eq!(density(&[1.0], &[0.0, f64::NAN]), None);
        assert_eq!(density(&[5.0, f64::NAN], &[0.0, 1.0]), Some(vec![0.0]));
    }
}
