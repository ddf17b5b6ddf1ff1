//! The same data as a Parquet directory, a CSV file, a binary file and a binary file converted
//! from the Parquet shards give the same draws, bit for bit; so do the covariates chosen by
//! name in Parquet and in CSV.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use arrow_array::{ArrayRef, Float32Array, Float64Array, Int8Array, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use tallmc_models::{Dataset, write_binary, write_csv};
use tallmc_run::spec::{HmcEcsSettings, NutsSettings};
use tallmc_run::{DataSpec, ModelSpec, RegressionSpec, RunSpec, SamplerSettings};

const N: usize = 2_000;

/// Row i: age (f64), dose (a multiple of 1/4, so exact in f32), score (an integer), and a
/// binary y from a logistic model of them (a fixed LCG, no seed offset: the data are fixed).
fn columns() -> (Vec<f64>, Vec<f32>, Vec<i64>, Vec<i8>) {
    let mut state: u64 = 7;
    let mut uniform = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let (mut age, mut dose, mut score, mut y) = (vec![], vec![], vec![], vec![]);
    for _ in 0..N {
        let a = 20.0 + 50.0 * uniform();
        let d = (uniform() * 16.0).floor() as f32 * 0.25;
        let s = (uniform() * 10.0).floor() as i64 - 5;
        let eta = -2.0 + 0.04 * a + 0.3 * f64::from(d) - 0.1 * s as f64;
        age.push(a);
        dose.push(d);
        score.push(s);
        y.push(i8::from(uniform() < 1.0 / (1.0 + (-eta).exp())));
    }
    (age, dose, score, y)
}

/// The columns as Parquet shards of uneven sizes, in names whose text order is not their
/// natural order (part.10 last).
fn write_parquet_dir(dir: &Path) {
    let (age, dose, score, y) = columns();
    let bounds = [0, 700, 1_300, 1_301, N];
    for (k, w) in bounds.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        let batch = RecordBatch::try_from_iter([
            ("outcome", Arc::new(Int8Array::from(y[a..b].to_vec())) as ArrayRef),
            ("age", Arc::new(Float64Array::from(age[a..b].to_vec())) as ArrayRef),
            ("dose", Arc::new(Float32Array::from(dose[a..b].to_vec())) as ArrayRef),
            ("score", Arc::new(Int64Array::from(score[a..b].to_vec())) as ArrayRef),
        ])
        .unwrap();
        let name = ["part.0", "part.1", "part.2", "part.10"][k];
        let file = std::fs::File::create(dir.join(format!("{name}.parquet"))).unwrap();
        let mut w = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
}

/// The same data as a `Dataset` (covariates age, dose, score; response y).
fn dataset() -> Dataset {
    let (age, dose, score, y) = columns();
    let x: Vec<f64> = (0..N).flat_map(|i| [age[i], f64::from(dose[i]), score[i] as f64]).collect();
    let y: Vec<f64> = y.iter().map(|&v| f64::from(v)).collect();
    Dataset::new(x, y, vec!["age".into(), "dose".into(), "score".into()]).unwrap()
}

fn spec(data: DataSpec, sampler: SamplerSettings) -> RunSpec {
    let mut spec = RunSpec::new(ModelSpec::Logistic(RegressionSpec::default()), data, sampler);
    (spec.chains, spec.warmup, spec.draws, spec.seed) = (2, 150, 150, 3);
    spec.execution.progress = false;
    spec.execution.report = false;
    spec
}

/// Every chain's draws, as bits, and the parameter names.
fn draws(spec: &RunSpec) -> (Vec<String>, Vec<Vec<u64>>) {
    let r = tallmc_run::run(spec, None, &AtomicBool::new(false), None).expect("the run");
    let d = r.parameter_names.len();
    let chains = r
        .chains
        .iter()
        .map(|c| (0..d).flat_map(|j| c.coordinate(j)).map(f64::to_bits).collect())
        .collect();
    (r.parameter_names, chains)
}

fn file(path: &Path) -> DataSpec {
    DataSpec::file(path)
}

fn with(path: &Path, response: Option<&str>, columns: Option<&[&str]>) -> DataSpec {
    DataSpec::File {
        path: path.to_path_buf(),
        y_npy: None,
        response: response.map(str::to_string),
        columns: columns.map(|c| c.iter().map(|s| s.to_string()).collect()),
    }
}

#[test]
fn parquet_csv_binary_and_converted_binary_give_the_same_draws() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    write_parquet_dir(&shards);
    let data = dataset();
    let csv = dir.path().join("data.csv");
    write_csv(&data, &csv).unwrap();
    let bin = dir.path().join("data.bin");
    write_binary(&data, &bin).unwrap();
    let converted = dir.path().join("converted.bin");
    let options = tallmc_io::ConvertOptions {
        response: "outcome".into(),
        chunk_rows: 333,
        ..Default::default()
    };
    let report =
        tallmc_io::convert(std::slice::from_ref(&shards), &converted, &options, &mut |_| {})
            .unwrap();
    assert_eq!(report.rows, N as u64);

    let samplers = [
        SamplerSettings::Nuts(NutsSettings::default()),
        SamplerSettings::HmcEcs(HmcEcsSettings { subsample: Some(200), ..Default::default() }),
    ];
    for sampler in samplers {
        let name = sampler.name();
        let reference = draws(&spec(with(&shards, Some("outcome"), None), sampler.clone()));
        assert_eq!(reference.0, ["intercept", "age", "dose", "score"]);
        for (what, source) in
            [("csv", file(&csv)), ("binary", file(&bin)), ("converted", file(&converted))]
        {
            let other = draws(&spec(source, sampler.clone()));
            assert_eq!(other.0, reference.0, "{name}: {what} names");
            assert!(other.1 == reference.1, "{name}: {what} draws differ from the Parquet run's");
        }
        // Covariates chosen by name, the same in Parquet and CSV.
        let cols = ["score", "age"];
        let p = draws(&spec(with(&shards, Some("outcome"), Some(&cols)), sampler.clone()));
        let c = draws(&spec(with(&csv, None, Some(&cols)), sampler.clone()));
        assert_eq!(p.0, ["intercept", "score", "age"]);
        assert!(p == c, "{name}: --columns differ between Parquet and CSV");
    }
}

#[test]
fn data_source_errors_name_the_flag_and_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    write_parquet_dir(&shards);
    let nuts = SamplerSettings::Nuts(NutsSettings::default());
    let run = |data: DataSpec| {
        tallmc_run::run(&spec(data, nuts.clone()), None, &AtomicBool::new(false), None)
            .map(|_| ())
            .unwrap_err()
    };
    let e = tallmc_run::error_message(&run(file(&shards)));
    assert!(e.contains("no column `y`") && e.contains("outcome (Int8)"), "{e}");
    let e = tallmc_run::error_message(&run(with(&shards, Some("outcome"), Some(&["height"]))));
    assert!(e.contains("no column `height`"), "{e}");
    let bin = dir.path().join("data.bin");
    write_binary(&dataset(), &bin).unwrap();
    let e = tallmc_run::error_message(&run(with(&bin, Some("outcome"), None)));
    assert!(e.contains("--y outcome") && e.contains("CSV and Parquet"), "{e}");
    let e = tallmc_run::error_message(&run(with(&bin, None, Some(&["age", "weight"]))));
    assert!(e.contains("weight") && e.contains("age, dose, score"), "{e}");
}
