//! CSV reading and writing (hand-written: the format is simple and the errors must name the
//! file, line and column).
//!
//! Format (RFC 4180, with the leniencies listed): UTF-8 text; line 1 is a header of
//! comma-separated column names; every following non-blank line is one observation with
//! exactly as many comma-separated numbers. The response column is `y` (or the name given);
//! every other column is a covariate, in file order.
//!
//! * A field may be enclosed in double quotes (`"age"`, `"1.5"`); inside quotes a comma is part
//!   of the field and a quote is written as two (`""`). The quotes are removed.
//! * Spaces and tabs around a field (outside or inside its quotes) are ignored.
//! * Lines end in `\n` or `\r\n`; a UTF-8 byte-order mark before the header is skipped; blank
//!   lines after the header are skipped (and counted in line numbers).
//! * A quoted field cannot span lines (RFC 4180 allows it, but no valid name or number holds a
//!   line break): a quote still open at the end of a line is an error naming the line.
//!
//! Every error names the file, the 1-based physical line (the header is line 1) and, for one
//! cell, the 1-based column and its header name.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use super::{Dataset, NAME_RULES, RowLines, name_problem};
use crate::error::{Error, Result};

fn csv_error(path: &Path, line: usize, column: Option<(usize, String)>, message: String) -> Error {
    Error::Csv { path: path.to_path_buf(), line, column, message }
}

/// A syntax error in one line: the 1-based field it is in and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SyntaxError {
    field: usize,
    message: String,
}

/// Where the scanner of [`Record::parse`] is within a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the field's first character other than a space or tab.
    Start,
    /// Inside an unquoted field.
    Unquoted,
    /// Inside a quoted field.
    Quoted,
    /// Just after a quote inside a quoted field: a second quote is an escaped quote, anything
    /// else means the first one closed the field.
    QuoteSeen,
    /// After a quoted field's closing quote, where only spaces and tabs may come before the
    /// comma or the end of the line.
    AfterQuoted,
}

/// The fields of one CSV line, unquoted, unescaped and trimmed, stored one after the other in
/// one buffer that is reused from line to line (no allocation per field).
#[derive(Debug, Default)]
struct Record {
    buf: String,
    /// Byte range in `buf` of every field so far.
    spans: Vec<(usize, usize)>,
    /// Where the current field's text starts in `buf`.
    field_start: usize,
}

impl Record {
    /// Splits `line` (without its line end) into fields: a small state machine over the bytes
    /// (every byte it acts on is ASCII, so it never splits a UTF-8 character).
    fn parse(&mut self, line: &str) -> std::result::Result<(), SyntaxError> {
        self.buf.clear();
        self.spans.clear();
        self.field_start = 0;
        let mut state = State::Start;
        // Start (in `line`) of the verbatim piece of the current field not yet copied.
        let mut piece = 0;
        // Byte position of the opening quote of the current quoted field.
        let mut open_quote = 0;
        for (i, &b) in line.as_bytes().iter().enumerate() {
            match state {
                State::Start => match b {
                    b',' => self.end_field(),
                    b'"' => {
                        state = State::Quoted;
                        open_quote = i;
                        piece = i + 1;
                    }
                    b' ' | b'\t' => {}
                    _ => {
                        state = State::Unquoted;
                        piece = i;
                    }
                },
                State::Unquoted => match b {
                    b',' => {
                        self.buf.push_str(&line[piece..i]);
                        self.end_field();
                        state = State::Start;
                    }
                    b'"' => {
                        return Err(self.error(
                            "a quote inside an unquoted field; expected the whole field in quotes, with a quote inside written as two (`\"\"`)",
                        ));
                    }
                    _ => {}
                },
                State::Quoted => {
                    if b == b'"' {
                        self.buf.push_str(&line[piece..i]);
                        state = State::QuoteSeen;
                    }
                }
                State::QuoteSeen => match b {
                    b'"' => {
                        // `""`: the second quote starts the next verbatim piece, so it is kept.
                        piece = i;
                        state = State::Quoted;
                    }
                    b',' => {
                        self.end_field();
                        state = State::Start;
                    }
                    b' ' | b'\t' => state = State::AfterQuoted,
                    _ => return Err(self.after_quote_error(line, i)),
                },
                State::AfterQuoted => match b {
                    b',' => {
                        self.end_field();
                        state = State::Start;
                    }
                    b' ' | b'\t' => {}
                    _ => return Err(self.after_quote_error(line, i)),
                },
            }
        }
        match state {
            State::Quoted => {
                let at = line[..open_quote].chars().count() + 1;
                Err(self.error(&format!(
                    "unterminated quoted field: the quote at character {at} is not closed before the end of the line; expected a closing `\"` (a field cannot span lines)"
                )))
            }
            State::Unquoted => {
                self.buf.push_str(&line[piece..]);
                self.end_field();
                Ok(())
            }
            State::Start | State::QuoteSeen | State::AfterQuoted => {
                self.end_field();
                Ok(())
            }
        }
    }

    /// Ends the current field: everything in `buf` after the previous field, trimmed.
    fn end_field(&mut self) {
        let start = self.field_start;
        let text = &self.buf[start..];
        let lead = text.len() - text.trim_start().len();
        let kept = text.trim().len();
        self.spans.push((start + lead, start + lead + kept));
        self.field_start = self.buf.len();
    }

    fn error(&self, message: &str) -> SyntaxError {
        SyntaxError { field: self.spans.len() + 1, message: message.to_string() }
    }

    fn after_quote_error(&self, line: &str, i: usize) -> SyntaxError {
        let c = line[i..].chars().next().unwrap_or('?');
        self.error(&format!(
            "`{}` after the closing quote of a quoted field; expected a comma or the end of the line (a quote inside quotes is written as two: `\"\"`)",
            c.escape_debug()
        ))
    }

    /// Number of fields.
    fn len(&self) -> usize {
        self.spans.len()
    }

    /// Field `k` (0-based).
    fn get(&self, k: usize) -> &str {
        let (a, b) = self.spans[k];
        &self.buf[a..b]
    }
}

/// Reads a CSV file with a header line. The column named `response` (usually `"y"`) is the
/// response; every other column is a covariate, in file order, named by its header.
///
/// The format (`docs/data-format.md`): UTF-8, a header line of names, then one line of
/// numbers per observation, comma-separated. Fields may be quoted as in RFC 4180 (`"age"`,
/// `"1.5"`, a comma inside quotes, `""` for a quote), spaces around fields are ignored, lines
/// may end in `\r\n`, a byte-order mark before the header is skipped, and blank lines are
/// skipped; a quoted field cannot span lines.
///
/// The data set remembers the file and the line of every row, so models name both in their
/// errors ([`Dataset::location`]).
///
/// Errors (each naming the file, the 1-based line and, for a cell, the 1-based column and its
/// name): unreadable file or non-UTF-8 line, no header, a malformed line (a quote inside an
/// unquoted field, text after a closing quote, a quote not closed on its line), duplicate or
/// empty column names, a covariate name that cannot be a CSV column name (with a comma, quote,
/// control character or surrounding spaces, `y`, or ending in `__`), no response column, a row
/// with the wrong number of fields, a value that is not a number, a NaN or infinite value, no
/// data rows.
pub fn read_csv(path: impl AsRef<Path>, response: &str) -> Result<Dataset> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = String::new();
    let mut record = Record::default();
    let syntax = |line_no: usize, e: SyntaxError, names: Option<&[String]>| {
        let column = names.and_then(|n| n.get(e.field - 1)).map(|name| (e.field, name.clone()));
        let message = match column {
            Some(_) => e.message,
            None => format!("field {}: {}", e.field, e.message),
        };
        csv_error(path, line_no, column, message)
    };

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
    let mut line_no = 1usize;
    if read_line(&mut reader, &mut line, line_no)? == 0 {
        return Err(csv_error(path, 1, None, "file is empty; expected a header line".into()));
    }
    let header_text = line.trim_end_matches(['\n', '\r']);
    let header_text = header_text.strip_prefix('\u{feff}').unwrap_or(header_text);
    record.parse(header_text).map_err(|e| syntax(1, e, None))?;
    let names: Vec<String> = (0..record.len()).map(|j| record.get(j).to_string()).collect();
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
    for (j, name) in names.iter().enumerate() {
        if j == y_col {
            continue;
        }
        if let Some(why) = name_problem(name) {
            let shown = name.escape_debug().to_string();
            return Err(csv_error(
                path,
                1,
                Some((j + 1, shown.clone())),
                format!(
                    "`{shown}` cannot be a covariate name: {why}; expected {NAME_RULES} (rename the column)"
                ),
            ));
        }
    }
    let width = names.len();
    let p = width - 1;
    let covariate_names: Vec<String> =
        names.iter().enumerate().filter(|&(j, _)| j != y_col).map(|(_, n)| n.clone()).collect();

    let mut x: Vec<f64> = Vec::new();
    let mut y: Vec<f64> = Vec::new();
    let mut lines = RowLines::default();
    loop {
        line_no += 1;
        if read_line(&mut reader, &mut line, line_no)? == 0 {
            break;
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        record.parse(text).map_err(|e| syntax(line_no, e, Some(&names)))?;
        if record.len() != width {
            return Err(csv_error(
                path,
                line_no,
                None,
                format!(
                    "row has {} fields; expected {width} (as many as the header)",
                    record.len()
                ),
            ));
        }
        for j in 0..width {
            let cell = record.get(j);
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
        lines.push(y.len() - 1, line_no);
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
    ds.lines = Some(lines);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str) -> Vec<String> {
        let mut r = Record::default();
        r.parse(line).unwrap_or_else(|e| panic!("{line:?}: {e:?}"));
        (0..r.len()).map(|k| r.get(k).to_string()).collect()
    }

    fn syntax_error(line: &str) -> SyntaxError {
        let mut r = Record::default();
        r.parse(line).expect_err(line)
    }

    #[test]
    fn unquoted_fields_are_split_and_trimmed() {
        assert_eq!(fields("y,age,income"), ["y", "age", "income"]);
        assert_eq!(fields(" 1 ,\t-2.5e3 , .5"), ["1", "-2.5e3", ".5"]);
        assert_eq!(fields("a,"), ["a", ""]);
        assert_eq!(fields(",a"), ["", "a"]);
        assert_eq!(fields(""), [""]);
        assert_eq!(fields("âge,ß,日本"), ["âge", "ß", "日本"]);
    }

    #[test]
    fn quoted_fields_are_unquoted() {
        assert_eq!(fields("\"y\",\"age\""), ["y", "age"]);
        assert_eq!(fields("\"1.5\",2"), ["1.5", "2"]);
        assert_eq!(fields("  \"a\"  , \"b\"\t"), ["a", "b"]);
        // Spaces inside the quotes are trimmed too.
        assert_eq!(fields("\" a \",b"), ["a", "b"]);
        assert_eq!(fields("\"\",x"), ["", "x"]);
        assert_eq!(fields("\"âge\""), ["âge"]);
    }

    #[test]
    fn quoted_commas_and_doubled_quotes() {
        assert_eq!(fields("\"age, years\",x"), ["age, years", "x"]);
        assert_eq!(fields("\"a\"\"b\",c"), ["a\"b", "c"]);
        assert_eq!(fields("\"\"\"\""), ["\""]);
        assert_eq!(fields("\"a,\"\",b\""), ["a,\",b"]);
    }

    #[test]
    fn malformed_lines_name_the_field() {
        let e = syntax_error("1,\"2");
        assert_eq!(e.field, 2);
        assert!(
            e.message.starts_with("unterminated quoted field: the quote at character 3"),
            "{e:?}"
        );
        let e = syntax_error("\"âé,x");
        assert_eq!(e.field, 1);
        assert!(e.message.contains("character 1"), "{e:?}");
        let e = syntax_error("1,2,ab\"c\"");
        assert_eq!(e.field, 3);
        assert!(e.message.starts_with("a quote inside an unquoted field"), "{e:?}");
        let e = syntax_error("\"a\"b,c");
        assert_eq!(e.field, 1);
        assert!(e.message.starts_with("`b` after the closing quote"), "{e:?}");
        let e = syntax_error("x,\"a\" b");
        assert_eq!(e.field, 2);
        assert!(e.message.starts_with("`b` after the closing quote"), "{e:?}");
    }

    #[test]
    fn the_buffer_is_reused_across_lines() {
        let mut r = Record::default();
        r.parse("\"long field, with a comma\",2").unwrap();
        r.parse("a,b,c").unwrap();
        assert_eq!((0..r.len()).map(|k| r.get(k)).collect::<Vec<_>>(), ["a", "b", "c"]);
    }
}
