//! Drawing one panel with plotters: layout of the label areas, mesh (grid, ticks, labels),
//! series, frame and legend.

use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::element::DashedPathElement;
use plotters::prelude::{
    ChartBuilder, ChartContext, Color as _, DrawingArea, DrawingAreaErrorKind, EmptyElement,
    FontTransform, IntoFont, PathElement, Polygon, Rectangle, Text, TextStyle,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::DrawingBackend;

use super::axes::Axes;
use super::coord::{AxisCoord, Frame, Point};
use super::glyph::{
    DASH, FILL_OPACITY, Glyph, Part, Parts, marker, rgb, segment, stroke, swatch_box,
};
use super::scale::TickLabel;
use super::series::{Bars, Histogram, Line, RefKind, Series};
use super::style::{Color, Legend};

/// Panel title size in pixels.
const TITLE_FONT: f64 = 14.0;
/// Axis label size in pixels.
const LABEL_FONT: f64 = 12.0;
/// Tick label and legend text size in pixels.
const TICK_FONT: f64 = 11.0;
/// Length of major ticks; plotters puts their labels twice as far from the axis.
const TICK_LEN: i32 = 5;
/// Length of minor ticks.
const MINOR_TICK_LEN: i32 = 3;
/// Average glyph width of sans-serif text as a fraction of the font size, for sizing label
/// areas (plotters without fonts cannot measure text).
const CHAR_WIDTH: f64 = 0.6;
/// Small gaps between texts, in pixels.
const GAP: f64 = 4.0;
/// Width of a category's group of bars, in category units.
const GROUP_WIDTH: f64 = 0.8;
/// Half the width of an error bar's caps, in pixels.
const CAP: i32 = 3;
/// Length of a legend swatch, height of a legend row and padding of the legend box.
const SWATCH: i32 = 24;
const LEGEND_ROW: i32 = 17;
const LEGEND_PAD: i32 = 6;
/// Colours of grid lines, frame and text.
const GRID_COLOR: Color = Color::rgb(0xe5, 0xe5, 0xe5);
const INK_COLOR: Color = Color::rgb(0x33, 0x33, 0x33);
const LEGEND_BORDER: Color = Color::rgb(0xbb, 0xbb, 0xbb);

/// A sans-serif text style of `px` pixels (plotters writes 1/1.24 of the size it is given).
pub(crate) fn font(px: f64) -> TextStyle<'static> {
    ("sans-serif", px * 1.24).into_font().color(&rgb(INK_COLOR))
}

/// `text` without the control characters XML 1.0 forbids (tab and newline are kept).
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if (c as u32) < 0x20 && c != '\t' && c != '\n' { ' ' } else { c })
        .collect()
}

/// Estimated width in pixels of `chars` characters of text of size `px`.
fn text_width(chars: f64, px: f64) -> f64 {
    chars * px * CHAR_WIDTH
}

/// About one tick per `per` pixels of an axis of length `len`, between 2 and 10.
fn tick_target(len: f64, per: f64) -> usize {
    ((len / per).round() as usize).clamp(2, 10)
}

fn widest(labels: &[TickLabel]) -> f64 {
    labels.iter().map(|l| text_width(l.char_width(), TICK_FONT)).fold(0.0, f64::max)
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<AxisCoord, AxisCoord>>;
type DrawResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws `axes` on `area`.
pub(crate) fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, axes: &Axes,
) -> DrawResult<(), DB> {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (f64::from(w), f64::from(h));

    // Category labels that do not fit side by side are turned to read upwards.
    let categories = axes.category_count().filter(|&n| n > 0);
    let category_width = widest(&axes.x_ticks(2).labels);
    let rotate = categories.is_some_and(|n| category_width > 0.9 * (w - 100.0) / n as f64);
    let x_tick_room =
        2.0 * f64::from(TICK_LEN) + if rotate { category_width + GAP } else { 1.2 * TICK_FONT };
    let x_area = x_tick_room + if axes.x_label.is_some() { GAP + 1.3 * LABEL_FONT } else { 0.0 };
    let top = if axes.title.is_some() { 6.0 } else { 12.0 };
    let title_room = if axes.title.is_some() { TITLE_FONT + 10.0 } else { 0.0 };
    let (left_margin, right_margin, bottom_margin) = (GAP, 18.0, GAP);

    let plot_h = (h - top - title_room - x_area - bottom_margin).max(10.0);
    let yt = axes.y_ticks(tick_target(plot_h, 55.0));
    let y_area = 2.0 * f64::from(TICK_LEN)
        + widest(&yt.labels)
        + if axes.y_label.is_some() { GAP + 1.3 * LABEL_FONT } else { 0.0 };
    let plot_w = (w - left_margin - y_area - right_margin).max(10.0);
    let xt = axes.x_ticks(tick_target(plot_w, 90.0));
    let x = AxisCoord::new(axes.effective_x_scale(), xt);
    let y = AxisCoord::new(axes.y_scale, yt);

    let mut builder = ChartBuilder::on(area);
    builder
        .margin_top(top.round() as i32)
        .margin_left(left_margin.round() as i32)
        .margin_right(right_margin.round() as i32)
        .margin_bottom(bottom_margin.round() as i32)
        .x_label_area_size(x_area.round() as i32)
        .y_label_area_size(y_area.round() as i32);
    if let Some(title) = &axes.title {
        builder.caption(clean(title), font(TITLE_FONT));
    }
    let mut chart = builder.build_cartesian_2d(x.clone(), y.clone())?;

    let no_label = |_: &f64| String::new();
    let (x_desc, y_desc) = (axes.x_label.as_deref().map(clean), axes.y_label.as_deref().map(clean));
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(x.ticks().major.len())
        .y_labels(y.ticks().major.len())
        .bold_line_style(stroke(rgb(GRID_COLOR), 1.0))
        .axis_style(stroke(rgb(INK_COLOR), 1.0))
        .label_style(font(TICK_FONT))
        .axis_desc_style(font(LABEL_FONT))
        .set_all_tick_mark_size(TICK_LEN);
    if rotate {
        mesh.x_label_formatter(&no_label);
    }
    if !axes.grid {
        mesh.disable_mesh();
    }
    if let Some(desc) = &x_desc {
        mesh.x_desc(desc);
    }
    if let Some(desc) = &y_desc {
        mesh.y_desc(desc);
    }
    mesh.draw()?;

    let frame = Frame { x: &x, y: &y };
    draw_minor_ticks(&mut chart, &frame)?;
    if rotate {
        draw_rotated_categories(&mut chart, &frame)?;
    }
    let colors = series_colors(axes);
    let bar_count = axes.series.iter().filter(|s| matches!(s, Series::Bars(_))).count();
    let mut bar_index = 0;
    for (series, &color) in axes.series.iter().zip(&colors) {
        let bars = Bars::layout(bar_index, bar_count);
        draw_body(&mut chart, &frame, series, color, bars)?;
        bar_index += usize::from(matches!(series, Series::Bars(_)));
    }
    let mut bar_index = 0;
    for (series, &color) in axes.series.iter().zip(&colors) {
        draw_points(&mut chart, &frame, series, color, Bars::layout(bar_index, bar_count))?;
        bar_index += usize::from(matches!(series, Series::Bars(_)));
    }
    let (xt, yt) = (x.ticks(), y.ticks());
    // The top and right of the frame; plotters' axis lines are its left and bottom.
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(xt.lo, yt.hi), (xt.hi, yt.hi), (xt.hi, yt.lo)],
        stroke(rgb(INK_COLOR), 1.0),
    )))?;

    let entries: Vec<(String, Parts)> = axes
        .series
        .iter()
        .zip(&colors)
        .filter_map(|(s, &c)| Some((clean(s.label()?), legend_swatch(s, c))))
        .collect();
    draw_legend(&chart.plotting_area().strip_coord_spec(), axes.legend, &entries)
}

/// Draws the legend rows (label and swatch) in a box at corner `place` of the plot area
/// `area`. The box is sized from our estimate of the text width, which errs wide: plotters'
/// own legend measures text with its font-less estimate, which errs narrow, so long labels
/// would run out of the box.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, place: Legend, entries: &[(String, Parts)],
) -> DrawResult<(), DB> {
    if entries.is_empty() || place == Legend::Hidden {
        return Ok(());
    }
    let text_w = entries
        .iter()
        .map(|(label, _)| text_width(label.chars().count() as f64, TICK_FONT))
        .fold(0.0, f64::max)
        .ceil() as i32;
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let box_w = LEGEND_PAD + SWATCH + LEGEND_PAD + text_w + LEGEND_PAD;
    let box_h = LEGEND_ROW * entries.len() as i32 + LEGEND_PAD;
    let x = match place {
        Legend::TopLeft | Legend::BottomLeft => LEGEND_PAD,
        _ => w - LEGEND_PAD - box_w,
    };
    let y = match place {
        Legend::BottomLeft | Legend::BottomRight => h - LEGEND_PAD - box_h,
        _ => LEGEND_PAD,
    };
    let corners = [(x, y), (x + box_w, y + box_h)];
    area.draw(&Rectangle::new(corners, rgb(Color::rgb(255, 255, 255)).mix(0.85).filled()))?;
    area.draw(&Rectangle::new(corners, stroke(rgb(LEGEND_BORDER), 1.0)))?;
    let text_style = font(TICK_FONT).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, parts)) in entries.iter().enumerate() {
        let cy = y + LEGEND_PAD / 2 + LEGEND_ROW * i as i32 + LEGEND_ROW / 2;
        area.draw(&Glyph { at: (x + LEGEND_PAD, cy), parts: parts.clone() })?;
        let at = (x + 2 * LEGEND_PAD + SWATCH, cy);
        area.draw(&Text::new(label.as_str(), at, text_style.clone()))?;
    }
    Ok(())
}

/// The colour of each series: its own, or the next palette colour (reference lines take none).
fn series_colors(axes: &Axes) -> Vec<Color> {
    let mut next = 0;
    axes.series
        .iter()
        .map(|s| {
            let palette = Color::cycle(next);
            next += usize::from(s.takes_palette_color());
            s.explicit_color().unwrap_or(palette)
        })
        .collect()
}

/// Unlabelled minor ticks (log axes), outside the frame.
fn draw_minor_ticks<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>, frame: &Frame<'_>,
) -> DrawResult<(), DB> {
    let style = stroke(rgb(INK_COLOR), 1.0);
    let (xt, yt) = (frame.x.ticks(), frame.y.ticks());
    let x_minor = xt.minor.iter().map(|&v| Glyph {
        at: (v, yt.lo),
        parts: vec![(Part::Line((0, 0), (0, MINOR_TICK_LEN)), style)],
    });
    let y_minor = yt.minor.iter().map(|&v| Glyph {
        at: (xt.lo, v),
        parts: vec![(Part::Line((0, 0), (-MINOR_TICK_LEN, 0)), style)],
    });
    chart.draw_series(x_minor.chain(y_minor))?;
    Ok(())
}

/// Category labels too wide to sit side by side, drawn reading upwards below their ticks.
fn draw_rotated_categories<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>, frame: &Frame<'_>,
) -> DrawResult<(), DB> {
    let style = font(TICK_FONT)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    let (xt, yt) = (frame.x.ticks(), frame.y.ticks());
    let area = chart.plotting_area();
    for (&v, label) in xt.major.iter().zip(&xt.labels) {
        let text = Text::new(label.to_display_string(), (0, 2 * TICK_LEN), style.clone());
        area.draw(&(EmptyElement::at((v, yt.lo)) + text))?;
    }
    Ok(())
}

/// Where a bar series stands within each category.
#[derive(Debug, Clone, Copy)]
struct BarSlot {
    offset: f64,
    width: f64,
}

impl Bars {
    /// The slot of the `index`-th of `count` bar series.
    fn layout(index: usize, count: usize) -> BarSlot {
        let width = GROUP_WIDTH / count.max(1) as f64;
        BarSlot { offset: -GROUP_WIDTH / 2.0 + width * index as f64, width }
    }

    /// For each value: its bar's left and right edges and its top, `None` when it draws none.
    fn boxes<'a>(
        &'a self, frame: &'a Frame<'_>, slot: BarSlot,
    ) -> impl Iterator<Item = Option<(f64, f64, f64)>> + 'a {
        self.values.iter().enumerate().map(move |(i, &v)| {
            frame.y.to_scale(v)?;
            let left = i as f64 + slot.offset;
            Some((frame.clamp_x(left), frame.clamp_x(left + slot.width), frame.clamp_y(v)))
        })
    }
}

/// Draws the lines, areas, bars and reference lines of `series`, clipped to the frame.
fn draw_body<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>, frame: &Frame<'_>, series: &Series, color: Color, slot: BarSlot,
) -> DrawResult<(), DB> {
    match series {
        Series::Line(l) => {
            let runs = frame.clip_polyline(l.x.iter().copied().zip(l.y.iter().copied()));
            draw_runs(chart, runs, stroke(rgb(color), l.width), l.dashed)
        }
        Series::Histogram(hist) => draw_histogram(chart, frame, hist, color),
        Series::Bars(b) => {
            let base = frame.clamp_y(frame.y.base());
            let fill = rgb(color).filled();
            let bars = b
                .boxes(frame, slot)
                .flatten()
                .map(|(x0, x1, top)| Rectangle::new([(x0, base), (x1, top)], fill));
            chart.draw_series(bars)?;
            Ok(())
        }
        Series::RefLine(r) => {
            let (xt, yt) = (frame.x.ticks(), frame.y.ticks());
            let points: Vec<Point> = match r.kind {
                RefKind::Horizontal(v) => vec![(xt.lo, v), (xt.hi, v)],
                RefKind::Vertical(v) => vec![(v, yt.lo), (v, yt.hi)],
                RefKind::Identity => {
                    // y = x sampled evenly in the x axis' own scale (a curve when the scales differ).
                    let (s0, s1) = frame.x.scale_limits();
                    (0..=64)
                        .map(|i| frame.x.unscale(s0 + (s1 - s0) * f64::from(i) / 64.0))
                        .map(|v| (v, v))
                        .collect()
                }
            };
            draw_runs(chart, frame.clip_polyline(points), stroke(rgb(r.color), 1.0), true)
        }
        Series::Scatter(_) => Ok(()),
    }
}

fn draw_runs<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>, runs: Vec<Vec<Point>>, style: plotters::style::ShapeStyle,
    dashed: bool,
) -> DrawResult<(), DB> {
    if dashed {
        chart.draw_series(
            runs.into_iter().map(|run| DashedPathElement::new(run, DASH.0, DASH.1, style)),
        )?;
    } else {
        chart.draw_series(runs.into_iter().map(|run| PathElement::new(run, style)))?;
    }
    Ok(())
}

/// A histogram as filled step outlines, one per run of bins inside the frame.
fn draw_histogram<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>, frame: &Frame<'_>, hist: &Histogram, color: Color,
) -> DrawResult<(), DB> {
    let base = frame.clamp_y(frame.y.base());
    let mut outlines: Vec<Vec<Point>> = Vec::new();
    let mut open = false;
    for (i, &d) in hist.densities.iter().enumerate() {
        let (e0, e1) = (hist.edges[i], hist.edges[i + 1]);
        let (x0, x1) = (frame.clamp_x(e0), frame.clamp_x(e1));
        let drawable = frame.x.to_scale(e0).is_some() && frame.x.to_scale(e1).is_some() && x1 > x0;
        if !drawable {
            open = false;
            continue;
        }
        let top = if frame.y.to_scale(d).is_some() { frame.clamp_y(d) } else { base };
        if !open {
            outlines.push(vec![(x0, base)]);
            open = true;
        }
        if let Some(outline) = outlines.last_mut() {
            outline.extend([(x0, top), (x1, top)]);
        }
        let ends_run =
            i + 1 == hist.densities.len() || frame.x.to_scale(hist.edges[i + 2]).is_none();
        if ends_run {
            open = false;
        }
    }
    for outline in &mut outlines {
        if let Some(&(x1, _)) = outline.last() {
            outline.push((x1, base));
        }
    }
    let fill = rgb(color).mix(FILL_OPACITY).filled();
    chart.draw_series(outlines.iter().map(|o| Polygon::new(o.clone(), fill)))?;
    let edge = stroke(rgb(color), 1.0);
    chart.draw_series(outlines.into_iter().map(|mut o| {
        if let Some(&first) = o.first() {
            o.push(first);
        }
        PathElement::new(o, edge)
    }))?;
    Ok(())
}

/// Draws the markers and error bars of the points of `series` inside the frame.
fn draw_points<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>, frame: &Frame<'_>, series: &Series, color: Color, slot: BarSlot,
) -> DrawResult<(), DB> {
    let points =
        |x: &[f64], y: &[f64]| -> Vec<Point> { x.iter().copied().zip(y.iter().copied()).collect() };
    let (pts, errors, marker_parts, bar_color) = match series {
        Series::Line(Line { x, y, y_err, marker: m, .. }) => {
            (points(x, y), y_err.as_slice(), m.map(|m| marker(m, 3.0, color)), color)
        }
        Series::Scatter(s) => {
            (points(&s.x, &s.y), s.y_err.as_slice(), Some(marker(s.marker, s.size, color)), color)
        }
        Series::Bars(b) => {
            let tops = b.boxes(frame, slot).zip(&b.values).map(|(bar, &v)| match bar {
                Some((x0, x1, _)) => (0.5 * (x0 + x1), v),
                None => (f64::NAN, f64::NAN),
            });
            (tops.collect(), b.err.as_slice(), None, Color::BLACK)
        }
        Series::Histogram(_) | Series::RefLine(_) => return Ok(()),
    };
    let inside: Vec<(usize, Point)> =
        pts.iter().copied().enumerate().filter(|&(_, p)| frame.contains(p)).collect();
    let bar_style = stroke(rgb(bar_color), 1.0);
    let mut stems = Vec::new();
    let mut caps = Vec::new();
    for &(i, (px, py)) in &inside {
        let Some(e) = errors.get(i).copied().filter(|e| e.is_finite()).map(f64::abs) else {
            continue;
        };
        // An end beyond the frame, or off a log axis (y − e ≤ 0), runs to the frame uncapped.
        let top = frame.clamp_y(py + e);
        let bottom = if frame.y.to_scale(py - e).is_some() {
            frame.clamp_y(py - e)
        } else {
            frame.y.ticks().lo
        };
        stems.push(PathElement::new(vec![(px, bottom), (px, top)], bar_style));
        for (end, exact) in [(top, top == py + e), (bottom, bottom == py - e)] {
            if exact {
                caps.push(Glyph {
                    at: (px, end),
                    parts: vec![(Part::Line((-CAP, 0), (CAP, 0)), bar_style)],
                });
            }
        }
    }
    chart.draw_series(stems)?;
    chart.draw_series(caps)?;
    if let Some(parts) = marker_parts {
        chart.draw_series(inside.into_iter().map(|(_, at)| Glyph { at, parts: parts.clone() }))?;
    }
    Ok(())
}

/// The legend swatch of `series`, drawn like the series, from its left end.
fn legend_swatch(series: &Series, color: Color) -> Parts {
    let mid = |parts: Parts| -> Parts {
        parts
            .into_iter()
            .map(|(p, s)| {
                let shift = |(x, y): (i32, i32)| (x + SWATCH / 2, y);
                let p = match p {
                    Part::Line(a, b) => Part::Line(shift(a), shift(b)),
                    Part::Rect(a, b) => Part::Rect(shift(a), shift(b)),
                    Part::Polygon(v) => Part::Polygon(v.into_iter().map(shift).collect()),
                    Part::Circle(c, r) => Part::Circle(shift(c), r),
                };
                (p, s)
            })
            .collect()
    };
    match series {
        Series::Line(l) => {
            let mut parts = segment(0, SWATCH, l.dashed, stroke(rgb(color), l.width));
            if let Some(m) = l.marker {
                parts.extend(mid(marker(m, 3.0, color)));
            }
            parts
        }
        Series::Scatter(s) => mid(marker(s.marker, s.size, color)),
        Series::RefLine(r) => segment(0, SWATCH, true, stroke(rgb(r.color), 1.0)),
        Series::Histogram(_) => mid(swatch_box(SWATCH - 8, 10, color, FILL_OPACITY)),
        Series::Bars(_) => mid(swatch_box(SWATCH - 8, 10, color, 1.0)),
    }
}
