//! `.npy` files (NumPy's `np.save`): read in place (memory-mapped) with the numbers of the same
//! data as CSV bit for bit, through [`read_npy`] and [`load`]; and one test per bad file,
//! checking that the message names the file and says how to convert. The fixtures were written
//! by NumPy itself (`tests/fixtures/npy/make.py`).

use std::path::{Path, PathBuf};

use tallmc_core::Terms;
use tallmc_models::{DesignOptions, LoadOptions, LogisticRegression, load, read_csv, read_npy};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npy").join(name)
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Writes a `.npy` file of version 1 with `header` (the dict literal) and `data` after it.
fn npy(dir: &Path, name: &str, header: &str, data: &[f64]) -> PathBuf {
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    let text = format!("{header}{}\n", " ".repeat(pad));
    bytes.extend((text.len() as u16).to_le_bytes());
    bytes.extend(text.as_bytes());
    for v in data {
        bytes.extend(v.to_le_bytes());
    }
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn numpy_files_are_mapped_with_the_numbers_of_the_csv() {
    let data = read_npy(fixture("x_37x3.npy"), fixture("y_37.npy"), true).unwrap();
    assert!(data.is_memory_mapped());
    assert_eq!((data.len(), data.num_covariates()), (37, 3));
    assert_eq!(data.covariate_names(), ["x0", "x1", "x2"]);
    let csv = read_csv(fixture("xy_37x3.csv"), "y").unwrap();
    assert_eq!(bits(data.x()), bits(csv.x()));
    assert_eq!(bits(data.y()), bits(csv.y()));
    // Through `load`, and into a model: the same log-likelihood as on the CSV's data.
    let options = LoadOptions::default().with_npy_response(fixture("y_37.npy"));
    let loaded = load(fixture("x_37x3.npy"), &options).unwrap();
    let theta = [0.1, -0.2, 0.3, 0.05];
    let all: Vec<u32> = (0..37).collect();
    let ll = |d| {
        let m = LogisticRegression::new(d, DesignOptions::default(), 1.0).unwrap();
        let mut out = vec![0.0; 37];
        m.log_terms(&theta, &all, &mut out);
        bits(&out)
    };
    assert_eq!(ll(loaded), ll(csv));
}

#[test]
fn a_column_vector_of_responses_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let x = npy(
        dir.path(),
        "x.npy",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }",
        &[1.0, 2.0],
    );
    let y = npy(
        dir.path(),
        "y.npy",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }",
        &[0.0, 1.0],
    );
    let data = read_npy(&x, &y, true).unwrap();
    assert_eq!(data.y(), [0.0, 1.0]);
}

#[test]
fn other_dtypes_and_fortran_order_say_how_to_convert() {
    let y = fixture("y_37.npy");
    let msg = read_npy(fixture("x_37x3_f32.npy"), &y, true).unwrap_err().to_string();
    assert!(msg.contains("x_37x3_f32.npy") && msg.contains("'<f4'"), "{msg}");
    assert!(msg.contains("astype(np.float64)"), "{msg}");
    let msg = read_npy(fixture("x_37x3_fortran.npy"), &y, true).unwrap_err().to_string();
    assert!(msg.contains("x_37x3_fortran.npy") && msg.contains("ascontiguousarray"), "{msg}");
}

#[test]
fn shapes_that_do_not_fit_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h = |shape: &str| format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
    let x1 = npy(d, "x1.npy", &h("(3,)"), &[1.0, 2.0, 3.0]);
    let y3 = npy(d, "y3.npy", &h("(3,)"), &[0.0, 1.0, 0.0]);
    let msg = read_npy(&x1, &y3, true).unwrap_err().to_string();
    assert!(msg.contains("x1.npy") && msg.contains("2-D") && msg.contains("reshape"), "{msg}");
    let x = npy(d, "x.npy", &h("(3, 2)"), &[0.0; 6]);
    let y2 = npy(d, "y2.npy", &h("(2,)"), &[0.0, 1.0]);
    let msg = read_npy(&x, &y2, true).unwrap_err().to_string();
    assert!(
        msg.contains("y2.npy") && msg.contains("2 responses") && msg.contains("n = 3"),
        "{msg}"
    );
    let short = npy(d, "short.npy", &h("(4, 2)"), &[0.0; 6]);
    let msg = read_npy(&short, &y3, true).unwrap_err().to_string();
    assert!(msg.contains("short.npy") && msg.contains("truncated"), "{msg}");
    let empty = npy(d, "empty.npy", &h("(0, 2)"), &[]);
    let y0 = npy(d, "y0.npy", &h("(0,)"), &[]);
    let msg = read_npy(&empty, &y0, true).unwrap_err().to_string();
    assert!(msg.contains("at least one row"), "{msg}");
    let text = d.join("text.npy");
    std::fs::write(&text, "x0,y\n1,0\n").unwrap();
    let msg = read_npy(&text, &y3, true).unwrap_err().to_string();
    assert!(msg.contains("text.npy") && msg.contains("not a .npy file"), "{msg}");
}

#[test]
fn non_finite_values_are_found_and_the_response_file_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
    let x = npy(dir.path(), "x.npy", h, &[1.0, 2.0, 3.0, f64::NAN, 5.0, 6.0]);
    let y = npy(
        dir.path(),
        "y.npy",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
        &[0.0, 1.0, 0.0],
    );
    let msg = read_npy(&x, &y, true).unwrap_err().to_string();
    assert!(msg.contains("row 1") && msg.contains("`x1`") && msg.contains("NaN"), "{msg}");
    assert!(read_npy(&x, &y, false).is_ok(), "the finiteness pass is optional");
    let msg = load(&x, &LoadOptions::default()).unwrap_err().to_string();
    assert!(msg.contains("x.npy") && msg.contains("--y-npy"), "{msg}");
}

#[test]
fn response_errors_name_the_response_file() {
    let dir = tempfile::tempdir().unwrap();
    let x = npy(
        dir.path(),
        "x.npy",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 1), }",
        &[0.1, 0.2, 0.3],
    );
    let yh = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    let y = npy(dir.path(), "y.npy", yh, &[0.0, 2.0, 1.0]);
    let data = read_npy(&x, &y, true).unwrap();
    assert_eq!(data.source(), Some(x.as_path()));
    assert_eq!(data.response_source(), Some(y.as_path()));
    let err = LogisticRegression::new(data, DesignOptions::default(), 1.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{} row 1 (0-based): invalid response y = 2; expected 0 or 1", y.display())
    );
    let y = npy(dir.path(), "y_nan.npy", yh, &[0.0, 1.0, f64::NAN]);
    let msg = read_npy(&x, &y, true).unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "{}: non-finite value NaN at row 2 (0-based), column `y`; expected a finite number",
            y.display()
        )
    );
}
