//! Drawing each kind of series inside a panel's plot area.

use super::scale::{Mapper, Scale};
use super::series::{Bars, Histogram, Line, RefKind, RefLine, Scatter, Series};
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

/// Draws `series` in `color`; `bar_index` is its rank among the panel's bar series.
pub(crate) fn draw_series(
    w: &mut SvgWriter,
    plot: &Plot,
    series: &Series,
    color: Color,
    bar_index: usize,
) {
    match series {
        Series::Line(l) => draw_line(w, plot, l, color),
        Series::Scatter(s) => draw_scatter(w, plot, s, color),
        Series::Histogram(h) => draw_histogram(w, plot, h, color),
        Series::Bars(b) => draw_bars(w, plot, b, color, bar_index),
        Series::RefLine(r) => draw_ref_line(w, plot, r),
    }
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
    draw_error_bars(w, plot, &l.x, &l.y, &l.y_err, color);
    if let Some(marker) = l.marker {
        draw_markers(w, &points, marker, 3.0, color);
    }
}

fn draw_scatter(w: &mut SvgWriter, plot: &Plot, s: &Scatter, color: Color) {
    draw_error_bars(w, plot, &s.x, &s.y, &s.y_err, color);
    draw_markers(w, &pixels(plot, &s.x, &s.y), s.marker, s.size, color);
}

fn draw_error_bars(
    w: &mut SvgWriter,
    plot: &Plot,
    x: &[f64],
    y: &[f64],
    err: &[f64],
    color: Color,
) {
    let mut d = PathData::default();
    for (i, (&xv, &yv)) in x.iter().zip(y).enumerate() {
        let e = err.get(i).copied().unwrap_or(f64::NAN);
        let (Some(px), Some(_), true) = (plot.x.map(xv), plot.y.map(yv), e.is_finite()) else {
            continue;
        };
        let (top, bottom) = (plot.y.map_or_start(yv + e.abs()), plot.y.map_or_start(yv - e.abs()));
        d.move_to(px, bottom);
        d.line_to(px, top);
        for cap in [top, bottom] {
            d.move_to(px - CAP, cap);
            d.line_to(px + CAP, cap);
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

fn draw_bars(w: &mut SvgWriter, plot: &Plot, b: &Bars, color: Color, bar_index: usize) {
    let width = GROUP_WIDTH / plot.bar_count.max(1) as f64;
    let base = plot.y.map_or_start(0.0);
    let fill = color.to_string();
    let mut bars = Vec::new();
    let mut errs = (Vec::new(), Vec::new(), Vec::new());
    for (i, &v) in b.values.iter().enumerate() {
        let left = i as f64 - GROUP_WIDTH / 2.0 + width * bar_index as f64;
        let (Some(x0), Some(x1)) = (plot.x.map(left), plot.x.map(left + width)) else {
            continue;
        };
        if !v.is_finite() {
            continue;
        }
        let top = plot.y.map_or_start(v);
        bars.push((x0, top.min(base), x1 - x0, (top - base).abs()));
        errs.0.push(0.5 * (x0 + x1));
        errs.1.push(v);
        errs.2.push(b.err.get(i).copied().unwrap_or(f64::NAN));
    }
    if !bars.is_empty() {
        w.open(
            "g",
            &[("fill", (&fill).into()), ("stroke", (&fill).into()), ("stroke-width", 1.0.into())],
        );
        for (x, y, bw, bh) in bars {
            w.empty(
                "rect",
                &[("x", x.into()), ("y", y.into()), ("width", bw.into()), ("height", bh.into())],
            );
        }
        w.close("g");
    }
    // Error bars at pixel x positions: map x through an identity mapper.
    let px = Plot {
        x: Mapper::new(Scale::Linear, 0.0, 1.0, 0.0, 1.0),
        y: plot.y,
        bar_count: plot.bar_count,
    };
    draw_error_bars(w, &px, &errs.0, &errs.1, &errs.2, Color::BLACK);
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
