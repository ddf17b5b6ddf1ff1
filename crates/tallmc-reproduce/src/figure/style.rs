//! Colours, markers and legend placement.

use std::fmt;

/// An opaque sRGB colour; displayed as `#rrggbb` (the SVG spells it in capitals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Color {
    /// Red, 0–255.
    pub r: u8,
    /// Green, 0–255.
    pub g: u8,
    /// Blue, 0–255.
    pub b: u8,
}

impl Color {
    /// A colour from its red, green and blue components.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Color { r, g, b }
    }

    /// Black.
    pub const BLACK: Color = Color::rgb(0, 0, 0);
    /// The dark grey of reference lines.
    pub const GREY: Color = Color::rgb(0x55, 0x55, 0x55);

    /// The palette colour of the `index`-th series of a panel (cycles through [`PALETTE`]).
    pub fn cycle(index: usize) -> Color {
        PALETTE[index % PALETTE.len()]
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }
}

/// The Okabe–Ito colour-blind-safe palette, ordered for contrast on white (blue, vermillion,
/// bluish green, orange, reddish purple, sky blue, yellow, black). Series of a panel take these
/// colours in turn.
///
/// Reference: M. Okabe and K. Ito, *Color Universal Design* (2008).
pub const PALETTE: [Color; 8] = [
    Color::rgb(0x00, 0x72, 0xb2),
    Color::rgb(0xd5, 0x5e, 0x00),
    Color::rgb(0x00, 0x9e, 0x73),
    Color::rgb(0xe6, 0x9f, 0x00),
    Color::rgb(0xcc, 0x79, 0xa7),
    Color::rgb(0x56, 0xb4, 0xe9),
    Color::rgb(0xf0, 0xe4, 0x42),
    Color::rgb(0x00, 0x00, 0x00),
];

/// The shape drawn at each point of a line or scatter series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A filled upward triangle.
    Triangle,
    /// A filled diamond.
    Diamond,
    /// An `×`.
    Cross,
}

impl Marker {
    /// All markers, for cycling when several series need distinct shapes.
    pub const ALL: [Marker; 5] =
        [Marker::Circle, Marker::Square, Marker::Triangle, Marker::Diamond, Marker::Cross];
}

/// Where a panel's legend goes (inside the plot area).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Legend {
    /// Top right corner (the default).
    #[default]
    TopRight,
    /// Top left corner.
    TopLeft,
    /// Bottom right corner.
    BottomRight,
    /// Bottom left corner.
    BottomLeft,
    /// No legend.
    Hidden,
}
