//! The kinds of data a panel draws: lines, scatter points, histograms, bars and reference lines.
//!
//! Each kind is built with a constructor and `with_*` setters and added to an
//! [`Axes`](super::Axes). Points with a non-finite coordinate (or a non-positive one on a log
//! axis) are skipped; a line breaks there.

use super::histogram::{density, equal_width_edges};
use super::style::{Color, Marker};

/// A polyline through `(x[i], y[i])`, optionally with markers and ± error bars.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub(crate) x: Vec<f64>,
    pub(crate) y: Vec<f64>,
    pub(crate) y_err: Vec<f64>,
    pub(crate) label: Option<String>,
    pub(crate) color: Option<Color>,
    pub(crate) marker: Option<Marker>,
    pub(crate) dashed: bool,
    pub(crate) width: f64,
}

impl Line {
    /// A line through the points `(x[i], y[i])`; extra values of the longer slice are ignored.
    pub fn new(x: &[f64], y: &[f64]) -> Self {
        let n = x.len().min(y.len());
        Line {
            x: x[..n].to_vec(),
            y: y[..n].to_vec(),
            y_err: Vec::new(),
            label: None,
            color: None,
            marker: None,
            dashed: false,
            width: 1.5,
        }
    }

    /// A trace: `y[i]` against its index `i = 0, 1, …`.
    pub fn trace(y: &[f64]) -> Self {
        let x: Vec<f64> = (0..y.len()).map(|i| i as f64).collect();
        Line::new(&x, y)
    }

    /// The curve of `f` at `n` evenly spaced points of `[lo, hi]` (at least 2), e.g. a
    /// closed-form density over a histogram.
    pub fn from_fn(lo: f64, hi: f64, n: usize, f: impl Fn(f64) -> f64) -> Self {
        let n = n.max(2);
        let x: Vec<f64> = (0..n).map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64).collect();
        let y: Vec<f64> = x.iter().map(|&v| f(v)).collect();
        Line::new(&x, &y)
    }

    /// Draws `marker` at every point.
    pub fn with_marker(mut self, marker: Marker) -> Self {
        self.marker = Some(marker);
        self
    }

    /// Draws the line dashed.
    pub fn with_dashes(mut self) -> Self {
        self.dashed = true;
        self
    }

    /// Sets the stroke width in pixels (default 1.5; drawn rounded to whole pixels, at least 1).
    pub fn with_width(mut self, width: f64) -> Self {
        self.width = width;
        self
    }
}

/// Unconnected points `(x[i], y[i])`, optionally with ± error bars.
#[derive(Debug, Clone, PartialEq)]
pub struct Scatter {
    pub(crate) x: Vec<f64>,
    pub(crate) y: Vec<f64>,
    pub(crate) y_err: Vec<f64>,
    pub(crate) label: Option<String>,
    pub(crate) color: Option<Color>,
    pub(crate) marker: Marker,
    pub(crate) size: f64,
}

impl Scatter {
    /// Points `(x[i], y[i])`; extra values of the longer slice are ignored.
    pub fn new(x: &[f64], y: &[f64]) -> Self {
        let n = x.len().min(y.len());
        Scatter {
            x: x[..n].to_vec(),
            y: y[..n].to_vec(),
            y_err: Vec::new(),
            label: None,
            color: None,
            marker: Marker::Circle,
            size: 3.5,
        }
    }

    /// Sets the marker shape (default [`Marker::Circle`]).
    pub fn with_marker(mut self, marker: Marker) -> Self {
        self.marker = marker;
        self
    }

    /// Sets the marker radius in pixels (default 3.5; drawn rounded to whole pixels).
    pub fn with_size(mut self, size: f64) -> Self {
        self.size = size;
        self
    }
}

/// The legend setters every series with an optional palette override shares.
macro_rules! legend_setters {
    ($($kind:ident),*) => {$(
        impl $kind {
            /// Names the series in the legend.
            pub fn with_label(mut self, label: impl Into<String>) -> Self {
                self.label = Some(label.into());
                self
            }

            /// Overrides the palette colour.
            pub fn with_color(mut self, color: Color) -> Self {
                self.color = Some(color);
                self
            }
        }
    )*};
}
legend_setters!(Line, Scatter, Histogram, Bars);

/// The error-bar setter of the series drawn at points `(x[i], y[i])`.
macro_rules! y_error_setter {
    ($($kind:ident),*) => {$(
        impl $kind {
            /// Draws error bars `y[i] ± err[i]` (missing or non-finite errors draw none).
            pub fn with_y_errors(mut self, err: &[f64]) -> Self {
                self.y_err = err.to_vec();
                self
            }
        }
    )*};
}
y_error_setter!(Line, Scatter);

/// How a [`Histogram`] bins its samples.
#[derive(Debug, Clone, PartialEq)]
pub enum Bins {
    /// This many equal-width bins spanning the finite samples.
    Count(usize),
    /// These bin edges (strictly increasing, finite).
    Edges(Vec<f64>),
}

impl From<usize> for Bins {
    fn from(n: usize) -> Self {
        Bins::Count(n)
    }
}

impl From<Vec<f64>> for Bins {
    fn from(edges: Vec<f64>) -> Self {
        Bins::Edges(edges)
    }
}

impl From<&[f64]> for Bins {
    fn from(edges: &[f64]) -> Self {
        Bins::Edges(edges.to_vec())
    }
}

/// A density histogram drawn as a filled step outline; it integrates to 1 over its bins
/// (see [`density`](super::density)).
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub(crate) edges: Vec<f64>,
    pub(crate) densities: Vec<f64>,
    pub(crate) label: Option<String>,
    pub(crate) color: Option<Color>,
}

impl Histogram {
    /// Bins `samples` (non-finite ones are ignored) and normalizes to a density. Invalid edges
    /// give an empty histogram, which draws nothing.
    ///
    /// ```
    /// use tallmc_reproduce::figure::Histogram;
    /// let h = Histogram::new(&[0.0, 0.5, 1.0, 2.0], 2);
    /// assert_eq!(h.edges(), [0.0, 1.0, 2.0]);
    /// assert_eq!(h.densities(), [0.5, 0.5]);
    /// let h = Histogram::new(&[0.0, 0.5], vec![0.0, 0.25, 1.0]);
    /// assert_eq!(h.densities(), [2.0, 2.0 / 3.0]);
    /// ```
    pub fn new(samples: &[f64], bins: impl Into<Bins>) -> Self {
        let edges = match bins.into() {
            Bins::Count(n) => equal_width_edges(samples, n),
            Bins::Edges(edges) => edges,
        };
        match density(samples, &edges) {
            Some(densities) => Histogram::from_densities(&edges, &densities),
            None => Histogram::from_densities(&[], &[]),
        }
    }

    /// A histogram of precomputed bin heights: bin `i` spans `edges[i]..edges[i + 1]`.
    /// Heights beyond `edges.len() - 1` are ignored.
    pub fn from_densities(edges: &[f64], densities: &[f64]) -> Self {
        let n = edges.len().saturating_sub(1).min(densities.len());
        let edges = if n == 0 { Vec::new() } else { edges[..=n].to_vec() };
        Histogram { edges, densities: densities[..n].to_vec(), label: None, color: None }
    }

    /// The bin edges (one more than the bins; empty for an empty histogram).
    pub fn edges(&self) -> &[f64] {
        &self.edges
    }

    /// The height of each bin.
    pub fn densities(&self) -> &[f64] {
        &self.densities
    }
}

/// One member of a grouped bar chart: `values[i]` is its bar in category `i` (see
/// [`Axes::with_categories`](super::Axes::with_categories)). Several `Bars` in a panel stand
/// side by side within each category. Non-finite values draw no bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub(crate) values: Vec<f64>,
    pub(crate) err: Vec<f64>,
    pub(crate) label: Option<String>,
    pub(crate) color: Option<Color>,
}

impl Bars {
    /// Bars of heights `values`, one per category.
    pub fn new(values: &[f64]) -> Self {
        Bars { values: values.to_vec(), err: Vec::new(), label: None, color: None }
    }

    /// Draws error bars `values[i] ± err[i]`.
    pub fn with_errors(mut self, err: &[f64]) -> Self {
        self.err = err.to_vec();
        self
    }
}

/// Where a [`RefLine`] goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RefKind {
    Horizontal(f64),
    Vertical(f64),
    Identity,
}

/// A dashed grey reference line across the whole panel: `y = c`, `x = c` or `y = x`.
/// Horizontal and vertical lines are kept inside the automatic axis range; `y = x` is not.
#[derive(Debug, Clone, PartialEq)]
pub struct RefLine {
    pub(crate) kind: RefKind,
    pub(crate) label: Option<String>,
    pub(crate) color: Color,
}

impl RefLine {
    fn of(kind: RefKind) -> Self {
        RefLine { kind, label: None, color: Color::GREY }
    }

    /// The horizontal line `y = y`.
    pub fn horizontal(y: f64) -> Self {
        RefLine::of(RefKind::Horizontal(y))
    }

    /// The vertical line `x = x`.
    pub fn vertical(x: f64) -> Self {
        RefLine::of(RefKind::Vertical(x))
    }

    /// The diagonal `y = x`, e.g. under "estimate vs reference" scatter plots.
    pub fn identity() -> Self {
        RefLine::of(RefKind::Identity)
    }

    /// Names the line in the legend.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Overrides the default grey.
    pub fn with_color(mut self, color: Color) -> Self {
        self.color = color;
        self
    }
}

/// Anything a panel can draw.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Series {
    /// See [`Line`].
    Line(Line),
    /// See [`Scatter`].
    Scatter(Scatter),
    /// See [`Histogram`].
    Histogram(Histogram),
    /// See [`Bars`].
    Bars(Bars),
    /// See [`RefLine`].
    RefLine(RefLine),
}

impl Series {
    /// The legend label, if any.
    pub fn label(&self) -> Option<&str> {
        match self {
            Series::Line(s) => s.label.as_deref(),
            Series::Scatter(s) => s.label.as_deref(),
            Series::Histogram(s) => s.label.as_deref(),
            Series::Bars(s) => s.label.as_deref(),
            Series::RefLine(s) => s.label.as_deref(),
        }
    }

    /// Whether this series takes the next palette colour (reference lines do not).
    pub(crate) fn takes_palette_color(&self) -> bool {
        !matches!(self, Series::RefLine(_))
    }

    /// The colour explicitly set, if any.
    pub(crate) fn explicit_color(&self) -> Option<Color> {
        match self {
            Series::Line(s) => s.color,
            Series::Scatter(s) => s.color,
            Series::Histogram(s) => s.color,
            Series::Bars(s) => s.color,
            Series::RefLine(s) => Some(s.color),
        }
    }
}

macro_rules! series_from {
    ($($kind:ident),*) => {$(
        impl From<$kind> for Series {
            fn from(s: $kind) -> Self {
                Series::$kind(s)
            }
        }
    )*};
}
series_from!(Line, Scatter, Histogram, Bars, RefLine);
