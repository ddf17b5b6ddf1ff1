//! Output files that lose nothing: whole rows only, cut back on a write error, abandoned from
//! another thread with a footer, whole after a SIGKILL; no allocation in proportion to the
//! draws asked for.

use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::LinearGaussian;
use tallmc_core::{EventKind, EventTotals, Segment, SegmentStats};
use tallmc_samplers::continuous::{Budget, GridStats, SegmentFooter, SegmentHeader};
use tallmc_samplers::sink::{
    ABANDONED_FOOTER, ChainFooter, ChainHeader, ColumnMemorySink, CsvSink, DrawRecord, DrawSink,
    MemorySink, RowFile, RowTarget, memory_sink_bytes,
};
use tallmc_samplers::{
    Driver, Progress, RandomWalkConfig, RandomWalkMetropolis, RunConfig, SegmentSink, SkeletonSink,
};

/// An in-memory target that takes `limit` bytes in all, then fails with ENOSPC. With
/// `partial`, the write that crosses the limit takes the bytes that fit (as a nearly full disk
/// does) and the next one fails; without, it fails whole.
#[derive(Clone)]
struct FullDisk {
    data: Arc<Mutex<Vec<u8>>>,
    limit: usize,
    partial: bool,
}

impl FullDisk {
    fn new(limit: usize, partial: bool) -> Self {
        Self { data: Arc::default(), limit, partial }
    }
    fn text(&self) -> String {
        String::from_utf8(self.data.lock().unwrap().clone()).unwrap()
    }
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut data = self.data.lock().unwrap();
        let room = self.limit.saturating_sub(data.len());
        if room == 0 || (!self.partial && buf.len() > room) {
            return Err(io::Error::from_raw_os_error(28));
        }
        let n = buf.len().min(room);
        data.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl RowTarget for FullDisk {
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.data.lock().unwrap().truncate(len as usize);
        Ok(())
    }
}

const NAME: &str = "runs/h/chain_2.csv";

fn names() -> Vec<String> {
    vec!["alpha".into(), "beta".into(), "gamma".into()]
}

fn grid_columns() -> Vec<String> {
    tallmc_samplers::sink::stat_column_names::<GridStats>().unwrap()
}

/// The header of chain 1 (seed 1, no warmup, no comments) with these columns and draws.
fn grid_header<'a>(
    names: &'a [String], stat_columns: &'a [String], num_draws: usize,
) -> ChainHeader<'a> {
    ChainHeader { seed: 1, num_draws, ..ChainHeader::new(names, stat_columns) }
}

/// Row `k` of the test chain: numbers of every length (shortest round-trip form).
fn draw(k: usize) -> (GridStats, [f64; 3]) {
    let x = k as f64;
    let stats = GridStats { time: 0.5 * x, n_segments: k as u64 % 7, ..Default::default() };
    (stats, [x.sin() * 1e3, 1.0 / (x + 1.0), -x])
}

/// Writes a chain of `rows` draws to `sink` as the driver does, stopping at the first error
/// (then trying to write three more rows and the footer, which must fail the same way).
fn write_chain(sink: &mut CsvSink, rows: usize) -> io::Result<()> {
    let (names, columns) = (names(), grid_columns());
    let config = vec![("model".to_string(), "test".to_string())];
    let header = ChainHeader {
        chain: 1,
        seed: 7,
        parameter_names: &names,
        stat_columns: &columns,
        num_warmup: 0,
        num_draws: rows,
        save_warmup: false,
        config: &config,
    };
    let mut run = || -> io::Result<()> {
        DrawSink::<GridStats>::begin(sink, &header)?;
        DrawSink::<GridStats>::end_warmup(sink, &["Step size = 0.5".to_string()])?;
        for k in 0..rows {
            let (stats, x) = draw(k);
            let rec = DrawRecord {
                iteration: k,
                warmup: false,
                log_density: f64::NAN,
                stats: &stats,
                position: &x,
            };
            sink.record(&rec)?;
        }
        DrawSink::<GridStats>::finish(sink, &ChainFooter::default())
    };
    let result = run();
    if let Err(e) = &result {
        let (stats, x) = draw(0);
        let rec = DrawRecord {
            iteration: 0,
            warmup: false,
            log_density: 0.0,
            stats: &stats,
            position: &x,
        };
        for _ in 0..3 {
            let again = sink.record(&rec).unwrap_err();
            assert_eq!(again.to_string(), e.to_string());
        }
        let again = DrawSink::<GridStats>::finish(sink, &ChainFooter::default()).unwrap_err();
        assert_eq!(again.to_string(), e.to_string());
    }
    result
}

/// Checks that `text` holds whole lines only and that every row after the header has the
/// header's column count; returns the number of rows.
fn check_whole_rows(text: &str) -> usize {
    assert!(text.is_empty() || text.ends_with('\n'), "a partial last line: {text:?}");
    let mut data = text.lines().filter(|l| !l.starts_with('#'));
    let Some(header) = data.next() else { return 0 };
    let width = header.split(',').count();
    let mut rows = 0;
    for l in data {
        assert_eq!(l.split(',').count(), width, "a row of the wrong width: {l:?}");
        rows += 1;
    }
    rows
}

/// The number in "... (1,234 rows)" at the end of a write error's message.
fn rows_in_message(msg: &str) -> usize {
    let tail = &msg[msg.rfind('(').unwrap() + 1..];
    tail.split(' ').next().unwrap().replace(',', "").parse().unwrap()
}

#[test]
fn a_full_disk_leaves_whole_rows_and_an_error_naming_the_file() {
    const ROWS: usize = 3000;
    let full = FullDisk::new(usize::MAX, true);
    write_chain(&mut CsvSink::with_target(full.clone(), NAME), ROWS).unwrap();
    let reference = full.text();
    assert_eq!(check_whole_rows(&reference), ROWS);
    assert!(reference.len() > 2 * 65_536, "the test chain spans several buffers");
    let header_end = reference.find("\nnan,").unwrap() + 1;
    let limits = [
        0,
        1,
        17,
        header_end - 1,
        header_end,
        header_end + 1,
        header_end + 40,
        65_535,
        65_536,
        65_537,
        100_000,
        reference.len() / 2,
        reference.len() - 1,
        reference.len(),
        reference.len() + 1,
    ];
    for partial in [true, false] {
        for &limit in &limits {
            let disk = FullDisk::new(limit, partial);
            let result = write_chain(&mut CsvSink::with_target(disk.clone(), NAME), ROWS);
            let text = disk.text();
            let rows = check_whole_rows(&text);
            assert!(reference.starts_with(&text), "limit {limit}: not a prefix of the output");
            if limit >= reference.len() {
                result.unwrap();
                assert_eq!(text, reference);
                continue;
            }
            let e = result.unwrap_err();
            let msg = e.to_string();
            assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{msg}");
            assert!(
                msg.starts_with(
                    "cannot write runs/h/chain_2.csv (No space left on device); the file was cut \
                     back to its last whole row ("
                ),
                "{msg}"
            );
            assert_eq!(rows_in_message(&msg), rows, "limit {limit}: {msg}");
            if partial {
                // Every byte that fit was taken: the file is cut at the last whole line there.
                let cut = reference[..limit].rfind('\n').map_or(0, |i| i + 1);
                assert_eq!(text.len(), cut, "limit {limit}");
            }
        }
    }
}

#[test]
fn the_error_says_row_for_one_row_and_groups_thousands() {
    let full = FullDisk::new(usize::MAX, true);
    write_chain(&mut CsvSink::with_target(full.clone(), NAME), 1500).unwrap();
    let reference = full.text();
    let header_end = reference.find("\nnan,").unwrap() + 1;
    let one_row = reference[header_end..].find('\n').unwrap() + header_end + 1;
    let disk = FullDisk::new(one_row + 3, true);
    let msg = write_chain(&mut CsvSink::with_target(disk, NAME), 1500).unwrap_err().to_string();
    assert!(msg.ends_with("(1 row)"), "{msg}");
    let last_row_end = reference.find("\n# \n#  Elapsed").unwrap();
    let disk = FullDisk::new(last_row_end, true);
    let msg = write_chain(&mut CsvSink::with_target(disk, NAME), 1500).unwrap_err().to_string();
    assert!(msg.ends_with("(1,499 rows)"), "{msg}");
}

/// A skeleton of `n` Zig-Zag segments of dimension 2, through `sink`, stopping at the first
/// error.
fn write_skeleton(sink: &mut SkeletonSink, n: usize) -> io::Result<()> {
    let names = vec!["a".to_string(), "b".to_string()];
    let header = SegmentHeader {
        chain: 0,
        seed: 3,
        parameter_names: &names,
        warmup: Budget::Time(1.0),
        sampling: Budget::Time(n as f64),
        config: &[],
        adaptation: &[],
    };
    sink.begin(&header)?;
    let mut v = [1.0, -1.0];
    for k in 0..n {
        let x = [k as f64 * 0.25, (k as f64).sqrt()];
        let j = (k % 2) as u32;
        let s = Segment {
            start_time: k as f64,
            duration: 1.0,
            position: &x,
            velocity: &v,
            end: EventKind::Flip(j),
        };
        sink.segment(&s, &SegmentStats::NONE)?;
        v[j as usize] = -v[j as usize];
    }
    let footer = SegmentFooter { warmup: EventTotals::default(), ..Default::default() };
    sink.finish(&footer)
}

#[test]
fn a_full_disk_cuts_a_skeleton_back_to_whole_rows() {
    const SEGMENTS: usize = 4000;
    let full = FullDisk::new(usize::MAX, true);
    write_skeleton(
        &mut SkeletonSink::with_target(full.clone(), "runs/zz/skeleton_1.csv"),
        SEGMENTS,
    )
    .unwrap();
    let reference = full.text();
    assert_eq!(check_whole_rows(&reference), SEGMENTS + 1);
    for limit in [0, 300, 65_536, 100_001, reference.len() - 1] {
        let disk = FullDisk::new(limit, true);
        let mut sink = SkeletonSink::with_target(disk.clone(), "runs/zz/skeleton_1.csv");
        let msg = write_skeleton(&mut sink, SEGMENTS).unwrap_err().to_string();
        let text = disk.text();
        assert!(reference.starts_with(&text));
        let cut = reference[..limit].rfind('\n').map_or(0, |i| i + 1);
        assert_eq!(text.len(), cut, "limit {limit}");
        assert!(msg.starts_with("cannot write runs/zz/skeleton_1.csv (No space left"), "{msg}");
        assert_eq!(rows_in_message(&msg), check_whole_rows(&text));
    }
}

#[test]
fn a_file_is_cut_back_and_continues_at_its_new_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(b"abc\ndef").unwrap();
    f.truncate(4).unwrap();
    f.write_all(b"x\n").unwrap();
    drop(f);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "abc\nx\n");
}

#[test]
fn a_normal_run_writes_the_same_bytes_as_before() {
    // The layout written by the BufWriter-based sink this one replaced, byte for byte.
    let full = FullDisk::new(usize::MAX, true);
    write_chain(&mut CsvSink::with_target(full.clone(), NAME), 3).unwrap();
    let expected = format!(
        "# tallmc {v}\n# method = sample (Default)\n#   num_samples = 3\n#   num_warmup = 0\n\
         #   save_warmup = 0\n#   thin = 1 (Default)\n# id = 2\n# seed = 7\n# model = test\n\
         lp__,time__,n_segments__,n_events__,n_proposals__,n_terms__,n_gradients__,n_hessians__,\
         n_divergent__,alpha,beta,gamma\n\
         # Adaptation terminated\n# Step size = 0.5\n\
         nan,0,0,0,0,0,0,0,0,0,1,-0\n\
         nan,0.5,1,0,0,0,0,0,0,841.4709848078965,0.5,-1\n\
         nan,1,2,0,0,0,0,0,0,909.2974268256817,0.3333333333333333,-2\n\
         # \n\
         #  Elapsed Time: 0.000000 seconds (Warm-up)\n\
         #                0.000000 seconds (Sampling)\n\
         #                0.000000 seconds (Total)\n\
         # \n\
         # per-datum evaluations (warmup): terms = 0, gradients = 0, hessians = 0\n\
         # per-datum evaluations (sampling): terms = 0, gradients = 0, hessians = 0\n",
        v = env!("CARGO_PKG_VERSION")
    );
    assert_eq!(full.text(), expected);
}

#[test]
fn abandoning_from_another_thread_leaves_whole_rows_then_the_footer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain_1.csv");
    let mut sink = CsvSink::create(&path).unwrap();
    let handle = sink.handle();
    assert_eq!(handle.path(), path);
    let written = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let (names, columns) = (names(), grid_columns());
            let header = grid_header(&names, &columns, 1 << 40);
            DrawSink::<GridStats>::begin(&mut sink, &header).unwrap();
            let mut k = 0;
            while !stop.load(Ordering::Relaxed) {
                let (stats, x) = draw(k);
                let rec = DrawRecord {
                    iteration: k,
                    warmup: false,
                    log_density: -1.5,
                    stats: &stats,
                    position: &x,
                };
                // Rows after the abandon are ignored silently.
                sink.record(&rec).unwrap();
                k += 1;
                written.store(k as u64, Ordering::Relaxed);
            }
            // So is the footer of a chain that ends after all.
            DrawSink::<GridStats>::finish(&mut sink, &ChainFooter::default()).unwrap();
        });
        while written.load(Ordering::Relaxed) < 20_000 {
            std::thread::yield_now();
        }
        handle.abandon(ABANDONED_FOOTER).unwrap();
        let at_abandon = written.load(Ordering::Relaxed);
        while written.load(Ordering::Relaxed) < at_abandon + 20_000 {
            std::thread::yield_now();
        }
        stop.store(true, Ordering::Relaxed);
    });
    // A second abandon (another handle, after the chain ended) does nothing.
    handle.abandon("# again").unwrap();
    drop(sink);
    let text = std::fs::read_to_string(&path).unwrap();
    let rows = check_whole_rows(&text);
    assert!(rows >= 20_000, "{rows} rows");
    assert!(text.ends_with(&format!("\n{ABANDONED_FOOTER}\n")), "{}", &text[text.len() - 300..]);
    assert!(!text.contains("Elapsed Time") && !text.contains("# again"));
    assert_eq!(text.matches(ABANDONED_FOOTER).count(), 1);
}

#[test]
fn an_abandon_footer_is_made_of_comment_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    let mut file = RowFile::create(&path).unwrap();
    file.line("x,y").unwrap();
    file.row("1,2").unwrap();
    file.abandon("# interrupted\nrows above are whole").unwrap();
    file.row("3,4").unwrap();
    file.line("# late").unwrap();
    assert!(file.is_closed());
    assert_eq!(file.rows_written(), 1);
    drop(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, "x,y\n1,2\n# interrupted\n# rows above are whole\n");
}

#[test]
fn a_row_whose_writer_panics_leaves_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    let mut sink = CsvSink::create(&path).unwrap();
    let handle = sink.handle();
    let (names, columns) = (names(), grid_columns());
    let header = grid_header(&names, &columns, 2);
    DrawSink::<GridStats>::begin(&mut sink, &header).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handle
            .lock()
            .row_with(|line| {
                line.push_str("1,2,");
                panic!("a formatter panics half-way through a row");
            })
            .unwrap();
    }));
    assert!(panicked.is_err());
    // The lock is poisoned; the file is still usable and holds no trace of the row.
    let (stats, x) = draw(1);
    let rec =
        DrawRecord { iteration: 0, warmup: false, log_density: 0.5, stats: &stats, position: &x };
    sink.record(&rec).unwrap();
    handle.abandon(ABANDONED_FOOTER).unwrap();
    drop(sink);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(check_whole_rows(&text), 1);
    assert!(!text.contains("1,2,"));
}

/// Bytes of `path` on disk, while its writer is still running.
fn on_disk(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn slow_rows_reach_the_file_within_a_fraction_of_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.csv");
    let mut file = RowFile::create(&path).unwrap();
    file.line("k,x").unwrap();
    let start = Instant::now();
    let mut k = 0;
    // A row every 2 ms for 1 s: about 12 KB, far below the buffer's 64 KiB.
    while start.elapsed() < Duration::from_secs(1) {
        file.row(&format!("{k},{}", k as f64 * 0.1)).unwrap();
        k += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    let text = on_disk(&path);
    let rows = check_whole_rows(&text);
    // Rows older than the write interval (plus generous slack for a loaded machine) are there.
    assert!(rows > 0 && rows as f64 >= 0.3 * k as f64, "{rows} of {k} rows on disk");
    assert!(file.bytes_written() < 65_536);
}

/// Run by `a_killed_writer_leaves_whole_lines` in a child process (does nothing otherwise):
/// writes rows to the file named by `TALLMC_ROW_FILE_CHILD` until killed, fast or slow.
#[test]
fn child_writer() {
    let Ok(path) = std::env::var("TALLMC_ROW_FILE_CHILD") else { return };
    let slow = std::env::var("TALLMC_ROW_FILE_SLOW").is_ok();
    let mut sink = CsvSink::create(&path).unwrap();
    let (names, columns) = (names(), grid_columns());
    let header = grid_header(&names, &columns, usize::MAX);
    DrawSink::<GridStats>::begin(&mut sink, &header).unwrap();
    for k in 0.. {
        let (stats, x) = draw(k);
        // lp__ holds the wall clock (seconds since 1970), for the parent to see how old the
        // last row on disk is when it kills this process.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        let rec = DrawRecord {
            iteration: k,
            warmup: false,
            log_density: now.as_secs_f64(),
            stats: &stats,
            position: &x,
        };
        sink.record(&rec).unwrap();
        if slow {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Starts `child_writer` in a child process writing to `path`, waits until it has written
/// lines, then `wait` ms more, kills it (SIGKILL) and returns the file and the wall-clock time
/// of the kill (seconds since 1970).
fn kill_a_writer(path: &Path, slow: bool, wait: u64) -> (String, f64) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    // The test's name in this binary: its module path without the crate's name.
    let child = format!("{}::child_writer", module_path!().split_once("::").map_or("", |p| p.1));
    cmd.args(["--exact", &child, "--nocapture", "--test-threads=1"])
        .env("TALLMC_ROW_FILE_CHILD", path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if slow {
        cmd.env("TALLMC_ROW_FILE_SLOW", "1");
    }
    let mut child = cmd.spawn().unwrap();
    // Wait until the file has lines (the child has started), then a while more. (A reader may
    // see a write in progress, so the lines are checked after the kill.)
    let start = Instant::now();
    while on_disk(path).lines().count() < 12 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(wait));
    let killed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    (on_disk(path), killed.as_secs_f64())
}

/// How often a SIGKILL lands during a write of a writer that does nothing else (the worst
/// case): `cargo test -p tallmc-samplers --test samplers -- --ignored --nocapture
/// kill_fragment_rate`.
#[test]
#[ignore = "a measurement: 40 kills"]
#[allow(clippy::print_stderr)]
fn kill_fragment_rate() {
    let dir = tempfile::tempdir().unwrap();
    let mut fragments = 0;
    let kills = 40;
    for k in 0..kills {
        let path = dir.path().join(format!("killed_{k}.csv"));
        let (text, _) = kill_a_writer(&path, false, 100 + 10 * k as u64);
        let fragment = text.len() - text.rfind('\n').map_or(0, |i| i + 1);
        fragments += usize::from(fragment > 0);
        std::fs::remove_file(&path).unwrap();
    }
    eprintln!("{fragments} of {kills} kills left an unterminated fragment");
}

#[test]
fn a_killed_writer_leaves_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    for (slow, wait) in [(false, 400), (false, 900), (true, 1200)] {
        let path = dir.path().join(format!("killed_{slow}_{wait}.csv"));
        let (text, killed) = kill_a_writer(&path, slow, wait);
        // A kill that lands during a write can leave one unterminated fragment at the end
        // (Linux stops a write between pages on SIGKILL); every terminated line is whole.
        let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        let fragment = &text[whole.len()..];
        assert!(fragment.len() < 65_536, "a fragment of {} bytes", fragment.len());
        let text = whole;
        let rows = check_whole_rows(text);
        assert!(rows > 0, "slow = {slow}: no rows");
        assert!(!text.contains("Elapsed"));
        // The rows lost are those of the last write interval (0.25 s), plus slack for a
        // loaded machine.
        let last = text.lines().last().unwrap();
        let made: f64 = last.split(',').next().unwrap().parse().unwrap();
        let lag = killed - made;
        assert!(lag < 1.0, "slow = {slow}: the last row on disk was made {lag} s before the kill");
    }
}

/// Raises the stop flag after `after` iterations.
struct StopAfter<'a> {
    after: usize,
    stop: &'a AtomicBool,
}

impl Progress for StopAfter<'_> {
    fn update(&self, _chain: usize, done: usize, _total: usize) {
        if done >= self.after {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

#[test]
fn a_trillion_draws_allocate_nothing_up_front() {
    let model = LinearGaussian::new(100, 3, 5);
    let rwm = RandomWalkMetropolis::new(RandomWalkConfig::default()).unwrap();
    let stop = AtomicBool::new(false);
    let progress = StopAfter { after: 500, stop: &stop };
    let config = RunConfig::new(100, 1_000_000_000_000, 2, 9);
    let sinks = vec![ColumnMemorySink::new(), ColumnMemorySink::new()];
    let out = Driver::new(config)
        .progress(&progress)
        .stop_when(&stop)
        .run(&model, &[vec![0.0; 3]], &rwm, sinks)
        .unwrap();
    for o in &out {
        assert!(o.report.interrupted);
        assert_eq!(o.sink.num_draws(), o.report.num_draws);
        assert!(o.sink.draws.capacity() <= 1 << 20, "{}", o.sink.draws.capacity());
    }
    let mut typed = MemorySink::<GridStats>::new();
    let names = names();
    let header = grid_header(&names, &[], usize::MAX);
    typed.begin(&header).unwrap();
    assert!(typed.draws.capacity() <= 3 * 4096 && typed.stats.capacity() <= 4096);
    // A wide model: the reservation is bounded in values too, not only in draws.
    let wide: Vec<String> = (0..100_000).map(|j| format!("x{j}")).collect();
    let mut columns = ColumnMemorySink::new();
    let header = ChainHeader { parameter_names: &wide, ..header };
    DrawSink::<GridStats>::begin(&mut columns, &header).unwrap();
    assert!(columns.draws.capacity() <= 1 << 20);
}

#[test]
fn memory_sink_bytes_counts_every_kept_value() {
    assert_eq!(memory_sink_bytes(1, 1, 0, 0), 8);
    assert_eq!(memory_sink_bytes(4, 1000, 10, 12), 4 * 1000 * 23 * 8);
    assert_eq!(memory_sink_bytes(usize::MAX, usize::MAX, 1, 1), u128::MAX);
    assert_eq!(memory_sink_bytes(1, usize::MAX, 1, 1), usize::MAX as u128 * 24);
    assert_eq!(memory_sink_bytes(2, 1_000_000_000_000, 3, 0), 64_000_000_000_000);
}
