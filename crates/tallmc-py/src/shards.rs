//! The set-up over shards: [`setup_on_shards`] drives it on shards held by Python (a Dask
//! engine's workers) through a [`PyShardSource`]; [`setup_local`] makes it here over NumPy
//! arrays cut into the same shards, for comparison and for users without a cluster.

use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use tallmc_models::Dataset;
use tallmc_run::{ModelSpec, PassKind, ShardSource, ShardedSetup};

use super::dataset;

/// A Python object that holds shards, as the driver's [`ShardSource`]. It has the methods
/// `partials(theta: list[float], kind_json: str, model_json: str) -> list[numpy.ndarray]` (one
/// float64 array per shard, in shard order, for the model of `model_json`), `request(indices: numpy.ndarray[uint32]) -> int` (starts fetching
/// the rows at the ascending global indices; returns a ticket) and `collect(ticket) -> (x, y,
/// names)` (those rows, in that order: x rows × p, y, and the p column names).
pub(crate) struct PyShardSource {
    object: Py<PyAny>,
    lengths: Vec<u64>,
}

impl PyShardSource {
    pub(crate) fn new(object: Py<PyAny>, lengths: Vec<u64>) -> Self {
        Self { object, lengths }
    }
}

/// A Python exception as one line: its type and message.
fn exception_text(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
    format!("{kind}: {}", e.value(py))
}

impl ShardSource for PyShardSource {
    fn shard_lengths(&self) -> Vec<u64> {
        self.lengths.clone()
    }

    fn partials(
        &self, model: &ModelSpec, theta: &[f64], kind: PassKind,
    ) -> Result<Vec<Vec<f64>>, String> {
        let kind_json = serde_json::to_string(&kind).map_err(|e| e.to_string())?;
        let model_json = serde_json::to_string(model).map_err(|e| e.to_string())?;
        Python::attach(|py| {
            let answer = self
                .object
                .call_method1(py, "partials", (theta.to_vec(), kind_json, model_json))
                .map_err(|e| exception_text(py, &e))?;
            let list = answer
                .bind(py)
                .cast::<PyList>()
                .map_err(|_| "the shards' partials are not a list of arrays".to_string())?;
            // Arrays that crossed the network may be unaligned views of a message's buffer:
            // read as a sequence of numbers, which needs no alignment.
            list.iter()
                .enumerate()
                .map(|(s, item)| {
                    item.extract::<Vec<f64>>()
                        .map_err(|_| format!("shard {s}'s partial is not a sequence of numbers"))
                })
                .collect()
        })
    }

    fn request_rows(&self, indices: &[u32]) -> anyhow::Result<u64> {
        Python::attach(|py| {
            let ticket = self
                .object
                .call_method1(py, "request", (PyArray1::from_slice(py, indices),))
                .map_err(|e| anyhow::anyhow!(exception_text(py, &e)))?;
            Ok(ticket.extract::<u64>(py)?)
        })
    }

    fn collect_rows(&self, ticket: u64) -> anyhow::Result<Dataset> {
        Python::attach(|py| {
            let answer = self
                .object
                .call_method1(py, "collect", (ticket,))
                .map_err(|e| anyhow::anyhow!(exception_text(py, &e)))?;
            let answer = answer.bind(py);
            let parts = answer
                .cast::<PyTuple>()
                .map_err(|_| anyhow::anyhow!("the shards' rows are not a tuple (x, y, names)"))?;
            let (x, y, names) = (parts.get_item(0)?, parts.get_item(1)?, parts.get_item(2)?);
            let names: Vec<String> = names.extract()?;
            let x = if names.is_empty() { None } else { Some(x) };
            let rows = dataset(x.as_ref(), &y, Some(names), "rows fetched from the shards")
                .map_err(|e| anyhow::anyhow!(exception_text(py, &e)))?;
            // The fetched rows are copied: they outlive this call, and the GIL.
            Ok(Dataset::new(rows.x().to_vec(), rows.y().to_vec(), rows.covariate_names().to_vec())?)
        })
    }
}

fn model_spec(model_json: &str) -> PyResult<ModelSpec> {
    serde_json::from_str(model_json)
        .map_err(|e| PyValueError::new_err(format!("invalid model: {e}")))
}

fn setup_json(setup: anyhow::Result<ShardedSetup>) -> PyResult<String> {
    let setup = setup.map_err(|e| PyValueError::new_err(tallmc_run::error_message(&e)))?;
    serde_json::to_string(&setup).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The set-up (mode, Laplace covariance, control variates' sums at the mode with `cv_order`)
/// of the model of `model_json` on the shards `source` holds (`shard_lengths`, `partials`,
/// `take`: see [`PyShardSource`]), as JSON (`tallmc_run::ShardedSetup`). Runs with the GIL
/// released; the source's methods take it back for each call.
#[pyfunction]
#[pyo3(signature = (model_json, source, shard_lengths, cv_order=None))]
pub(crate) fn setup_on_shards(
    py: Python<'_>, model_json: &str, source: Py<PyAny>, shard_lengths: Vec<u64>,
    cv_order: Option<u32>,
) -> PyResult<String> {
    let model = model_spec(model_json)?;
    let source = PyShardSource::new(source, shard_lengths);
    setup_json(py.detach(|| tallmc_run::setup_on_shards(&model, &source, cv_order)))
}

/// The same set-up here, on `x`, `y` (read in place) cut into shards of `shard_lengths` rows
/// (one shard when `None`), as JSON.
#[pyfunction]
#[pyo3(signature = (model_json, x, y, names, shard_lengths=None, cv_order=None))]
pub(crate) fn setup_local<'py>(
    py: Python<'py>, model_json: &str, x: Option<Bound<'py, PyAny>>, y: Bound<'py, PyAny>,
    names: Option<Vec<String>>, shard_lengths: Option<Vec<u64>>, cv_order: Option<u32>,
) -> PyResult<String> {
    let model = model_spec(model_json)?;
    let mut data = dataset(x.as_ref(), &y, names, "NumPy arrays")?;
    if let Some(lengths) = shard_lengths {
        data = data
            .with_shard_lengths(&lengths)
            .map_err(|e| PyValueError::new_err(format!("shard_lengths: {e}")))?;
    }
    setup_json(py.detach(|| tallmc_run::setup_local(&model, data, cv_order)))
}
