//! Data files: round trips (CSV → Dataset → binary → memory map, bit for bit) and one test per
//! bad-file error, each checking that the message names the file, line and column (CSV) or
//! the file, row and column (binary).

use std::path::{Path, PathBuf};

use crate::common::*;
use tallmc_models::{
    Dataset, Error, LoadOptions, load, read_binary, read_csv, synthetic, write_binary, write_csv,
};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn assert_same(a: &Dataset, b: &Dataset) {
    assert_eq!(a.len(), b.len());
    assert_eq!(a.covariate_names(), b.covariate_names());
    assert_eq!(bits(a.x()), bits(b.x()));
    assert_eq!(bits(a.y()), bits(b.y()));
}

#[test]
fn csv_to_binary_to_mmap_round_trip_is_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    // Awkward values: 17 significant digits, tiny, huge, negative zero, integers.
    let text = "\u{feff} \"x_a\" , y ,x_b\r\n\
                0.10000000000000001, 1, -3.1415926535897931\r\n\
                \r\n\
                1e-300,0,  1.7976931348623157e308\n\
                -0,0.5,42\n";
    let csv = write(dir.path(), "in.csv", text);
    let a = read_csv(&csv, "y").unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(a.covariate_names(), ["x_a", "x_b"]);
    assert_eq!(a.y(), [1.0, 0.0, 0.5]);
    assert_eq!(a.row(1), [1e-300, f64::MAX]);
    assert!(a.row(2)[0].is_sign_negative());

    let (bin, json) = write_binary(&a, dir.path().join("out.bin")).unwrap();
    assert_eq!(std::fs::metadata(&bin).unwrap().len(), 8 * 3 * 3);
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(header["n"], 3);
    assert_eq!(header["d"], 2);
    assert_eq!(header["file_nbytes"], 72);
    assert_eq!(header["y_offset_bytes"], 48);
    for path in [&bin, &json] {
        let b = read_binary(path, true).unwrap();
        assert!(b.is_memory_mapped());
        assert_same(&a, &b);
    }
    // And back to CSV, and through `load`.
    write_csv(&a, dir.path().join("again.csv")).unwrap();
    let c = load(dir.path().join("again.csv"), &LoadOptions::default()).unwrap();
    assert_same(&a, &c);
    let d = load(&json, &LoadOptions::default()).unwrap();
    assert_same(&a, &d);
    assert!(d.is_memory_mapped());
    assert_eq!(d.source(), Some(bin.as_path()));
}

#[test]
fn synthetic_data_round_trip_keeps_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let sim = synthetic::higgs_like(1_000, 1).unwrap();
    write_binary(&sim.data, dir.path().join("h")).unwrap();
    let back = read_binary(dir.path().join("h.bin"), true).unwrap();
    assert_same(&sim.data, &back);
    let theta: Vec<f64> = back.metadata()["theta_true"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(theta, sim.theta_true);
    assert_eq!(back.metadata()["seed"], 1);
    // Writing over the file a data set is mapped from is refused.
    let err = write_binary(&back, dir.path().join("h.json")).unwrap_err();
    assert!(err.to_string().contains("memory-mapped from"), "{err}");
    let err = write_csv(&back, dir.path().join("h.bin")).unwrap_err();
    assert!(err.to_string().contains("memory-mapped from"), "{err}");
}

/// A file written like the peer script `gen_data.py` (raw little-endian bytes, its JSON
/// fields) reads with d = 29 and keeps the extra fields.
#[test]
fn reads_files_in_the_peer_scripts_layout() {
    let dir = tempfile::tempdir().unwrap();
    let (n, d) = (5usize, 29usize);
    let mut bytes = Vec::new();
    for i in 0..n {
        for j in 0..d {
            let v = if j == 0 { 1.0 } else { (i * d + j) as f64 * 0.01 - 0.5 };
            bytes.extend_from_slice(&f64::to_le_bytes(v));
        }
    }
    for i in 0..n {
        bytes.extend_from_slice(&f64::to_le_bytes((i % 2) as f64));
    }
    std::fs::write(dir.path().join("higgs_like_n5_seed1.bin"), &bytes).unwrap();
    let header = serde_json::json!({
        "format": "higgs_like_v1", "n": n, "d": d, "dtype": "float64", "endianness": "little",
        "layout": "X row-major ...", "x_offset_bytes": 0, "x_nbytes": 8 * n * d,
        "y_offset_bytes": 8 * n * d, "y_nbytes": 8 * n, "file_nbytes": bytes.len(),
        "sha256": "00", "seed": 1, "theta_seed": 20240229, "theta_true": vec![0.1; 29],
        "prior": {"type": "normal", "sd": 10.0}, "mean_y": 0.4,
        "generator": {"numpy": "2.0"}
    });
    std::fs::write(dir.path().join("higgs_like_n5_seed1.json"), header.to_string()).unwrap();
    let ds = load(dir.path().join("higgs_like_n5_seed1.bin"), &LoadOptions::default()).unwrap();
    assert_eq!((ds.len(), ds.num_covariates()), (5, 29));
    assert_eq!(ds.covariate_names()[0], "x0");
    assert_eq!(ds.row(2)[0], 1.0);
    assert_eq!(ds.row(2)[3], (2 * 29 + 3) as f64 * 0.01 - 0.5);
    assert_eq!(ds.y(), [0.0, 1.0, 0.0, 1.0, 0.0]);
    assert_eq!(ds.metadata()["theta_seed"], 20240229);
    assert_eq!(ds.metadata()["format"], "higgs_like_v1");
    assert!(!ds.metadata().contains_key("sha256"));
}

fn csv_err(text: &str) -> (String, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bad.csv", text);
    let e = read_csv(&p, "y").unwrap_err();
    assert!(matches!(e, Error::Csv { .. }), "{e:?}");
    (e.to_string(), p)
}

#[test]
fn csv_missing_response_column() {
    let (msg, p) = csv_err("a,b\n1,2\n");
    assert_eq!(
        msg,
        format!(
            "{}:1: no response column named `y` in the header (a, b); expected one",
            p.display()
        )
    );
}

#[test]
fn csv_ragged_rows() {
    let (msg, p) = csv_err("y,a\n1,2\n3\n");
    assert_eq!(
        msg,
        format!("{}:3: row has 1 fields; expected 2 (as many as the header)", p.display())
    );
    let (msg, _) = csv_err("y,a\n1,2\n\n3,4,5\n");
    assert!(msg.contains(":4: row has 3 fields; expected 2"), "{msg}");
}

#[test]
fn csv_non_numeric_value() {
    let (msg, p) = csv_err("y,a,b\n1,2,3\n1,2,abc\n");
    assert_eq!(
        msg,
        format!(
            "{}:3:3 (column `b`): `abc` is not a number; expected a decimal floating-point value",
            p.display()
        )
    );
    let (msg, _) = csv_err("y,a\n1,\n");
    assert!(msg.contains(":2:2 (column `a`): `` is not a number"), "{msg}");
}

#[test]
fn csv_non_finite_values() {
    for bad in ["NaN", "inf", "-Infinity", "1e999"] {
        let (msg, p) = csv_err(&format!("a,y\n1,2\n{bad},0\n"));
        assert_eq!(
            msg,
            format!(
                "{}:3:1 (column `a`): value `{bad}` is not finite; expected a finite number",
                p.display()
            )
        );
    }
}

#[test]
fn csv_empty_data_and_empty_file() {
    let (msg, p) = csv_err("y,a\n");
    assert_eq!(
        msg,
        format!("{}:1: no data rows after the header; expected at least one", p.display())
    );
    let (msg, _) = csv_err("y,a\n\n\n");
    assert!(msg.contains("no data rows"), "{msg}");
    let (msg, p) = csv_err("");
    assert_eq!(msg, format!("{}:1: file is empty; expected a header line", p.display()));
}

#[test]
fn csv_duplicate_and_empty_column_names() {
    let (msg, p) = csv_err("y,a,\"a\"\n1,2,3\n");
    assert_eq!(
        msg,
        format!(
            "{}:1:3 (column `a`): duplicate column name `a` (also column 2); expected unique names",
            p.display()
        )
    );
    let (msg, _) = csv_err("y,,b\n1,2,3\n");
    assert!(msg.contains(":1:2 (column ``): empty column name"), "{msg}");
}

#[test]
fn csv_non_utf8_and_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("latin1.csv");
    std::fs::write(&p, b"y,a\n1,2\n\xff\xfe,3\n").unwrap();
    let msg = read_csv(&p, "y").unwrap_err().to_string();
    assert!(msg.contains(":3: line is not valid UTF-8"), "{msg}");
    let msg = read_csv(dir.path().join("nope.csv"), "y").unwrap_err().to_string();
    assert!(msg.contains("nope.csv: open failed"), "{msg}");
    let msg =
        load(dir.path().join("data.parquet"), &LoadOptions::default()).unwrap_err().to_string();
    assert!(msg.contains("data.parquet: unknown data file extension"), "{msg}");
}

#[test]
fn csv_other_response_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "r.csv", "label,a\n1,2\n0,3\n");
    let ds = load(&p, &LoadOptions::default().with_response("label")).unwrap();
    assert_eq!(ds.y(), [1.0, 0.0]);
    assert_eq!(ds.covariate_names(), ["a"]);
}

/// A valid 3 × 2 binary data set in `dir` with the given header changes.
fn binary_case(
    dir: &Path, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>, &mut Vec<u8>),
) -> PathBuf {
    let ds =
        Dataset::with_default_names(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], vec![0.0, 1.0, 0.0], 2)
            .unwrap();
    let (bin, json) = write_binary(&ds, dir.join("case")).unwrap();
    let mut header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut bytes = std::fs::read(&bin).unwrap();
    edit(&mut header, &mut bytes);
    std::fs::write(&json, serde_json::Value::Object(header).to_string()).unwrap();
    std::fs::write(&bin, bytes).unwrap();
    json
}

fn binary_err(
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>, &mut Vec<u8>),
) -> (String, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let json = binary_case(dir.path(), edit);
    let msg = read_binary(&json, true).unwrap_err().to_string();
    (msg, json)
}

#[test]
fn binary_missing_and_invalid_fields() {
    let (msg, json) = binary_err(|h, _| {
        h.remove("n");
    });
    assert_eq!(
        msg,
        format!(
            "{}: invalid header: missing field `n`; expected a non-negative integer",
            json.display()
        )
    );
    let (msg, _) = binary_err(|h, _| {
        h.insert("d".into(), serde_json::json!("two"));
    });
    assert!(msg.contains("field `d` = \"two\" is not a non-negative integer"), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.insert("n".into(), serde_json::json!(-3));
    });
    assert!(msg.contains("field `n` = -3 is not a non-negative integer"), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.remove("y_offset_bytes");
    });
    assert!(msg.contains("missing field `y_offset_bytes`"), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.remove("dtype");
    });
    assert!(msg.contains("missing field `dtype`; expected \"float64\""), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.insert("n".into(), serde_json::json!(0));
    });
    assert!(msg.contains("n = 0"), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.insert("covariate_names".into(), serde_json::json!(["a"]));
    });
    assert!(msg.contains("covariate_names"), "{msg}");
}

#[test]
fn binary_unparsable_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = binary_case(dir.path(), |_, _| {});
    std::fs::write(&json, "{\"n\": 3,\n \"d\": }").unwrap();
    let msg = read_binary(&json, true).unwrap_err().to_string();
    assert!(
        msg.starts_with(&format!("{}: invalid header: not valid JSON at line 2", json.display())),
        "{msg}"
    );
    std::fs::write(&json, "[1, 2]").unwrap();
    let msg = read_binary(&json, true).unwrap_err().to_string();
    assert!(msg.contains("expected a JSON object"), "{msg}");
    std::fs::remove_file(&json).unwrap();
    let msg = read_binary(&json, true).unwrap_err().to_string();
    assert!(msg.contains("case.json: read failed"), "{msg}");
}

#[test]
fn binary_unsupported_dtype_and_endianness() {
    let (msg, json) = binary_err(|h, _| {
        h.insert("dtype".into(), serde_json::json!("float32"));
    });
    assert_eq!(
        msg,
        format!(
            "{}: invalid header: dtype \"float32\" is not supported; expected \"float64\"",
            json.display()
        )
    );
    let (msg, _) = binary_err(|h, _| {
        h.insert("endianness".into(), serde_json::json!("big"));
    });
    assert!(msg.contains("endianness \"big\" is not supported; expected \"little\""), "{msg}");
}

#[test]
fn binary_header_dimension_mismatches() {
    let (msg, _) = binary_err(|h, _| {
        h.insert("y_offset_bytes".into(), serde_json::json!(20));
    });
    assert!(msg.contains("y_offset_bytes = 20 is not a multiple of 8"), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.insert("y_offset_bytes".into(), serde_json::json!(16));
        h.remove("y_nbytes");
    });
    assert!(msg.contains("overlap"), "{msg}");
    let (msg, _) = binary_err(|h, _| {
        h.insert("x_nbytes".into(), serde_json::json!(40));
    });
    assert!(msg.contains("x_nbytes = 40 does not match n = 3, d = 2; expected 48"), "{msg}");
    let (msg, json) = binary_err(|h, _| {
        h.insert("file_nbytes".into(), serde_json::json!(80));
    });
    let bin = json.with_extension("bin");
    assert_eq!(
        msg,
        format!("{}: file has 72 bytes but the header's file_nbytes = 80", bin.display())
    );
    let (msg, _) = binary_err(|h, _| {
        h.insert("n".into(), serde_json::json!(4));
        h.remove("x_nbytes");
        h.remove("y_nbytes");
        h.remove("file_nbytes");
    });
    assert!(msg.contains("overlap"), "{msg}");
}

#[test]
fn binary_truncated_file() {
    let (msg, json) = binary_err(|h, b| {
        b.truncate(70);
        h.remove("file_nbytes");
    });
    let bin = json.with_extension("bin");
    assert_eq!(
        msg,
        format!(
            "{}: truncated: file has 70 bytes but the header (n = 3, d = 2, x_offset_bytes = 0, y_offset_bytes = 48) needs 72",
            bin.display()
        )
    );
    let (msg, _) = binary_err(|_, b| b.truncate(64));
    assert!(msg.contains("file has 64 bytes but the header's file_nbytes = 72"), "{msg}");
    let dir = tempfile::tempdir().unwrap();
    let json = binary_case(dir.path(), |_, _| {});
    std::fs::remove_file(json.with_extension("bin")).unwrap();
    let msg = read_binary(&json, true).unwrap_err().to_string();
    assert!(msg.contains("case.bin: open failed"), "{msg}");
}

#[test]
fn binary_non_finite_values_name_row_and_column() {
    let (msg, json) = binary_err(|_, b| {
        // Row 1, column 1 (x1) is value index 3 of X.
        b[24..32].copy_from_slice(&f64::NAN.to_le_bytes());
    });
    let bin = json.with_extension("bin");
    assert_eq!(
        msg,
        format!(
            "{}: non-finite value NaN at row 1 (0-based), column `x1`; expected a finite number",
            bin.display()
        )
    );
    let (msg, _) = binary_err(|_, b| {
        b[64..72].copy_from_slice(&f64::NEG_INFINITY.to_le_bytes());
    });
    assert!(msg.contains("non-finite value -inf at row 2 (0-based), column `y`"), "{msg}");
    // Without the check the file loads (the caller takes responsibility).
    let dir = tempfile::tempdir().unwrap();
    let json = binary_case(dir.path(), |_, b| b[0..8].copy_from_slice(&f64::NAN.to_le_bytes()));
    assert!(read_binary(&json, false).is_ok());
    assert!(load(&json, &LoadOptions::default()).is_err());
    assert!(load(&json, &LoadOptions::default().with_check_finite(false)).is_ok());
}

#[test]
fn response_only_binary_files_work() {
    let dir = tempfile::tempdir().unwrap();
    let ds = synthetic::confidence_gaussian(1000, 9).unwrap();
    write_binary(&ds, dir.path().join("g")).unwrap();
    let back = read_binary(dir.path().join("g.json"), true).unwrap();
    assert_eq!(back.num_covariates(), 0);
    assert_same(&ds, &back);
    let m = tallmc_models::Gaussian::new(back).unwrap();
    let (lo, hi) = m.response_range();
    assert!(lo < hi);
    let _ = normal; // the shared helpers are used by other test files
}

#[test]
fn csv_rfc4180_quotes_crlf_and_bom() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\u{feff}\"y\",\"age\", \"in come\" \r\n\"1\",\"1.5\",2\r\n0, \"-2e-3\" ,\"3\"\r\n\r\n1,4,5\r\n";
    let p = write(dir.path(), "rfc.csv", text);
    let ds = read_csv(&p, "y").unwrap();
    assert_eq!(ds.covariate_names(), ["age", "in come"]);
    assert_eq!(ds.y(), [1.0, 0.0, 1.0]);
    assert_eq!(ds.x(), [1.5, 2.0, -2e-3, 3.0, 4.0, 5.0]);
    // The blank CRLF line 4 is counted: the last row is on line 5.
    assert_eq!(ds.line_of_row(2), Some(5));
    assert_eq!(ds.location(1).to_string(), format!("{} line 3 (row 1, 0-based)", p.display()));
}

#[test]
fn csv_malformed_quotes_name_file_line_and_column() {
    let (msg, p) = csv_err("y,a\n1,2\n0,\"3\n1,4\n");
    assert_eq!(
        msg,
        format!(
            "{}:3:2 (column `a`): unterminated quoted field: the quote at character 3 is not closed before the end of the line; expected a closing `\"` (a field cannot span lines)",
            p.display()
        )
    );
    let (msg, p) = csv_err("y,\"a\n1,2\n");
    assert!(
        msg.starts_with(&format!("{}:1: field 2: unterminated quoted field", p.display())),
        "{msg}"
    );
    let (msg, _) = csv_err("y,a\n1,2\"\n");
    assert!(msg.contains(":2:2 (column `a`): a quote inside an unquoted field"), "{msg}");
    let (msg, _) = csv_err("y,a\n1,\"2\"x\n");
    assert!(msg.contains(":2:2 (column `a`): `x` after the closing quote"), "{msg}");
    // A syntax error past the header's width names the field number.
    let (msg, _) = csv_err("y,a\n1,2,\"3\n");
    assert!(msg.contains(":2: field 3: unterminated quoted field"), "{msg}");
}

#[test]
fn csv_quoted_values_must_still_be_numbers() {
    let (msg, p) = csv_err("y,a\n1,\"1,5\"\n");
    assert_eq!(
        msg,
        format!(
            "{}:2:2 (column `a`): `1,5` is not a number; expected a decimal floating-point value",
            p.display()
        )
    );
}
