//! Design diagnostics: constant, collinear and separating columns are found and named; a
//! well-conditioned design and non-separated data give no finding; `separates` recognises a
//! separating hyperplane.

use std::sync::Arc;

use crate::common::*;
use rand::RngExt;
use tallmc_models::{
    DEFAULT_COLLINEARITY_TOLERANCE, Dataset, DesignFinding, DesignMatrix, DesignOptions, Error,
    diagnose_design, read_binary, separates, write_binary,
};

const TOL: f64 = DEFAULT_COLLINEARITY_TOLERANCE;

/// n rows of p independent standard normal covariates (seeded), with 0/1 responses from a
/// logistic model with moderate coefficients (so that nothing separates).
fn normal_data(n: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let mut x = Vec::with_capacity(n * p);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let mut eta = 0.2;
        for j in 0..p {
            let v = normal(&mut r);
            eta += 0.5 * v / (1.0 + j as f64);
            x.push(v);
        }
        y.push(f64::from(u8::from(r.random::<f64>() < 1.0 / (1.0 + (-eta).exp()))));
    }
    (x, y)
}

/// `columns` (each n values) as a data set named `names`, with responses `y`.
fn dataset(columns: &[Vec<f64>], names: &[&str], y: Vec<f64>) -> Dataset {
    let n = y.len();
    let x: Vec<f64> = (0..n).flat_map(|i| columns.iter().map(move |c| c[i])).collect();
    Dataset::new(x, y, names.iter().map(|s| s.to_string()).collect()).unwrap()
}

fn design(data: Dataset, intercept: bool, standardize: bool) -> DesignMatrix {
    DesignMatrix::new(data, DesignOptions { intercept, standardize }).unwrap()
}

/// Column j of the row-major n × p matrix x.
fn column(x: &[f64], p: usize, j: usize) -> Vec<f64> {
    x.chunks_exact(p).map(|r| r[j]).collect()
}

fn findings(d: &DesignMatrix) -> Vec<DesignFinding> {
    diagnose_design(d, TOL).unwrap()
}

/// The combination of a `Collinear` finding, as (name, coefficient) pairs.
fn collinear(f: &DesignFinding) -> (&str, &[(String, f64)], f64) {
    match f {
        DesignFinding::Collinear { column, combination, one_minus_r_squared, .. } => {
            (column, combination, *one_minus_r_squared)
        }
        other => panic!("expected a Collinear finding, got {other:?}"),
    }
}

fn assert_combination(got: &[(String, f64)], want: &[(&str, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for ((name, c), (wname, wc)) in got.iter().zip(want) {
        assert_eq!(name, wname, "{got:?}");
        assert!((c - wc).abs() <= 1e-9 * wc.abs().max(1.0), "{name}: {c} vs {wc}");
    }
}

#[test]
fn a_well_conditioned_random_design_gives_no_finding() {
    let (x, y) = normal_data(2_000, 6, 1);
    let data = Arc::new(Dataset::with_default_names(x, y, 6).unwrap());
    for (intercept, standardize) in [(false, false), (true, false), (false, true), (true, true)] {
        let d = DesignMatrix::new(data.clone(), DesignOptions { intercept, standardize }).unwrap();
        assert_eq!(findings(&d), [], "intercept {intercept}, standardize {standardize}");
    }
}

#[test]
fn constant_columns_are_named_with_their_value() {
    let (x, y) = normal_data(200, 2, 2);
    let (a, b) = (column(&x, 2, 0), column(&x, 2, 1));
    let three = vec![3.0; 200];
    let data =
        Arc::new(dataset(&[a.clone(), three.clone(), b.clone()], &["a", "c", "b"], y.clone()));
    // With an intercept, the constant column is collinear with it.
    let f = findings(&design_arc(&data, true));
    assert_eq!(
        f,
        [DesignFinding::ConstantColumn {
            column: "c".into(),
            value: 3.0,
            collinear_with: Some("intercept".into())
        }]
    );
    let msg = f[0].message(10.0);
    assert!(
        msg.starts_with(
            "column `c` is constant (value 3), so it is collinear with column `intercept`"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("driven by the prior (prior sd 10)"), "{msg}");
    // Without one, the constant column is the intercept: nothing to report.
    assert_eq!(findings(&design_arc(&data, false)), []);
    // ... unless there are two constant columns, or a zero column.
    let data =
        dataset(&[three.clone(), a.clone(), vec![-1.5; 200]], &["one", "a", "minus"], y.clone());
    let f = findings(&design(data, false, false));
    assert_eq!(
        f,
        [DesignFinding::ConstantColumn {
            column: "minus".into(),
            value: -1.5,
            collinear_with: Some("one".into())
        }]
    );
    let data = dataset(&[a, vec![0.0; 200], b], &["a", "zero", "b"], y);
    for intercept in [false, true] {
        let f = findings(&design(dataset_clone(&data), intercept, false));
        assert_eq!(
            f,
            [DesignFinding::ConstantColumn {
                column: "zero".into(),
                value: 0.0,
                collinear_with: None
            }]
        );
        let msg = f[0].message(2.5);
        assert_eq!(
            msg,
            "column `zero` is 0 in every row: the likelihood does not depend on its coefficient, so the posterior along it is driven by the prior (prior sd 2.5)"
        );
    }
}

fn design_arc(data: &Arc<Dataset>, intercept: bool) -> DesignMatrix {
    DesignMatrix::new(data.clone(), DesignOptions::default().with_intercept(intercept)).unwrap()
}

fn dataset_clone(d: &Dataset) -> Dataset {
    Dataset::new(d.x().to_vec(), d.y().to_vec(), d.covariate_names().to_vec()).unwrap()
}

#[test]
fn an_exact_duplicate_column_is_found() {
    let (x, y) = normal_data(500, 3, 3);
    let cols: Vec<Vec<f64>> = (0..3).map(|j| column(&x, 3, j)).collect();
    let data = Arc::new(dataset(
        &[cols[0].clone(), cols[1].clone(), cols[2].clone(), cols[1].clone()],
        &["x1", "x2", "x3", "x2_again"],
        y,
    ));
    for (intercept, standardize) in [(false, false), (true, false), (false, true), (true, true)] {
        let d = DesignMatrix::new(data.clone(), DesignOptions { intercept, standardize }).unwrap();
        let f = findings(&d);
        assert_eq!(f.len(), 1, "{f:?}");
        let (name, combination, r) = collinear(&f[0]);
        assert_eq!(name, "x2_again");
        assert_combination(combination, &[("x2", 1.0)]);
        assert!(r <= 1e-13, "1 − R² = {r}");
    }
}

#[test]
fn a_linear_combination_of_earlier_columns_is_found() {
    let (x, y) = normal_data(500, 2, 4);
    let (x1, x2) = (column(&x, 2, 0), column(&x, 2, 1));
    let x3: Vec<f64> = x1.iter().zip(&x2).map(|(a, b)| a + 2.0 * b).collect();
    let data = Arc::new(dataset(&[x1.clone(), x2.clone(), x3], &["x1", "x2", "x3"], y.clone()));
    for intercept in [false, true] {
        let f = findings(&design_arc(&data, intercept));
        assert_eq!(f.len(), 1, "{f:?}");
        let (name, combination, _) = collinear(&f[0]);
        assert_eq!(name, "x3");
        assert_combination(combination, &[("x1", 1.0), ("x2", 2.0)]);
        let msg = f[0].message(10.0);
        assert!(msg.starts_with("column `x3` is (nearly) a linear combination of earlier columns: x3 ≈ 1·x1 + 2·x2 (1 − R² = "), "{msg}");
        assert!(msg.ends_with("the data cannot tell its coefficient from theirs, so the posterior along that direction is driven by the prior (prior sd 10)"), "{msg}");
    }
    // x3 = x1 − 2·x2 + 5 depends on the earlier columns only through the intercept.
    let x3: Vec<f64> = x1.iter().zip(&x2).map(|(a, b)| a - 2.0 * b + 5.0).collect();
    let data = Arc::new(dataset(&[x1, x2, x3], &["x1", "x2", "x3"], y));
    let f = findings(&design_arc(&data, true));
    assert_eq!(f.len(), 1, "{f:?}");
    let (name, combination, _) = collinear(&f[0]);
    assert_eq!(name, "x3");
    assert_combination(combination, &[("intercept", 5.0), ("x1", 1.0), ("x2", -2.0)]);
    assert!(
        f[0].message(1.0).contains("x3 ≈ 5·intercept + 1·x1 − 2·x2 ("),
        "{}",
        f[0].message(1.0)
    );
    // Without an intercept (and no constant column) that design has full rank.
    assert_eq!(findings(&design_arc(&data, false)), []);
}

#[test]
fn the_tolerance_separates_near_from_exact_collinearity() {
    let (x, y) = normal_data(1_000, 2, 5);
    let (x1, noise) = (column(&x, 2, 0), column(&x, 2, 1));
    // corr(x1, near)² ≈ 1 − 10⁻⁶.
    let near: Vec<f64> = x1.iter().zip(&noise).map(|(a, e)| a + 1e-3 * e).collect();
    let d = design(dataset(&[x1, near], &["x1", "near"], y), true, false);
    assert_eq!(diagnose_design(&d, TOL).unwrap(), []);
    assert_eq!(diagnose_design(&d, 1e-7).unwrap(), []);
    let f = diagnose_design(&d, 1e-5).unwrap();
    assert_eq!(f.len(), 1, "{f:?}");
    let (name, combination, r) = collinear(&f[0]);
    assert_eq!(name, "near");
    // The least-squares fit near ≈ a + b·x1, with a ≈ 0 and b ≈ 1 up to the noise.
    let names: Vec<&str> = combination.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["intercept", "x1"], "{combination:?}");
    assert!(combination[0].1.abs() < 1e-3 && (combination[1].1 - 1.0).abs() < 1e-3);
    assert!((r - 1e-6).abs() < 2e-7, "1 − R² = {r}");
    for bad in [-1e-3, 1.0, f64::NAN] {
        let err = diagnose_design(&d, bad).unwrap_err().to_string();
        assert!(err.starts_with("invalid collinearity_tolerance = "), "{err}");
    }
}

#[test]
fn a_separating_column_is_found() {
    let (x, _) = normal_data(300, 3, 6);
    let cols: Vec<Vec<f64>> = (0..3).map(|j| column(&x, 3, j)).collect();
    // y = 1 exactly when x2 > 0.3.
    let y: Vec<f64> = cols[1].iter().map(|&v| f64::from(u8::from(v > 0.3))).collect();
    let data = Arc::new(dataset(&cols, &["x1", "x2", "x3"], y.clone()));
    let f = findings(&design_arc(&data, true));
    assert_eq!(f.len(), 1, "{f:?}");
    let DesignFinding::Separation { column, y0_range, y1_range, complete, through_origin } = &f[0]
    else {
        panic!("{f:?}")
    };
    assert_eq!((column.as_str(), *complete, *through_origin), ("x2", true, false));
    assert!(y0_range.1 <= 0.3 && y1_range.0 > 0.3, "{y0_range:?} {y1_range:?}");
    let msg = f[0].message(3.0);
    assert!(msg.starts_with("column `x2` alone separates the responses: it lies in ["), "{msg}");
    assert!(msg.contains("(complete separation)"), "{msg}");
    assert!(msg.ends_with("(prior sd 3)"), "{msg}");
    // The reverse direction (y = 1 below) is found too.
    let flipped: Vec<f64> = y.iter().map(|v| 1.0 - v).collect();
    let f = findings(&design(dataset(&cols, &["x1", "x2", "x3"], flipped), true, false));
    assert!(
        matches!(&f[..], [DesignFinding::Separation { column, complete: true, .. }] if column == "x2"),
        "{f:?}"
    );
    // Without a constant column the boundary must be 0, and x2 > 0.3 vs ≤ 0.3 is no separation.
    assert_eq!(findings(&design_arc(&data, false)), []);
    let y0: Vec<f64> = cols[1].iter().map(|&v| f64::from(u8::from(v > 0.0))).collect();
    let f = findings(&design(dataset(&cols, &["x1", "x2", "x3"], y0), false, false));
    assert!(
        matches!(&f[..], [DesignFinding::Separation { column, through_origin: true, .. }] if column == "x2"),
        "{f:?}"
    );
}

#[test]
fn quasi_complete_separation_and_a_single_class_are_found() {
    // A dummy: every row with d = 1 has y = 1; rows with d = 0 have both classes.
    let d = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0];
    let y = [0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0];
    let z = [0.3, -1.2, 0.8, 0.1, -0.4, 1.5, 0.9, -0.7];
    let data = dataset(&[d.to_vec(), z.to_vec()], &["d", "z"], y.to_vec());
    let f = findings(&design(data, true, false));
    assert_eq!(
        f,
        [DesignFinding::Separation {
            column: "d".into(),
            y0_range: (0.0, 0.0),
            y1_range: (0.0, 1.0),
            complete: false,
            through_origin: false
        }]
    );
    assert!(f[0].message(1.0).contains("quasi-complete separation"), "{}", f[0].message(1.0));
    let data = dataset(&[z.to_vec()], &["z"], vec![1.0; 8]);
    let f = findings(&design(data, true, false));
    assert_eq!(f, [DesignFinding::SingleClass { value: 1.0, rows: 8 }]);
    assert!(
        f[0].message(4.0).starts_with("every response is 1 (8 rows): "),
        "{}",
        f[0].message(4.0)
    );
}

#[test]
fn non_binary_or_non_separated_responses_give_no_separation() {
    let (x, y) = normal_data(400, 3, 7);
    let data = Dataset::with_default_names(x.clone(), y, 3).unwrap();
    assert_eq!(findings(&design(data, true, false)), []);
    // Responses other than 0/1 (linear regression): separation is not checked.
    let y: Vec<f64> = column(&x, 3, 0).iter().map(|v| 2.0 * v + 0.1).collect();
    let data = Dataset::with_default_names(x, y, 3).unwrap();
    assert_eq!(findings(&design(data, true, false)), []);
}

#[test]
fn findings_do_not_depend_on_the_thread_count() {
    // More rows than one parallel group of chunks (16 × 8192).
    let n = 140_000;
    let (x, y) = normal_data(n, 3, 8);
    let cols: Vec<Vec<f64>> = (0..3).map(|j| column(&x, 3, j)).collect();
    let dup: Vec<f64> = cols[0].iter().zip(&cols[2]).map(|(a, b)| 0.5 * a - b).collect();
    let data = Arc::new(dataset(
        &[cols[0].clone(), cols[1].clone(), cols[2].clone(), dup],
        &["a", "b", "c", "dup"],
        y,
    ));
    let d = design_arc(&data, true);
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| diagnose_design(&d, TOL).unwrap())
    };
    let one = run(1);
    assert_eq!(one.len(), 1, "{one:?}");
    assert_combination(collinear(&one[0]).1, &[("a", 0.5), ("c", -1.0)]);
    assert_eq!(format!("{one:?}"), format!("{:?}", run(3)));
}

#[test]
fn non_finite_memory_mapped_data_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = Dataset::with_default_names(vec![1.0, 2.0, 3.0, 4.0], vec![0.0, 1.0], 2).unwrap();
    let (bin, json) = write_binary(&data, dir.path().join("d")).unwrap();
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes[16..24].copy_from_slice(&f64::NAN.to_le_bytes());
    std::fs::write(&bin, bytes).unwrap();
    let d = design(read_binary(json, false).unwrap(), true, false);
    let err = diagnose_design(&d, TOL).unwrap_err();
    assert!(matches!(err, Error::NonFinite { row: 1, .. }), "{err:?}");
}

#[test]
fn separates_checks_every_row_with_the_right_sign() {
    // y = 1 exactly when x > 1: θ = (−1, 1) (intercept, x) separates.
    let x = vec![0.2, 0.5, 1.5, 2.0, 0.9, 3.0];
    let y = vec![0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    let d = design(Dataset::with_default_names(x, y.clone(), 1).unwrap(), true, false);
    assert!(separates(&d, &y, &[-1.0, 1.0]).unwrap());
    assert!(separates(&d, &y, &[-10.0, 10.0]).unwrap());
    // Wrong sign, a misclassified row (threshold 0.6 puts x = 0.9 on the y = 1 side), and η = 0.
    assert!(!separates(&d, &y, &[1.0, -1.0]).unwrap());
    assert!(!separates(&d, &y, &[-0.6, 1.0]).unwrap());
    assert!(!separates(&d, &y, &[0.0, 0.0]).unwrap());
    // A row on the boundary (η = 0) is not separated: x = 1.5 with θ = (−1.5, 1).
    assert!(!separates(&d, &y, &[-1.5, 1.0]).unwrap());
    // Other responses: the flipped labels are separated by −θ.
    let flipped: Vec<f64> = y.iter().map(|v| 1.0 - v).collect();
    assert!(separates(&d, &flipped, &[1.0, -1.0]).unwrap());

    let err = separates(&d, &y, &[1.0]).unwrap_err().to_string();
    assert!(err.contains("expected 2, found 1"), "{err}");
    let err = separates(&d, &y[..5], &[1.0, 1.0]).unwrap_err().to_string();
    assert!(err.contains("expected 6, found 5"), "{err}");
    let err = separates(&d, &y, &[f64::NAN, 1.0]).unwrap_err().to_string();
    assert!(err.contains("θ[0] = NaN"), "{err}");
    let mut bad = y.clone();
    bad[4] = 0.5;
    let err = separates(&d, &bad, &[-1.0, 1.0]).unwrap_err().to_string();
    assert_eq!(err, "in-memory data, row 4 (0-based): invalid response y = 0.5; expected 0 or 1");
}

#[test]
fn separates_agrees_with_a_direct_check_on_random_data() {
    let (x, y) = normal_data(20_000, 4, 9);
    let d = design(Dataset::with_default_names(x, y.clone(), 4).unwrap(), true, true);
    let mut r = rng(10);
    for _ in 0..20 {
        let theta: Vec<f64> = (0..5).map(|_| normal(&mut r)).collect();
        let direct = (0..d.len()).all(|i| {
            let eta = d.dot(i, &theta);
            if y[i] == 1.0 { eta > 0.0 } else { eta < 0.0 }
        });
        assert_eq!(separates(&d, &y, &theta).unwrap(), direct);
        assert!(!direct, "random θ should not separate noisy labels");
    }
    // A design built to be separable is recognised at its separating θ.
    let labels: Vec<f64> = (0..d.len()).map(|i| f64::from(u8::from(d.get(i, 2) > 0.1))).collect();
    // (No row sits exactly on the boundary with continuous data.)
    assert!(separates(&d, &labels, &[-0.1, 0.0, 1.0, 0.0, 0.0]).unwrap());
}
