//! A file written line by line that never holds a partial line ([`RowFile`]), and a handle to
//! end it from another thread ([`RowFileHandle`]).
//!
//! What the CSV sinks ([`CsvSink`](super::CsvSink),
//! [`SkeletonSink`](crate::continuous::SkeletonSink)) guarantee, because they write through a
//! `RowFile`:
//!
//! * **Whole lines only.** Lines (rows, the header, comments) are buffered whole and handed to
//!   the operating system only at line boundaries: every `write` call carries whole lines, so
//!   the file holds whole lines whenever no write is under way — after a normal end, an
//!   abandon, a write error, and after a process killed between two writes (SIGKILL, the
//!   out-of-memory killer), which is nearly always where a kill lands since a run spends a tiny
//!   fraction of its time in `write`. A SIGKILL that lands *during* a write can cut it short
//!   (Linux copies a write into the file page by page and stops between pages on a fatal
//!   signal): the file then ends with one fragment of a line, without its newline. Every line
//!   that ends with a newline is whole; readers drop an unterminated last line.
//! * **Little is lost when the process is killed.** The buffer goes to the file when it holds
//!   [`BUFFER_BYTES`] or more, and when a line arrives [`WRITE_INTERVAL`] or more after the last
//!   write. A killed run therefore loses at most the lines made within about `WRITE_INTERVAL`
//!   before its last write (the clock is read every few lines only, at most every
//!   [`MAX_CLOCK_STRIDE`] lines and every line when lines are slow, so reading it costs nothing
//!   measurable).
//! * **A write error cuts the file back to its last whole line.** On any write error (a full
//!   disk, a quota, a broken network file system), the file is truncated back to the length that
//!   had reached it as whole lines ([`RowTarget::truncate`]), nothing more is written to it, and
//!   the error (of the original [`io::ErrorKind`]) names the file as it was named when created:
//!   `cannot write runs/h/chain_2.csv (No space left on device); the file was cut back to its
//!   last whole row (1,234 rows)`. Every later write returns the same error.
//! * **Abandoning keeps whole rows and a footer.** [`RowFileHandle::abandon`], callable from any
//!   thread (a Ctrl-C handler about to exit the process), writes the buffered lines, then the
//!   given footer comment lines, and closes the file: later writes from the thread that was
//!   writing rows are ignored silently.
//!
//! Dropping a `RowFile` that is still open writes its buffer (as a `BufWriter` would).

use std::fmt;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The buffer goes to the file once it holds this many bytes (64 KiB).
pub const BUFFER_BYTES: usize = 64 * 1024;

/// The buffer goes to the file when a line arrives this long after the last write (0.25 s).
pub const WRITE_INTERVAL: Duration = Duration::from_millis(250);

/// The clock is read at least once every this many lines (every line when lines come slower
/// than one per [`SLOW_LINES`]).
pub const MAX_CLOCK_STRIDE: u32 = 256;

/// Lines farther apart than this are "slow": the clock is then read at every line.
pub const SLOW_LINES: Duration = Duration::from_millis(1);

/// Clock reads closer together than this double the number of lines between reads.
const FAST_READS: Duration = Duration::from_micros(100);

/// The footer a Ctrl-C handler typically hands to [`RowFileHandle::abandon`] on a second Ctrl-C.
pub const ABANDONED_FOOTER: &str =
    "# interrupted: the run was stopped at once (second Ctrl-C); the rows above are whole";

/// Where a [`RowFile`] writes: a [`Write`] that can also be cut back to a given length.
///
/// Implemented for [`File`]; tests implement it for writers that fail on purpose.
pub trait RowTarget: Write + Send {
    /// Shortens the target to `len` bytes (the length that had reached it as whole lines), so
    /// that the next write, if any, continues there.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl RowTarget for File {
    /// [`File::set_len`], then a seek to the new end.
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)?;
        self.seek(SeekFrom::Start(len)).map(|_| ())
    }
}

/// Whether a [`RowFile`] still writes.
#[derive(Debug)]
enum State {
    /// Lines are buffered and written.
    Open,
    /// Finished or abandoned: later lines are ignored silently.
    Closed,
    /// A write failed and the file was cut back: later lines return this error again.
    Failed(io::ErrorKind, String),
}

/// A file written in whole lines: see the [module documentation](self) for what it guarantees
/// when the process is killed, when a write fails and when it is abandoned.
///
/// ```
/// use tallmc_samplers::sink::RowFile;
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("rows.csv");
/// let mut file = RowFile::create(&path).unwrap();
/// file.line("# a comment").unwrap();
/// file.line("x,y").unwrap();
/// file.row("1,2").unwrap();
/// file.row_with(|line| line.push_str("3,4")).unwrap();
/// file.finish().unwrap();
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "# a comment\nx,y\n1,2\n3,4\n");
/// assert_eq!(file.rows_written(), 2);
/// ```
pub struct RowFile {
    target: Box<dyn RowTarget>,
    path: PathBuf,
    state: State,
    /// Whole lines not yet written.
    buf: String,
    /// End offsets (in `buf`) of the rows in `buf`, to count the rows of a partial write.
    row_ends: Vec<usize>,
    /// Bytes that reached the target as whole lines.
    whole: u64,
    /// Rows that reached the target.
    rows: u64,
    last_write: Instant,
    last_read: Instant,
    /// Lines between clock reads, and lines left before the next read.
    stride: u32,
    countdown: u32,
}

impl fmt::Debug for RowFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowFile")
            .field("path", &self.path)
            .field("state", &self.state)
            .field("buffered_bytes", &self.buf.len())
            .field("bytes_written", &self.whole)
            .field("rows_written", &self.rows)
            .finish_non_exhaustive()
    }
}

impl RowFile {
    /// Creates (truncates) the file at `path`.
    ///
    /// # Errors
    /// The file cannot be created (the error is the operating system's, as
    /// [`File::create`] returns it).
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        Ok(Self::with_target(File::create(path)?, path))
    }

    /// Writes to `target`, an empty file or stream named `path` in error messages.
    pub fn with_target(target: impl RowTarget + 'static, path: impl Into<PathBuf>) -> Self {
        let now = Instant::now();
        Self {
            target: Box::new(target),
            path: path.into(),
            state: State::Open,
            buf: String::with_capacity(BUFFER_BYTES + 4096),
            row_ends: Vec::new(),
            whole: 0,
            rows: 0,
            last_write: now,
            last_read: now,
            stride: 1,
            countdown: 1,
        }
    }

    /// The file's name, as given when it was created.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows ([`RowFile::row`], [`RowFile::row_with`]) that have reached the file.
    pub fn rows_written(&self) -> u64 {
        self.rows
    }

    /// Bytes that have reached the file, all of them whole lines.
    pub fn bytes_written(&self) -> u64 {
        self.whole
    }

    /// Whether the file was finished or abandoned (later lines are ignored).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed)
    }

    /// Appends one data row: `row` followed by a newline. `row` holds no newline.
    ///
    /// # Errors
    /// A write failed, now or before (the file was cut back; see the module documentation).
    pub fn row(&mut self, row: &str) -> io::Result<()> {
        self.row_with(|line| line.push_str(row))
    }

    /// Appends one data row written by `write` into the buffer (no newline: it is added), so
    /// that numbers are formatted in place. `write` is not called once the file is closed.
    ///
    /// # Errors
    /// As [`RowFile::row`].
    pub fn row_with(&mut self, write: impl FnOnce(&mut String)) -> io::Result<()> {
        self.check_open()?;
        if !matches!(self.state, State::Open) {
            return Ok(());
        }
        let line = Unfinished::new(&mut self.buf);
        write(line.buf);
        line.end();
        self.row_ends.push(self.buf.len());
        self.after_line()
    }

    /// Appends one line that is not a data row (a comment, the header): `line` and a newline.
    ///
    /// # Errors
    /// As [`RowFile::row`].
    pub fn line(&mut self, line: &str) -> io::Result<()> {
        self.line_fmt(format_args!("{line}"))
    }

    /// Appends one formatted line that is not a data row
    /// (`file.line_fmt(format_args!("# id = {id}"))`), and a newline.
    ///
    /// # Errors
    /// As [`RowFile::row`].
    pub fn line_fmt(&mut self, args: fmt::Arguments<'_>) -> io::Result<()> {
        use std::fmt::Write as _;
        self.check_open()?;
        if !matches!(self.state, State::Open) {
            return Ok(());
        }
        let line = Unfinished::new(&mut self.buf);
        let _ = line.buf.write_fmt(args);
        line.end();
        self.after_line()
    }

    /// Writes the buffered lines to the file now.
    ///
    /// # Errors
    /// As [`RowFile::row`].
    pub fn flush(&mut self) -> io::Result<()> {
        self.check_open()?;
        if matches!(self.state, State::Open) {
            self.write_buffer()?;
            self.target.flush().map_err(|e| self.fail(e, 0))?;
        }
        Ok(())
    }

    /// Writes the buffered lines and closes the file: later lines are ignored, and
    /// [`RowFileHandle::abandon`] does nothing.
    ///
    /// # Errors
    /// As [`RowFile::row`].
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush()?;
        self.state = State::Closed;
        Ok(())
    }

    /// Writes the buffered lines, then `footer` (one or more lines; a line that does not start
    /// with `#` gets `# ` in front so that readers skip it as a comment), and closes the file.
    /// Does nothing if the file is already closed or failed.
    ///
    /// # Errors
    /// A write failed (the file was cut back to its last whole line).
    pub fn abandon(&mut self, footer: &str) -> io::Result<()> {
        if !matches!(self.state, State::Open) {
            return Ok(());
        }
        for l in footer.lines() {
            if l.starts_with('#') {
                self.buf.push_str(l);
            } else {
                self.buf.push_str("# ");
                self.buf.push_str(l);
            }
            self.buf.push('\n');
        }
        self.finish()
    }

    /// The error of an earlier failed write, if any.
    fn check_open(&self) -> io::Result<()> {
        match &self.state {
            State::Failed(kind, msg) => Err(io::Error::new(*kind, msg.clone())),
            State::Open | State::Closed => Ok(()),
        }
    }

    /// After a line was appended: write the buffer when it is full or when the last write is
    /// [`WRITE_INTERVAL`] old, reading the clock every `stride` lines only.
    #[inline]
    fn after_line(&mut self) -> io::Result<()> {
        if self.buf.len() >= BUFFER_BYTES {
            return self.write_buffer();
        }
        self.countdown -= 1;
        if self.countdown > 0 {
            return Ok(());
        }
        self.read_clock()
    }

    #[cold]
    fn read_clock(&mut self) -> io::Result<()> {
        let now = Instant::now();
        let since = now.saturating_duration_since(self.last_read);
        self.last_read = now;
        self.stride = if since > SLOW_LINES {
            1
        } else if since < FAST_READS {
            (self.stride * 2).min(MAX_CLOCK_STRIDE)
        } else {
            self.stride
        };
        self.countdown = self.stride;
        if now.saturating_duration_since(self.last_write) >= WRITE_INTERVAL {
            self.write_buffer()?;
        }
        Ok(())
    }

    /// Writes the whole buffer (whole lines), retrying after an interruption or a partial
    /// write; on an error, cuts the file back to its last whole line.
    fn write_buffer(&mut self) -> io::Result<()> {
        let mut done = 0;
        while done < self.buf.len() {
            match self.target.write(&self.buf.as_bytes()[done..]) {
                Ok(0) => {
                    let e = io::Error::new(io::ErrorKind::WriteZero, "the file took no bytes");
                    return Err(self.fail(e, done));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.fail(e, done)),
            }
        }
        self.whole += self.buf.len() as u64;
        self.rows += self.row_ends.len() as u64;
        self.buf.clear();
        self.row_ends.clear();
        self.last_write = Instant::now();
        Ok(())
    }

    /// A write failed after `done` bytes of the buffer reached the file: keep its whole lines,
    /// cut the file back after them, stop writing, and return the error naming the file.
    #[cold]
    fn fail(&mut self, e: io::Error, done: usize) -> io::Error {
        let kept =
            self.buf.as_bytes()[..done].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.whole += kept as u64;
        self.rows += self.row_ends.iter().take_while(|&&end| end <= kept).count() as u64;
        self.buf.clear();
        self.row_ends.clear();
        let cause = os_message(&e);
        let rows = self.rows;
        let row_s = if rows == 1 { "" } else { "s" };
        let msg = match self.target.truncate(self.whole) {
            Ok(()) => format!(
                "cannot write {} ({cause}); the file was cut back to its last whole row \
                 ({} row{row_s})",
                self.path.display(),
                thousands(rows),
            ),
            Err(t) => format!(
                "cannot write {} ({cause}); cutting it back to its last whole row ({} row{row_s}, \
                 {} bytes) failed too ({}), so it may end with a partial row",
                self.path.display(),
                thousands(rows),
                thousands(self.whole),
                os_message(&t),
            ),
        };
        self.state = State::Failed(e.kind(), msg.clone());
        io::Error::new(e.kind(), msg)
    }
}

/// A line being appended to the buffer: removed again if its writer panics, so that the
/// buffer only ever holds whole lines.
struct Unfinished<'a> {
    buf: &'a mut String,
    start: Option<usize>,
}

impl<'a> Unfinished<'a> {
    fn new(buf: &'a mut String) -> Self {
        let start = Some(buf.len());
        Self { buf, start }
    }

    /// Ends the line with its newline and keeps it.
    fn end(mut self) {
        self.buf.push('\n');
        self.start = None;
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(start) = self.start {
            self.buf.truncate(start);
        }
    }
}

impl Drop for RowFile {
    /// Writes the buffer, as `BufWriter` does (errors are ignored; the file is still cut back
    /// to its last whole line).
    fn drop(&mut self) {
        if matches!(self.state, State::Open) && !self.buf.is_empty() {
            let _ = self.write_buffer();
        }
    }
}

/// An error's message without the operating system's ` (os error 28)`.
fn os_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// `1234567` as `1,234,567` (also the command's `convert` report).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A [`RowFile`] shared between the sink that writes it and the threads that may abandon it
/// ([`RowFileHandle::abandon`]); cloning gives another handle to the same file.
///
/// The sinks lock it once per call (per row, per header, per footer): an uncontended lock.
#[derive(Debug, Clone)]
pub struct RowFileHandle(Arc<Mutex<RowFile>>);

impl RowFileHandle {
    /// Shares `file`.
    pub fn new(file: RowFile) -> Self {
        Self(Arc::new(Mutex::new(file)))
    }

    /// The file, locked (a thread that panicked while holding it does not make it unusable:
    /// its buffer holds whole lines only).
    pub fn lock(&self) -> MutexGuard<'_, RowFile> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The file's name, as given when it was created.
    pub fn path(&self) -> PathBuf {
        self.lock().path().to_path_buf()
    }

    /// From any thread (a Ctrl-C handler about to exit the process): waits for the row being
    /// written, writes the buffered rows, then `footer` (e.g. [`ABANDONED_FOOTER`]; see
    /// [`RowFile::abandon`]), and closes the file, so that the writing thread's later rows are
    /// ignored silently. Does nothing if the file was already finished, abandoned or failed.
    ///
    /// # Errors
    /// A write failed (the file was cut back to its last whole line).
    pub fn abandon(&self, footer: &str) -> io::Result<()> {
        self.lock().abandon(footer)
    }
}
