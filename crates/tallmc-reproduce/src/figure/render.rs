//! Rendering one panel: layout of the plot area, grid, series, frame, ticks, labels and legend.

use super::axes::Axes;
use super::draw::{Plot, draw_points, draw_series};
use super::legend::{CHAR_WIDTH, draw_legend};
use super::scale::{Mapper, TickLabel, Ticks};
use super::series::Series;
use super::style::Color;
use super::svg::{PathData, SvgWriter, escape, num};

/// Panel title size in pixels.
const TITLE_FONT: f64 = 14.0;
/// Axis label size in pixels.
const LABEL_FONT: f64 = 12.0;
/// Tick label size in pixels.
const TICK_FONT: f64 = 11.0;
/// Length of major ticks (minor ticks are 60% of it).
const TICK_LEN: f64 = 5.0;
/// Gap between ticks and their labels, and between labels and axis labels.
const GAP: f64 = 4.0;
/// Rotation of category labels too wide to sit side by side, in degrees.
const CATEGORY_ROTATION: f64 = -35.0;
/// Colour of grid lines, frame and text.
const GRID_COLOR: &str = "#e5e5e5";
const INK_COLOR: &str = "#333333";

/// A rectangle in pixels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rect {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

/// About one tick per `per` pixels of an axis of length `len`, between 2 and 10.
fn tick_target(len: f64, per: f64) -> usize {
    ((len / per).round() as usize).clamp(2, 10)
}

/// The markup of a tick label: its text, then `10` with a raised exponent.
fn label_markup(label: &TickLabel) -> String {
    let mut s = escape(&label.text);
    if let Some(k) = label.exponent {
        s.push_str("10<tspan dy=\"-5\" font-size=\"8\">");
        s.push_str(&k.to_string());
        s.push_str("</tspan>");
    }
    s
}

/// Width of a tick label in pixels, estimated from its length.
fn label_width(label: &TickLabel) -> f64 {
    label.char_width() * TICK_FONT * CHAR_WIDTH
}

/// Draws `axes` into the cell `cell`; `id` makes the clip path's id unique in the document.
pub(crate) fn render_axes(w: &mut SvgWriter, axes: &Axes, cell: Rect, id: usize) {
    // Category labels that do not fit side by side are rotated; they then need more room.
    let rotate = match axes.category_count() {
        Some(n) if n > 0 => {
            let widest = axes.x_ticks(2).labels.iter().map(label_width).fold(0.0, f64::max);
            widest > 0.9 * (cell.w - 100.0) / n as f64
        }
        _ => false,
    };
    let x_tick_room = if rotate {
        let widest = axes.x_ticks(2).labels.iter().map(label_width).fold(0.0, f64::max);
        TICK_LEN + GAP + widest * 0.6 + TICK_FONT
    } else {
        TICK_LEN + GAP + TICK_FONT
    };
    let top = cell.y + if axes.title.is_some() { 30.0 } else { 12.0 };
    let x_label_room = if axes.x_label.is_some() { LABEL_FONT + 2.0 * GAP } else { 0.0 };
    let bottom = cell.y + cell.h - x_tick_room - x_label_room - 2.0 * GAP;
    let plot_h = (bottom - top).max(10.0);
    let yt = axes.y_ticks(tick_target(plot_h, 55.0));
    let y_label_room = if axes.y_label.is_some() { LABEL_FONT + 2.0 * GAP } else { 0.0 };
    let widest_y = yt.labels.iter().map(label_width).fold(0.0, f64::max);
    let left = cell.x + 2.0 * GAP + y_label_room + widest_y + TICK_LEN + GAP;
    let plot_w = (cell.x + cell.w - 18.0 - left).max(10.0);
    let xt = axes.x_ticks(tick_target(plot_w, 90.0));
    let plot = Plot {
        x: Mapper::new(axes.effective_x_scale(), xt.lo, xt.hi, left, left + plot_w),
        y: Mapper::new(axes.y_scale, yt.lo, yt.hi, top + plot_h, top),
        bar_count: axes.series.iter().filter(|s| matches!(s, Series::Bars(_))).count(),
    };
    let area = Rect { x: left, y: top, w: plot_w, h: plot_h };

    if axes.grid {
        draw_grid(w, &plot, &xt, &yt, area);
    }
    let colors = series_colors(axes);
    let clip = format!("clip{id}");
    w.open("clipPath", &[("id", (&clip).into())]);
    w.empty(
        "rect",
        &[
            ("x", left.into()),
            ("y", top.into()),
            ("width", plot_w.into()),
            ("height", plot_h.into()),
        ],
    );
    w.close("clipPath");
    w.open("g", &[("clip-path", format!("url(#{clip})").as_str().into())]);
    let mut bar_index = 0;
    for (series, &color) in axes.series.iter().zip(&colors) {
        draw_series(w, &plot, series, color, bar_index);
        bar_index += usize::from(matches!(series, Series::Bars(_)));
    }
    w.close("g");
    let mut bar_index = 0;
    for (series, &color) in axes.series.iter().zip(&colors) {
        draw_points(w, &plot, series, color, bar_index);
        bar_index += usize::from(matches!(series, Series::Bars(_)));
    }
    w.empty(
        "rect",
        &[
            ("x", left.into()),
            ("y", top.into()),
            ("width", plot_w.into()),
            ("height", plot_h.into()),
            ("fill", "none".into()),
            ("stroke", INK_COLOR.into()),
        ],
    );
    draw_ticks(w, &plot, &xt, &yt, area, rotate);

    let center = left + plot_w / 2.0;
    if let Some(title) = &axes.title {
        text(w, center, cell.y + 20.0, TITLE_FONT, "middle", &escape(title), None);
    }
    if let Some(label) = &axes.x_label {
        let y = top + plot_h + x_tick_room + GAP + LABEL_FONT;
        text(w, center, y, LABEL_FONT, "middle", &escape(label), None);
    }
    if let Some(label) = &axes.y_label {
        let (x, y) = (cell.x + 2.0 * GAP + LABEL_FONT, top + plot_h / 2.0);
        text(w, x, y, LABEL_FONT, "middle", &escape(label), Some(-90.0));
    }
    let entries: Vec<(&Series, Color)> = axes.series.iter().zip(colors).collect();
    draw_legend(w, axes.legend, &entries, (left, top, plot_w, plot_h));
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

/// Writes a text element; `rotate` turns it (degrees) about its anchor point.
fn text(
    w: &mut SvgWriter,
    x: f64,
    y: f64,
    size: f64,
    anchor: &str,
    markup: &str,
    rotate: Option<f64>,
) {
    let transform = rotate.map(|r| format!("rotate({} {} {})", num(r), num(x), num(y)));
    let mut attrs = vec![
        ("x", x.into()),
        ("y", y.into()),
        ("font-size", size.into()),
        ("text-anchor", anchor.into()),
        ("fill", INK_COLOR.into()),
    ];
    if let Some(t) = &transform {
        attrs.push(("transform", t.into()));
    }
    w.element_raw("text", &attrs, markup);
}

fn draw_grid(w: &mut SvgWriter, plot: &Plot, xt: &Ticks, yt: &Ticks, area: Rect) {
    let mut d = PathData::default();
    for px in xt.major.iter().filter_map(|&v| plot.x.map(v)) {
        d.move_to(px, area.y);
        d.line_to(px, area.y + area.h);
    }
    for py in yt.major.iter().filter_map(|&v| plot.y.map(v)) {
        d.move_to(area.x, py);
        d.line_to(area.x + area.w, py);
    }
    if !d.is_empty() {
        w.empty(
            "path",
            &[
                ("d", d.as_str().into()),
                ("stroke", GRID_COLOR.into()),
                ("stroke-width", 1.0.into()),
            ],
        );
    }
}

fn draw_ticks(w: &mut SvgWriter, plot: &Plot, xt: &Ticks, yt: &Ticks, area: Rect, rotate: bool) {
    let (bottom, left) = (area.y + area.h, area.x);
    let mut d = PathData::default();
    for (ticks, len) in [(&xt.major, TICK_LEN), (&xt.minor, 0.6 * TICK_LEN)] {
        for px in ticks.iter().filter_map(|&v| plot.x.map(v)) {
            d.move_to(px, bottom);
            d.line_to(px, bottom + len);
        }
    }
    for (ticks, len) in [(&yt.major, TICK_LEN), (&yt.minor, 0.6 * TICK_LEN)] {
        for py in ticks.iter().filter_map(|&v| plot.y.map(v)) {
            d.move_to(left, py);
            d.line_to(left - len, py);
        }
    }
    if !d.is_empty() {
        w.empty(
            "path",
            &[("d", d.as_str().into()), ("stroke", INK_COLOR.into()), ("stroke-width", 1.0.into())],
        );
    }
    w.open("g", &[("font-size", TICK_FONT.into()), ("fill", INK_COLOR.into())]);
    for (&v, label) in xt.major.iter().zip(&xt.labels) {
        let Some(px) = plot.x.map(v) else { continue };
        let y = bottom + TICK_LEN + GAP + TICK_FONT * 0.8;
        let markup = label_markup(label);
        if rotate {
            let t = format!("rotate({} {} {})", num(CATEGORY_ROTATION), num(px), num(y));
            w.element_raw(
                "text",
                &[
                    ("x", px.into()),
                    ("y", y.into()),
                    ("text-anchor", "end".into()),
                    ("transform", (&t).into()),
                ],
                &markup,
            );
        } else {
            w.element_raw(
                "text",
                &[("x", px.into()), ("y", y.into()), ("text-anchor", "middle".into())],
                &markup,
            );
        }
    }
    for (&v, label) in yt.major.iter().zip(&yt.labels) {
        let Some(py) = plot.y.map(v) else { continue };
        let (x, y) = (left - TICK_LEN - GAP, py + TICK_FONT * 0.35);
        w.element_raw(
            "text",
            &[("x", x.into()), ("y", y.into()), ("text-anchor", "end".into())],
            &label_markup(label),
        );
    }
    w.close("g");
}
