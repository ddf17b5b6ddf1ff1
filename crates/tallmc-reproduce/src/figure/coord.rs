//! One axis as a plotters coordinate (our limits and ticks, linear or log), and clipping of
//! data to a panel's limits.
//!
//! plotters clamps every point it draws into the plot area, which would flatten a line that
//! leaves the area onto the frame; so series are clipped here first, in the axes' own scale
//! (log10 on a log axis), and only points inside the limits reach plotters.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};

use super::scale::{Scale, Ticks};

/// A point in data coordinates.
pub(crate) type Point = (f64, f64);

/// An axis: its scale and ticks (whose `lo` and `hi` are the limits).
#[derive(Debug, Clone)]
pub(crate) struct AxisCoord {
    log: bool,
    ticks: Ticks,
}

impl AxisCoord {
    pub(crate) fn new(scale: Scale, ticks: Ticks) -> Self {
        AxisCoord { log: scale == Scale::Log, ticks }
    }

    pub(crate) fn ticks(&self) -> &Ticks {
        &self.ticks
    }

    /// The value in the axis' own scale (log10 on a log axis), or `None` when `v` cannot be
    /// drawn (non-finite, or ≤ 0 on a log axis).
    pub(crate) fn to_scale(&self, v: f64) -> Option<f64> {
        match (v.is_finite(), self.log) {
            (false, _) => None,
            (true, true) => (v > 0.0).then(|| v.log10()),
            (true, false) => Some(v),
        }
    }

    /// The inverse of [`AxisCoord::to_scale`].
    pub(crate) fn unscale(&self, s: f64) -> f64 {
        if self.log { 10f64.powf(s) } else { s }
    }

    /// The limits in the axis' own scale.
    pub(crate) fn scale_limits(&self) -> (f64, f64) {
        let t = |v: f64| if self.log { v.log10() } else { v };
        (t(self.ticks.lo), t(self.ticks.hi))
    }

    /// The value where bars and histograms start: 0, or the lower limit if 0 cannot be drawn.
    pub(crate) fn base(&self) -> f64 {
        if self.log { self.ticks.lo } else { 0.0 }
    }

    /// The label of the major tick at `v` (empty off the ticks).
    pub(crate) fn label(&self, v: f64) -> String {
        let nearest = self.ticks.major.iter().position(|&m| m == v);
        nearest
            .and_then(|i| self.ticks.labels.get(i))
            .map(|l| l.to_display_string())
            .unwrap_or_default()
    }
}

impl Ranged for AxisCoord {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = self.scale_limits();
        let s = self.to_scale(*value).unwrap_or(lo);
        let pixel = f64::from(limit.0) + (s - lo) / (hi - lo) * f64::from(limit.1 - limit.0);
        // Far off-range values stay representable; series are clipped before they get here.
        pixel.round().clamp(-1e6, 1e6) as i32
    }

    /// The major ticks for plotters' bold grid lines and labels; no light lines.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.major.clone() }
    }

    fn range(&self) -> Range<f64> {
        self.ticks.lo..self.ticks.hi
    }
}

/// Tick labels for plotters' mesh: ours, exponents in superscripts.
impl ValueFormatter<f64> for AxisCoord {
    fn format(value: &f64) -> String {
        value.to_string()
    }

    fn format_ext(&self, value: &f64) -> String {
        self.label(*value)
    }
}

/// A panel's two axes, for clipping in their own scales.
pub(crate) struct Frame<'a> {
    pub(crate) x: &'a AxisCoord,
    pub(crate) y: &'a AxisCoord,
}

impl Frame<'_> {
    fn to_scale(&self, (x, y): Point) -> Option<Point> {
        Some((self.x.to_scale(x)?, self.y.to_scale(y)?))
    }

    fn unscale(&self, (x, y): Point) -> Point {
        (self.x.unscale(x), self.y.unscale(y))
    }

    /// Whether `p` is drawable and inside the limits (to a thousandth of the range, so that
    /// points on the frame count as inside).
    pub(crate) fn contains(&self, p: Point) -> bool {
        let inside = |s: f64, (lo, hi): (f64, f64)| {
            let tol = 1e-3 * (hi - lo).abs();
            s >= lo.min(hi) - tol && s <= lo.max(hi) + tol
        };
        self.to_scale(p).is_some_and(|(x, y)| {
            inside(x, self.x.scale_limits()) && inside(y, self.y.scale_limits())
        })
    }

    /// `v` moved into the y limits (in data units).
    pub(crate) fn clamp_y(&self, v: f64) -> f64 {
        v.clamp(self.y.ticks.lo.min(self.y.ticks.hi), self.y.ticks.lo.max(self.y.ticks.hi))
    }

    /// `v` moved into the x limits (in data units).
    pub(crate) fn clamp_x(&self, v: f64) -> f64 {
        v.clamp(self.x.ticks.lo.min(self.x.ticks.hi), self.x.ticks.lo.max(self.x.ticks.hi))
    }

    /// The part of segment `a`–`b` (in scale units) inside the limits, and whether each end
    /// was cut (Liang–Barsky).
    fn clip_segment(&self, a: Point, b: Point) -> Option<(Point, Point, bool, bool)> {
        let (x0, x1) = self.x.scale_limits();
        let (y0, y1) = self.y.scale_limits();
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
        for (p, q) in [
            (-dx, a.0 - x0.min(x1)),
            (dx, x0.max(x1) - a.0),
            (-dy, a.1 - y0.min(y1)),
            (dy, y0.max(y1) - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else if p < 0.0 {
                t0 = t0.max(q / p);
            } else {
                t1 = t1.min(q / p);
            }
        }
        if t0 > t1 {
            return None;
        }
        let at = |t: f64| (a.0 + t * dx, a.1 + t * dy);
        Some((at(t0), at(t1), t0 > 0.0, t1 < 1.0))
    }

    /// The polyline through `points` cut into the runs that lie inside the limits: it breaks
    /// at points that cannot be drawn and where it leaves the plot area. A run has at least
    /// two points.
    pub(crate) fn clip_polyline(&self, points: impl IntoIterator<Item = Point>) -> Vec<Vec<Point>> {
        let mut runs: Vec<Vec<Point>> = Vec::new();
        let mut open = false;
        let mut prev: Option<Point> = None;
        for p in points {
            let s = self.to_scale(p);
            if let (Some(a), Some(b)) = (prev, s) {
                match self.clip_segment(a, b) {
                    Some((a, b, cut_a, cut_b)) => {
                        // Extend the current run only if this segment starts where it ended.
                        if !open || cut_a {
                            runs.push(vec![self.unscale(a)]);
                        }
                        if let Some(run) = runs.last_mut() {
                            run.push(self.unscale(b));
                        }
                        open = !cut_b;
                    }
                    None => open = false,
                }
            } else {
                open = false;
            }
            prev = s;
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(scale: Scale, lo: f64, hi: f64) -> AxisCoord {
        AxisCoord::new(scale, scale.fixed_ticks(lo, hi, 5))
    }

    #[test]
    fn maps_limits_to_pixels() {
        let a = axis(Scale::Log, 1.0, 100.0);
        assert_eq!(a.map(&1.0, (300, 0)), 300);
        assert_eq!(a.map(&10.0, (300, 0)), 150);
        assert_eq!(a.map(&100.0, (300, 0)), 0);
        assert_eq!(a.key_points(plotters::coord::ranged1d::BoldPoints(5)), [1.0, 10.0, 100.0]);
        assert_eq!(a.label(10.0), "10¹");
        assert_eq!(a.label(3.0), "");
    }

    #[test]
    fn polylines_break_at_gaps_and_at_the_frame() {
        let (x, y) = (axis(Scale::Linear, 0.0, 10.0), axis(Scale::Linear, 0.0, 1.0));
        let frame = Frame { x: &x, y: &y };
        let pts = [(0.0, 0.5), (1.0, 0.5), (2.0, f64::NAN), (3.0, 0.5), (4.0, 2.0), (5.0, 0.5)];
        let runs = frame.clip_polyline(pts);
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert_eq!(runs[0], [(0.0, 0.5), (1.0, 0.5)]);
        assert_eq!(runs[1], [(3.0, 0.5), (3.0 + 1.0 / 3.0, 1.0)]);
        assert_eq!(runs[2], [(5.0 - 1.0 / 3.0, 1.0), (5.0, 0.5)]);
        // Wholly outside, or a single drawable point: nothing.
        assert!(frame.clip_polyline([(-2.0, 0.5), (-1.0, 0.5)]).is_empty());
        assert!(frame.clip_polyline([(1.0, 0.5), (2.0, f64::INFINITY)]).is_empty());
        assert!(frame.contains((10.0, 1.0)) && !frame.contains((10.5, 1.0)));
    }

    #[test]
    fn log_axes_clip_in_log_space() {
        let (x, y) = (axis(Scale::Log, 1.0, 100.0), axis(Scale::Log, 1.0, 100.0));
        let frame = Frame { x: &x, y: &y };
        let runs = frame.clip_polyline([(0.1, 0.1), (1000.0, 1000.0), (-1.0, 5.0)]);
        assert_eq!(runs.len(), 1);
        let [a, b] = runs[0][..] else { panic!("{runs:?}") };
        assert!((a.0 - 1.0).abs() < 1e-12 && (b.1 - 100.0).abs() < 1e-9, "{runs:?}");
        assert_eq!(x.base(), 1.0);
    }
}
