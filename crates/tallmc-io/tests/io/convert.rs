//! `convert`: CSV, `.npy`, binary and Parquet inputs into the binary format, concatenated,
//! with columns chosen by name, in chunks of any size; and its errors.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use tallmc_io::{ConvertOptions, convert};
use tallmc_models::{Dataset, read_binary, write_binary, write_csv};

fn data(n: usize, first: usize) -> Dataset {
    let x: Vec<f64> =
        (first..first + n).flat_map(|i| [i as f64 / 7.0, -(i as f64).sqrt(), 1.5]).collect();
    let y: Vec<f64> = (first..first + n).map(|i| (i % 2) as f64).collect();
    Dataset::new(x, y, vec!["a".into(), "b".into(), "c".into()]).unwrap()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn csv_inputs_are_concatenated_in_order_in_chunks_of_any_size() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one.csv"), dir.path().join("two.csv"));
    write_csv(&data(50, 0), &one).unwrap();
    write_csv(&data(23, 50), &two).unwrap();
    let whole = data(73, 0);
    for chunk in [1, 7, 1000] {
        let out = dir.path().join(format!("out{chunk}.bin"));
        let options = ConvertOptions { chunk_rows: chunk, ..Default::default() };
        let mut calls = 0;
        let report = convert(&[one.clone(), two.clone()], &out, &options, &mut |p| {
            calls += 1;
            assert!(p.input < 2 && (0.0..=1.0).contains(&p.input_fraction));
        })
        .unwrap();
        assert_eq!(report.rows, 73);
        assert!(calls >= 2);
        let back = read_binary(&out, true).unwrap();
        assert_eq!(bits(back.x()), bits(whole.x()), "chunk {chunk}");
        assert_eq!(bits(back.y()), bits(whole.y()));
        assert_eq!(back.covariate_names(), ["a", "b", "c"]);
        assert_eq!(back.metadata()["converted_from"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn columns_are_chosen_by_name_from_every_kind_of_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(40, 3);
    let csv = dir.path().join("d.csv");
    write_csv(&d, &csv).unwrap();
    let bin = dir.path().join("d.bin");
    write_binary(&d, &bin).unwrap();
    let pq = dir.path().join("d.parquet");
    let col = |j: usize| -> ArrayRef {
        Arc::new(Float64Array::from((0..40).map(|i| d.row(i)[j]).collect::<Vec<_>>()))
    };
    let batch = RecordBatch::try_from_iter([
        ("y", Arc::new(Float64Array::from(d.y().to_vec())) as ArrayRef),
        ("a", col(0)),
        ("b", col(1)),
        ("c", col(2)),
    ])
    .unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(&pq).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let want: Vec<f64> = (0..40).flat_map(|i| [d.row(i)[2], d.row(i)[0]]).collect();
    for input in [csv, bin, pq] {
        let out = dir.path().join("picked.bin");
        let options = ConvertOptions {
            columns: Some(vec!["c".into(), "a".into()]),
            chunk_rows: 9,
            ..Default::default()
        };
        convert(std::slice::from_ref(&input), &out, &options, &mut |_| {}).unwrap();
        let back = read_binary(&out, true).unwrap();
        assert_eq!(back.covariate_names(), ["c", "a"], "{}", input.display());
        assert_eq!(bits(back.x()), bits(&want), "{}", input.display());
        assert_eq!(bits(back.y()), bits(d.y()));
    }
}

#[test]
fn bad_conversions_are_clear_errors_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.csv");
    write_csv(&data(5, 0), &one).unwrap();
    let other = dir.path().join("other.csv");
    std::fs::write(&other, "y,a,b\n1,2,3\n").unwrap();
    let out = dir.path().join("out.bin");
    let msg = |inputs: &[PathBuf], options: &ConvertOptions| {
        convert(inputs, &out, options, &mut |_| {}).unwrap_err().to_string()
    };
    let m = msg(&[one.clone(), other.clone()], &ConvertOptions::default());
    assert!(m.contains("a, b, c") && m.contains("this one has a, b"), "{m}");
    assert!(!out.exists() && !dir.path().join("out.json").exists(), "no output after an error");
    let m = msg(&[], &ConvertOptions::default());
    assert!(m.contains("at least one"), "{m}");
    let m = msg(
        std::slice::from_ref(&one),
        &ConvertOptions { columns: Some(vec!["z".into()]), ..Default::default() },
    );
    assert!(m.contains("`z`") || m.contains("z:") || m.contains("= z"), "{m}");
    let m = msg(
        std::slice::from_ref(&one),
        &ConvertOptions { y_npy: Some("y.npy".into()), ..Default::default() },
    );
    assert!(m.contains("--y-npy"), "{m}");
    // A bad cell names its file and line, as reading the CSV would.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "y,a\n1,2\n0,oops\n").unwrap();
    let m = convert(&[bad], &out, &ConvertOptions::default(), &mut |_| {}).unwrap_err().to_string();
    assert!(m.contains("bad.csv:3:2") && m.contains("oops"), "{m}");
    // The output may not be an input.
    let bin = dir.path().join("same.bin");
    write_binary(&data(5, 0), &bin).unwrap();
    let e = convert(std::slice::from_ref(&bin), &bin, &ConvertOptions::default(), &mut |_| {})
        .unwrap_err();
    assert!(e.to_string().contains("other than the input"), "{e}");
}
