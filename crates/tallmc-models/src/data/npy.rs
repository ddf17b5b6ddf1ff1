//! NumPy's `.npy` files, memory-mapped: a covariate matrix X (n × p, float64, C order) in one
//! file and the responses y (n, float64) in another, as `np.save` writes them. Nothing is
//! copied; the numbers are read in place ([`SharedF64`]).
//!
//! The format (NumPy's `numpy.lib.format`, versions 1.0–3.0): the magic bytes `\x93NUMPY`, a
//! major and a minor version byte, the header length (2 bytes little-endian in version 1, 4
//! bytes in versions 2 and 3), then the header, a Python dict literal
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (n, p), }` padded with spaces to the
//! data's start, which NumPy aligns to 64 bytes (16 before NumPy 1.14: both are multiples of 8).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use super::binary::map_read_only;
use super::{Dataset, SharedF64, default_names};
use crate::error::{Error, Result};

/// The magic string every `.npy` file starts with.
const MAGIC: &[u8] = b"\x93NUMPY";

/// What a `.npy` header says about its array.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NpyHeader {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
    /// Byte offset of the data in the file.
    data_offset: usize,
}

/// Opens X (an n × p `.npy` array) and y (an n-vector, or n × 1) as one data set, both
/// memory-mapped; covariate names `x0`, …, `x{p−1}`. With `check_finite`, one parallel pass
/// rejects NaN and infinite values, naming the row and column.
///
/// Both arrays must be float64 (`'<f8'`; convert with `X.astype(np.float64)`) and in C order
/// (`np.ascontiguousarray(X)` before `np.save`); errors name the file and say how to convert.
/// **The files must not be modified or truncated while the data set (or any model holding
/// it) is alive.**
pub fn read_npy(
    x_path: impl AsRef<Path>, y_path: impl AsRef<Path>, check_finite: bool,
) -> Result<Dataset> {
    let (x_path, y_path) = (x_path.as_ref(), y_path.as_ref());
    if cfg!(target_endian = "big") {
        return Err(Error::BigEndianHost { path: x_path.to_path_buf() });
    }
    let (x_map, x_header) = open(x_path)?;
    let (y_map, y_header) = open(y_path)?;
    let (n, p) = match x_header.shape[..] {
        [n, p] => (n, p),
        _ => {
            return Err(Error::binary(
                x_path,
                format!(
                    "X has shape {:?}; expected a 2-D array (n rows × p covariates; a single covariate is X.reshape(-1, 1))",
                    x_header.shape
                ),
            ));
        }
    };
    let y_len = match y_header.shape[..] {
        [m] | [m, 1] => m,
        _ => {
            return Err(Error::binary(
                y_path,
                format!("y has shape {:?}; expected a 1-D array of n responses", y_header.shape),
            ));
        }
    };
    if y_len != n {
        return Err(Error::binary(
            y_path,
            format!("y has {y_len} responses but X ({}) has n = {n} rows", x_path.display()),
        ));
    }
    let x = SharedF64::from_map(x_map, x_header.data_offset, n * p, "X")?;
    let y = SharedF64::from_map(y_map, y_header.data_offset, n, "y")?;
    let ds = Dataset::from_shared(x, y, default_names(p), Some(x_path.to_path_buf()), false)?
        .with_response_source(y_path.to_path_buf());
    if check_finite {
        ds.check_finite()?;
    }
    Ok(ds)
}

/// Memory-maps `path` and checks its header: float64, C order, data in bounds.
fn open(path: &Path) -> Result<(Arc<memmap2::Mmap>, NpyHeader)> {
    let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let map = map_read_only(&file).map_err(|e| Error::io(path, "memory-map", e))?;
    let header = parse_header(&map).map_err(|message| Error::binary(path, message))?;
    if header.descr != "<f8" {
        return Err(Error::binary(
            path,
            format!(
                "dtype '{}' is not supported; expected float64 ('<f8'): save arr.astype(np.float64)",
                header.descr
            ),
        ));
    }
    if header.fortran_order && header.shape.len() > 1 {
        return Err(Error::binary(
            path,
            "the array is in Fortran (column-major) order; expected C order: save np.ascontiguousarray(arr)",
        ));
    }
    let count = header.shape.iter().try_fold(1usize, |acc, &k| acc.checked_mul(k));
    let needed =
        count.and_then(|c| c.checked_mul(8)).and_then(|b| b.checked_add(header.data_offset));
    if needed.is_none_or(|b| b > map.len()) {
        return Err(Error::binary(
            path,
            format!(
                "truncated: shape {:?} needs {} data bytes after the {}-byte header, the file has {}",
                header.shape,
                count.map_or_else(|| "too many".to_string(), |c| (8 * c).to_string()),
                header.data_offset,
                map.len()
            ),
        ));
    }
    Ok((Arc::new(map), header))
}

/// Parses the magic, version, header length and header dict of a `.npy` file's bytes.
fn parse_header(bytes: &[u8]) -> std::result::Result<NpyHeader, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (it does not start with \\x93NUMPY)".to_string());
    }
    let major = bytes[6];
    let (len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => {
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        _ => return Err(format!("unsupported .npy format version {major}; expected 1, 2 or 3")),
    };
    let end = start + len;
    if bytes.len() < end {
        return Err(format!("truncated header: {len} bytes announced, {} present", bytes.len()));
    }
    let text = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| "the header is not text".to_string())?;
    let descr = dict_value(text, "descr")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"').to_string();
    let fortran_order = match dict_value(text, "fortran_order")? {
        "True" => true,
        "False" => false,
        other => return Err(format!("fortran_order = {other}; expected True or False")),
    };
    let shape_text = dict_value(text, "shape")?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("shape = {shape_text}; expected a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| format!("shape = {shape_text}; expected a tuple of non-negative integers"))?;
    Ok(NpyHeader { descr, fortran_order, shape, data_offset: end })
}

/// The text of `key`'s value in the header's dict literal: up to the next top-level comma or
/// the closing brace (a tuple's commas are inside its parentheses).
fn dict_value<'a>(text: &'a str, key: &str) -> std::result::Result<&'a str, String> {
    let missing = || format!("the header has no '{key}' field");
    let at = text.find(&format!("'{key}'")).ok_or_else(missing)?;
    let rest = &text[at + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':').ok_or_else(missing)?.trim_start();
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Ok(rest[..i].trim()),
            _ => {}
        }
    }
    Err(missing())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, major: u8) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend([major, 0]);
        let pad = 64 - (header.len() + 1 + if major == 1 { 10 } else { 12 }) % 64;
        let text = format!("{header}{}\n", " ".repeat(pad % 64));
        if major == 1 {
            out.extend((text.len() as u16).to_le_bytes());
        } else {
            out.extend((text.len() as u32).to_le_bytes());
        }
        out.extend(text.as_bytes());
        out
    }

    #[test]
    fn headers_of_every_version_parse() {
        for major in [1, 2, 3] {
            let bytes =
                file("{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 28), }", major);
            let h = parse_header(&bytes).unwrap();
            assert_eq!(h.descr, "<f8");
            assert!(!h.fortran_order);
            assert_eq!(h.shape, vec![1000, 28]);
            assert_eq!(h.data_offset % 64, 0, "NumPy pads the data to 64 bytes");
        }
        let h = parse_header(&file("{'descr': '<f8', 'fortran_order': True, 'shape': (7,), }", 1));
        assert_eq!(h.unwrap().shape, vec![7]);
        let h = parse_header(&file("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 1));
        assert_eq!(h.unwrap().shape, Vec::<usize>::new());
    }

    #[test]
    fn malformed_headers_are_named() {
        assert!(parse_header(b"PK\x03\x04 not npy").unwrap_err().contains("not a .npy file"));
        let e = parse_header(&file("{'descr': '<f8', 'shape': (3, 2), }", 1)).unwrap_err();
        assert!(e.contains("fortran_order"), "{e}");
        let e =
            parse_header(&file("{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }", 1));
        assert!(e.unwrap_err().contains("shape"));
        let mut v4 = file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 1);
        v4[6] = 4;
        assert!(parse_header(&v4).unwrap_err().contains("version 4"));
    }
}
