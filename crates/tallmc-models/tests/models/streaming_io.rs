//! Streaming I/O: [`CsvRowReader`] read in chunks of any size gives `read_csv`'s numbers bit for
//! bit and its errors word for word; [`BinaryWriter`] fed uneven chunks writes the bytes and the
//! header `write_binary` writes, reads back bit for bit, and leaves no files when abandoned or
//! given bad rows.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tallmc_models::{
    BinaryWriter, CsvRowReader, Dataset, Error, read_binary, read_csv, synthetic, write_binary,
};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A CSV file with the format's leniencies: a byte-order mark, quoted names and values, the
/// response in the middle, `\r\n` and `\n` line ends, blank lines, awkward numbers.
fn awkward_csv(rows: usize) -> String {
    let mut text = String::from("\u{feff}\"a\", y ,b, \"c d\"\r\n");
    for i in 0..rows {
        let a = (i as f64 * 0.1).sin() * 1e-300;
        let y = (i % 2) as f64;
        let b = if i % 5 == 0 { -0.0 } else { (i as f64).sqrt() * 1e8 };
        let c = 0.1 + i as f64 / 3.0;
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        if i % 4 == 0 {
            write!(text, "\"{a:?}\",{y}, {b:e} ,{c:?}{end}").unwrap();
        } else {
            write!(text, "{a:?},{y:?},{b:?},\"{c}\"{end}").unwrap();
        }
        if i % 97 == 0 {
            text.push_str(if i % 2 == 0 { "\n" } else { "  \r\n" });
        }
    }
    text
}

/// Reads `path` with chunks of `max_rows`, concatenating the chunks.
fn read_chunked(path: &Path, max_rows: usize) -> (CsvRowReader, Vec<f64>, Vec<f64>) {
    let mut reader = CsvRowReader::open(path, "y").unwrap();
    let (mut x, mut y, mut bx, mut by) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    loop {
        let r = reader.read_chunk(max_rows, &mut bx, &mut by).unwrap();
        assert!(r <= max_rows);
        assert_eq!((by.len(), bx.len()), (r, r * reader.num_covariates()));
        if r == 0 {
            break;
        }
        x.extend_from_slice(&bx);
        y.extend_from_slice(&by);
    }
    (reader, x, y)
}

#[test]
fn csv_chunks_of_any_size_give_read_csv_bits() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "awkward.csv", &awkward_csv(1_000));
    let whole = read_csv(&p, "y").unwrap();
    assert_eq!(whole.len(), 1_000);
    assert_eq!(whole.covariate_names(), ["a", "b", "c d"]);
    let size = std::fs::metadata(&p).unwrap().len();
    for max_rows in [1, 7, 1_000_000] {
        let (mut reader, x, y) = read_chunked(&p, max_rows);
        assert_eq!(reader.covariate_names(), whole.covariate_names(), "chunks of {max_rows}");
        assert_eq!(bits(&x), bits(whole.x()), "chunks of {max_rows}");
        assert_eq!(bits(&y), bits(whole.y()), "chunks of {max_rows}");
        assert_eq!(reader.rows_read(), 1_000);
        assert_eq!(reader.line(), whole.line_of_row(999).unwrap());
        assert_eq!((reader.bytes_read(), reader.total_bytes()), (size, size));
        // The end of the file stays the end.
        let (mut bx, mut by) = (vec![1.0], vec![1.0]);
        assert_eq!(reader.read_chunk(3, &mut bx, &mut by).unwrap(), 0);
        assert!(bx.is_empty() && by.is_empty());
    }
}

#[test]
fn bytes_read_grows_with_the_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "d.csv", "y,a\n1,2\n3,4\n5,6\n");
    let mut reader = CsvRowReader::open(&p, "y").unwrap();
    assert_eq!((reader.bytes_read(), reader.total_bytes(), reader.line()), (4, 16, 1));
    let (mut x, mut y) = (Vec::new(), Vec::new());
    assert_eq!(reader.read_chunk(2, &mut x, &mut y).unwrap(), 2);
    assert_eq!((reader.bytes_read(), reader.line()), (12, 3));
    assert_eq!((x, y), (vec![2.0, 4.0], vec![1.0, 3.0]));
}

/// The reader's error for `text` (opening or reading in chunks of `max_rows`), and
/// `read_csv`'s.
fn both_errors(text: &str, max_rows: usize) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bad.csv", text);
    let whole = read_csv(&p, "y").unwrap_err();
    let streamed = (|| {
        let mut reader = CsvRowReader::open(&p, "y")?;
        let (mut x, mut y) = (Vec::new(), Vec::new());
        while reader.read_chunk(max_rows, &mut x, &mut y)? > 0 {}
        Ok::<_, Error>(())
    })()
    .unwrap_err();
    assert!(matches!(streamed, Error::Csv { .. }), "{streamed:?}");
    (streamed.to_string(), whole.to_string())
}

#[test]
fn reader_errors_name_the_line_as_read_csv_does() {
    // A bad cell in the third chunk, after a blank line.
    let (streamed, whole) = both_errors("y,a,b\n1,2,3\n1,2,3\n\n1,2,3\n1,2,abc\n", 2);
    assert_eq!(streamed, whole);
    assert!(streamed.ends_with(
        "bad.csv:6:3 (column `b`): `abc` is not a number; expected a decimal floating-point value"
    ));
    // A ragged row, a non-finite value, an unterminated quote, a bad header.
    for (text, at) in [
        ("y,a\n1,2\n\n3\n", ":4: row has 1 fields"),
        ("a,y\n1,2\ninf,0\n", ":3:1 (column `a`): value `inf` is not finite"),
        ("y,a\n1,\"2\n", ":2:2 (column `a`): unterminated quoted field"),
        ("y,a,a\n1,2,3\n", ":1:3 (column `a`): duplicate column name"),
        ("x,a\n1,2\n", ":1: no response column named `y`"),
    ] {
        let (streamed, whole) = both_errors(text, 1);
        assert_eq!(streamed, whole);
        assert!(streamed.contains(at), "{streamed}");
    }
}

#[test]
fn no_data_rows_is_an_error_of_the_first_read_that_reaches_the_end() {
    for text in ["y,a\n", "y,a\n\n  \n"] {
        let (streamed, whole) = both_errors(text, 10);
        assert_eq!(streamed, whole);
        assert!(streamed.contains("no data rows after the header; expected at least one"));
    }
    let (streamed, _) = both_errors("y,a\n\n\n", 10);
    assert!(streamed.contains("bad.csv:3: no data rows"), "{streamed}");
}

#[test]
fn reader_refuses_to_go_on_after_an_error_and_zero_row_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bad.csv", "y,a\n1,x\n1,2\n");
    let mut reader = CsvRowReader::open(&p, "y").unwrap();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    assert!(reader.read_chunk(0, &mut x, &mut y).unwrap_err().to_string().contains("max_rows"));
    assert!(reader.read_chunk(5, &mut x, &mut y).is_err());
    let again = reader.read_chunk(5, &mut x, &mut y).unwrap_err().to_string();
    assert!(again.contains("earlier error"), "{again}");
}

/// A data set with metadata (`theta_true`, `seed`) for the writer tests.
fn sample() -> Dataset {
    synthetic::higgs_like(1_003, 7).unwrap().data
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writer_in_uneven_chunks_matches_write_binary() {
    let dir = tempfile::tempdir().unwrap();
    let data = sample();
    let (n, d) = (data.len(), data.num_covariates());
    let (bin_a, json_a) = write_binary(&data, dir.path().join("whole")).unwrap();

    let mut w =
        BinaryWriter::create(dir.path().join("streamed.json"), data.covariate_names().to_vec())
            .unwrap();
    let mut start = 0;
    for size in [1, 0, 7, 300, 2, 10_000].into_iter().cycle() {
        let end = (start + size).min(n);
        w.write_rows(&data.x()[start * d..end * d], &data.y()[start..end]).unwrap();
        assert_eq!(w.rows_written(), end as u64);
        start = end;
        if start == n {
            break;
        }
    }
    assert!(dir.path().join("streamed.bin.y-part").exists());
    assert!(!dir.path().join("streamed.json").exists(), "the header is written last");
    let (bin_b, json_b) = w.finish(data.metadata().clone()).unwrap();
    assert_eq!(bin_b, dir.path().join("streamed.bin"));
    assert_eq!(json_b, dir.path().join("streamed.json"));
    assert_eq!(
        files_in(dir.path()),
        ["streamed.bin", "streamed.json", "whole.bin", "whole.json"],
        "the y part is removed"
    );

    assert_eq!(std::fs::read(&bin_a).unwrap(), std::fs::read(&bin_b).unwrap());
    assert_eq!(json(&json_a), json(&json_b));
    assert_eq!(json(&json_b)["n"], n);
    assert_eq!(json(&json_b)["seed"], 7);
    let back = read_binary(&bin_b, true).unwrap();
    assert_eq!(back.covariate_names(), data.covariate_names());
    assert_eq!(bits(back.x()), bits(data.x()));
    assert_eq!(bits(back.y()), bits(data.y()));
    assert_eq!(back.metadata(), data.metadata());
}

#[test]
fn csv_to_binary_streamed_equals_read_csv_then_write_binary() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "awkward.csv", &awkward_csv(500));
    let whole = read_csv(&p, "y").unwrap();
    let (bin_a, json_a) = write_binary(&whole, dir.path().join("a")).unwrap();

    let mut reader = CsvRowReader::open(&p, "y").unwrap();
    let mut w =
        BinaryWriter::create(dir.path().join("b"), reader.covariate_names().to_vec()).unwrap();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    while reader.read_chunk(64, &mut x, &mut y).unwrap() > 0 {
        w.write_rows(&x, &y).unwrap();
    }
    let (bin_b, json_b) = w.finish(serde_json::Map::new()).unwrap();
    assert_eq!(std::fs::read(&bin_a).unwrap(), std::fs::read(&bin_b).unwrap());
    assert_eq!(json(&json_a), json(&json_b));
}

#[test]
fn a_dropped_writer_leaves_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let data = sample();
    // Even an earlier data set's header at the same path goes: it would describe a partial file.
    write_binary(&data, dir.path().join("d")).unwrap();
    let mut w = BinaryWriter::create(dir.path().join("d.bin"), vec!["a".into()]).unwrap();
    w.write_rows(&[1.0, 2.0], &[0.0, 1.0]).unwrap();
    assert_eq!(files_in(dir.path()), ["d.bin", "d.bin.y-part"]);
    drop(w);
    assert!(files_in(dir.path()).is_empty(), "{:?}", files_in(dir.path()));

    // A writer that saw no rows cannot finish, and leaves nothing either.
    let w = BinaryWriter::create(dir.path().join("e"), vec!["a".into()]).unwrap();
    let msg = w.finish(serde_json::Map::new()).unwrap_err().to_string();
    assert!(msg.contains("at least one row"), "{msg}");
    assert!(files_in(dir.path()).is_empty(), "{:?}", files_in(dir.path()));
}

#[test]
fn bad_rows_and_names_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let names = vec!["a".to_string(), "b".to_string()];
    let mut w = BinaryWriter::create(dir.path().join("d"), names).unwrap();
    w.write_rows(&[1.0, 2.0, 3.0, 4.0], &[0.0, 1.0]).unwrap();

    let msg = w.write_rows(&[1.0, 2.0, 3.0], &[0.0, 1.0]).unwrap_err().to_string();
    assert!(msg.contains("dimension mismatch"), "{msg}");
    assert!(msg.contains("expected 4, found 3"), "{msg}");

    // Row 2 of this chunk is row 4 overall; column `b`.
    let msg = w
        .write_rows(&[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN], &[0.0, 1.0, 0.0])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("non-finite value NaN at row 4 (0-based), column `b`"), "{msg}");
    let msg = w.write_rows(&[1.0, 2.0], &[f64::NEG_INFINITY]).unwrap_err().to_string();
    assert!(msg.contains("non-finite value -inf at row 2 (0-based), column `y`"), "{msg}");
    // The earlier of a bad covariate and a bad response is named.
    let msg = w.write_rows(&[1.0, 2.0, 3.0, f64::NAN], &[0.0, f64::NAN]).unwrap_err().to_string();
    assert!(msg.contains("row 3 (0-based), column `b`"), "{msg}");
    let msg = w.write_rows(&[1.0, 2.0, f64::NAN, 3.0], &[f64::NAN, 0.0]).unwrap_err().to_string();
    assert!(msg.contains("row 2 (0-based), column `y`"), "{msg}");

    // Nothing of the bad chunks was written.
    assert_eq!(w.rows_written(), 2);
    let (bin, _) = w.finish(serde_json::Map::new()).unwrap();
    let back = read_binary(&bin, true).unwrap();
    assert_eq!(back.x(), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(back.y(), [0.0, 1.0]);

    for bad in [vec!["y".to_string()], vec!["a".into(), "a".into()], vec!["lp__".into()]] {
        let msg = BinaryWriter::create(dir.path().join("n"), bad).unwrap_err().to_string();
        assert!(msg.contains("covariate name"), "{msg}");
    }
    assert!(!dir.path().join("n.bin").exists());
}

#[test]
fn writer_without_covariates() {
    let dir = tempfile::tempdir().unwrap();
    let data = Dataset::from_response(vec![1.5, -2.0, 3.25]).unwrap();
    let (bin_a, json_a) = write_binary(&data, dir.path().join("a")).unwrap();
    let mut w = BinaryWriter::create(dir.path().join("b"), Vec::new()).unwrap();
    w.write_rows(&[], &[1.5]).unwrap();
    w.write_rows(&[], &[-2.0, 3.25]).unwrap();
    assert!(w.write_rows(&[1.0], &[1.0]).is_err());
    let (bin_b, json_b) = w.finish(serde_json::Map::new()).unwrap();
    assert_eq!(std::fs::read(&bin_a).unwrap(), std::fs::read(&bin_b).unwrap());
    assert_eq!(json(&json_a), json(&json_b));
}
