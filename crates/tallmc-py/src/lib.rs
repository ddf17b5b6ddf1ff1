//! `tallmc._tallmc`, the Python package's extension module: a thin layer over the `tallmc`
//! command's library ([`tallmc_cli::Invocation`]), so that Python runs the command's code with
//! its flags, defaults, validation, outputs and draws. The Python side
//! (`python/tallmc/`) turns model and sampler objects into the command's arguments and reads
//! the outputs into ArviZ; nothing here or there is sampler logic.
//!
//! **Zero copy.** NumPy arrays that are float64 and C-contiguous (including `np.memmap` and
//! `np.load(..., mmap_mode="r")` arrays) are read in place: the data set holds a reference to
//! each array ([`SharedF64`] over the array's buffer), so sampling a 10⁸-row memory-mapped
//! array allocates nothing of its size. Any other dtype or layout is a `TypeError` that says
//! how to convert; tallmc never copies silently.
//!
//! **A good citizen.** The GIL is released while the chains run (they run on all cores, or
//! `--threads`); the calling thread wakes every 100 ms to let Python handle signals, so Ctrl-C
//! raises the run's stop flag (each chain ends after its current iteration) and then
//! `KeyboardInterrupt`. Library errors are `ValueError` with the library's message; a panic in
//! Rust is caught and becomes a `RuntimeError`, never a crash.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tallmc_cli::{Invocation, Outcome, RunProgress};
use tallmc_models::{Dataset, SharedF64, default_names};

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

/// The data set of covariates `x` (n × p, or `None` for the response-only models) and
/// responses `y` (n), read in place.
fn dataset(x: Option<&Bound<'_, PyAny>>, y: &Bound<'_, PyAny>) -> PyResult<Dataset> {
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
    Dataset::from_shared(x, y, default_names(p), Some("NumPy arrays".into()), true)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A `ValueError` with the command's usage error on one line, without its usage text and tips
/// (those are the command's, not the package's).
fn usage_error(e: &tallmc_cli::UsageError) -> PyErr {
    let text = e.to_string();
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(|l| l.trim().trim_start_matches("error: "))
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    PyValueError::new_err(if lines.is_empty() {
        "invalid settings".into()
    } else {
        lines.join(" ")
    })
}

/// Checks `argv` (the command line after the program name) as `tallmc` parses it: a bad flag
/// or value is a `ValueError`.
#[pyfunction]
fn check_arguments(argv: Vec<String>) -> PyResult<()> {
    let argv = std::iter::once("tallmc".to_string()).chain(argv);
    Invocation::try_parse_from(argv).map(|_| ()).map_err(|e| usage_error(&e))
}

/// Runs `tallmc <argv>` with the model built on `x` and `y` (read in place) instead of the
/// `--data` file, or on the `--data` file when `y` is `None`. Returns `True` if the run was
/// interrupted by its stop flag (Ctrl-C raises `KeyboardInterrupt` instead). `on_progress`, if
/// given, is called about every 100 ms with `(message, done, total)`: the setup phase's message
/// (empty once the chains run), the iterations done over every chain, and their total (0 until
/// the first iteration).
#[pyfunction]
#[pyo3(signature = (argv, x=None, y=None, on_progress=None))]
fn run(
    py: Python<'_>, argv: Vec<String>, x: Option<Bound<'_, PyAny>>, y: Option<Bound<'_, PyAny>>,
    on_progress: Option<Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let argv = std::iter::once("tallmc".to_string()).chain(argv);
    let mut invocation = Invocation::try_parse_from(argv).map_err(|e| usage_error(&e))?;
    let data = match &y {
        Some(y) => Some(dataset(x.as_ref(), y)?),
        None => None,
    };
    let progress = on_progress.map(|callback| (callback, Arc::new(RunProgress::new())));
    if let Some((_, observer)) = &progress {
        invocation = invocation.observe(observer.clone());
    }
    run_on_worker(py, move |stop| invocation.run(data, stop), progress)
}

/// A test hook: runs a job on the sampling thread through the same path as [`run`]. `"panic"`
/// panics (a Rust panic must reach Python as a `RuntimeError`); `"busy"` works for `seconds`
/// without looking at the stop flag, as a pass of the setup over all rows does (Ctrl-C must
/// still return to Python within a second).
#[pyfunction]
#[pyo3(signature = (kind, seconds=0.0))]
fn _test_job(py: Python<'_>, kind: &str, seconds: f64) -> PyResult<bool> {
    match kind {
        "panic" => {
            run_on_worker(py, |_| panic!("a panic raised on purpose by the test hook"), None)
        }
        "busy" => {
            let busy = Duration::from_secs_f64(seconds.max(0.0));
            run_on_worker(
                py,
                move |_| {
                    std::thread::sleep(busy);
                    Ok(Outcome::Finished)
                },
                None,
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
/// nothing more is written). Errors become `ValueError`, panics `RuntimeError`.
fn run_on_worker<F>(
    py: Python<'_>, job: F, progress: Option<(Bound<'_, PyAny>, Arc<RunProgress>)>,
) -> PyResult<bool>
where
    F: FnOnce(&AtomicBool) -> anyhow::Result<Outcome> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
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
        Ok(Ok(Ok(outcome))) => {
            if let Some((callback, observer)) = &progress {
                callback.call1(observer.snapshot())?; // the finished count
            }
            Ok(outcome == Outcome::Interrupted)
        }
        Ok(Ok(Err(e))) => Err(PyValueError::new_err(tallmc_cli::error_message(&e))),
        Ok(Err(panic)) | Err(panic) => Err(PyRuntimeError::new_err(format!(
            "tallmc: internal error: {}",
            tallmc_cli::panic_message(&*panic)
        ))),
    }
}

/// The samplers' names, in the command's order.
#[pyfunction]
fn sampler_names() -> Vec<String> {
    tallmc_cli::sampler_names()
}

/// Every flag of `tallmc sample <sampler>`: a list of dicts with `name`, `help`, `default`
/// (or None), `takes_value` and `choices`.
#[pyfunction]
fn sampler_flags<'py>(py: Python<'py>, sampler: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let flags = tallmc_cli::sampler_flags(sampler)
        .ok_or_else(|| PyValueError::new_err(format!("unknown sampler `{sampler}`")))?;
    flags
        .into_iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("name", f.name)?;
            d.set_item("help", f.help)?;
            d.set_item("default", f.default)?;
            d.set_item("takes_value", f.takes_value)?;
            d.set_item("choices", f.choices)?;
            Ok(d)
        })
        .collect()
}

/// The extension module.
#[pymodule]
fn _tallmc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check_arguments, m)?)?;
    m.add_function(wrap_pyfunction!(sampler_names, m)?)?;
    m.add_function(wrap_pyfunction!(sampler_flags, m)?)?;
    m.add_function(wrap_pyfunction!(_test_job, m)?)?;
    Ok(())
}
