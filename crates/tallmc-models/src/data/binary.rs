//! The binary tall-data format: `name.bin` (X row-major n × d, then y; little-endian f64, no
//! header bytes) beside `name.json` (n, d, dtype, endianness, byte offsets, optional extras).
//! The reader memory-maps `name.bin`; nothing is copied.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use serde_json::{Map, Value};

use super::csv::same_file;
use super::{Dataset, SharedF64, default_names};
use crate::error::{Error, Result};

/// Header fields the reader interprets and the writer recomputes; every other field is kept
/// in [`Dataset::metadata`].
const CANONICAL_FIELDS: [&str; 12] = [
    "n",
    "d",
    "dtype",
    "endianness",
    "x_offset_bytes",
    "y_offset_bytes",
    "x_nbytes",
    "y_nbytes",
    "file_nbytes",
    "sha256",
    "layout",
    "covariate_names",
];

/// The `.bin` and `.json` paths of a data set given either of them (or the bare stem).
fn paths(path: &Path) -> (PathBuf, PathBuf) {
    (path.with_extension("bin"), path.with_extension("json"))
}

/// Memory-maps `file` read-only.
///
/// The map is sound only while no process modifies or truncates the file; [`Dataset`]
/// documents that contract to its users, and tallmc itself never writes to a mapped file
/// ([`write_binary`] and [`super::write_csv`] refuse to overwrite the source of a mapped data set).
#[allow(unsafe_code)]
pub(super) fn map_read_only(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: `Mmap::map` is unsafe because the mapped bytes can change (or the mapping can
    // become invalid, raising SIGBUS) if the underlying file is modified or truncated while
    // mapped. We only ever read through the map, and the public API (`Dataset`,
    // `read_binary`, `load`) documents that the file must not be modified while the data set
    // is alive. With that contract upheld the returned slice is ordinary immutable memory.
    unsafe { Mmap::map(file) }
}

fn field_u64(json: &Map<String, Value>, path: &Path, key: &str) -> Result<u64> {
    match json.get(key) {
        None => Err(Error::header(
            path,
            format!("missing field `{key}`; expected a non-negative integer"),
        )),
        Some(v) => v.as_u64().ok_or_else(|| {
            Error::header(path, format!("field `{key}` = {v} is not a non-negative integer"))
        }),
    }
}

fn field_str<'a>(
    json: &'a Map<String, Value>, path: &Path, key: &str, expected: &str,
) -> Result<&'a str> {
    match json.get(key) {
        None => Err(Error::header(path, format!("missing field `{key}`; expected \"{expected}\""))),
        Some(v) => v.as_str().ok_or_else(|| {
            Error::header(
                path,
                format!("field `{key}` = {v} is not a string; expected \"{expected}\""),
            )
        }),
    }
}

fn to_usize(v: u64, path: &Path, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| {
        Error::header(path, format!("{what} = {v} does not fit in this platform's address space"))
    })
}

/// Opens a binary data set: reads the JSON header and memory-maps the `.bin` file (give either
/// path, or the stem). With `check_finite`, one parallel pass over the map rejects NaN and
/// infinite values, naming the row and column.
///
/// **The `.bin` file must not be modified or truncated while the returned data set (or any
/// model holding it) is alive.**
///
/// Required header fields: `n` (≥ 1), `d` (≥ 0), `dtype` = `"float64"`, `endianness` =
/// `"little"`, `x_offset_bytes`, `y_offset_bytes` (multiples of 8, regions in bounds and not
/// overlapping). Optional and checked when present: `x_nbytes` (= 8·n·d), `y_nbytes` (= 8·n),
/// `file_nbytes` (= the size of the `.bin` file), `covariate_names` (d strings; default `x0`…).
/// Every other field is kept in [`Dataset::metadata`].
pub fn read_binary(path: impl AsRef<Path>, check_finite: bool) -> Result<Dataset> {
    let (bin_path, json_path) = paths(path.as_ref());
    let text = std::fs::read_to_string(&json_path).map_err(|e| Error::io(&json_path, "read", e))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        Error::header(
            &json_path,
            format!("not valid JSON at line {}, column {}: {e}", e.line(), e.column()),
        )
    })?;
    let Value::Object(json) = value else {
        return Err(Error::header(&json_path, "expected a JSON object at the top level"));
    };
    let jp = json_path.as_path();
    let n = to_usize(field_u64(&json, jp, "n")?, jp, "n")?;
    let d = to_usize(field_u64(&json, jp, "d")?, jp, "d")?;
    let dtype = field_str(&json, jp, "dtype", "float64")?;
    if dtype != "float64" {
        return Err(Error::header(
            jp,
            format!("dtype \"{dtype}\" is not supported; expected \"float64\""),
        ));
    }
    let endianness = field_str(&json, jp, "endianness", "little")?;
    if endianness != "little" {
        return Err(Error::header(
            jp,
            format!("endianness \"{endianness}\" is not supported; expected \"little\""),
        ));
    }
    if n == 0 {
        return Err(Error::header(jp, "n = 0: the data set has no rows; expected n ≥ 1"));
    }
    let x_off = to_usize(field_u64(&json, jp, "x_offset_bytes")?, jp, "x_offset_bytes")?;
    let y_off = to_usize(field_u64(&json, jp, "y_offset_bytes")?, jp, "y_offset_bytes")?;
    for (key, off) in [("x_offset_bytes", x_off), ("y_offset_bytes", y_off)] {
        if off % 8 != 0 {
            return Err(Error::header(jp, format!("{key} = {off} is not a multiple of 8")));
        }
    }
    let overflow =
        || Error::header(jp, format!("n × d = {n} × {d} is too large for this platform"));
    let x_nbytes = n.checked_mul(d).and_then(|v| v.checked_mul(8)).ok_or_else(overflow)?;
    let y_nbytes = n.checked_mul(8).ok_or_else(overflow)?;
    for (key, expected) in [("x_nbytes", x_nbytes), ("y_nbytes", y_nbytes)] {
        if json.contains_key(key) {
            let v = field_u64(&json, jp, key)?;
            if v != expected as u64 {
                return Err(Error::header(
                    jp,
                    format!("{key} = {v} does not match n = {n}, d = {d}; expected {expected}"),
                ));
            }
        }
    }
    let x_end = x_off.checked_add(x_nbytes).ok_or_else(overflow)?;
    let y_end = y_off.checked_add(y_nbytes).ok_or_else(overflow)?;
    if x_nbytes > 0 && x_off < y_end && y_off < x_end {
        return Err(Error::header(
            jp,
            format!(
                "X bytes [{x_off}, {x_end}) and y bytes [{y_off}, {y_end}) overlap; expected disjoint regions"
            ),
        ));
    }
    let names = match json.get("covariate_names") {
        None => default_names(d),
        Some(Value::Array(items)) if items.len() == d => {
            let mut names = Vec::with_capacity(d);
            for item in items {
                match item.as_str() {
                    Some(s) => names.push(s.to_string()),
                    None => {
                        return Err(Error::header(
                            jp,
                            format!("covariate_names contains {item}; expected strings"),
                        ));
                    }
                }
            }
            names
        }
        Some(other) => {
            return Err(Error::header(
                jp,
                format!("covariate_names = {other} is not an array of d = {d} strings"),
            ));
        }
    };
    super::check_names(&names).map_err(|e| Error::header(jp, e.to_string()))?;

    let file = File::open(&bin_path).map_err(|e| Error::io(&bin_path, "open", e))?;
    let size = file.metadata().map_err(|e| Error::io(&bin_path, "read metadata of", e))?.len();
    if json.contains_key("file_nbytes") {
        let stated = field_u64(&json, jp, "file_nbytes")?;
        if stated != size {
            return Err(Error::binary(
                &bin_path,
                format!("file has {size} bytes but the header's file_nbytes = {stated}"),
            ));
        }
    }
    let needed = x_end.max(y_end);
    if size < needed as u64 {
        return Err(Error::binary(
            &bin_path,
            format!(
                "truncated: file has {size} bytes but the header (n = {n}, d = {d}, x_offset_bytes = {x_off}, y_offset_bytes = {y_off}) needs {needed}"
            ),
        ));
    }
    if cfg!(target_endian = "big") {
        return Err(Error::BigEndianHost { path: bin_path });
    }
    let map = map_read_only(&file).map_err(|e| Error::io(&bin_path, "memory-map", e))?;
    for (what, start, len) in [("X", x_off, x_nbytes), ("y", y_off, y_nbytes)] {
        if bytemuck::try_cast_slice::<u8, f64>(&map[start..start + len]).is_err() {
            return Err(Error::binary(
                &bin_path,
                format!("{what} region at byte {start} is not 8-byte aligned in memory"),
            ));
        }
    }
    let metadata: Map<String, Value> =
        json.into_iter().filter(|(k, _)| !CANONICAL_FIELDS.contains(&k.as_str())).collect();
    let map = Arc::new(map);
    let x = SharedF64::from_map(map.clone(), x_off, n * d, "X")?;
    let y = SharedF64::from_map(map, y_off, n, "y")?;
    Ok(Dataset::from_shared(x, y, names, Some(bin_path), check_finite)?.with_metadata(metadata))
}

/// Rows per [`BinaryWriter::write_rows`] call when [`write_binary`] streams a data set.
const WRITE_CHUNK_ROWS: usize = 1 << 16;

/// The files a [`BinaryWriter`] has created and not yet finished: removed (best effort) when
/// dropped armed, so an abandoned or failed write leaves nothing behind.
#[derive(Debug, Default)]
struct PartialFiles {
    paths: Vec<PathBuf>,
    keep: bool,
}

impl Drop for PartialFiles {
    fn drop(&mut self) {
        if !self.keep {
            for path in &self.paths {
                // Best effort: a file that cannot be removed stays (there is no one to tell).
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Writes the binary format of [`write_binary`] (and [`read_binary`]) row chunk by row chunk,
/// without knowing the number of rows n in advance: how a converter streams a file of any
/// length in bounded memory.
///
/// Layout of `name.bin` (little-endian f64, no header bytes):
///
/// ```text
/// X row-major, n × d: x_00 … x_0(d−1), x_10 …, x_(n−1)(d−1)   bytes [0, 8·n·d)
/// y, n values:        y_0 … y_(n−1)                             bytes [8·n·d, 8·n·(d+1))
/// ```
///
/// The covariates go into `name.bin` as they arrive; the responses into a temporary file next
/// to it, `name.bin.y-part`, which [`BinaryWriter::finish`] appends to `name.bin` (in
/// bounded-size copies) and removes. The JSON header `name.json` is written last, so a
/// conversion that stops early never leaves a header describing a partial file: `create`
/// removes an existing `name.json` first, and a writer dropped without `finish` (or whose
/// `finish` failed) removes the files it created (best effort). Memory: two 1 MiB write buffers,
/// whatever the number of rows.
///
/// ```
/// use tallmc_models::{BinaryWriter, read_binary};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut w = BinaryWriter::create(dir.path().join("d"), vec!["a".into(), "b".into()])?;
/// w.write_rows(&[1.0, 2.0, 3.0, 4.0], &[0.0, 1.0])?; // two rows
/// w.write_rows(&[5.0, 6.0], &[1.0])?; // one more
/// assert_eq!(w.rows_written(), 3);
/// let (bin, _json) = w.finish(serde_json::Map::new())?;
/// assert_eq!(std::fs::metadata(&bin)?.len(), 8 * 3 * (2 + 1));
/// let data = read_binary(&bin, true)?;
/// assert_eq!(data.y(), [0.0, 1.0, 1.0]);
/// assert_eq!(data.row(2), [5.0, 6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BinaryWriter {
    // Field order matters: the files are closed (dropped) before `partial` removes them.
    x_out: BufWriter<File>,
    y_out: BufWriter<File>,
    bin_path: PathBuf,
    json_path: PathBuf,
    y_path: PathBuf,
    names: Vec<String>,
    rows: u64,
    partial: PartialFiles,
}

impl BinaryWriter {
    /// Starts a binary data set with d = `covariate_names.len()` covariates at `path`
    /// (`name.bin`, `name.json` or the stem `name`, as for [`write_binary`]): checks the names
    /// (non-empty, unique, not `y`, no comma, quote, control character or surrounding spaces,
    /// not ending in `__`: the rules of `docs/data-format.md`), removes an existing `name.json`,
    /// and creates (truncates) `name.bin` and `name.bin.y-part`.
    ///
    /// `name.bin` must not be the file of a memory-mapped data set that is still alive
    /// ([`write_binary`] checks this for its data set; a bare writer cannot know).
    pub fn create(path: impl AsRef<Path>, covariate_names: Vec<String>) -> Result<Self> {
        super::check_names(&covariate_names)?;
        let (bin_path, json_path) = paths(path.as_ref());
        let mut y_path = bin_path.clone().into_os_string();
        y_path.push(".y-part");
        let y_path = PathBuf::from(y_path);
        // A header left from an earlier write would describe the new, partial `.bin`.
        match std::fs::remove_file(&json_path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&json_path, "remove", e)),
        }
        let mut partial = PartialFiles::default();
        let x_file = File::create(&bin_path).map_err(|e| Error::io(&bin_path, "create", e))?;
        partial.paths.push(bin_path.clone());
        let y_file = File::create(&y_path).map_err(|e| Error::io(&y_path, "create", e))?;
        partial.paths.push(y_path.clone());
        Ok(Self {
            x_out: BufWriter::with_capacity(1 << 20, x_file),
            y_out: BufWriter::with_capacity(1 << 20, y_file),
            bin_path,
            json_path,
            y_path,
            names: covariate_names,
            rows: 0,
            partial,
        })
    }

    /// Appends r = `y.len()` rows: their covariates `x` (row-major, r × d: `x[i·d + j]` is
    /// covariate j of row i) and their responses `y`.
    ///
    /// Errors, before anything is written: `x.len()` ≠ r·d (a dimension mismatch naming both
    /// lengths); a NaN or infinite value (naming its 0-based row over all rows written, and its
    /// column: a covariate name or `y`); a failed write (naming the file).
    pub fn write_rows(&mut self, x: &[f64], y: &[f64]) -> Result<()> {
        let d = self.names.len();
        let r = y.len();
        if r.checked_mul(d) != Some(x.len()) {
            return Err(Error::dimension(
                format!(
                    "covariates of a chunk ({r} responses, so {r} rows × d = {d} covariates, row-major)"
                ),
                r.saturating_mul(d),
                x.len(),
            ));
        }
        let bad_x = x.iter().position(|v| !v.is_finite()).map(|k| (k / d, k % d, x[k]));
        let bad_y = y.iter().position(|v| !v.is_finite()).map(|i| (i, d, y[i]));
        let bad = match (bad_x, bad_y) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        if let Some((i, j, value)) = bad {
            return Err(Error::NonFinite {
                source_name: self.bin_path.display().to_string(),
                row: (self.rows + i as u64) as usize,
                column: self.names.get(j).map_or("y", String::as_str).to_string(),
                value,
            });
        }
        write_f64s(&mut self.x_out, x).map_err(|e| Error::io(&self.bin_path, "write", e))?;
        write_f64s(&mut self.y_out, y).map_err(|e| Error::io(&self.y_path, "write", e))?;
        self.rows += r as u64;
        Ok(())
    }

    /// Rows written so far (the n the header will state).
    pub fn rows_written(&self) -> u64 {
        self.rows
    }

    /// The covariates' names (d of them).
    pub fn covariate_names(&self) -> &[String] {
        &self.names
    }

    /// The `.bin` file being written.
    pub fn bin_path(&self) -> &Path {
        &self.bin_path
    }

    /// Completes the data set: appends the responses to `name.bin` (which then holds
    /// 8·n·(d + 1) bytes: X at byte 0, y at byte 8·n·d), removes `name.bin.y-part`, and writes
    /// `name.json` last: the canonical fields (`n`, `d`, `dtype` = `"float64"`, `endianness` =
    /// `"little"`, `layout`, `x_offset_bytes` = 0, `x_nbytes` = 8·n·d, `y_offset_bytes` = 8·n·d,
    /// `y_nbytes` = 8·n, `file_nbytes`, `covariate_names`; no `sha256`) and every field of
    /// `metadata` (whose canonical fields, if any, are replaced). Returns the `.bin` and `.json`
    /// paths.
    ///
    /// Errors: no rows were written (the format has n ≥ 1); a failed write, copy or removal
    /// (naming the file). On error the files are removed, as when the writer is dropped.
    pub fn finish(self, metadata: Map<String, Value>) -> Result<(PathBuf, PathBuf)> {
        let Self { x_out, y_out, bin_path, json_path, y_path, names, rows, mut partial } = self;
        if rows == 0 {
            return Err(Error::invalid(
                "number of observations",
                0,
                "at least one row (the binary format has n ≥ 1)",
            ));
        }
        let mut bin =
            x_out.into_inner().map_err(|e| Error::io(&bin_path, "write", e.into_error()))?;
        drop(y_out.into_inner().map_err(|e| Error::io(&y_path, "write", e.into_error()))?);
        let d = names.len() as u64;
        let (x_nbytes, y_nbytes) = (8 * rows * d, 8 * rows);
        // `io::copy` moves the bytes through a fixed-size buffer (or lets the kernel copy them).
        let mut y_in = File::open(&y_path).map_err(|e| Error::io(&y_path, "open", e))?;
        let copied =
            std::io::copy(&mut y_in, &mut bin).map_err(|e| Error::io(&bin_path, "write", e))?;
        drop(y_in);
        if copied != y_nbytes {
            return Err(Error::binary(
                &y_path,
                format!(
                    "holds {copied} bytes of responses; expected 8·n = {y_nbytes} for n = {rows}"
                ),
            ));
        }
        bin.flush().map_err(|e| Error::io(&bin_path, "write", e))?;
        drop(bin);
        std::fs::remove_file(&y_path).map_err(|e| Error::io(&y_path, "remove", e))?;

        let mut header = metadata;
        for key in CANONICAL_FIELDS {
            header.remove(key);
        }
        header.insert("n".into(), rows.into());
        header.insert("d".into(), d.into());
        header.insert("dtype".into(), "float64".into());
        header.insert("endianness".into(), "little".into());
        header.insert(
            "layout".into(),
            "X row-major (n rows x d cols), immediately followed by y (n values); no header bytes in .bin"
                .into(),
        );
        header.insert("x_offset_bytes".into(), 0.into());
        header.insert("x_nbytes".into(), x_nbytes.into());
        header.insert("y_offset_bytes".into(), x_nbytes.into());
        header.insert("y_nbytes".into(), y_nbytes.into());
        header.insert("file_nbytes".into(), (x_nbytes + y_nbytes).into());
        header.insert(
            "covariate_names".into(),
            Value::Array(names.iter().map(|s| Value::from(s.as_str())).collect()),
        );
        let text = serde_json::to_string_pretty(&Value::Object(header))
            .map_err(|e| Error::header(&json_path, format!("cannot serialize header: {e}")))?;
        partial.paths.push(json_path.clone());
        std::fs::write(&json_path, text + "\n").map_err(|e| Error::io(&json_path, "write", e))?;
        partial.keep = true;
        Ok((bin_path, json_path))
    }
}

/// Writes `values` as little-endian f64.
fn write_f64s(w: &mut impl Write, values: &[f64]) -> std::io::Result<()> {
    if cfg!(target_endian = "little") {
        w.write_all(bytemuck::cast_slice(values))
    } else {
        values.iter().try_for_each(|v| w.write_all(&v.to_le_bytes()))
    }
}

/// Writes `data` in the binary format: `name.bin` (X row-major then y, little-endian f64, no
/// header bytes; `x_offset_bytes` = 0, `y_offset_bytes` = 8·n·d) and `name.json` (the canonical
/// fields, `file_nbytes`, `covariate_names`, and every field of [`Dataset::metadata`]; no
/// `sha256`). `path` may be `name.bin`, `name.json` or `name`. Returns the two paths.
///
/// Streams the rows through a [`BinaryWriter`] in chunks of 65 536 rows (so the header is
/// written last, and a failed write leaves no files). Errors as the writer's (a NaN or
/// infinite value, which a data set read without the finiteness check may hold, names its row
/// and column), and refuses to overwrite the file a memory-mapped `data` is read from.
pub fn write_binary(data: &Dataset, path: impl AsRef<Path>) -> Result<(PathBuf, PathBuf)> {
    let (bin_path, _) = paths(path.as_ref());
    if data.is_memory_mapped() && same_file(data.source(), &bin_path) {
        return Err(Error::invalid(
            "output path",
            bin_path.display(),
            "a file other than the one this data set is memory-mapped from",
        ));
    }
    let d = data.num_covariates();
    let mut writer = BinaryWriter::create(&bin_path, data.covariate_names().to_vec())?;
    for (k, y) in data.y().chunks(WRITE_CHUNK_ROWS).enumerate() {
        let start = k * WRITE_CHUNK_ROWS * d;
        writer.write_rows(&data.x()[start..start + y.len() * d], y)?;
    }
    writer.finish(data.metadata().clone())
}
