//! Small shapes drawn in pixels around one anchor point: markers, error-bar caps, minor ticks
//! and legend swatches.

use plotters::element::{Drawable, PointCollection};
use plotters::prelude::{Color as _, RGBAColor, RGBColor, ShapeStyle};
use plotters_backend::{BackendCoord, DrawingBackend, DrawingErrorKind};

use super::style::{Color, Marker};

/// Opacity of histogram fills.
pub(crate) const FILL_OPACITY: f64 = 0.35;
/// Dash and gap lengths of dashed lines, in pixels.
pub(crate) const DASH: (i32, i32) = (6, 4);

/// Our colour as a plotters colour.
pub(crate) fn rgb(c: Color) -> RGBColor {
    RGBColor(c.r, c.g, c.b)
}

/// A stroke of `color`, `width` pixels wide (rounded, at least 1).
pub(crate) fn stroke(color: impl Into<RGBAColor>, width: f64) -> ShapeStyle {
    let width = if width.is_finite() { width.round().clamp(1.0, 20.0) as u32 } else { 1 };
    ShapeStyle { color: color.into(), filled: false, stroke_width: width }
}

/// One part of a glyph, in pixels relative to its anchor.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    Line((i32, i32), (i32, i32)),
    Rect((i32, i32), (i32, i32)),
    Circle((i32, i32), i32),
    Polygon(Vec<(i32, i32)>),
}

/// Parts of a glyph, each with its style.
pub(crate) type Parts = Vec<(Part, ShapeStyle)>;

/// Shapes drawn around the anchor `at` (data coordinates in a chart, pixels in a legend).
pub(crate) struct Glyph<C> {
    pub(crate) at: C,
    pub(crate) parts: Parts,
}

impl<'a, C: 'a> PointCollection<'a, C> for &'a Glyph<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Glyph<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self, mut pos: I, backend: &mut DB, _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else { return Ok(()) };
        let at = |(dx, dy): (i32, i32)| (x + dx, y + dy);
        for (part, style) in &self.parts {
            match part {
                Part::Line(a, b) => backend.draw_line(at(*a), at(*b), style)?,
                Part::Rect(a, b) => backend.draw_rect(at(*a), at(*b), style, style.filled)?,
                Part::Circle(c, r) => {
                    backend.draw_circle(at(*c), r.unsigned_abs(), style, style.filled)?
                }
                Part::Polygon(points) => {
                    backend.fill_polygon(points.iter().map(|&p| at(p)), style)?
                }
            }
        }
        Ok(())
    }
}

/// The parts of `marker` of radius `r` pixels.
pub(crate) fn marker(marker: Marker, r: f64, color: Color) -> Parts {
    let fill = rgb(color).filled();
    let px = |v: f64| (v * r).round() as i32;
    let part = match marker {
        Marker::Circle => Part::Circle((0, 0), px(1.0).max(1)),
        Marker::Square => Part::Rect((px(-0.9), px(-0.9)), (px(0.9), px(0.9))),
        Marker::Triangle => {
            Part::Polygon(vec![(0, px(-1.2)), (px(1.1), px(0.8)), (px(-1.1), px(0.8))])
        }
        Marker::Diamond => {
            Part::Polygon(vec![(0, px(-1.3)), (px(1.1), 0), (0, px(1.3)), (px(-1.1), 0)])
        }
        Marker::Cross => {
            let s = stroke(rgb(color), 2.0);
            return vec![
                (Part::Line((px(-1.0), px(-1.0)), (px(1.0), px(1.0))), s),
                (Part::Line((px(-1.0), px(1.0)), (px(1.0), px(-1.0))), s),
            ];
        }
    };
    vec![(part, fill)]
}

/// A horizontal segment from `x0` to `x1` at height 0, dashed or solid.
pub(crate) fn segment(x0: i32, x1: i32, dashed: bool, style: ShapeStyle) -> Parts {
    if !dashed {
        return vec![(Part::Line((x0, 0), (x1, 0)), style)];
    }
    (0..)
        .map(|k| x0 + k * (DASH.0 + DASH.1))
        .take_while(|&a| a < x1)
        .map(|a| (Part::Line((a, 0), ((a + DASH.0).min(x1), 0)), style))
        .collect()
}

/// A filled box with an outline, `w`×`h` pixels centred on the anchor.
pub(crate) fn swatch_box(w: i32, h: i32, color: Color, opacity: f64) -> Parts {
    let (a, b) = ((-w / 2, -h / 2), (w - w / 2, h - h / 2));
    vec![
        (Part::Rect(a, b), rgb(color).mix(opacity).filled()),
        (Part::Rect(a, b), stroke(rgb(color), 1.0)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_scale_with_the_radius() {
        let [(Part::Circle(_, r), style)] = &marker(Marker::Circle, 3.5, Color::BLACK)[..] else {
            panic!("a circle is one filled circle")
        };
        assert_eq!((*r, style.filled), (4, true));
        let Part::Polygon(p) = &marker(Marker::Diamond, 10.0, Color::BLACK)[0].0 else {
            panic!("a diamond is a polygon")
        };
        assert_eq!(p, &[(0, -13), (11, 0), (0, 13), (-11, 0)]);
        assert_eq!(marker(Marker::Cross, 3.0, Color::BLACK).len(), 2);
    }

    #[test]
    fn dashed_segments_alternate_dash_and_gap() {
        let style = stroke(RGBColor(0, 0, 0), 1.0);
        let dashes: Vec<_> = segment(0, 24, true, style)
            .into_iter()
            .map(|(p, _)| match p {
                Part::Line(a, b) => (a.0, b.0),
                _ => panic!("not a line"),
            })
            .collect();
        assert_eq!(dashes, [(0, 6), (10, 16), (20, 24)]);
        assert_eq!(segment(0, 24, false, style).len(), 1);
        assert_eq!(stroke(RGBColor(0, 0, 0), 1.5).stroke_width, 2);
        assert_eq!(stroke(RGBColor(0, 0, 0), f64::NAN).stroke_width, 1);
    }
}
