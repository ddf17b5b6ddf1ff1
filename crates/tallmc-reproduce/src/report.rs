//! Markdown reports: tables of claims beside measurements.

use std::fmt::Write as _;
use std::path::Path;

use crate::{Error, Result};

/// A markdown document built section by section.
#[derive(Debug, Default, Clone)]
pub struct Report {
    text: String,
}

impl Report {
    /// A report with a top-level title.
    pub fn new(title: &str) -> Self {
        Self { text: format!("# {title}\n\n") }
    }

    /// A second-level heading.
    pub fn section(&mut self, title: &str) -> &mut Self {
        let _ = write!(self.text, "## {title}\n\n");
        self
    }

    /// A paragraph.
    pub fn paragraph(&mut self, text: &str) -> &mut Self {
        let _ = write!(self.text, "{text}\n\n");
        self
    }

    /// A table with a header row. A `|` inside a cell is escaped so it cannot split the cell.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) -> &mut Self {
        let cells = |r: &mut dyn Iterator<Item = &str>| {
            r.map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | ")
        };
        let _ = writeln!(self.text, "| {} |", cells(&mut header.iter().copied()));
        let _ = writeln!(self.text, "|{}", "---|".repeat(header.len()));
        for r in rows {
            let _ = writeln!(self.text, "| {} |", cells(&mut r.iter().map(String::as_str)));
        }
        self.text.push('\n');
        self
    }

    /// A table with one row per item: `row(item)` gives the item's cells, in the order of
    /// `header` (see [`Report::table`]).
    pub fn table_of<T>(
        &mut self, header: &[&str], items: impl IntoIterator<Item = T>,
        row: impl FnMut(T) -> Vec<String>,
    ) -> &mut Self {
        let rows: Vec<Vec<String>> = items.into_iter().map(row).collect();
        self.table(header, &rows)
    }

    /// An embedded image (relative path).
    pub fn image(&mut self, alt: &str, file: &str) -> &mut Self {
        let _ = write!(self.text, "![{alt}]({file})\n\n");
        self
    }

    /// The markdown text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Writes the report to `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        std::fs::write(path, &self.text)
            .map_err(|source| Error::Write { path: path.into(), source })
    }
}

/// Formats a number with `sig` significant figures for tables.
pub fn fmt_sig(x: f64, sig: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if (-3..6).contains(&mag) {
        let decimals = (sig as i32 - 1 - mag).max(0) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.*e}", sig.saturating_sub(1))
    }
}

/// n in scientific notation with a superscript exponent (10⁵, 3·10⁵).
pub fn fmt_n(n: usize) -> String {
    const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let e = (n.max(1) as f64).log10().floor() as i32;
    let m = n as f64 / 10f64.powi(e);
    let exp: String = e
        .to_string()
        .chars()
        .filter_map(|c| c.to_digit(10))
        .map(|d| SUPERSCRIPT[d as usize])
        .collect();
    if (m - 1.0).abs() < 1e-9 { format!("10{exp}") } else { format!("{}·10{exp}", fmt_sig(m, 2)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_tables_and_numbers() {
        let mut r = Report::new("T");
        r.table(&["a", "b"], &[vec!["1".into(), "2".into()]]);
        assert!(r.as_str().contains("| a | b |\n|---|---|\n| 1 | 2 |"));
        let mut r = Report::new("T");
        r.table(&["|z|"], &[vec!["max |z| = 2".into()]]);
        assert!(r.as_str().contains("| \\|z\\| |\n|---|\n| max \\|z\\| = 2 |"), "{}", r.as_str());
        assert_eq!(fmt_sig(0.012345, 3), "0.0123");
        assert_eq!(fmt_sig(12345.6, 3), "12346");
        assert_eq!(fmt_sig(1.5e-7, 2), "1.5e-7");
    }
}
