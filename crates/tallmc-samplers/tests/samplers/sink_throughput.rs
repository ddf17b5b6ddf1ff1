//! Rows per second of [`CsvSink`] against the `BufWriter<File>` it replaced, measured in the
//! same run (fastest of 5): `cargo test -p tallmc-samplers --test samplers sink_throughput -- --ignored
//! --nocapture` (the test profile is optimized).

#![allow(clippy::print_stderr)]

use std::fs::File;
use std::hint::black_box;
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tallmc_core::StatColumns;
use tallmc_samplers::continuous::GridStats;
use tallmc_samplers::sink::{ChainFooter, ChainHeader, CsvSink, DrawRecord, DrawSink};

const ROWS: usize = 300_000;
const DIM: usize = 10;
/// Runs of each, interleaved; the fastest counts.
const REPS: usize = 5;

fn rows() -> Vec<(GridStats, Vec<f64>)> {
    (0..1000)
        .map(|k| {
            let x = k as f64;
            let stats = GridStats { time: 0.5 * x, n_segments: k % 7, ..Default::default() };
            (stats, (0..DIM).map(|j| (x + j as f64).sin() * 10.0).collect())
        })
        .collect()
}

/// The sink this one replaced: the same line, written with `BufWriter<File>::write_all`.
fn baseline(path: &Path, data: &[(GridStats, Vec<f64>)]) -> Duration {
    use tallmc_samplers::sink::push_number;
    let mut out = BufWriter::new(File::create(path).unwrap());
    let (mut line, mut values) = (String::new(), Vec::new());
    let start = Instant::now();
    for k in 0..ROWS {
        let (stats, x) = &data[k % data.len()];
        values.clear();
        StatColumns::values(stats, &mut values).unwrap();
        line.clear();
        push_number(&mut line, f64::NAN);
        for &z in values.iter().chain(x) {
            line.push(',');
            push_number(&mut line, z);
        }
        line.push('\n');
        out.write_all(line.as_bytes()).unwrap();
    }
    out.flush().unwrap();
    start.elapsed()
}

fn csv_sink(path: &Path, data: &[(GridStats, Vec<f64>)]) -> Duration {
    let names: Vec<String> = (1..=DIM).map(|j| format!("theta.{j}")).collect();
    let columns = tallmc_samplers::sink::stat_column_names::<GridStats>().unwrap();
    let header = ChainHeader { seed: 1, num_draws: ROWS, ..ChainHeader::new(&names, &columns) };
    let mut sink = CsvSink::create(path).unwrap();
    DrawSink::<GridStats>::begin(&mut sink, &header).unwrap();
    let start = Instant::now();
    for k in 0..ROWS {
        let (stats, x) = &data[k % data.len()];
        let rec =
            DrawRecord { iteration: k, warmup: false, log_density: f64::NAN, stats, position: x };
        sink.record(&rec).unwrap();
    }
    DrawSink::<GridStats>::finish(&mut sink, &ChainFooter::default()).unwrap();
    start.elapsed()
}

fn fastest_of_3(mut f: impl FnMut() -> Duration) -> Duration {
    (0..3).map(|_| f()).min().unwrap()
}

#[test]
#[ignore = "a measurement"]
fn csv_sink_rows_per_second_against_bufwriter() {
    let dir = tempfile::tempdir().unwrap();
    let data = rows();
    let (a, b) = (dir.path().join("baseline.csv"), dir.path().join("sink.csv"));
    // Interleaved, so that both see the same machine load.
    let mut base = Duration::MAX;
    let mut sink = Duration::MAX;
    for _ in 0..REPS {
        base = base.min(baseline(&a, &data));
        sink = sink.min(csv_sink(&b, &data));
    }
    let per_s = |d: Duration| ROWS as f64 / d.as_secs_f64();
    let bytes = std::fs::metadata(&a).unwrap().len() as f64 / ROWS as f64;
    eprintln!(
        "rows_{ROWS}_dim_{DIM}_stats_8 ({bytes:.0} bytes/row): BufWriter {:.0} rows/s, CsvSink \
         {:.0} rows/s, ratio {:.3} (time CsvSink / BufWriter)",
        per_s(base),
        per_s(sink),
        sink.as_secs_f64() / base.as_secs_f64()
    );
    // What a row costs the new sink beyond the old one: an uncontended lock and, every few
    // rows, a clock read.
    let n = 10_000_000;
    let m = Mutex::new(0u64);
    let lock = fastest_of_3(|| {
        let t = Instant::now();
        for _ in 0..n {
            *black_box(&m).lock().unwrap() += 1;
        }
        t.elapsed()
    });
    let clock = fastest_of_3(|| {
        let t = Instant::now();
        for _ in 0..n {
            black_box(Instant::now());
        }
        t.elapsed()
    });
    let row = base.as_secs_f64() / ROWS as f64;
    eprintln!(
        "uncontended lock {:.1} ns ({:.2} % of a row), Instant::now {:.1} ns ({:.2} % of a row), \
         a row {:.0} ns",
        lock.as_secs_f64() / n as f64 * 1e9,
        lock.as_secs_f64() / n as f64 / row * 100.0,
        clock.as_secs_f64() / n as f64 * 1e9,
        clock.as_secs_f64() / n as f64 / row * 100.0,
        row * 1e9
    );
    // The same rows.
    let text = std::fs::read_to_string(&b).unwrap();
    let sink_rows: String =
        text.lines().filter(|l| !l.starts_with('#')).skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(sink_rows, std::fs::read_to_string(&a).unwrap());
}
