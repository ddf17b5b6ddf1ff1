//! A panel's legend: one row per labelled series, with a swatch drawn like the series.

use super::draw::{FILL_OPACITY, draw_markers, stroke_path};
use super::series::Series;
use super::style::{Color, Legend};
use super::svg::{PathData, SvgWriter, escape};

/// Legend text size in pixels.
const FONT: f64 = 11.0;
/// Height of one legend row.
const ROW: f64 = 17.0;
/// Length of a line swatch.
const SWATCH: f64 = 24.0;
/// Inner padding and distance from the plot frame.
const PAD: f64 = 6.0;
/// Average glyph width as a fraction of the font size, for sizing the box.
pub(crate) const CHAR_WIDTH: f64 = 0.6;

/// Draws the legend of `entries` (series and their colours) in the plot area
/// `(left, top, width, height)`.
pub(crate) fn draw_legend(
    w: &mut SvgWriter,
    place: Legend,
    entries: &[(&Series, Color)],
    (left, top, width, height): (f64, f64, f64, f64),
) {
    let rows: Vec<(&Series, Color, &str)> =
        entries.iter().filter_map(|&(s, c)| Some((s, c, s.label()?))).collect();
    if rows.is_empty() || place == Legend::Hidden {
        return;
    }
    let text_w =
        rows.iter().map(|r| r.2.chars().count() as f64 * FONT * CHAR_WIDTH).fold(0.0, f64::max);
    let box_w = PAD + SWATCH + PAD + text_w + PAD;
    let box_h = ROW * rows.len() as f64 + PAD;
    let x = match place {
        Legend::TopLeft | Legend::BottomLeft => left + PAD,
        _ => left + width - PAD - box_w,
    };
    let y = match place {
        Legend::BottomLeft | Legend::BottomRight => top + height - PAD - box_h,
        _ => top + PAD,
    };
    w.open("g", &[("font-size", FONT.into())]);
    w.empty(
        "rect",
        &[
            ("x", x.into()),
            ("y", y.into()),
            ("width", box_w.into()),
            ("height", box_h.into()),
            ("fill", "#ffffff".into()),
            ("fill-opacity", 0.85.into()),
            ("stroke", "#bbbbbb".into()),
        ],
    );
    for (i, &(series, color, label)) in rows.iter().enumerate() {
        let cy = y + PAD / 2.0 + ROW * (i as f64 + 0.5);
        swatch(w, series, color, x + PAD, cy);
        w.element_raw(
            "text",
            &[("x", (x + 2.0 * PAD + SWATCH).into()), ("y", (cy + FONT * 0.35).into())],
            &escape(label),
        );
    }
    w.close("g");
}

/// Draws the swatch of `series` starting at `x`, centred vertically on `cy`.
fn swatch(w: &mut SvgWriter, series: &Series, color: Color, x: f64, cy: f64) {
    let mid = [Some((x + SWATCH / 2.0, cy))];
    let line = |w: &mut SvgWriter, color: Color, width: f64, dashed: bool| {
        let mut d = PathData::default();
        d.move_to(x, cy);
        d.line_to(x + SWATCH, cy);
        stroke_path(w, &d, color, width, dashed);
    };
    match series {
        Series::Line(l) => {
            line(w, color, l.width, l.dashed);
            if let Some(m) = l.marker {
                draw_markers(w, &mid, m, 3.0, color);
            }
        }
        Series::Scatter(s) => draw_markers(w, &mid, s.marker, s.size, color),
        Series::RefLine(r) => line(w, r.color, 1.2, true),
        Series::Histogram(_) | Series::Bars(_) => {
            let opacity = if matches!(series, Series::Bars(_)) { 1.0 } else { FILL_OPACITY };
            let color = color.to_string();
            w.empty(
                "rect",
                &[
                    ("x", (x + 4.0).into()),
                    ("y", (cy - 5.0).into()),
                    ("width", (SWATCH - 8.0).into()),
                    ("height", 10.0.into()),
                    ("fill", (&color).into()),
                    ("fill-opacity", opacity.into()),
                    ("stroke", (&color).into()),
                ],
            );
        }
    }
}
