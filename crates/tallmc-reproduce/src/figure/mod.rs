//! SVG figures for the reproduction suites, drawn with plotters' SVG backend.
//!
//! A [`Figure`] holds panels ([`Axes`]) in a grid. Each panel has a title, axis labels, linear or
//! log scales with automatic "nice" ticks (1-2-5 steps; decades on log axes), a legend and any
//! number of series:
//!
//! * [`Line`]: traces and curves such as "error vs evaluations", optional markers and error bars;
//! * [`Scatter`]: points, optional error bars (pair with [`RefLine::identity`] for estimate vs
//!   reference plots);
//! * [`Histogram`]: a density histogram of samples (bin count or edges), to overlay with
//!   [`Line::from_fn`] for a closed-form density;
//! * [`Bars`]: grouped bar charts over named categories ([`Axes::with_categories`]);
//! * [`RefLine`]: horizontal, vertical and `y = x` reference lines.
//!
//! Series take the colours of the Okabe–Ito [`PALETTE`] in turn. Points with a non-finite
//! coordinate, or a non-positive one on a log axis, are skipped and lines break there; lines
//! leaving fixed limits are cut at the frame. Empty series and degenerate ranges still give a
//! sensible figure.
//!
//! The ticks, their labels (`2×10⁻⁶`, decades on log axes) and the clipping are ours; plotters
//! lays out each panel (title, label areas), draws its mesh, and writes the SVG. It is built
//! without fonts (`svg_backend` only), so text is plain SVG `<text>` in the generic `sans-serif`
//! family, escaped; label areas and the legend box are sized from an estimate of the text width
//! that errs wide. The output is deterministic: every coordinate is a whole pixel and nothing
//! depends on time or randomness.
//!
//! # Example
//!
//! A two-panel figure: a trace with a reference line, and a histogram of the same samples under
//! the closed-form density.
//!
//! ```
//! use tallmc_reproduce::figure::{Axes, Figure, Histogram, Legend, Line, RefLine};
//!
//! // A deterministic, roughly normal sequence standing in for MCMC draws.
//! let draws: Vec<f64> = (0..2000)
//!     .map(|i| {
//!         let u = |k: u64| ((i as u64 * k) % 1009) as f64 / 1009.0;
//!         (u(389) + u(607) + u(811) - 1.5) * 2.0
//!     })
//!     .collect();
//! let normal = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
//!
//! let figure = Figure::new()
//!     .with_title("Toy posterior")
//!     .with_panel(
//!         Axes::new()
//!             .with_title("Trace")
//!             .with_x_label("iteration")
//!             .with_y_label("θ")
//!             .with_series(Line::trace(&draws).with_label("chain 1"))
//!             .with_series(RefLine::horizontal(0.0).with_label("true θ")),
//!     )
//!     .with_panel(
//!         Axes::new()
//!             .with_title("Marginal of θ")
//!             .with_x_label("θ")
//!             .with_y_label("density")
//!             .with_legend(Legend::TopLeft)
//!             .with_series(Histogram::new(&draws, 30).with_label("draws"))
//!             .with_series(Line::from_fn(-3.0, 3.0, 200, normal).with_label("N(0, 1)")),
//!     );
//!
//! let svg = figure.to_svg();
//! assert!(svg.starts_with("<?xml"));
//! assert!(svg.contains("Marginal of θ"));
//! assert_eq!(svg, figure.to_svg());
//! // figure.save("target/reproduce/toy/posterior.svg")?; // creates the directories
//! # Ok::<(), std::io::Error>(())
//! ```

mod axes;
mod coord;
mod glyph;
mod histogram;
mod layout;
mod panel;
mod scale;
mod series;
mod style;

pub use axes::Axes;
pub use histogram::{density, equal_width_edges};
pub use layout::Figure;
pub use scale::{Scale, TickLabel, Ticks};
pub use series::{Bars, Bins, Histogram, Line, RefLine, Scatter, Series};
pub use style::{Color, Legend, Marker, PALETTE};
