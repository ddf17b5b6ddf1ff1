//! A figure: panels laid out in a grid, drawn with plotters as one SVG document.

use std::io;
use std::path::Path;

use plotters::backend::SVGBackend;
use plotters::prelude::{DrawingAreaErrorKind, IntoDrawingArea, Text, WHITE};
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axes::Axes;
use super::panel::{clean, draw_panel, font};

/// Height reserved for the figure title.
const TITLE_HEIGHT: f64 = 32.0;
/// Figure title size in pixels.
const TITLE_FONT: f64 = 16.0;
/// At most this many columns unless set with [`Figure::with_columns`].
const DEFAULT_MAX_COLUMNS: usize = 3;

/// A figure of one or more panels ([`Axes`]) in a grid, filled row by row.
///
/// The output is deterministic: the same figure always gives the same bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    panels: Vec<Axes>,
    columns: Option<usize>,
    panel_width: f64,
    panel_height: f64,
    title: Option<String>,
}

impl Default for Figure {
    fn default() -> Self {
        Figure {
            panels: Vec::new(),
            columns: None,
            panel_width: 640.0,
            panel_height: 420.0,
            title: None,
        }
    }
}

impl Figure {
    /// An empty figure with 640×420-pixel panels, in one row of up to three columns.
    pub fn new() -> Self {
        Figure::default()
    }

    /// Sets a title centred above all panels.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the number of columns of the grid (at least 1).
    pub fn with_columns(mut self, columns: usize) -> Self {
        self.columns = Some(columns.max(1));
        self
    }

    /// Sets the size of each panel in pixels (at least 120×100).
    pub fn with_panel_size(mut self, width: f64, height: f64) -> Self {
        self.panel_width = if width.is_finite() { width.max(120.0) } else { 640.0 };
        self.panel_height = if height.is_finite() { height.max(100.0) } else { 420.0 };
        self
    }

    /// Adds a panel.
    pub fn with_panel(mut self, axes: Axes) -> Self {
        self.panels.push(axes);
        self
    }

    /// Adds a panel to a figure built in a loop.
    pub fn push(&mut self, axes: Axes) {
        self.panels.push(axes);
    }

    /// The panels, in order.
    pub fn panels(&self) -> &[Axes] {
        &self.panels
    }

    /// The number of columns and rows of the grid.
    pub fn grid(&self) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let columns = self.columns.unwrap_or(DEFAULT_MAX_COLUMNS).min(n);
        (columns, n.div_ceil(columns))
    }

    /// The size of the whole figure in pixels.
    pub fn size(&self) -> (f64, f64) {
        let (columns, rows) = self.grid();
        let title = if self.title.is_some() { TITLE_HEIGHT } else { 0.0 };
        (columns as f64 * self.panel_width, rows as f64 * self.panel_height + title)
    }

    /// The figure as a standalone SVG document (drawn by plotters' SVG backend).
    pub fn to_svg(&self) -> String {
        let (width, height) = self.size();
        let size = (width.round() as u32, height.round() as u32);
        let mut body = String::new();
        // The backend writes into a String, which cannot fail; an error could only cut the
        // drawing short, and the document is still closed when the backend is dropped.
        let _ = self.draw(SVGBackend::with_string(&mut body, size));
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{body}")
    }

    fn draw(&self, backend: SVGBackend<'_>) -> Result<(), DrawingAreaErrorKind<io::Error>> {
        let root = backend.into_drawing_area();
        root.fill(&WHITE)?;
        let panels = match &self.title {
            Some(title) => {
                let (head, panels) = root.split_vertically(TITLE_HEIGHT as i32);
                let style = font(TITLE_FONT).pos(Pos::new(HPos::Center, VPos::Center));
                let (w, h) = head.dim_in_pixel();
                head.draw(&Text::new(clean(title), ((w / 2) as i32, (h / 2 + 2) as i32), style))?;
                panels
            }
            None => root.clone(),
        };
        let (columns, rows) = self.grid();
        for (axes, cell) in self.panels.iter().zip(panels.split_evenly((rows, columns))) {
            draw_panel(&cell, axes)?;
        }
        root.present()
    }

    /// Writes [`Figure::to_svg`] to `path`, creating missing parent directories.
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, self.to_svg())
    }
}
