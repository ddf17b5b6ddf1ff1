//! Parameter names come from the data's columns (`intercept`, then the covariates as the file
//! names them, then `log_sigma` for linear regression), and the models' data errors name the
//! file and the CSV line (or the 0-based row of binary and `.npy` data).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tallmc_core::ParameterNames;
use tallmc_models::{
    Dataset, DesignMatrix, DesignOptions, Error, GaussianRegression, LinearRegression,
    LogisticRegression, SoftmaxMlp, read_binary, read_csv, read_npy, write_binary,
};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn with_intercept(intercept: bool) -> DesignOptions {
    DesignOptions::default().with_intercept(intercept)
}

#[test]
fn parameter_names_are_the_csv_header_names() {
    let dir = tempfile::tempdir().unwrap();
    // The response in the middle, a quoted name and spaces around names.
    let p = write(dir.path(), "d.csv", "age, y ,\"income\"\n30,1,2.5\n41,0,3.5\n25,1,1.0\n");
    let data = Arc::new(read_csv(&p, "y").unwrap());
    assert_eq!(data.covariate_names(), ["age", "income"]);
    let m = LogisticRegression::new(data.clone(), with_intercept(true), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["intercept", "age", "income"]);
    let m = LogisticRegression::new(data.clone(), with_intercept(false), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["age", "income"]);
    let opts = with_intercept(true).with_standardize(true);
    let m = GaussianRegression::new(data.clone(), opts, 1.0, 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["intercept", "age", "income"]);
    let m = LinearRegression::new(data.clone(), with_intercept(true), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["intercept", "age", "income", "log_sigma"]);
    let m = LinearRegression::new(data, with_intercept(false), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["age", "income", "log_sigma"]);
}

#[test]
fn data_without_names_get_x0_x1() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npy");
    let data = read_npy(fixtures.join("x_37x3.npy"), fixtures.join("y_37.npy"), true).unwrap();
    let m = LinearRegression::new(data, with_intercept(true), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["intercept", "x0", "x1", "x2", "log_sigma"]);

    let data = Dataset::with_default_names(vec![0.5, -1.0, 2.0, 0.1], vec![1.0, 0.0], 2).unwrap();
    let m = LogisticRegression::new(data, with_intercept(false), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["x0", "x1"]);
}

#[test]
fn binary_files_keep_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let names = vec!["dose".to_string(), "weight (kg)".to_string()];
    let data =
        Dataset::new(vec![1.0, 60.0, 2.0, 70.0, 3.0, 80.0], vec![0.0, 1.0, 1.0], names).unwrap();
    let (_, json) = write_binary(&data, dir.path().join("b")).unwrap();
    let back = read_binary(json, true).unwrap();
    let m = LogisticRegression::new(back, with_intercept(true), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["intercept", "dose", "weight (kg)"]);
}

#[test]
fn a_covariate_named_intercept_clashes_only_with_an_added_intercept() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "i.csv", "y,intercept,x\n1,1,0.5\n0,1,-0.5\n");
    let data = Arc::new(read_csv(&p, "y").unwrap());
    let err = LogisticRegression::new(data.clone(), with_intercept(true), 5.0).unwrap_err();
    assert!(matches!(err, Error::ReservedName { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: covariate `intercept` has the name of the intercept column the design adds; expected another name (rename the covariate; or, if it is a column of ones, drop it and keep the added intercept, or turn the added intercept off)",
            p.display()
        )
    );
    assert!(DesignMatrix::new(data.clone(), with_intercept(true)).is_err());
    // Without an added intercept the file's own column is just a covariate.
    let m = LogisticRegression::new(data, with_intercept(false), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["intercept", "x"]);
}

#[test]
fn a_covariate_named_log_sigma_clashes_in_linear_regression() {
    let names = vec!["a".to_string(), "log_sigma".to_string()];
    let data = Arc::new(Dataset::new(vec![1.0, 2.0, 3.0, 5.0], vec![0.0, 1.0], names).unwrap());
    let err = LinearRegression::new(data.clone(), with_intercept(true), 5.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in-memory data: covariate `log_sigma` has the name of linear regression's noise parameter log σ; expected another name (rename the covariate)"
    );
    // The GLMs have no log σ: the name is free there.
    let m = LogisticRegression::new(data, with_intercept(false), 5.0).unwrap();
    assert_eq!(m.parameter_names(), ["a", "log_sigma"]);
}

#[test]
fn header_names_that_would_break_a_csv_header_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("y,\"age, years\"\n1,2\n", 2, "age, years", "a comma would split the CSV header"),
        ("y,\"a\"\"b\"\n1,2\n", 2, "a\\\"b", "a quote would garble the CSV header"),
        ("x,lp__,y\n1,2,3\n", 2, "lp__", "names ending in `__`"),
        ("y,\"a\tb\"\n1,2\n", 2, "a\\tb", "a control character"),
    ];
    for (text, col, shown, why) in cases {
        let p = write(dir.path(), "h.csv", text);
        let msg = read_csv(&p, "y").unwrap_err().to_string();
        let head = format!(
            "{}:1:{col} (column `{shown}`): `{shown}` cannot be a covariate name: {why}",
            p.display()
        );
        assert!(msg.starts_with(&head), "{msg}\nexpected it to start with\n{head}");
    }
    // A covariate named `y` while the response is another column.
    let p = write(dir.path(), "h.csv", "label,y\n1,2\n");
    let msg = read_csv(&p, "label").unwrap_err().to_string();
    assert!(msg.contains(":1:2 (column `y`): `y` cannot be a covariate name"), "{msg}");
}

#[test]
fn invalid_responses_name_the_csv_line() {
    let dir = tempfile::tempdir().unwrap();
    // Rows 0-1 on lines 2-3, a blank line 4, row 2 on line 5, row 3 (y = 2) on line 6.
    let p = write(dir.path(), "data.csv", "y,x\n1,0.5\n0,0.1\n\n1,0.3\n2,0.7\n");
    let data = read_csv(&p, "y").unwrap();
    assert_eq!((0..4).map(|r| data.line_of_row(r)).collect::<Vec<_>>(), [2, 3, 5, 6].map(Some));
    assert_eq!(data.line_of_row(4), None);
    let err = LogisticRegression::new(data, with_intercept(true), 5.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{} line 6 (row 3, 0-based): invalid response y = 2; expected 0 or 1", p.display())
    );
    match err {
        Error::InvalidResponse { at, value, .. } => {
            assert_eq!((at.row, at.line, value), (3, Some(6), 2.0));
            assert_eq!(at.source.as_deref(), Some(p.as_path()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_responses_name_the_row_of_binary_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = Dataset::with_default_names(vec![0.1, 0.2, 0.3], vec![0.0, 0.5, 1.0], 1).unwrap();
    let (bin, json) = write_binary(&data, dir.path().join("b")).unwrap();
    let err = LogisticRegression::new(read_binary(json, true).unwrap(), with_intercept(true), 5.0)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{} row 1 (0-based): invalid response y = 0.5; expected 0 or 1", bin.display())
    );
}

#[test]
fn invalid_class_labels_name_the_csv_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "digits.csv", "y,a,b\n0,1,2\n1,3,4\n\n\n7,5,6\n");
    let err = SoftmaxMlp::new(Arc::new(read_csv(&p, "y").unwrap()), 2, 3, 0.01).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} line 6 (row 2, 0-based): invalid class label y = 7; expected an integer in 0..3 (K = 3 classes)",
            p.display()
        )
    );
}

#[test]
fn overflowing_rows_are_named_with_their_line_and_largest_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "big.csv", "y,a,b\n1,1,2\n0,3,4\n1,5,1e200\n0,1e300,1\n");
    let err =
        LogisticRegression::new(read_csv(&p, "y").unwrap(), with_intercept(true), 5.0).unwrap_err();
    assert!(matches!(err, Error::RowNormOverflow { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} line 4 (row 2, 0-based): covariates too large: ‖x̃_i‖² = inf overflows (largest entry |x̃_ij| = 1e200, column `b`); expected rows whose squared Euclidean norm is finite (rescale the covariates, e.g. standardize them)",
            p.display()
        )
    );
    // In-memory data: the row, without a file.
    let x = vec![1.0, 2.0, -1e155, 1e155, 0.5, 0.5];
    let data = Dataset::with_default_names(x, vec![0.0, 1.0, 1.0], 2).unwrap();
    let msg = LogisticRegression::new(data, with_intercept(false), 5.0).unwrap_err().to_string();
    assert!(msg.starts_with("in-memory data, row 1 (0-based): covariates too large"), "{msg}");
    assert!(msg.contains("|x̃_ij| = 1e155, column `x0`"), "{msg}");
}
