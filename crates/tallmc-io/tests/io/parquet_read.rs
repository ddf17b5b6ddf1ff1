//! Reading Parquet files and directories of shards: values, names, shard order, column
//! selection, and the errors a user meets.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, UInt8Array,
};
use parquet::arrow::ArrowWriter;
use tallmc_io::{ColumnSelection, Error, ParquetSource, read_parquet};

/// Writes `columns` as one Parquet file (snappy, two row groups when long enough).
fn write(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_max_row_group_row_count(Some(5))
        .build();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn f64s(v: &[f64]) -> ArrayRef {
    Arc::new(Float64Array::from(v.to_vec()))
}

/// One shard of `rows` rows starting at row `first`: y (f64), a (f64), b (f32), c (i64),
/// flag (bool), label (string), u (u8).
fn shard(path: &Path, first: usize, rows: usize) {
    let r: Vec<usize> = (first..first + rows).collect();
    write(
        path,
        vec![
            ("a", f64s(&r.iter().map(|&i| 0.1 * i as f64 - 1.0 / 3.0).collect::<Vec<_>>())),
            ("y", f64s(&r.iter().map(|&i| (i % 3) as f64).collect::<Vec<_>>())),
            (
                "b",
                Arc::new(Float32Array::from(
                    r.iter().map(|&i| i as f32 * 0.25).collect::<Vec<_>>(),
                )),
            ),
            ("c", Arc::new(Int64Array::from(r.iter().map(|&i| i as i64 - 7).collect::<Vec<_>>()))),
            (
                "flag",
                Arc::new(BooleanArray::from(
                    r.iter().map(|&i| i.is_multiple_of(2)).collect::<Vec<_>>(),
                )),
            ),
            (
                "label",
                Arc::new(StringArray::from(r.iter().map(|i| format!("r{i}")).collect::<Vec<_>>())),
            ),
            (
                "u",
                Arc::new(UInt8Array::from(r.iter().map(|&i| (i % 250) as u8).collect::<Vec<_>>())),
            ),
        ],
    );
}

/// The expected row i: (a, b, c, flag, u) and y.
fn expected(i: usize) -> ([f64; 5], f64) {
    let a = 0.1 * i as f64 - 1.0 / 3.0;
    let b = f64::from(i as f32 * 0.25);
    (
        [a, b, i as f64 - 7.0, f64::from(u8::from(i.is_multiple_of(2))), (i % 250) as f64],
        (i % 3) as f64,
    )
}

/// A directory whose shards sort differently by name and naturally, with files to skip.
fn sharded_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    shard(&dir.path().join("part.0.parquet"), 0, 12);
    shard(&dir.path().join("part.2.parquet"), 12, 3);
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    shard(&dir.path().join("sub").join("part.10.parquet"), 15, 9);
    std::fs::write(dir.path().join("_SUCCESS"), b"").unwrap();
    std::fs::write(dir.path().join("_metadata"), b"not parquet").unwrap();
    std::fs::write(dir.path().join(".part.0.parquet.crc"), b"crc").unwrap();
    dir
}

#[test]
fn a_directory_of_shards_reads_as_their_concatenation_in_natural_order() {
    let dir = sharded_dir();
    let source = ParquetSource::open(dir.path(), &ColumnSelection::default()).unwrap();
    let names: Vec<_> =
        source.shards().iter().map(|s| s.path.file_name().unwrap().to_owned()).collect();
    assert_eq!(names, ["part.0.parquet", "part.2.parquet", "part.10.parquet"]);
    assert_eq!(source.shards().iter().map(|s| s.rows).collect::<Vec<_>>(), [12, 3, 9]);
    assert_eq!(source.num_rows(), 24);
    assert_eq!(source.covariate_names(), ["a", "b", "c", "flag", "u"]);
    assert_eq!(source.skipped_columns().len(), 1);
    assert_eq!(source.skipped_columns()[0].name, "label");
    let data = source.read().unwrap();
    assert_eq!(data.len(), 24);
    assert_eq!(data.covariate_names(), ["a", "b", "c", "flag", "u"]);
    for i in 0..24 {
        let (x, y) = expected(i);
        assert_eq!(
            data.row(i).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            x.map(f64::to_bits)
        );
        assert_eq!(data.y()[i].to_bits(), y.to_bits(), "row {i}");
    }
    assert_eq!(data.metadata()["source_format"], "parquet");
    assert_eq!(data.metadata()["shards"].as_array().unwrap().len(), 3);
    // Shards one at a time give the same rows.
    let (x1, y1) = source.read_shard(1).unwrap();
    assert_eq!(y1, data.y()[12..15]);
    assert_eq!(x1, data.x()[12 * 5..15 * 5]);
    // Chunked reading, any chunk size, gives the same rows.
    for batch in [1, 4, 1000] {
        let (mut x, mut y, mut bx, mut by) = (vec![], vec![], vec![], vec![]);
        let mut rows = source.rows(batch);
        while rows.read_chunk(&mut bx, &mut by).unwrap() > 0 {
            assert!(by.len() <= batch);
            x.extend_from_slice(&bx);
            y.extend_from_slice(&by);
        }
        assert_eq!((x.as_slice(), y.as_slice()), (data.x(), data.y()), "batch {batch}");
        assert_eq!(rows.rows_read(), 24);
    }
}

#[test]
fn named_columns_choose_and_order_the_covariates() {
    let dir = sharded_dir();
    let sel = ColumnSelection::with_response("c").with_covariates(vec!["u".into(), "a".into()]);
    let data = read_parquet(dir.path(), &sel).unwrap();
    assert_eq!(data.covariate_names(), ["u", "a"]);
    let (x, _) = expected(13);
    assert_eq!(data.row(13), [x[4], x[0]]);
    assert_eq!(data.y()[13], x[2]);
    // A single file works too.
    let one = read_parquet(dir.path().join("part.2.parquet"), &sel).unwrap();
    assert_eq!(one.len(), 3);
    assert_eq!(one.row(1), data.row(13));
}

#[test]
fn errors_name_the_file_the_column_and_the_row() {
    let dir = sharded_dir();
    let msg = |r: Result<_, Error>| r.map(|_: tallmc_models::Dataset| ()).unwrap_err().to_string();
    // A missing response lists the columns.
    let m = msg(read_parquet(dir.path(), &ColumnSelection::with_response("target")));
    assert!(m.contains("no column `target` (the response)") && m.contains("a (Float64)"), "{m}");
    // A named covariate that holds text.
    let sel = ColumnSelection::default().with_covariates(vec!["label".into()]);
    let m = msg(read_parquet(dir.path(), &sel));
    assert!(m.contains("column `label` has type Utf8") && m.contains("--columns"), "{m}");
    // An empty directory.
    let empty = tempfile::tempdir().unwrap();
    let m = msg(read_parquet(empty.path(), &ColumnSelection::default()));
    assert!(m.contains("no Parquet files"), "{m}");
    // No such path.
    let m = msg(read_parquet(empty.path().join("nope.parquet"), &ColumnSelection::default()));
    assert!(m.contains("nope.parquet") && m.contains("cannot open"), "{m}");
    // Not a Parquet file.
    let fake = empty.path().join("fake.parquet");
    std::fs::write(&fake, b"y,a\n1,2\n").unwrap();
    let m = msg(read_parquet(&fake, &ColumnSelection::default()));
    assert!(m.contains("not a readable Parquet file"), "{m}");
}

#[test]
fn bad_values_are_errors_naming_shard_column_and_row() {
    let dir = tempfile::tempdir().unwrap();
    let ok = |p: &str| {
        write(&dir.path().join(p), vec![("y", f64s(&[0.0, 1.0])), ("a", f64s(&[1.0, 2.0]))])
    };
    ok("part.0.parquet");
    // A null in row 2 of the second shard (row 4 overall).
    let a: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0), Some(2.0), None]));
    write(&dir.path().join("part.1.parquet"), vec![("y", f64s(&[0.0, 1.0, 0.0])), ("a", a)]);
    let m = read_parquet(dir.path(), &ColumnSelection::default()).unwrap_err().to_string();
    assert!(
        m.contains("part.1.parquet")
            && m.contains("column `a`, row 2 of this file (row 4 overall)")
            && m.contains("null"),
        "{m}"
    );

    for (name, array, what) in [
        ("nan", f64s(&[1.0, f64::NAN]), "not finite"),
        ("inf", f64s(&[f64::INFINITY, 1.0]), "not finite"),
        ("big", Arc::new(Int64Array::from(vec![1, (1i64 << 53) + 1])) as ArrayRef, "2^53"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(format!("{name}.parquet"));
        write(&f, vec![("y", f64s(&[0.0, 1.0])), ("a", array)]);
        let m = read_parquet(&f, &ColumnSelection::default()).unwrap_err().to_string();
        assert!(m.contains(what) && m.contains("column `a`"), "{name}: {m}");
    }
    // 2^53 itself is exact, and int32 converts.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("edge.parquet");
    let a: ArrayRef = Arc::new(Int64Array::from(vec![1i64 << 53, -(1i64 << 53)]));
    let b: ArrayRef = Arc::new(Int32Array::from(vec![i32::MIN, i32::MAX]));
    write(&f, vec![("y", f64s(&[0.0, 1.0])), ("a", a), ("b", b)]);
    let data = read_parquet(&f, &ColumnSelection::default()).unwrap();
    assert_eq!(data.row(0), [9_007_199_254_740_992.0, f64::from(i32::MIN)]);

    // A shard without a selected column.
    let d = tempfile::tempdir().unwrap();
    write(&d.path().join("part.0.parquet"), vec![("y", f64s(&[0.0])), ("a", f64s(&[1.0]))]);
    write(&d.path().join("part.1.parquet"), vec![("y", f64s(&[0.0])), ("b", f64s(&[1.0]))]);
    let m = read_parquet(d.path(), &ColumnSelection::default()).unwrap_err().to_string();
    assert!(m.contains("part.1.parquet") && m.contains("no column `a` (a covariate)"), "{m}");
}
