//! A panel: its series, labels, scales and legend, and the axis ranges its data need.

use super::scale::{Scale, TickLabel, Ticks};
use super::series::{RefKind, Series};
use super::style::Legend;

/// One panel of a [`Figure`](super::Figure): a plot area with title, axis labels, scales, a
/// legend and any number of series, drawn in the order they were added.
///
/// Axis limits are chosen from the data (widened to "nice" ticks) unless set with
/// [`Axes::with_x_range`] / [`Axes::with_y_range`]. A panel with [`Bars`](super::Bars) or
/// categories has a categorical x axis: category `i` sits at `x = i`.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    pub(crate) title: Option<String>,
    pub(crate) x_label: Option<String>,
    pub(crate) y_label: Option<String>,
    pub(crate) x_scale: Scale,
    pub(crate) y_scale: Scale,
    pub(crate) x_range: Option<(f64, f64)>,
    pub(crate) y_range: Option<(f64, f64)>,
    pub(crate) legend: Legend,
    pub(crate) grid: bool,
    pub(crate) categories: Vec<String>,
    pub(crate) series: Vec<Series>,
}

impl Default for Axes {
    fn default() -> Self {
        Axes {
            title: None,
            x_label: None,
            y_label: None,
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            x_range: None,
            y_range: None,
            legend: Legend::TopRight,
            grid: true,
            categories: Vec::new(),
            series: Vec::new(),
        }
    }
}

impl Axes {
    /// An empty panel with linear axes, grid lines and the legend at the top right.
    pub fn new() -> Self {
        Axes::default()
    }

    /// Sets the title above the plot area.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the x axis label.
    pub fn with_x_label(mut self, label: impl Into<String>) -> Self {
        self.x_label = Some(label.into());
        self
    }

    /// Sets the y axis label.
    pub fn with_y_label(mut self, label: impl Into<String>) -> Self {
        self.y_label = Some(label.into());
        self
    }

    /// Sets the x scale (ignored on a categorical x axis).
    pub fn with_x_scale(mut self, scale: Scale) -> Self {
        self.x_scale = scale;
        self
    }

    /// Sets the y scale.
    pub fn with_y_scale(mut self, scale: Scale) -> Self {
        self.y_scale = scale;
        self
    }

    /// Shorthand for `with_x_scale(Scale::Log)`.
    pub fn with_log_x(self) -> Self {
        self.with_x_scale(Scale::Log)
    }

    /// Shorthand for `with_y_scale(Scale::Log)`.
    pub fn with_log_y(self) -> Self {
        self.with_y_scale(Scale::Log)
    }

    /// Fixes the x limits to `[lo, hi]` (data outside are clipped).
    pub fn with_x_range(mut self, lo: f64, hi: f64) -> Self {
        self.x_range = Some((lo, hi));
        self
    }

    /// Fixes the y limits to `[lo, hi]` (data outside are clipped).
    pub fn with_y_range(mut self, lo: f64, hi: f64) -> Self {
        self.y_range = Some((lo, hi));
        self
    }

    /// Places (or hides) the legend. Only series with a label appear in it.
    pub fn with_legend(mut self, legend: Legend) -> Self {
        self.legend = legend;
        self
    }

    /// Turns the light grid lines at the major ticks on or off (default on).
    pub fn with_grid(mut self, grid: bool) -> Self {
        self.grid = grid;
        self
    }

    /// Names the categories of a categorical x axis (category `i` at `x = i`). Without names,
    /// bar charts number their categories from 1.
    pub fn with_categories<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.categories = names.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a series (a [`Line`](super::Line), [`Scatter`](super::Scatter),
    /// [`Histogram`](super::Histogram), [`Bars`](super::Bars) or [`RefLine`](super::RefLine)).
    pub fn with_series(mut self, series: impl Into<Series>) -> Self {
        self.push(series);
        self
    }

    /// Adds a series to a panel built in a loop.
    pub fn push(&mut self, series: impl Into<Series>) {
        self.series.push(series.into());
    }

    /// The series, in drawing order.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The number of categories of a categorical x axis, or `None` for a numeric one.
    pub(crate) fn category_count(&self) -> Option<usize> {
        let bars = self
            .series
            .iter()
            .filter_map(|s| match s {
                Series::Bars(b) => Some(b.values.len()),
                _ => None,
            })
            .max();
        match bars {
            None if self.categories.is_empty() => None,
            _ => Some(bars.unwrap_or(0).max(self.categories.len())),
        }
    }

    /// The x ticks, aiming at about `target` of them on a numeric axis.
    pub(crate) fn x_ticks(&self, target: usize) -> Ticks {
        if let Some(n) = self.category_count() {
            let labels = (0..n).map(|i| TickLabel {
                text: self.categories.get(i).cloned().unwrap_or_else(|| (i + 1).to_string()),
                exponent: None,
            });
            return Ticks {
                lo: -0.5,
                hi: n.max(1) as f64 - 0.5,
                major: (0..n).map(|i| i as f64).collect(),
                labels: labels.collect(),
                minor: Vec::new(),
            };
        }
        self.ticks(self.x_scale, self.x_range, target, |e, s| e.add_x(s, self))
    }

    /// The y ticks, aiming at about `target` of them.
    pub(crate) fn y_ticks(&self, target: usize) -> Ticks {
        self.ticks(self.y_scale, self.y_range, target, |e, s| e.add_y(s, self))
    }

    /// The x scale actually used (linear on a categorical axis).
    pub(crate) fn effective_x_scale(&self) -> Scale {
        match self.category_count() {
            Some(_) => Scale::Linear,
            None => self.x_scale,
        }
    }

    fn ticks(
        &self, scale: Scale, range: Option<(f64, f64)>, target: usize,
        add: impl Fn(&mut Extent, &Series),
    ) -> Ticks {
        if let Some((lo, hi)) = range {
            return scale.fixed_ticks(lo, hi, target);
        }
        let mut extent = Extent { scale, lo: f64::INFINITY, hi: f64::NEG_INFINITY };
        for s in &self.series {
            add(&mut extent, s);
        }
        scale.auto_ticks(extent.lo, extent.hi, target)
    }

    /// Whether point `(x, y)` is drawn on this panel's scales.
    fn shown(&self, x: f64, y: f64) -> bool {
        self.effective_x_scale().accepts(x) && self.y_scale.accepts(y)
    }
}

/// The range of the values an axis must show.
struct Extent {
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl Extent {
    fn add(&mut self, v: f64) {
        if self.scale.accepts(v) {
            self.lo = self.lo.min(v);
            self.hi = self.hi.max(v);
        }
    }

    fn add_x(&mut self, s: &Series, axes: &Axes) {
        match s {
            Series::Line(l) => {
                for (&x, &y) in l.x.iter().zip(&l.y) {
                    if axes.shown(x, y) {
                        self.add(x);
                    }
                }
            }
            Series::Scatter(p) => {
                for (&x, &y) in p.x.iter().zip(&p.y) {
                    if axes.shown(x, y) {
                        self.add(x);
                    }
                }
            }
            Series::Histogram(h) => h.edges.iter().for_each(|&e| self.add(e)),
            Series::RefLine(r) => {
                if let RefKind::Vertical(x) = r.kind {
                    self.add(x);
                }
            }
            Series::Bars(_) => {}
        }
    }

    fn add_y(&mut self, s: &Series, axes: &Axes) {
        let base = if self.scale == Scale::Linear { 0.0 } else { f64::NAN };
        match s {
            Series::Line(l) => self.add_points(&l.x, &l.y, &l.y_err, axes),
            Series::Scatter(p) => self.add_points(&p.x, &p.y, &p.y_err, axes),
            Series::Histogram(h) => {
                if !h.densities.is_empty() {
                    self.add(base);
                }
                h.densities.iter().for_each(|&d| self.add(d));
            }
            Series::Bars(b) => {
                for (i, &v) in b.values.iter().enumerate() {
                    if v.is_finite() {
                        self.add(base);
                        self.add(v);
                        let e = b.err.get(i).copied().unwrap_or(f64::NAN);
                        self.add(v - e);
                        self.add(v + e);
                    }
                }
            }
            Series::RefLine(r) => {
                if let RefKind::Horizontal(y) = r.kind {
                    self.add(y);
                }
            }
        }
    }

    fn add_points(&mut self, x: &[f64], y: &[f64], err: &[f64], axes: &Axes) {
        for (i, (&x, &y)) in x.iter().zip(y).enumerate() {
            if axes.shown(x, y) {
                self.add(y);
                let e = err.get(i).copied().unwrap_or(f64::NAN);
                self.add(y - e);
                self.add(y + e);
            }
        }
    }
}
