//! A minimal SVG writer: elements, attributes, escaped text and fixed number formatting.
//!
//! Every number goes through [`num`], so identical input gives identical bytes.

use std::fmt::Write as _;

/// Escapes `&`, `<`, `>`, `"` and `'` for use in SVG text content and attribute values.
///
/// ```
/// use tallmc_reproduce::figure::escape;
/// assert_eq!(escape("a < b & \"c\""), "a &lt; b &amp; &quot;c&quot;");
/// ```
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters other than tab and newline are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Formats a coordinate with at most two decimals, trailing zeros removed (`"12.5"`, `"-3"`).
/// Non-finite values (which callers should have skipped) become `"0"`; values are clamped to
/// ±1e7 so that far off-canvas points stay short and harmless.
pub(crate) fn num(v: f64) -> String {
    let v = if v.is_finite() { v.clamp(-1e7, 1e7) } else { 0.0 };
    let mut s = format!("{v:.2}");
    if s.contains('.') {
        let trimmed = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(trimmed);
    }
    if s == "-0" {
        s = "0".to_owned();
    }
    s
}

/// An attribute value: either text (escaped on output) or a number (formatted with [`num`]).
pub(crate) enum Val<'a> {
    Str(&'a str),
    Num(f64),
}

impl<'a> From<&'a str> for Val<'a> {
    fn from(s: &'a str) -> Self {
        Val::Str(s)
    }
}

impl<'a> From<&'a String> for Val<'a> {
    fn from(s: &'a String) -> Self {
        Val::Str(s)
    }
}

impl From<f64> for Val<'_> {
    fn from(v: f64) -> Self {
        Val::Num(v)
    }
}

/// Builds an SVG document as a string.
pub(crate) struct SvgWriter {
    out: String,
    depth: usize,
}

impl SvgWriter {
    /// Starts a document of the given size with a white background.
    pub(crate) fn new(width: f64, height: f64) -> Self {
        let mut w = SvgWriter { out: String::new(), depth: 0 };
        w.out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let view = format!("0 0 {} {}", num(width), num(height));
        w.open(
            "svg",
            &[
                ("xmlns", "http://www.w3.org/2000/svg".into()),
                ("width", width.into()),
                ("height", height.into()),
                ("viewBox", (&view).into()),
                ("font-family", "sans-serif".into()),
            ],
        );
        w.empty(
            "rect",
            &[("width", width.into()), ("height", height.into()), ("fill", "#ffffff".into())],
        );
        w
    }

    fn start_tag(&mut self, name: &str, attrs: &[(&str, Val<'_>)]) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push('<');
        self.out.push_str(name);
        for (key, val) in attrs {
            let _ = match val {
                Val::Str(s) => write!(self.out, " {key}=\"{}\"", escape(s)),
                Val::Num(v) => write!(self.out, " {key}=\"{}\"", num(*v)),
            };
        }
    }

    /// Opens an element that will hold children; close it with [`SvgWriter::close`].
    pub(crate) fn open(&mut self, name: &str, attrs: &[(&str, Val<'_>)]) {
        self.start_tag(name, attrs);
        self.out.push_str(">\n");
        self.depth += 1;
    }

    /// Closes the innermost open element.
    pub(crate) fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        let _ = writeln!(self.out, "</{name}>");
    }

    /// Writes a childless element.
    pub(crate) fn empty(&mut self, name: &str, attrs: &[(&str, Val<'_>)]) {
        self.start_tag(name, attrs);
        self.out.push_str("/>\n");
    }

    /// Writes an element whose content is already-escaped markup (text and `<tspan>`s).
    pub(crate) fn element_raw(&mut self, name: &str, attrs: &[(&str, Val<'_>)], markup: &str) {
        self.start_tag(name, attrs);
        let _ = writeln!(self.out, ">{markup}</{name}>");
    }

    /// Finishes the document and returns it.
    pub(crate) fn finish(mut self) -> String {
        while self.depth > 0 {
            self.close("svg");
        }
        self.out
    }
}

/// Collects the `d` attribute of a path.
#[derive(Default)]
pub(crate) struct PathData(String);

impl PathData {
    /// Starts a new subpath at `(x, y)`.
    pub(crate) fn move_to(&mut self, x: f64, y: f64) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        let _ = write!(self.0, "M{},{}", num(x), num(y));
    }

    /// Draws a straight segment to `(x, y)`.
    pub(crate) fn line_to(&mut self, x: f64, y: f64) {
        let _ = write!(self.0, " L{},{}", num(x), num(y));
    }

    /// Closes the current subpath.
    pub(crate) fn close(&mut self) {
        self.0.push_str(" Z");
    }

    /// Whether nothing was drawn.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The path data.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_fixed() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(2.0 / 3.0), "0.67");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(1e300), "10000000");
    }

    #[test]
    fn escape_replaces_markup_characters() {
        assert_eq!(escape("<a&b>'"), "&lt;a&amp;b&gt;&apos;");
        assert_eq!(escape("x\u{1}y"), "x y");
    }
}
