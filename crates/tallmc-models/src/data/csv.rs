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
use std::path::{Path, PathBuf};

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

/// What a [`CsvRowReader`] can still do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadState {
    /// More lines may follow.
    Reading,
    /// The end of the file was reached (after at least one row).
    Done,
    /// An error was returned; the reader refuses to go on.
    Failed,
}

/// A streaming reader of the CSV format of [`read_csv`]: opens the file, checks its header, and
/// then yields the rows in chunks of at most `max_rows`, so a file of any length is read in
/// memory proportional to the chunk (one line buffer plus the caller's two vectors).
///
/// The format, the checks and every error message are those of [`read_csv`] (which is built on
/// this reader): the header is line 1 (a byte-order mark before it is skipped), the column
/// named `response` is the response y, every other column a covariate in file order, quoted
/// fields as in RFC 4180, blank lines skipped and counted, and every error names the file, the
/// 1-based physical line and, for one cell, the 1-based column and its header name.
///
/// A chunk is row-major: after [`CsvRowReader::read_chunk`] returned r rows, `x` holds r·p
/// values (`x[i·p + j]` is covariate j of the chunk's row i) and `y` holds r. The reader keeps
/// no per-row state, so its memory does not grow with the number of rows.
///
/// An empty data section is an error: a file with a header but no data rows makes the first
/// call of `read_chunk` that reaches the end of the file return [`read_csv`]'s "no data rows
/// after the header" error (naming the file's last line), so a streaming consumer cannot
/// mistake it for a valid empty data set.
///
/// ```
/// use tallmc_models::CsvRowReader;
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("d.csv");
/// std::fs::write(&path, "y,a,b\n1,2,3\n\n0,4,5\n1,6,7\n")?;
/// let mut reader = CsvRowReader::open(&path, "y")?;
/// assert_eq!(reader.covariate_names(), ["a", "b"]);
/// let (mut x, mut y) = (Vec::new(), Vec::new());
/// assert_eq!(reader.read_chunk(2, &mut x, &mut y)?, 2);
/// assert_eq!((x.as_slice(), y.as_slice()), ([2.0, 3.0, 4.0, 5.0].as_slice(), [1.0, 0.0].as_slice()));
/// assert_eq!(reader.read_chunk(2, &mut x, &mut y)?, 1);
/// assert_eq!(reader.line(), 5); // the last row is on line 5 (line 3 is blank)
/// assert_eq!(reader.read_chunk(2, &mut x, &mut y)?, 0); // the end of the file
/// assert_eq!(reader.rows_read(), 3);
/// assert_eq!(reader.bytes_read(), reader.total_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CsvRowReader {
    path: PathBuf,
    reader: BufReader<File>,
    /// The current line's text (reused).
    line: String,
    /// The current line's fields (reused).
    record: Record,
    /// Every column's header name, in file order (the response's included).
    names: Vec<String>,
    /// The covariates' names, in file order.
    covariate_names: Vec<String>,
    /// The response's column (0-based).
    y_col: usize,
    /// The 1-based number of the last line read (the header is line 1).
    line_no: usize,
    /// Rows read so far.
    rows: u64,
    /// Bytes of the file consumed so far (line ends and byte-order mark included).
    bytes_read: u64,
    /// The file's size when it was opened.
    total_bytes: u64,
    state: ReadState,
    /// The line of every row, recorded only for [`read_csv`] (a streaming read keeps none).
    lines: Option<RowLines>,
}

impl std::fmt::Debug for CsvRowReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvRowReader")
            .field("path", &self.path)
            .field("covariate_names", &self.covariate_names)
            .field("line", &self.line_no)
            .field("rows_read", &self.rows)
            .field("bytes_read", &self.bytes_read)
            .field("total_bytes", &self.total_bytes)
            .finish_non_exhaustive()
    }
}

impl CsvRowReader {
    /// Opens `path`, reads its header (line 1) and checks it: the column named `response`
    /// (usually `"y"`) is the response, every other column a covariate, in file order, named by
    /// its header. No data line is read yet.
    ///
    /// Errors, as [`read_csv`]'s (each naming the file and line 1, and the column for one
    /// name): unreadable file or non-UTF-8 header, an empty file, a malformed header line,
    /// duplicate or empty column names, no response column, a covariate name that cannot be a
    /// CSV column name (with a comma, quote, control character or surrounding spaces, `y`, or
    /// ending in `__`).
    pub fn open(path: impl AsRef<Path>, response: &str) -> Result<Self> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        let total_bytes =
            file.metadata().map_err(|e| Error::io(path, "read metadata of", e))?.len();
        let mut reader = Self {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 16, file),
            line: String::new(),
            record: Record::default(),
            names: Vec::new(),
            covariate_names: Vec::new(),
            y_col: 0,
            line_no: 0,
            rows: 0,
            bytes_read: 0,
            total_bytes,
            state: ReadState::Reading,
            lines: None,
        };
        reader.read_header(response)?;
        Ok(reader)
    }

    /// Reads and checks line 1 (blank lines before it are not allowed: the header is line 1).
    fn read_header(&mut self, response: &str) -> Result<()> {
        if !self.next_line()? {
            return Err(self.error(1, None, "file is empty; expected a header line".into()));
        }
        let header_text = self.line.trim_end_matches(['\n', '\r']);
        let header_text = header_text.strip_prefix('\u{feff}').unwrap_or(header_text);
        if let Err(e) = self.record.parse(header_text) {
            return Err(self.syntax_error(1, e, false));
        }
        let names: Vec<String> =
            (0..self.record.len()).map(|j| self.record.get(j).to_string()).collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (j, name) in names.iter().enumerate() {
            if name.is_empty() {
                return Err(self.error(
                    1,
                    Some((j + 1, String::new())),
                    "empty column name in the header; expected a name for every column".into(),
                ));
            }
            if let Some(first) = seen.insert(name.as_str(), j) {
                return Err(self.error(
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
            return Err(self.error(
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
                return Err(self.error(
                    1,
                    Some((j + 1, shown.clone())),
                    format!(
                        "`{shown}` cannot be a covariate name: {why}; expected {NAME_RULES} (rename the column)"
                    ),
                ));
            }
        }
        self.covariate_names =
            names.iter().enumerate().filter(|&(j, _)| j != y_col).map(|(_, n)| n.clone()).collect();
        self.names = names;
        self.y_col = y_col;
        Ok(())
    }

    /// The covariates' names (the header's columns other than the response), in file order.
    pub fn covariate_names(&self) -> &[String] {
        &self.covariate_names
    }

    /// Number of covariates p: the values per row in the chunks' `x`.
    pub fn num_covariates(&self) -> usize {
        self.covariate_names.len()
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows read so far (over all chunks).
    pub fn rows_read(&self) -> u64 {
        self.rows
    }

    /// The 1-based number of the last line read (the header is line 1; blank lines counted):
    /// after a chunk, the line of its last row.
    pub fn line(&self) -> usize {
        self.line_no
    }

    /// Bytes of the file read so far, line ends (and a byte-order mark) included: equal to
    /// [`CsvRowReader::total_bytes`] once the end of the file is reached. With it, the fraction
    /// done is `bytes_read / total_bytes` (for a progress bar).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The file's size in bytes when it was opened.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Records the line of every row from now on, for [`read_csv`]'s [`Dataset::location`]
    /// (one pair per run of consecutive lines; a streaming read leaves this off).
    pub(crate) fn record_row_lines(&mut self) {
        self.lines.get_or_insert_with(RowLines::default);
    }

    /// The rows' lines recorded since [`CsvRowReader::record_row_lines`].
    pub(crate) fn take_row_lines(&mut self) -> Option<RowLines> {
        self.lines.take()
    }

    /// Clears `x` and `y`, then appends the next rows of the file, at most `max_rows` of them:
    /// their covariates to `x` (row-major, p = [`CsvRowReader::num_covariates`] values per row)
    /// and their responses to `y`. Returns how many rows it appended: `max_rows` unless the end
    /// of the file came first, and 0 once the whole file has been read. Blank lines are skipped.
    ///
    /// Errors, as [`read_csv`]'s (each naming the file, the 1-based line and, for one cell,
    /// the 1-based column and its header name): an unreadable or non-UTF-8 line, a malformed
    /// line (a quote inside an unquoted field, text after a closing quote, a quote not closed
    /// on its line), a row with the wrong number of fields, a value that is not a number, a NaN
    /// or infinite value, and — when the end of the file is reached without a single data row —
    /// "no data rows after the header" (naming the file's last line). `max_rows` = 0 is an
    /// error. After an error the reader refuses to read further (every later call errors).
    pub fn read_chunk(
        &mut self, max_rows: usize, x: &mut Vec<f64>, y: &mut Vec<f64>,
    ) -> Result<usize> {
        x.clear();
        y.clear();
        if max_rows == 0 {
            return Err(Error::invalid("max_rows", 0, "at least 1 row per chunk"));
        }
        match self.state {
            ReadState::Done => return Ok(0),
            ReadState::Failed => {
                return Err(self.error(
                    self.line_no.max(1),
                    None,
                    "reading stopped at an earlier error (at or after this line); expected no further reads after an error".into(),
                ));
            }
            ReadState::Reading => {}
        }
        let result = self.fill(max_rows, x, y);
        if result.is_err() {
            self.state = ReadState::Failed;
        }
        result
    }

    /// The loop of [`CsvRowReader::read_chunk`].
    fn fill(&mut self, max_rows: usize, x: &mut Vec<f64>, y: &mut Vec<f64>) -> Result<usize> {
        let width = self.names.len();
        let mut count = 0usize;
        while count < max_rows {
            if !self.next_line()? {
                if self.rows == 0 {
                    return Err(self.error(
                        self.line_no.max(1),
                        None,
                        "no data rows after the header; expected at least one".into(),
                    ));
                }
                self.state = ReadState::Done;
                break;
            }
            let line_no = self.line_no;
            let text = self.line.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            if let Err(e) = self.record.parse(text) {
                return Err(self.syntax_error(line_no, e, true));
            }
            if self.record.len() != width {
                return Err(self.error(
                    line_no,
                    None,
                    format!(
                        "row has {} fields; expected {width} (as many as the header)",
                        self.record.len()
                    ),
                ));
            }
            for j in 0..width {
                let cell = self.record.get(j);
                let Ok(value) = cell.parse::<f64>() else {
                    return Err(self.error(
                        line_no,
                        Some((j + 1, self.names[j].clone())),
                        format!(
                            "`{cell}` is not a number; expected a decimal floating-point value"
                        ),
                    ));
                };
                if !value.is_finite() {
                    return Err(self.error(
                        line_no,
                        Some((j + 1, self.names[j].clone())),
                        format!("value `{cell}` is not finite; expected a finite number"),
                    ));
                }
                if j == self.y_col {
                    y.push(value);
                } else {
                    x.push(value);
                }
            }
            if let Some(lines) = &mut self.lines {
                lines.push(self.rows as usize, line_no);
            }
            self.rows += 1;
            count += 1;
        }
        Ok(count)
    }

    /// Reads the next physical line into `self.line` (with its line end) and advances the line
    /// number; `false` at the end of the file.
    fn next_line(&mut self) -> Result<bool> {
        self.line.clear();
        let line_no = self.line_no + 1;
        let read = self.reader.read_line(&mut self.line).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                self.error(line_no, None, "line is not valid UTF-8 text".to_string())
            } else {
                Error::io(&self.path, "read", e)
            }
        })?;
        if read == 0 {
            return Ok(false);
        }
        self.line_no = line_no;
        self.bytes_read += read as u64;
        Ok(true)
    }

    /// A [`Error::Csv`] about this file.
    fn error(&self, line: usize, column: Option<(usize, String)>, message: String) -> Error {
        csv_error(&self.path, line, column, message)
    }

    /// A syntax error of line `line_no`, naming the column by its header name when the header
    /// has been read (`named`).
    fn syntax_error(&self, line_no: usize, e: SyntaxError, named: bool) -> Error {
        let column = if named { self.names.get(e.field - 1) } else { None }
            .map(|name| (e.field, name.clone()));
        let message = match column {
            Some(_) => e.message,
            None => format!("field {}: {}", e.field, e.message),
        };
        self.error(line_no, column, message)
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
/// errors ([`Dataset::location`]). The whole file is held in memory; [`CsvRowReader`] reads the
/// same format in chunks (this function is one chunk of it).
///
/// Errors (each naming the file, the 1-based line and, for a cell, the 1-based column and its
/// name): unreadable file or non-UTF-8 line, no header, a malformed line (a quote inside an
/// unquoted field, text after a closing quote, a quote not closed on its line), duplicate or
/// empty column names, a covariate name that cannot be a CSV column name (with a comma, quote,
/// control character or surrounding spaces, `y`, or ending in `__`), no response column, a row
/// with the wrong number of fields, a value that is not a number, a NaN or infinite value, no
/// data rows.
pub fn read_csv(path: impl AsRef<Path>, response: &str) -> Result<Dataset> {
    let mut reader = CsvRowReader::open(path, response)?;
    reader.record_row_lines();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    // One chunk of unbounded size reads to the end of the file (and errors when it has no rows).
    reader.read_chunk(usize::MAX, &mut x, &mut y)?;
    debug_assert_eq!(x.len(), y.len() * reader.num_covariates());
    let lines = reader.take_row_lines();
    let CsvRowReader { path, covariate_names, .. } = reader;
    let mut ds = Dataset::new(x, y, covariate_names)?;
    ds.source = Some(path);
    ds.lines = lines;
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
