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

/// Writes `data` in the binary format: `name.bin` (X row-major then y, little-endian f64, no
/// header bytes; `x_offset_bytes` = 0, `y_offset_bytes` = 8·n·d) and `name.json` (the canonical
/// fields, `file_nbytes`, `covariate_names`, and every field of [`Dataset::metadata`]; no
/// `sha256`). `path` may be `name.bin`, `name.json` or `name`. Returns the two paths.
///
/// Refuses to overwrite the file a memory-mapped `data` is read from.
pub fn write_binary(data: &Dataset, path: impl AsRef<Path>) -> Result<(PathBuf, PathBuf)> {
    let (bin_path, json_path) = paths(path.as_ref());
    if data.is_memory_mapped() && same_file(data.source(), &bin_path) {
        return Err(Error::invalid(
            "output path",
            bin_path.display(),
            "a file other than the one this data set is memory-mapped from",
        ));
    }
    let n = data.len();
    let d = data.num_covariates();
    let file = File::create(&bin_path).map_err(|e| Error::io(&bin_path, "create", e))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let werr = |e| Error::io(&bin_path, "write", e);
    for part in [data.x(), data.y()] {
        if cfg!(target_endian = "little") {
            for chunk in part.chunks(1 << 16) {
                w.write_all(bytemuck::cast_slice(chunk)).map_err(werr)?;
            }
        } else {
            for v in part {
                w.write_all(&v.to_le_bytes()).map_err(werr)?;
            }
        }
    }
    w.flush().map_err(werr)?;
    drop(w);

    let mut header = data.metadata().clone();
    for key in CANONICAL_FIELDS {
        header.remove(key);
    }
    let x_nbytes = 8 * n * d;
    let y_nbytes = 8 * n;
    header.insert("n".into(), n.into());
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
        Value::Array(data.covariate_names().iter().map(|s| Value::from(s.as_str())).collect()),
    );
    let text = serde_json::to_string_pretty(&Value::Object(header))
        .map_err(|e| Error::header(&json_path, format!("cannot serialize header: {e}")))?;
    std::fs::write(&json_path, text + "\n").map_err(|e| Error::io(&json_path, "write", e))?;
    Ok((bin_path, json_path))
}
