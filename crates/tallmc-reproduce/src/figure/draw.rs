//! Drawing each kind of series in a panel's plot area: a clipped pass (lines, areas, bars,
//! reference lines) and an unclipped pass (markers and error bars of the points inside).

use super::scale::Mapper;
use super::series::{Bars, Histogram, Line, RefKind, RefLine, Series};
use super::style::{Color, Marker};
use super::svg::{PathData, SvgWriter};

/// Width of a category's group of bars, in category units.
const GROUP_WIDTH: f64 = 0.8;
/// Half the width of an error bar's caps, in pixels.
const CAP: f64 = 3.0;
/// Opacity of histogram and bar fills.
pub(crate) const FILL_OPACITY: f64 = 0.35;

/// The pixel mappings of a panel's two axes, plus what bars need to know about their group.
pub(crate) struct Plot {
    pub(crate) x: Mapper,
    pub(crate) y: Mapper,
    /// Number of [`Bars`] series in the panel.
    pub(crate) bar_count: usize,
}

impl Plot {
    /// Whether pixel `(px, py)` lies in the plot area (to half a pixel).
    fn contains(&self, (px, py): (f64, f64)) -> bool {
        let within = |p: f64, a: f64, b: f64| p >= a.min(b) - 0.5 && p <= a.max(b) + 0.5;
        within(px, self.x.start(), self.x.end()) && within(py, self.y.start(), self.y.end())
    }

    /// `py` moved into the vertical extent of the plot area.
    fn clamp_y(&self, py: f64) -> f64 {
        let (a, b) = (self.y.start(), self.y.end());
        py.clamp(a.min(b), a.max(b))
    }
}

/// Draws the clipped part of `series` in `color`: lines, areas, bars and reference lines.
/// `bar_index` is its rank among the panel's bar series.
pub(crate) fn draw_series(
    w: &mut SvgWriter,
    plot: &Plot,
    series: &Series,
    color: Color,
    bar_index: usize,
) {
    match series {
        Series::Line(l) => draw_line(w, plot, l, color),
        Series::Histogram(h) => draw_histogram(w, plot, h, color),
        Series::Bars(b) => draw_bars(w, plot, b, color, bar_index),
        Series::RefLine(r) => draw_ref_line(w, plot, r),
        Series::Scatter(_) => {}
    }
}

/// Draws the unclipped part of `series`: markers and error bars of the points inside the plot
/// area (so that points on the frame show whole), error bars cut at the frame.
pub(crate) fn draw_points(
    w: &mut SvgWriter,
    plot: &Plot,
    series: &Series,
    color: Color,
    bar_index: usize,
) {
    match series {
        Series::Line(l) => {
            let points = pixels(plot, &l.x, &l.y);
            draw_error_bars(w, plot, &points, &l.y, &l.y_err, color);
            if let Some(marker) = l.marker {
                draw_markers(w, &inside(plot, points), marker, 3.0, color);
            }
        }
        Series::Scatter(s) => {
            let points = pixels(plot, &s.x, &s.y);
            draw_error_bars(w, plot, &points, &s.y, &s.y_err, color);
            draw_markers(w, &inside(plot, points), s.marker, s.size, color);
        }
        Series::Bars(b) => {
            let points: Vec<Option<(f64, f64)>> = bar_boxes(plot, b, bar_index)
                .map(|bar| bar.map(|(x0, x1, top)| (0.5 * (x0 + x1), top)))
                .collect();
            draw_error_bars(w, plot, &points, &b.values, &b.err, Color::BLACK);
        }
        Series::Histogram(_) | Series::RefLine(_) => {}
    }
}

/// `points` with those outside the plot area removed.
fn inside(plot: &Plot, points: Vec<Option<(f64, f64)>>) -> Vec<Option<(f64, f64)>> {
    points.into_iter().map(|p| p.filter(|&p| plot.contains(p))).collect()
}

/// Writes a stroked, unfilled path.
pub(crate) fn stroke_path(w: &mut SvgWriter, d: &PathData, color: Color, width: f64, dashed: bool) {
    if d.is_empty() {
        return;
    }
    let color = color.to_string();
    let mut attrs = vec![
        ("d", d.as_str().into()),
        ("fill", "none".into()),
        ("stroke", (&color).into()),
        ("stroke-width", width.into()),
        ("stroke-linejoin", "round".into()),
    ];
    if dashed {
        attrs.push(("stroke-dasharray", "6 4".into()));
    }
    w.empty("path", &attrs);
}

/// Pixels of the points `(x[i], y[i])`, `None` where a point cannot be drawn.
fn pixels(plot: &Plot, x: &[f64], y: &[f64]) -> Vec<Option<(f64, f64)>> {
    x.iter().zip(y).map(|(&x, &y)| Some((plot.x.map(x)?, plot.y.map(y)?))).collect()
}

fn draw_line(w: &mut SvgWriter, plot: &Plot, l: &Line, color: Color) {
    let points = pixels(plot, &l.x, &l.y);
    let mut d = PathData::default();
    let mut pen_down = false;
    for p in &points {
        match (p, pen_down) {
            (Some((x, y)), false) => d.move_to(*x, *y),
            (Some((x, y)), true) => d.line_to(*x, *y),
            (None, _) => {}
        }
        pen_down = p.is_some();
    }
    stroke_path(w, &d, color, l.width, l.dashed);
}

/// Error bars `y[i] ± err[i]` at the drawable `points` inside the plot area.
fn draw_error_bars(
    w: &mut SvgWriter,
    plot: &Plot,
    points: &[Option<(f64, f64)>],
    y: &[f64],
    err: &[f64],
    color: Color,
) {
    let mut d = PathData::default();
    for (i, (p, &yv)) in points.iter().zip(y).enumerate() {
        let e = err.get(i).copied().unwrap_or(f64::NAN);
        let Some(&(px, _)) = p.as_ref().filter(|&&p| e.is_finite() && plot.contains(p)) else {
            continue;
        };
        // An end off a log axis (y - e <= 0) runs to the frame, and ends beyond the frame are cut
        // there; such ends get no cap.
        let ends = [plot.y.map(yv + e.abs()), plot.y.map(yv - e.abs())].map(|end| match end {
            Some(end) => (plot.clamp_y(end), plot.clamp_y(end) == end),
            None => (plot.y.start(), false),
        });
        d.move_to(px, ends[0].0);
        d.line_to(px, ends[1].0);
        for (end, cap) in ends {
            if cap {
                d.move_to(px - CAP, end);
                d.line_to(px + CAP, end);
            }
        }
    }
    stroke_path(w, &d, color, 1.0, false);
}

/// Draws `marker` of radius `r` at every drawable point.
pub(crate) fn draw_markers(
    w: &mut SvgWriter,
    points: &[Option<(f64, f64)>],
    marker: Marker,
    r: f64,
    color: Color,
) {
    let color = color.to_string();
    if marker == Marker::Cross {
        let mut d = PathData::default();
        for &(x, y) in points.iter().flatten() {
            d.move_to(x - r, y - r);
            d.line_to(x + r, y + r);
            d.move_to(x - r, y + r);
            d.line_to(x + r, y - r);
        }
        if !d.is_empty() {
            w.empty(
                "path",
                &[
                    ("d", d.as_str().into()),
                    ("stroke", (&color).into()),
                    ("stroke-width", 1.5.into()),
                ],
            );
        }
        return;
    }
    if marker == Marker::Circle {
        if points.iter().any(Option::is_some) {
            w.open("g", &[("fill", (&color).into())]);
            for &(x, y) in points.iter().flatten() {
                w.empty("circle", &[("cx", x.into()), ("cy", y.into()), ("r", r.into())]);
            }
            w.close("g");
        }
        return;
    }
    // Polygons: unit outlines scaled by r.
    let outline: &[(f64, f64)] = match marker {
        Marker::Square => &[(-0.9, -0.9), (0.9, -0.9), (0.9, 0.9), (-0.9, 0.9)],
        Marker::Triangle => &[(0.0, -1.2), (1.1, 0.8), (-1.1, 0.8)],
        _ => &[(0.0, -1.3), (1.1, 0.0), (0.0, 1.3), (-1.1, 0.0)],
    };
    let mut d = PathData::default();
    for &(x, y) in points.iter().flatten() {
        for (k, &(dx, dy)) in outline.iter().enumerate() {
            if k == 0 {
                d.move_to(x + dx * r, y + dy * r);
            } else {
                d.line_to(x + dx * r, y + dy * r);
            }
        }
        d.close();
    }
    if !d.is_empty() {
        w.empty("path", &[("d", d.as_str().into()), ("fill", (&color).into())]);
    }
}

fn draw_histogram(w: &mut SvgWriter, plot: &Plot, h: &Histogram, color: Color) {
    let xs: Vec<Option<f64>> = h.edges.iter().map(|&e| plot.x.map(e)).collect();
    let base = plot.y.map_or_start(0.0);
    let mut d = PathData::default();
    let mut open = false;
    for (i, &dens) in h.densities.iter().enumerate() {
        let (Some(x0), Some(x1)) = (xs[i], xs[i + 1]) else {
            // An edge off a log axis: close the outline here and restart after it.
            if open {
                d.close();
                open = false;
            }
            continue;
        };
        let y = if dens.is_finite() { plot.y.map_or_start(dens) } else { base };
        if !open {
            d.move_to(x0, base);
            open = true;
        }
        d.line_to(x0, y);
        d.line_to(x1, y);
        if i + 1 == h.densities.len() || xs[i + 2].is_none() {
            d.line_to(x1, base);
        }
    }
    if open {
        d.close();
    }
    if d.is_empty() {
        return;
    }
    let color = color.to_string();
    w.empty(
        "path",
        &[
            ("d", d.as_str().into()),
            ("fill", (&color).into()),
            ("fill-opacity", FILL_OPACITY.into()),
            ("stroke", (&color).into()),
            ("stroke-width", 1.2.into()),
        ],
    );
}

/// For each value of `b`: the left and right pixel of its bar and the pixel of its top, or
/// `None` when it draws no bar.
fn bar_boxes<'a>(
    plot: &'a Plot,
    b: &'a Bars,
    bar_index: usize,
) -> impl Iterator<Item = Option<(f64, f64, f64)>> + 'a {
    let width = GROUP_WIDTH / plot.bar_count.max(1) as f64;
    b.values.iter().enumerate().map(move |(i, &v)| {
        let left = i as f64 - GROUP_WIDTH / 2.0 + width * bar_index as f64;
        let top = v.is_finite().then(|| plot.y.map_or_start(v))?;
        Some((plot.x.map(left)?, plot.x.map(left + width)?, top))
    })
}

fn draw_bars(w: &mut SvgWriter, plot: &Plot, b: &Bars, color: Color, bar_index: usize) {
    let base = plot.y.map_or_start(0.0);
    let bars: Vec<(f64, f64, f64)> = bar_boxes(plot, b, bar_index).flatten().collect();
    if bars.is_empty() {
        return;
    }
    let fill = color.to_string();
    w.open(
        "g",
        &[("fill", (&fill).into()), ("stroke", (&fill).into()), ("stroke-width", 1.0.into())],
    );
    for (x0, x1, top) in bars {
        w.empty(
            "rect",
            &[
                ("x", x0.into()),
                ("y", top.min(base).into()),
                ("width", (x1 - x0).into()),
                ("height", (top - base).abs().into()),
            ],
        );
    }
    w.close("g");
}

fn draw_ref_line(w: &mut SvgWriter, plot: &Plot, r: &RefLine) {
    let (left, right) = (plot.x.start(), plot.x.end());
    let (bottom, top) = (plot.y.start(), plot.y.end());
    let mut d = PathData::default();
    match r.kind {
        RefKind::Horizontal(y) => {
            if let Some(py) = plot.y.map(y) {
                d.move_to(left, py);
                d.line_to(right, py);
            }
        }
        RefKind::Vertical(x) => {
            if let Some(px) = plot.x.map(x) {
                d.move_to(px, bottom);
                d.line_to(px, top);
            }
        }
        RefKind::Identity => {
            // Sample y = x across the x axis, evenly in the axis' own scale; clipping trims it.
            let n = 64;
            let mut pen_down = false;
            for i in 0..=n {
                let px = left + (right - left) * i as f64 / n as f64;
                let v = plot.x.invert(px);
                match plot.y.map(v) {
                    Some(py) if pen_down => d.line_to(px, py),
                    Some(py) => {
                        d.move_to(px, py);
                        pen_down = true;
                    }
                    None => pen_down = false,
                }
            }
        }
    }
    stroke_path(w, &d, r.color, 1.2, true);
}
