//! The continuous-time driver and its sinks, on an exact Zig-Zag kernel for a Gaussian
//! (`continuous_common`): statistical correctness of exact time averages and grid draws
//! (MCSE-based tolerances at four seeds), exact budgets and warmup split, determinism,
//! skeleton files, errors, and no allocation per step.

#![allow(clippy::print_stderr)]

use crate::continuous_common;

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::continuous_common::{Fault, ZigZag};
use tallmc_core::{EventKind, Segment, SegmentStats};
use tallmc_diagnostics::continuous::{
    QuadratureConfig, TimeAverageConfig, pooled_estimate, summarize_continuous,
};
use tallmc_diagnostics::{Draws, summarize};
use tallmc_samplers::continuous::sink::{SegmentFooter, SegmentHeader};
use tallmc_samplers::continuous::{
    Budget, ContinuousDriver, ContinuousRunConfig, GridDraws, InMemoryOptions, MemorySkeleton,
    MemoryTrajectory, PROGRESS_TICKS, SegmentSink, SkeletonEvent, SkeletonSink, TimeAverageSink,
    sample_trajectories_in_memory,
};
use tallmc_samplers::sink::{CsvSink, MemorySink, Tee};
use tallmc_samplers::{Progress, SamplerError};
use tallmc_testkit::{Z_MAX, allocations, seed};

fn config(warmup: Budget, sampling: Budget, chains: usize, seed: u64) -> ContinuousRunConfig {
    ContinuousRunConfig { warmup, sampling, num_chains: chains, seed, ..Default::default() }
}

/// Records every segment it receives (times, duration, end, stats) and the footer.
#[derive(Debug, Default)]
struct Recorder {
    segments: Vec<(f64, f64, EventKind, SegmentStats)>,
    footer: Option<SegmentFooter>,
    fail_at: Option<usize>,
}

impl SegmentSink for Recorder {
    fn begin(&mut self, _: &SegmentHeader<'_>) -> io::Result<()> {
        Ok(())
    }
    fn segment(&mut self, s: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        if self.fail_at == Some(self.segments.len()) {
            return Err(io::Error::other("disk full"));
        }
        self.segments.push((s.start_time, s.duration, s.end, *stats));
        Ok(())
    }
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.footer = Some(*footer);
        Ok(())
    }
    fn path(&self) -> Option<&std::path::Path> {
        self.fail_at.map(|_| std::path::Path::new("/no/such/skeleton.csv"))
    }
}

#[test]
fn time_averages_and_grid_draws_match_the_target_at_four_seeds() {
    // x₀ ~ N(0, 1), x₁ ~ N(1.5, 0.5²): E[x] = (0, 1.5), E[x²] = (1, 2.5).
    let (mean, sd) = (vec![0.0, 1.5], vec![1.0, 0.5]);
    let second = [1.0, 2.5];
    let (count, step) = (4000, 5.0);
    for base in [101, 202, 303, 404] {
        let s = seed(base);
        let cfg = config(Budget::Time(50.0), Budget::Draws { count, grid_step: step }, 4, s);
        let sinks = (0..4)
            .map(|_| {
                let avg = TimeAverageSink::new(TimeAverageConfig::default())
                    .unwrap()
                    .with_function("x0^2", |x: &[f64]| x[0] * x[0], QuadratureConfig::default())
                    .unwrap()
                    .with_function("x1^2", |x: &[f64]| x[1] * x[1], QuadratureConfig::default())
                    .unwrap();
                Tee(avg, GridDraws::new(MemorySink::new(), step).unwrap())
            })
            .collect();
        let out = ContinuousDriver::new(cfg)
            .run(&(), &[vec![3.0, -1.0]], &ZigZag::new(mean.clone(), sd.clone()), sinks)
            .unwrap();
        let avgs: Vec<_> = out.iter().map(|c| c.sink.0.averages().unwrap()).collect();
        let summary = summarize_continuous(&["x0", "x1"], &avgs).unwrap();
        let mut line = format!("seed {s}: exact");
        for j in 0..2 {
            let m = &summary[j];
            let z = (m.mean - mean[j]) / m.mcse_mean;
            assert!(z.abs() <= Z_MAX, "seed {s}, x{j}: mean {} ± {}", m.mean, m.mcse_mean);
            assert!(m.mcse_mean < 0.05 * sd[j], "x{j}: MCSE {} too large to test", m.mcse_mean);
            let name = format!("x{j}^2");
            let fs: Vec<_> = out.iter().map(|c| c.sink.0.function(&name).unwrap()).collect();
            let e = pooled_estimate(&fs).unwrap();
            let z2 = (e.mean - second[j]) / e.mcse;
            assert!(z2.abs() <= Z_MAX, "seed {s}, {name}: {} ± {}", e.mean, e.mcse);
            line += &format!(
                " | x{j}: z(mean) {z:+.2}, z(E x²) {z2:+.2}, MCSE {:.4}, ess {:.0}",
                m.mcse_mean, m.ess
            );
        }
        // Grid draws: exactly `count` per chain; ArviZ-style mean and sd within Z_MAX MCSE.
        let chains: Vec<Vec<f64>> = out.iter().map(|c| c.sink.1.inner().draws.clone()).collect();
        for c in &out {
            assert_eq!(c.sink.1.inner().num_draws(), count);
            assert_eq!(c.report.sampling_time, count as f64 * step);
        }
        let draws = Draws::new(&chains, 2).unwrap();
        let table = summarize(&["x0", "x1"], &draws).unwrap();
        line += " | grid";
        for j in 0..2 {
            let t = &table[j];
            let (zm, zs) = ((t.mean - mean[j]) / t.mcse_mean, (t.sd - sd[j]) / t.mcse_sd);
            assert!(zm.abs() <= Z_MAX, "seed {s}, grid x{j}: mean {} ± {}", t.mean, t.mcse_mean);
            assert!(zs.abs() <= Z_MAX, "seed {s}, grid x{j}: sd {} ± {}", t.sd, t.mcse_sd);
            assert!(t.rhat < 1.01, "grid x{j}: R-hat {}", t.rhat);
            line += &format!(" x{j}: z(mean) {zm:+.2}, z(sd) {zs:+.2}, MCSE {:.4}", t.mcse_mean);
        }
        eprintln!("{line}");
    }
}

#[test]
fn draws_budget_gives_exactly_count_draws_at_awkward_steps() {
    for (count, step) in [(3, 0.1), (7, 1.0 / 3.0), (1000, 0.1), (999, 0.7), (1, 1e-3), (250, 3.3)]
    {
        let cfg = config(Budget::Time(1.0), Budget::Draws { count, grid_step: step }, 2, 5);
        let out = sample_trajectories_in_memory(
            &(),
            cfg,
            &[vec![0.0]],
            &ZigZag::standard(1),
            InMemoryOptions::default(),
        )
        .unwrap();
        for c in &out {
            let d = c.sink.draws().unwrap();
            assert_eq!(d.num_draws(), count, "count {count}, step {step}");
            let times = d.stat("time__").unwrap();
            assert_eq!(times[count - 1], count as f64 * step);
            // Each draw is the trajectory at its grid time (checked against the skeleton).
            let mut x = [0.0];
            for (k, &t) in times.iter().enumerate() {
                assert!(c.sink.skeleton.position_at(t, &mut x));
                assert!((x[0] - d.draw(k)[0]).abs() < 1e-9, "draw {k} at {t}");
            }
        }
    }
    // A time budget gives ⌊T/Δ⌋ draws, even when T/Δ rounds just below an integer.
    let cfg = config(Budget::Events(0), Budget::Time(0.3), 1, 5);
    let opts = InMemoryOptions { grid_step: Some(0.1), ..Default::default() };
    let out =
        sample_trajectories_in_memory(&(), cfg, &[vec![0.0]], &ZigZag::standard(1), opts).unwrap();
    assert_eq!(out[0].sink.draws().unwrap().num_draws(), 3);
    // The stat columns add up to the sampling totals.
    let cfg = config(Budget::Time(5.0), Budget::Draws { count: 500, grid_step: 0.2 }, 1, 6);
    let out = sample_trajectories_in_memory(
        &(),
        cfg,
        &[vec![0.0, 0.0]],
        &ZigZag::standard(2),
        InMemoryOptions::default(),
    )
    .unwrap();
    let d = out[0].sink.draws().unwrap();
    let sum = |c: &str| d.stat(c).unwrap().iter().sum::<f64>() as u64;
    let r = &out[0].report;
    assert_eq!(sum("n_segments__"), r.sampling.segments);
    assert_eq!(sum("n_events__"), r.sampling.events());
    assert_eq!(sum("n_gradients__"), r.sampling.evals.gradients);
    assert!(d.log_density.iter().all(|l| l.is_nan()));
}

#[test]
fn time_budgets_are_exact_and_counting_budgets_stop_at_the_first_step_reaching_them() {
    // Time: warmup exactly W, sampling exactly T, last segment truncated with end `End`.
    let cfg = config(Budget::Time(10.0), Budget::Time(25.0), 2, 7);
    let sinks = vec![Recorder::default(), Recorder::default()];
    let out = ContinuousDriver::new(cfg)
        .run(&(), &[vec![0.5, 0.5]], &ZigZag::standard(2), sinks)
        .unwrap();
    for c in &out {
        assert_eq!((c.report.warmup_time, c.report.sampling_time), (10.0, 25.0));
        let segs = &c.sink.segments;
        assert_eq!(segs.len() as u64, c.report.sampling.segments);
        let (t0, d0, _, s0) = segs[0];
        assert_eq!(t0, 0.0);
        // Contiguous on the sampling clock.
        for w in segs.windows(2) {
            assert_eq!(w[1].0, w[0].0 + w[0].1);
        }
        let &(t, d, end, _) = segs.last().unwrap();
        assert_eq!(end, EventKind::End);
        assert!((t + d - 25.0).abs() <= 1e-12, "ends at {}", t + d);
        assert!(segs[..segs.len() - 1].iter().all(|s| s.2 != EventKind::End));
        // The first sampling segment is the remainder of the one that crossed W: no work.
        assert!(d0 > 0.0 && s0.evals.total() == 0 && s0.proposals == 0);
        assert_eq!(c.report.tuning.adapt_calls, c.report.warmup.segments);
        assert_eq!(c.sink.footer.unwrap().sampling, c.report.sampling);
    }
    // Events, with horizons (steps without events) mixed in.
    let kernel = &ZigZag::standard(2).with_horizon(0.3);
    let cfg = config(Budget::Events(50), Budget::Events(200), 1, 8);
    let out = ContinuousDriver::new(cfg)
        .run(&(), &[vec![0.0, 0.0]], kernel, vec![Recorder::default()])
        .unwrap();
    let r = &out[0].report;
    assert_eq!((r.warmup.events(), r.sampling.events()), (50, 200));
    assert!(r.sampling.segments > 200, "horizons are steps without events");
    assert_eq!(r.tuning.adapt_calls, r.warmup.segments);
    let segs = &out[0].sink.segments;
    assert!(segs.last().unwrap().2.changes_velocity(), "stopped at the event reaching 200");
    assert!(segs.iter().any(|s| s.2 == EventKind::Horizon));
    // Evaluations: 3 per step, so 100 → 34 steps, 1000 → 334 steps.
    let cfg = config(Budget::Evaluations(100), Budget::Evaluations(1000), 1, 9);
    let out = ContinuousDriver::new(cfg)
        .run(&(), &[vec![0.0; 3]], &ZigZag::standard(3), vec![Recorder::default()])
        .unwrap();
    let r = &out[0].report;
    assert_eq!((r.warmup.segments, r.warmup.evals.total()), (34, 102));
    assert_eq!((r.sampling.segments, r.sampling.evals.total()), (334, 1002));
    // Zero warmup: no warmup step, but both hooks are called. Draws warmup = count·step time.
    let cfg = config(Budget::Events(0), Budget::Events(10), 1, 9);
    let out = ContinuousDriver::new(cfg)
        .run(&(), &[vec![0.0]], &ZigZag::standard(1), vec![Recorder::default()])
        .unwrap();
    assert_eq!(out[0].report.warmup.segments, 0);
    assert!(out[0].report.tuning.warmup_begun && out[0].report.tuning.warmup_ended);
    let cfg = config(Budget::Draws { count: 10, grid_step: 0.5 }, Budget::Time(1.0), 1, 9);
    let out = ContinuousDriver::new(cfg)
        .run(&(), &[vec![0.0]], &ZigZag::standard(1), vec![Recorder::default()])
        .unwrap();
    assert_eq!(out[0].report.warmup_time, 5.0);
}

#[test]
fn warmup_split_is_exact() {
    // Run A: warmup W then sampling T. Run B: no warmup, sampling W + T. Without adaptation the
    // kernel makes the same steps, so A's sampled trajectory is B's on [W, W + T], shifted.
    let (w, t) = (7.3, 40.0);
    let run = |warmup: Budget, sampling: Budget| {
        let opts = InMemoryOptions { skeleton_non_events: true, ..Default::default() };
        let cfg = config(warmup, sampling, 1, 11);
        let k = &ZigZag::standard(2).with_horizon(0.5);
        sample_trajectories_in_memory(&(), cfg, &[vec![0.2, -0.1]], k, opts).unwrap().remove(0)
    };
    let a = run(Budget::Time(w), Budget::Time(t));
    let b = run(Budget::Time(0.0), Budget::Time(w + t));
    let (sa, sb) = (&a.sink.skeleton, &b.sink.skeleton);
    let mut x = [0.0; 2];
    assert!(sb.position_at(w, &mut x));
    for j in 0..2 {
        assert!((sa.position(0)[j] - x[j]).abs() < 1e-12);
    }
    // Every row of B after W (but the end) is a row of A, at time − W.
    let first = sb.times.partition_point(|&s| s <= w);
    let rows_b = first..sb.len() - 1;
    assert_eq!(rows_b.len(), sa.len() - 2, "A: start + the same rows + end");
    for (ia, ib) in (1..sa.len() - 1).zip(rows_b) {
        assert!((sa.times[ia] - (sb.times[ib] - w)).abs() < 1e-9);
        assert_eq!(sa.events[ia], sb.events[ib]);
        assert_eq!(sa.position(ia), sb.position(ib));
        assert_eq!(sa.velocity(ia), sb.velocity(ib));
    }
    // Counts: the crossing step is a warmup step; its remainder a sampling segment.
    let (ra, rb) = (&a.report, &b.report);
    assert_eq!(ra.warmup.segments + ra.sampling.segments, rb.sampling.segments + 1);
    assert_eq!(ra.warmup.evals + ra.sampling.evals, rb.sampling.evals);
    assert_eq!(ra.warmup.events() + ra.sampling.events(), rb.sampling.events());
    // Time averages: B's integral over [0, W + T] = (A's over [W, W + T]) + (B's over [0, W]).
    let ia = a.sink.averages.averages().unwrap().integrals();
    let ib = b.sink.averages.averages().unwrap().integrals();
    let cut = run(Budget::Time(0.0), Budget::Time(w));
    let ic = cut.sink.averages.averages().unwrap().integrals();
    for j in 0..2 {
        assert!((ia[j] + ic[j] - ib[j]).abs() < 1e-9, "{} + {} vs {}", ia[j], ic[j], ib[j]);
    }
}

#[test]
fn same_seed_is_bit_identical_for_any_thread_count() {
    let cfg = config(Budget::Time(20.0), Budget::Draws { count: 300, grid_step: 0.25 }, 3, 42);
    let opts = InMemoryOptions {
        averages: TimeAverageConfig { cross_moments: true, ..Default::default() },
        ..Default::default()
    };
    let k = &ZigZag::standard(2).with_horizon(0.7);
    let run = |cfg| sample_trajectories_in_memory(&(), cfg, &[vec![1.0, -1.0]], k, opts).unwrap();
    let a = run(cfg);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b = pool.install(|| run(cfg));
    let pool3 = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let c = pool3.install(|| run(cfg));
    let one = run(ContinuousRunConfig { num_chains: 1, ..cfg });
    let rows = |o: &tallmc_samplers::continuous::ContinuousChainOutput<
        MemoryTrajectory,
        continuous_common::ToyTuning,
    >| {
        let s = &o.sink.skeleton;
        (s.times.clone(), s.events.clone(), s.positions.clone(), s.velocities.clone())
    };
    for (x, y) in a.iter().zip(&b).chain(a.iter().zip(&c)) {
        assert_eq!(rows(x), rows(y));
        assert_eq!(x.sink.averages.averages(), y.sink.averages.averages());
        assert_eq!(x.sink.draws().unwrap().draws, y.sink.draws().unwrap().draws);
        assert_eq!(x.report.sampling, y.report.sampling);
    }
    assert_eq!(rows(&a[0]), rows(&one[0]), "chain 0 ignores the chain count");
    assert_ne!(a[0].sink.skeleton.times, a[1].sink.skeleton.times);
    let other = run(ContinuousRunConfig { seed: 43, ..cfg });
    assert_ne!(a[0].sink.skeleton.times, other[0].sink.skeleton.times);
}

#[test]
fn skeleton_rows_and_csv_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skeleton_1.csv");
    let csv_path = dir.path().join("grid_1.csv");
    let sinks = vec![Tee(
        Tee(SkeletonSink::create(&path).unwrap(), MemorySkeleton::new()),
        Tee(
            MemorySkeleton::new().with_non_events(true),
            GridDraws::new(CsvSink::create(&csv_path).unwrap(), 0.5).unwrap(),
        ),
    )];
    let cfg = config(Budget::Time(3.0), Budget::Time(30.0), 1, 12);
    let out = ContinuousDriver::new(cfg)
        .parameter_names(vec!["a".into(), "b".into()])
        .comments(vec![("model".into(), "gaussian".into())])
        .run(&(), &[vec![0.0, 0.0]], &ZigZag::standard(2).with_horizon(0.4), sinks)
        .unwrap();
    let r = &out[0].report;
    let mem = &out[0].sink.0.1;
    let all = &out[0].sink.1.0;
    // Start, one row per flip, end; the non-event skeleton also has the horizons.
    assert_eq!(mem.events[0], SkeletonEvent::Start);
    assert_eq!(mem.times[0], 0.0);
    assert_eq!(mem.events[mem.len() - 1], SkeletonEvent::Event(EventKind::End));
    assert!((mem.times[mem.len() - 1] - 30.0).abs() < 1e-12);
    let flips = mem.events.iter().filter(|e| matches!(e, SkeletonEvent::Event(EventKind::Flip(_))));
    // Every sampled event has a row; the event ending the remainder of the segment that
    // crossed the end of warmup is a warmup count, and an event cut off at T has no row.
    let n_flips = flips.count() as i64;
    assert!((n_flips - r.sampling.events() as i64).abs() <= 1, "{n_flips} flips, {r:?}");
    assert!(all.len() > mem.len());
    assert!(all.events.contains(&SkeletonEvent::Event(EventKind::Horizon)));
    // Each row's velocity is the one after its event: for a flip of j, vⱼ changed sign.
    for i in 1..mem.len() - 1 {
        if let SkeletonEvent::Event(EventKind::Flip(j)) = mem.events[i] {
            let j = j as usize;
            assert_eq!(mem.velocity(i)[j], -mem.velocity(i - 1)[j]);
        }
    }
    // The CSV holds the same rows, exactly.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("# model = gaussian\n"));
    assert!(text.contains("# adapt calls = "));
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next().unwrap(), "time,event,coordinate,a,b,v.a,v.b");
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(str::to_owned).collect()).collect();
    assert_eq!(rows.len(), mem.len());
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0].parse::<f64>().unwrap(), mem.times[i]);
        assert_eq!(row[1], mem.events[i].name());
        assert_eq!(row[2].parse::<u64>().unwrap(), mem.events[i].coordinate());
        let nums: Vec<f64> = row[3..].iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(&nums[..2], mem.position(i));
        assert_eq!(&nums[2..], mem.velocity(i));
    }
    assert!(rows[1][1] == "flip" && rows[1][2] != "0");
    // Grid draws in CmdStan's layout: lp__ (NaN), the grid stats, the parameters; 60 draws.
    let grid = std::fs::read_to_string(&csv_path).unwrap();
    let mut glines = grid.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(
        glines.next().unwrap(),
        "lp__,time__,n_segments__,n_events__,n_proposals__,n_terms__,n_gradients__,n_hessians__,\
         n_divergent__,a,b"
    );
    let body: Vec<&str> = glines.collect();
    assert_eq!(body.len(), 60);
    assert!(body[59].starts_with("nan,30,"));
    assert!(grid.contains("#   num_samples = 60\n"));
}

#[test]
fn bad_inputs_are_errors_naming_the_value() {
    let kernel = &ZigZag::standard(1);
    let run = |cfg: ContinuousRunConfig, inits: &[Vec<f64>], sinks: usize| {
        let sinks = (0..sinks).map(|_| Recorder::default()).collect();
        ContinuousDriver::new(cfg).run(&(), inits, kernel, sinks).unwrap_err().to_string()
    };
    let ok = config(Budget::Time(1.0), Budget::Time(1.0), 2, 1);
    let x = [vec![0.0]];
    let cases = [
        (ContinuousRunConfig { sampling: Budget::Time(0.0), ..ok }, "sampling time budget = 0"),
        (ContinuousRunConfig { warmup: Budget::Time(-2.0), ..ok }, "warmup time budget = -2"),
        (ContinuousRunConfig { warmup: Budget::Time(f64::NAN), ..ok }, "warmup time budget = NaN"),
        (ContinuousRunConfig { sampling: Budget::Time(f64::INFINITY), ..ok }, "= inf"),
        (ContinuousRunConfig { sampling: Budget::Events(0), ..ok }, "sampling events budget = 0"),
        (ContinuousRunConfig { sampling: Budget::Evaluations(0), ..ok }, "evaluations budget = 0"),
        (
            ContinuousRunConfig { sampling: Budget::Draws { count: 5, grid_step: 0.0 }, ..ok },
            "sampling grid_step = 0",
        ),
        (
            ContinuousRunConfig { sampling: Budget::Draws { count: 0, grid_step: 1.0 }, ..ok },
            "sampling draws budget = 0",
        ),
        (ContinuousRunConfig { num_chains: 0, ..ok }, "number of chains = 0"),
        (ContinuousRunConfig { max_zero_duration_steps: 0, ..ok }, "max_zero_duration_steps = 0"),
    ];
    for (cfg, want) in cases {
        let e = run(cfg, &x, cfg.num_chains);
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
    let e = run(ok, &[vec![0.0], vec![0.0], vec![0.0]], 2);
    assert!(e.contains("initial positions (one per chain): expected 2, found 3"), "{e}");
    let e = run(ok, &x, 3);
    assert!(e.contains("sinks (one per chain): expected 2, found 3"), "{e}");
    let e = run(ok, &[vec![0.0, 1.0], vec![0.0]], 2);
    assert!(e.contains("initial position of chain 1"), "{e}");
    let e = run(ok, &[vec![f64::NAN]], 2);
    assert!(e.contains("chain 0 could not start") && e.contains("NaN at index 0"), "{e}");
    let e = ContinuousDriver::new(ok)
        .parameter_names(vec!["a".into(), "b".into()])
        .run(&(), &x, kernel, vec![Recorder::default(), Recorder::default()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("parameter names: expected 1, found 2"), "{e}");
    // Kernel failures name the chain and the segment (0-based, warmup included).
    let faulty = |f: Fault| {
        let cfg = config(Budget::Events(5), Budget::Events(1_000), 1, 1);
        let k = &ZigZag::standard(1).with_fault(f);
        ContinuousDriver::new(cfg).run(&(), &x, k, vec![Recorder::default()]).unwrap_err()
    };
    let e = faulty(Fault::ErrAt(17));
    assert!(matches!(e, SamplerError::Segment { chain: 0, segment: 17, .. }), "{e}");
    assert!(e.to_string().contains("step 17: internal error: test kernel failure"), "{e}");
    let e = faulty(Fault::StallFrom(20));
    assert!(matches!(e, SamplerError::Stalled { segment: 1020, steps: 1001, .. }), "{e}");
    let e = faulty(Fault::InfiniteAt(3)).to_string();
    assert!(e.contains("chain 0 failed at segment 3: invalid segment duration = inf"), "{e}");
    // A sink error names the chain and the file.
    let sinks = vec![Recorder::default(), Recorder { fail_at: Some(10), ..Default::default() }];
    let long = ContinuousRunConfig { sampling: Budget::Time(100.0), ..ok };
    let e = ContinuousDriver::new(long).run(&(), &x, kernel, sinks).unwrap_err().to_string();
    assert_eq!(e, "cannot write the output of chain 1 to /no/such/skeleton.csv: disk full");
    // Adapters validate their own parameters.
    let e = GridDraws::new(MemorySink::new(), -1.0).unwrap_err().to_string();
    assert!(e.contains("grid_step = -1"), "{e}");
    let opts = InMemoryOptions { grid_step: Some(f64::NAN), ..Default::default() };
    let e = sample_trajectories_in_memory(&(), ok, &x, kernel, opts).unwrap_err().to_string();
    assert!(e.contains("grid_step = NaN"), "{e}");
}

/// Records (tick, allocations so far on the reporting thread) at every progress update.
struct AllocationLog(Mutex<Vec<(usize, usize, usize)>>);

impl Progress for AllocationLog {
    fn update(&self, _chain: usize, done: usize, total: usize) {
        let a = allocations();
        let mut log = self.0.lock().unwrap();
        if log.len() < log.capacity() {
            log.push((done, total, a));
        }
    }
}

#[test]
fn sampling_allocates_only_for_amortized_growth_of_memory_sinks() {
    // Allocations on the chain's thread from the first sampling tick to the end of the run.
    let run = |sink: Box<dyn SegmentSink>| {
        let log = AllocationLog(Mutex::new(Vec::with_capacity(4 * PROGRESS_TICKS)));
        let cfg = config(Budget::Time(100.0), Budget::Time(20_000.0), 1, 3);
        let out = ContinuousDriver::new(cfg)
            .progress(&log)
            .run(&(), &[vec![0.0, 0.0]], &ZigZag::standard(2), vec![sink])
            .unwrap();
        let log = log.0.into_inner().unwrap();
        let last = *log.last().unwrap();
        assert_eq!((last.0, last.1), (2 * PROGRESS_TICKS, 2 * PROGRESS_TICKS));
        let first = log.iter().find(|e| e.0 > PROGRESS_TICKS).unwrap();
        (last.2 - first.2, out.into_iter().next().unwrap().report)
    };
    // Time averages alone: nothing at all.
    let averages = TimeAverageSink::new(TimeAverageConfig::default()).unwrap();
    let (allocs, report) = run(Box::new(averages));
    assert!(report.sampling.segments > 10_000);
    assert_eq!(allocs, 0, "time averages allocate per step");
    // Time averages, a skeleton and grid draws (a MemorySink sized from the budget): only
    // the skeleton's four vectors grow, by doubling: at most 4 log₂(rows) reallocations.
    let opts = InMemoryOptions { grid_step: Some(1.0), ..Default::default() };
    let (allocs, report) = run(Box::new(MemoryTrajectory::new(&opts).unwrap()));
    let rows = report.sampling.events() as usize + 2;
    let growth = 4 * (usize::BITS - rows.leading_zeros()) as usize;
    eprintln!(
        "{} sampling steps: {allocs} allocations with skeleton + grid draws (bound {growth})",
        report.sampling.segments
    );
    assert!(allocs <= growth, "{allocs} allocations (amortized growth bound {growth})");
}

/// A [`Recorder`] that raises `stop` once it has received `after` segments.
struct StopAfter<'a> {
    inner: Recorder,
    stop: &'a AtomicBool,
    after: usize,
}

impl SegmentSink for StopAfter<'_> {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        self.inner.begin(header)
    }
    fn segment(&mut self, s: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        self.inner.segment(s, stats)?;
        if self.inner.segments.len() >= self.after {
            self.stop.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.inner.finish(footer)
    }
}

#[test]
fn the_stop_flag_ends_chains_after_their_current_segment_with_sinks_finished() {
    let cfg = config(Budget::Events(20), Budget::Events(100_000), 1, 4);
    let x = [vec![0.0, 0.0]];
    let kernel = &ZigZag::standard(2);
    // Raised from the sink after 7 sampled segments: the chain stops right there.
    let stop = AtomicBool::new(false);
    let sink = StopAfter { inner: Recorder::default(), stop: &stop, after: 7 };
    let out = ContinuousDriver::new(cfg).stop_when(&stop).run(&(), &x, kernel, vec![sink]).unwrap();
    let (r, rec) = (&out[0].report, &out[0].sink.inner);
    assert!(r.interrupted);
    assert_eq!((r.warmup.segments, r.sampling.segments), (20, 7));
    assert_eq!(rec.segments.len(), 7);
    let footer = rec.footer.expect("the sink is finished");
    assert_eq!(footer.sampling.segments, 7);
    let time: f64 = rec.segments.iter().map(|s| s.1).sum();
    assert!((r.sampling_time - time).abs() < 1e-12 && footer.sampling_time == r.sampling_time);
    // Raised before the run: no segment at all, but every sink begun and finished.
    let stop = AtomicBool::new(true);
    let cfg = ContinuousRunConfig { num_chains: 2, ..cfg };
    let sinks = vec![Recorder::default(), Recorder::default()];
    let out = ContinuousDriver::new(cfg).stop_when(&stop).run(&(), &x, kernel, sinks).unwrap();
    for c in &out {
        assert!(c.report.interrupted);
        assert_eq!((c.report.warmup.segments, c.report.sampling.segments), (0, 0));
        assert!(c.sink.segments.is_empty() && c.sink.footer.is_some());
        assert!(c.report.tuning.warmup_begun && c.report.tuning.warmup_ended);
    }
    // A flag never raised changes nothing.
    let stop = AtomicBool::new(false);
    let cfg = config(Budget::Events(20), Budget::Events(50), 1, 4);
    let with = ContinuousDriver::new(cfg).stop_when(&stop);
    let a = with.run(&(), &x, kernel, vec![Recorder::default()]).unwrap();
    let b = ContinuousDriver::new(cfg).run(&(), &x, kernel, vec![Recorder::default()]).unwrap();
    assert!(!a[0].report.interrupted);
    assert_eq!(a[0].sink.segments, b[0].sink.segments);
}
