//! `tallmc._tallmc`, the Python package's extension module: the library called natively. The
//! Python side (`python/tallmc/`) builds a run — model, sampler settings, chains — as the JSON
//! form of [`tallmc_run::RunSpec`] and hands it over with the data's arrays; [`run`] runs it
//! and hands the draws, stats, skeleton and summary back as NumPy arrays, from the in-memory
//! sinks: no file is written unless the run names an output directory (then exactly the
//! command's files), and nothing is parsed back from text. The samplers' settings (names,
//! defaults, help texts) come from the same definitions as the command's flags
//! ([`sampler_schema`]), and their checks are the library's ([`check_sampler`]).
//!
//! **Zero copy.** NumPy arrays that are float64 and C-contiguous (including `np.memmap` and
//! `np.load(..., mmap_mode="r")` arrays) are read in place: the data set holds a reference to
//! each array ([`SharedF64`] over the array's buffer), so sampling a 10⁸-row memory-mapped
//! array allocates nothing of its size. Any other dtype or layout is a `TypeError` here; the
//! Python layer converts DataFrames (one documented copy) before they arrive.
//!
//! **A good citizen.** The GIL is released while the chains run (on all cores, or `threads`);
//! the calling thread wakes every 100 ms to let Python handle signals, so Ctrl-C raises the
//! run's stop flag (each chain ends after its current iteration) and then `KeyboardInterrupt`.
//! Library errors are `ValueError` with the library's message; a panic in Rust is caught and
//! becomes a `RuntimeError`, never a crash.

mod custom;
mod shards;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use numpy::{
    IntoPyArray, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tallmc_models::{Dataset, SharedF64, default_names};
use tallmc_run::{Outcome, RunProgress, RunResult, RunSpec, SamplerSettings};

use self::custom::{PyModel, PyModelParts};

/// How often the waiting thread takes the GIL back to let Python run its signal handlers.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// How long after Ctrl-C the waiting thread waits for the job to stop before it returns to
/// Python without it.
const DETACH_AFTER: Duration = Duration::from_millis(300);

/// A NumPy array kept alive while the data set reads its buffer.
struct ArrayOwner(#[allow(dead_code)] Py<PyAny>);

/// The buffer of `array` as a [`SharedF64`], if it is float64, aligned, C-contiguous and has
/// `ndim` dimensions; else a `TypeError` naming `what` and how to convert.
fn shared(
    array: &Bound<'_, PyAny>, what: &str, ndims: &[usize],
) -> PyResult<(SharedF64, Vec<usize>)> {
    let Ok(a) = array.cast::<PyUntypedArray>() else {
        let kind = array.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        return Err(PyTypeError::new_err(format!(
            "{what} is a {kind}; expected a NumPy array (np.asarray({what}, dtype=np.float64))"
        )));
    };
    let dtype = a.dtype();
    if !dtype.is_equiv_to(&numpy::dtype::<f64>(array.py())) {
        return Err(PyTypeError::new_err(format!(
            "{what} has dtype {}; expected float64 (tallmc reads arrays in place and does not \
             convert them: pass {what}.astype(np.float64))",
            dtype.str().map(|s| s.to_string()).unwrap_or_default()
        )));
    }
    if !ndims.contains(&a.ndim()) {
        return Err(PyValueError::new_err(format!(
            "{what} has {} dimensions (shape {:?}); expected {}",
            a.ndim(),
            a.shape(),
            ndims.iter().map(|d| format!("{d}-D")).collect::<Vec<_>>().join(" or ")
        )));
    }
    if !a.is_c_contiguous() {
        return Err(PyTypeError::new_err(format!(
            "{what} is not C-contiguous (a view, a transpose or Fortran order); tallmc reads \
             arrays in place and does not copy them: pass np.ascontiguousarray({what})"
        )));
    }
    let shape = a.shape().to_vec();
    let len: usize = shape.iter().product();
    // SAFETY: `as_array_ptr` is the live array object (we hold a reference to it); reading its
    // `data` field is how NumPy's C API reads the buffer's address.
    #[allow(unsafe_code)]
    let data = unsafe { (*a.as_array_ptr()).fields.data };
    let ptr =
        if len == 0 { std::ptr::NonNull::<f64>::dangling().as_ptr() } else { data as *const f64 };
    if !(ptr as usize).is_multiple_of(align_of::<f64>()) {
        return Err(PyTypeError::new_err(format!(
            "{what}'s buffer is not aligned for float64; pass np.ascontiguousarray({what}) (an aligned copy)"
        )));
    }
    let owner: Arc<dyn Any + Send + Sync> = Arc::new(ArrayOwner(array.clone().unbind()));
    // SAFETY: `ptr` is the array's own buffer: float64 (checked), aligned (checked), C-contiguous
    // (checked) with `len` elements, and `owner` holds a reference to the array, so the buffer
    // lives as long as the data set does. The data set only reads it; the Python package
    // documents that arrays must not be written while a run uses them.
    #[allow(unsafe_code)]
    let numbers = unsafe { SharedF64::from_raw_parts(owner, ptr, len, false) };
    Ok((numbers, shape))
}

/// The data set of covariates `x` (n × p, or `None` for the response-only models) named
/// `names` (x0, x1, … if `None`) and responses `y` (n), read in place; `label` says what they
/// were in messages.
fn dataset(
    x: Option<&Bound<'_, PyAny>>, y: &Bound<'_, PyAny>, names: Option<Vec<String>>, label: &str,
) -> PyResult<Dataset> {
    dataset_checked(x, y, names, label, true)
}

/// [`dataset`], with the scan for NaN and ±∞ only when `check_finite`.
fn dataset_checked(
    x: Option<&Bound<'_, PyAny>>, y: &Bound<'_, PyAny>, names: Option<Vec<String>>, label: &str,
    check_finite: bool,
) -> PyResult<Dataset> {
    let (y, y_shape) = shared(y, "y", &[1])?;
    let (x, p) = match x {
        Some(x) => {
            let (x, shape) = shared(x, "X", &[2])?;
            if shape[0] != y_shape[0] {
                return Err(PyValueError::new_err(format!(
                    "X has {} rows but y has {} values; expected one response per row",
                    shape[0], y_shape[0]
                )));
            }
            (x, shape[1])
        }
        None => (SharedF64::empty(), 0),
    };
    let names = names.unwrap_or_else(|| default_names(p));
    if names.len() != p {
        return Err(PyValueError::new_err(format!(
            "{} column names for {p} columns of X; expected one name per column",
            names.len()
        )));
    }
    Dataset::from_shared(x, y, names, Some(label.into()), check_finite)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Checks a sampler's settings (the JSON of [`SamplerSettings`]: `{"name": "hmc-ecs",
/// "subsample": 1000, …}`) as the library does; a bad value is a `ValueError` naming the
/// setting as the command's flag (the Python layer shows it as the keyword argument).
#[pyfunction]
fn check_sampler(settings_json: &str) -> PyResult<()> {
    let settings: SamplerSettings = serde_json::from_str(settings_json)
        .map_err(|e| PyValueError::new_err(format!("invalid settings: {e}")))?;
    settings.validate().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Every sampler and its settings, from the definitions the command's flags come from: a list
/// of dicts `{name, about, settings}`, each setting a dict with `name` (the flag's long name),
/// `help`, `default` (text, or None), `takes_value`, `choices` and `required`.
#[pyfunction]
fn sampler_schema(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    use clap::Subcommand;
    let mut command = SamplerSettings::augment_subcommands(clap::Command::new("sample"));
    command.build();
    let out = PyList::empty(py);
    for sub in command.get_subcommands() {
        let entry = PyDict::new(py);
        entry.set_item("name", sub.get_name())?;
        let about = sub.get_long_about().or(sub.get_about()).map(|a| a.to_string());
        entry.set_item("about", about.unwrap_or_default())?;
        let settings = PyList::empty(py);
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if long == "help" {
                continue;
            }
            let d = PyDict::new(py);
            d.set_item("name", long)?;
            d.set_item("help", arg.get_help().map(|h| h.to_string()).unwrap_or_default())?;
            let default =
                arg.get_default_values().first().map(|v| v.to_string_lossy().into_owned());
            d.set_item("default", default)?;
            d.set_item("takes_value", arg.get_action().takes_values())?;
            let choices: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            d.set_item("choices", choices)?;
            d.set_item("required", arg.is_required_set())?;
            settings.append(d)?;
        }
        entry.set_item("settings", settings)?;
        out.append(entry)?;
    }
    Ok(out)
}

/// Runs the run `spec_json` (the JSON of [`RunSpec`]) on covariates `x` (n × p, or None) named
/// `names` and responses `y`, read in place (`label` names them in messages and outputs).
/// `on_progress`, if given, is called about every 100 ms with `(message, done, total)`.
/// `shard_lengths`, if given, cuts the rows into shards that the full-data passes reduce one by
/// one (the draws of a run on a cluster over the same shards).
///
/// Returns a dict of the run, handed over from memory: `interrupted`, `parameter_names`,
/// `draws` (chains × draws × d), `lp` (chains × draws), `stat_names`, `stats` (chains × draws ×
/// stats), `summary` (JSON text), and for a skeleton run `skeletons` (one dict per chain:
/// `time`, `event`, `coordinate`, `position` (events × d), `velocity` (events × d)). Chains
/// interrupted at different draws are cut to the shortest.
#[pyfunction]
#[pyo3(signature = (spec_json, x, y, names=None, label="NumPy arrays", on_progress=None, shard_lengths=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>, spec_json: &str, x: Option<Bound<'py, PyAny>>, y: Bound<'py, PyAny>,
    names: Option<Vec<String>>, label: &str, on_progress: Option<Bound<'py, PyAny>>,
    shard_lengths: Option<Vec<u64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec: RunSpec = serde_json::from_str(spec_json)
        .map_err(|e| PyValueError::new_err(format!("invalid run: {e}")))?;
    spec.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut data = dataset(x.as_ref(), &y, names, label)?;
    if let Some(lengths) = shard_lengths {
        data = data
            .with_shard_lengths(&lengths)
            .map_err(|e| PyValueError::new_err(format!("shard_lengths: {e}")))?;
    }
    let progress = on_progress.map(|callback| (callback, Arc::new(RunProgress::new())));
    let observer = progress.as_ref().map(|(_, o)| o.clone());
    let result = run_on_worker(
        py,
        move |stop| tallmc_run::run(&spec, Some(data), stop, observer),
        progress,
        Arc::new(AtomicBool::new(false)),
    )?;
    result_dict(py, result)
}

/// Runs the run `spec_json` on the shards `source` holds (`partials`, `request`, `collect`:
/// see `shards::PyShardSource`) of `shard_lengths` rows: the set-up's passes next to the
/// shards, the chains' rows fetched ahead. Returns as [`run`].
#[pyfunction]
#[pyo3(signature = (spec_json, source, shard_lengths, on_progress=None))]
fn run_on_shards<'py>(
    py: Python<'py>, spec_json: &str, source: Py<PyAny>, shard_lengths: Vec<u64>,
    on_progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec: RunSpec = serde_json::from_str(spec_json)
        .map_err(|e| PyValueError::new_err(format!("invalid run: {e}")))?;
    spec.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let source = shards::PyShardSource::new(source, shard_lengths);
    let progress = on_progress.map(|callback| (callback, Arc::new(RunProgress::new())));
    let observer = progress.as_ref().map(|(_, o)| o.clone());
    let result = run_on_worker(
        py,
        move |stop| tallmc_run::run_on_shards(&spec, &source, stop, observer),
        progress,
        Arc::new(AtomicBool::new(false)),
    )?;
    result_dict(py, result)
}

/// Runs the run `spec_json` (its model `{"family": "custom", …}`) on a model written in
/// Python: `evaluate(kind, theta, rows)` is the Python side's bridge (`kind` is `"terms"`,
/// `"gradients"` or `"hessians"`; `rows` a uint32 array of row indices or a slice; it returns
/// a tuple of float64 C-contiguous arrays: (ℓ,), (ℓ, ∇ℓ) or (∇²ℓ,)), on `n` rows with
/// parameters `names`; `gradients` / `hessians` say whether the model gives its own (else
/// central differences); the prior is N(`prior_mean`, `prior_sd`²) per parameter. A Python
/// exception in `evaluate` stops the run and is raised here, with its traceback. Returns as
/// [`run`].
#[pyfunction]
#[pyo3(signature = (spec_json, evaluate, n, names, gradients, hessians, prior_mean, prior_sd, on_progress=None))]
#[allow(clippy::too_many_arguments)]
fn run_custom<'py>(
    py: Python<'py>, spec_json: &str, evaluate: Bound<'py, PyAny>, n: usize, names: Vec<String>,
    gradients: bool, hessians: bool, prior_mean: Vec<f64>, prior_sd: Vec<f64>,
    on_progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec: RunSpec = serde_json::from_str(spec_json)
        .map_err(|e| PyValueError::new_err(format!("invalid run: {e}")))?;
    spec.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let parts = PyModelParts {
        evaluate: evaluate.unbind(),
        n,
        names,
        gradients,
        hessians,
        prior_mean,
        prior_sd,
    };
    let model = Arc::new(PyModel::new(parts, stop.clone())?);
    let progress = on_progress.map(|callback| (callback, Arc::new(RunProgress::new())));
    let observer = progress.as_ref().map(|(_, o)| o.clone());
    let worker_model = model.clone();
    let result = run_on_worker(
        py,
        move |stop| tallmc_run::run_custom(&spec, &*worker_model, stop, observer),
        progress,
        stop,
    );
    // The user's exception first: the run's own error (a mode search that met NaN terms, …)
    // only follows from it.
    if let Some(e) = model.take_failure() {
        return Err(e);
    }
    result_dict(py, result?)
}

/// The run's result as NumPy arrays (one copy out of the in-memory sinks).
fn result_dict(py: Python<'_>, r: RunResult) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("interrupted", r.outcome == Outcome::Interrupted)?;
    out.set_item("summary", serde_json::to_string(&r.summary).unwrap_or_default())?;
    let d = r.parameter_names.len();
    out.set_item("parameter_names", r.parameter_names)?;
    let chains = r.chains.len();
    let draws = r.chains.iter().map(|c| c.num_draws()).min().unwrap_or(0);
    let stat_names = r.chains.first().map(|c| c.stat_columns.clone()).unwrap_or_default();
    let k = stat_names.len();
    let mut theta = Vec::with_capacity(chains * draws * d);
    let mut lp = Vec::with_capacity(chains * draws);
    let mut stats = Vec::with_capacity(chains * draws * k);
    for c in &r.chains {
        theta.extend_from_slice(&c.draws[..draws * d]);
        lp.extend_from_slice(&c.log_density[..draws]);
        stats.extend_from_slice(&c.stats[..draws * k]);
    }
    out.set_item("draws", theta.into_pyarray(py).reshape([chains, draws, d])?)?;
    out.set_item("lp", lp.into_pyarray(py).reshape([chains, draws])?)?;
    out.set_item("stat_names", stat_names)?;
    out.set_item("stats", stats.into_pyarray(py).reshape([chains, draws, k])?)?;
    if !r.skeletons.is_empty() {
        let list = PyList::empty(py);
        for s in r.skeletons {
            let rows = s.len();
            let chain = PyDict::new(py);
            let events: Vec<&str> = s.events.iter().map(|e| e.name()).collect();
            let coordinates: Vec<u64> = s.events.iter().map(|e| e.coordinate()).collect();
            chain.set_item("event", events)?;
            chain.set_item("coordinate", coordinates.into_pyarray(py))?;
            chain.set_item("time", s.times.into_pyarray(py))?;
            chain.set_item("position", s.positions.into_pyarray(py).reshape([rows, s.dim])?)?;
            chain.set_item("velocity", s.velocities.into_pyarray(py).reshape([rows, s.dim])?)?;
            list.append(chain)?;
        }
        out.set_item("skeletons", list)?;
    }
    Ok(out)
}

/// A test hook: runs a job on the sampling thread through the same path as [`run`]. `"panic"`
/// panics (a Rust panic must reach Python as a `RuntimeError`); `"busy"` works for `seconds`
/// without looking at the stop flag, as a pass of the setup over all rows does (Ctrl-C must
/// still return to Python within a second).
#[pyfunction]
#[pyo3(signature = (kind, seconds=0.0))]
fn _test_job(py: Python<'_>, kind: &str, seconds: f64) -> PyResult<()> {
    match kind {
        "panic" => run_on_worker(
            py,
            |_| -> anyhow::Result<()> { panic!("a panic raised on purpose by the test hook") },
            None,
            Arc::new(AtomicBool::new(false)),
        ),
        "busy" => {
            let busy = Duration::from_secs_f64(seconds.max(0.0));
            run_on_worker(
                py,
                move |_| {
                    std::thread::sleep(busy);
                    Ok(())
                },
                None,
                Arc::new(AtomicBool::new(false)),
            )
        }
        other => Err(PyValueError::new_err(format!("unknown test job `{other}`"))),
    }
}

/// Runs `job` on a thread of its own with the GIL released, waking every [`SIGNAL_CHECK`] to
/// let Python handle signals and to report progress. Ctrl-C raises the job's stop flag, then
/// `KeyboardInterrupt` once the job has returned (the chains stop within an iteration), or
/// after [`DETACH_AFTER`] if it has not: a pass of the setup over 10⁸ rows does not look at the
/// flag, so the thread is left to finish it in the background (no chain starts after it, and
/// nothing more is written). Errors become `ValueError`, panics `RuntimeError`. `stop` is the
/// job's stop flag (a model written in Python raises it too, when its function fails).
fn run_on_worker<T, F>(
    py: Python<'_>, job: F, progress: Option<(Bound<'_, PyAny>, Arc<RunProgress>)>,
    stop: Arc<AtomicBool>,
) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce(&AtomicBool) -> anyhow::Result<T> + Send + 'static,
{
    let (done_tx, mut done_rx) = channel::<()>();
    let worker_stop = stop.clone();
    let worker = std::thread::Builder::new()
        .name("tallmc".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| job(&worker_stop)));
            let _ = done_tx.send(());
            result
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the sampling thread: {e}")))?;
    let mut interrupt: Option<(PyErr, Instant)> = None;
    loop {
        // The receiver goes into the GIL-free closure and comes back out with its answer.
        let (rx, waited) = py.detach(move || {
            let waited = done_rx.recv_timeout(SIGNAL_CHECK);
            (done_rx, waited)
        });
        done_rx = rx;
        if !matches!(waited, Err(RecvTimeoutError::Timeout)) {
            break;
        }
        if let Some((e, at)) = interrupt.take() {
            if at.elapsed() >= DETACH_AFTER {
                // Dropping the handle detaches the thread; it ends when its current pass does.
                drop(worker);
                return Err(e);
            }
            interrupt = Some((e, at));
        }
        let reported = match &progress {
            Some((callback, observer)) if interrupt.is_none() => {
                callback.call1(observer.snapshot()).map(|_| ())
            }
            _ => Ok(()),
        };
        if let Err(e) = py.check_signals().and(reported) {
            // Ctrl-C (or an exception of a signal handler or the progress callback): every
            // chain ends after its current iteration; the exception is raised once the worker
            // has stopped.
            stop.store(true, Ordering::SeqCst);
            interrupt.get_or_insert((e, Instant::now()));
        }
    }
    let joined = py.detach(|| worker.join());
    if let Some((e, _)) = interrupt {
        return Err(e);
    }
    match joined {
        Ok(Ok(Ok(value))) => {
            if let Some((callback, observer)) = &progress {
                callback.call1(observer.snapshot())?; // the finished count
            }
            Ok(value)
        }
        Ok(Ok(Err(e))) => Err(PyValueError::new_err(tallmc_run::error_message(&e))),
        Ok(Err(panic)) | Err(panic) => Err(PyRuntimeError::new_err(format!(
            "tallmc: internal error: {}",
            tallmc_run::panic_message(&*panic)
        ))),
    }
}

/// The extension module.
/// The partial sums of one pass over one shard's rows (`x`: rows × p, `y`: rows, read in
/// place), for the model of `model_json` (a `ModelSpec`) at `theta`: `kind_json` is a
/// `PassKind` (`"value"`, `"gradient"`, `"hessian"`, `{"control-variate": {"order": 2}}`) and
/// `total_rows` the whole data's N; `check_finite=False` skips the scan for NaN and ±∞ (a shard
/// checked when it was loaded). What a Dask worker computes next to its shard, with the
/// GIL released; the driver adds the shards' results in shard order
/// (`tallmc_core::add_shard_partials`) and gets the bits of the local run over the same shards.
#[pyfunction]
#[pyo3(signature = (model_json, x, y, names, theta, kind_json, total_rows, check_finite=true))]
#[allow(clippy::too_many_arguments)]
fn shard_sums<'py>(
    py: Python<'py>, model_json: &str, x: Option<Bound<'py, PyAny>>, y: Bound<'py, PyAny>,
    names: Option<Vec<String>>, theta: Vec<f64>, kind_json: &str, total_rows: usize,
    check_finite: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let model: tallmc_run::ModelSpec = serde_json::from_str(model_json)
        .map_err(|e| PyValueError::new_err(format!("invalid model: {e}")))?;
    let kind: tallmc_run::PassKind = serde_json::from_str(kind_json)
        .map_err(|e| PyValueError::new_err(format!("invalid pass kind: {e}")))?;
    let data = dataset_checked(x.as_ref(), &y, names, "a shard", check_finite)?;
    let sums = py
        .detach(move || tallmc_run::shard_sums(&model, data, &theta, kind, total_rows))
        .map_err(|e| PyValueError::new_err(tallmc_run::error_message(&e)))?;
    Ok(PyArray1::from_vec(py, sums))
}

#[pymodule]
fn _tallmc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(shard_sums, m)?)?;
    m.add_function(wrap_pyfunction!(shards::setup_on_shards, m)?)?;
    m.add_function(wrap_pyfunction!(shards::setup_local, m)?)?;
    m.add_function(wrap_pyfunction!(run_on_shards, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_custom, m)?)?;
    m.add_function(wrap_pyfunction!(check_sampler, m)?)?;
    m.add_function(wrap_pyfunction!(sampler_schema, m)?)?;
    m.add_function(wrap_pyfunction!(_test_job, m)?)?;
    Ok(())
}
