//! CSV reading and writing (hand-written: the format is simple and the errors must name the
//! file, line and column).
//!
//! Format: UTF-8 text; line 1 is a header of comma-separated column names (each optionally
//! surrounded by whitespace and by one pair of double quotes); every following non-blank line
//! is one observation with exactly as many comma-separated numbers. The response column is
//! `y` (or the name given); every other column is a covariate, in file order. Blank lines are
//! skipped; `\r\n` line ends and a leading UTF-8 byte-order mark are accepted.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use super::Dataset;
use crate::error::{Error, Result};

fn csv_error(path: &Path, line: usize, column: Option<(usize, String)>, message: String) -> Error {
    Error::Csv { path: path.to_path_buf(), line, column, message }
}

/// Strips surrounding whitespace and one pair of surrounding double quotes.
fn clean_field(field: &str) -> &str {
    let t = field.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        t[1..t.len() - 1].trim()
    } else {
        t
    }
}

/// Reads a CSV file with a header line. The column named `response` (usually `"y"`) is the
/// response; every other column is a covariate, in file order.
///
/// Errors (each naming the file, the 1-based line and, for a cell, the 1-based column and its
/// name): unreadable file or non-UTF-8 line, no header, duplicate or empty column names, no
/// response column, a row with the wrong number of fields, a value that is not a number, a NaN
/// or infinite value, no data rows.
pub fn read_csv(path: impl AsRef<Path>, response: &str) -> Result<Dataset> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = String::new();
    let mut line_no = 0usize;

    // Header: the first line (blank lines before it are not allowed: the header is line 1).
    let read_line = |reader: &mut BufReader<File>, line: &mut String, line_no: usize| {
        line.clear();
        reader.read_line(line).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                csv_error(path, line_no, None, "line is not valid UTF-8 text".to_string())
            } else {
                Error::io(path, "read", e)
            }
        })
    };
    line_no += 1;
    if read_line(&mut reader, &mut line, line_no)? == 0 {
        return Err(csv_error(path, 1, None, "file is empty; expected a header line".into()));
    }
    let header_text = line.trim_end_matches(['\n', '\r']);
    let header_text = header_text.strip_prefix('\u{feff}').unwrap_or(header_text);
    let names: Vec<String> = header_text.split(',').map(|f| clean_field(f).to_string()).collect();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (j, name) in names.iter().enumerate() {
        if name.is_empty() {
            return Err(csv_error(
                path,
                1,
                Some((j + 1, String::new())),
                "empty column name in the header; expected a name for every column".into(),
            ));
        }
        if let Some(first) = seen.insert(name.as_str(), j) {
            return Err(csv_error(
                path,
                1,
                Some((j + 1, name.clone())),
                format!(
                    "duplicate column name `{name}` (also column {}); expected unique names",
                    first + 1
                ),
            ));
        }
    }
    let Some(&y_col) = seen.get(response) else {
        return Err(csv_error(
            path,
            1,
            None,
            format!(
                "no response column named `{response}` in the header ({}); expected one",
                names.join(", ")
            ),
        ));
    };
    let width = names.len();
    let p = width - 1;
    let covariate_names: Vec<String> =
        names.iter().enumerate().filter(|&(j, _)| j != y_col).map(|(_, n)| n.clone()).collect();
    for name in &covariate_names {
        if name == "y" || name.contains('"') {
            return Err(csv_error(
                path,
                1,
                None,
                format!("column name `{name}` is reserved or contains a quote; rename it"),
            ));
        }
    }

    let mut x: Vec<f64> = Vec::new();
    let mut y: Vec<f64> = Vec::new();
    loop {
        line_no += 1;
        if read_line(&mut reader, &mut line, line_no)? == 0 {
            break;
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let mut count = 0usize;
        for (j, field) in text.split(',').enumerate() {
            count += 1;
            if j >= width {
                continue;
            }
            let cell = clean_field(field);
            let value: f64 = cell.parse().map_err(|_| {
                csv_error(
                    path,
                    line_no,
                    Some((j + 1, names[j].clone())),
                    format!("`{cell}` is not a number; expected a decimal floating-point value"),
                )
            })?;
            if !value.is_finite() {
                return Err(csv_error(
                    path,
                    line_no,
                    Some((j + 1, names[j].clone())),
                    format!("value `{cell}` is not finite; expected a finite number"),
                ));
            }
            if j == y_col {
                y.push(value);
            } else {
                x.push(value);
            }
        }
        if count != width {
            return Err(csv_error(
                path,
                line_no,
                None,
                format!("row has {count} fields; expected {width} (as many as the header)"),
            ));
        }
    }
    if y.is_empty() {
        return Err(csv_error(
            path,
            line_no.saturating_sub(1).max(1),
            None,
            "no data rows after the header; expected at least one".into(),
        ));
    }
    debug_assert_eq!(x.len(), y.len() * p);
    let mut ds = Dataset::new(x, y, covariate_names)?;
    ds.source = Some(path.to_path_buf());
    Ok(ds)
}

/// Writes `data` as CSV: header `y,<covariate names>`, one row per observation, every value
/// printed in Rust's shortest round-trip form, so [`read_csv`] gives back exactly the same bits.
pub fn write_csv(data: &Dataset, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    if data.is_memory_mapped() && same_file(data.source(), path) {
        return Err(Error::invalid(
            "output path",
            path.display(),
            "a file other than the one this data set is memory-mapped from",
        ));
    }
    let file = File::create(path).map_err(|e| Error::io(path, "create", e))?;
    let mut w = BufWriter::with_capacity(1 << 16, file);
    let werr = |e| Error::io(path, "write", e);
    write!(w, "y").map_err(werr)?;
    for name in data.covariate_names() {
        write!(w, ",{name}").map_err(werr)?;
    }
    writeln!(w).map_err(werr)?;
    let p = data.num_covariates();
    for (i, yi) in data.y().iter().enumerate() {
        write!(w, "{yi:?}").map_err(werr)?;
        for v in &data.x()[i * p..(i + 1) * p] {
            write!(w, ",{v:?}").map_err(werr)?;
        }
        writeln!(w).map_err(werr)?;
    }
    w.flush().map_err(werr)?;
    Ok(())
}

/// Whether `a` and `b` name the same existing file.
pub(crate) fn same_file(a: Option<&Path>, b: &Path) -> bool {
    match (a.and_then(|a| a.canonicalize().ok()), b.canonicalize().ok()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}
