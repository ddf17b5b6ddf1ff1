"""tallmc on a Dask cluster: the O(n) passes of a run (the posterior mode's Newton steps, the
Laplace covariance, the control variates' sums at the mode) run as one task per shard next to
the shard, on the cluster's workers, and the chains read only the rows they need, fetched from
the workers ahead of time. Only small results and a few rows travel.

    from dask.distributed import Client
    import tallmc, tallmc.dask

    client = Client("scheduler:8786")            # or Client(LocalCluster(n_workers=2))
    engine = tallmc.dask.Engine(client)
    files = tallmc.parquet_files("/shared/claims/")  # paths every worker can read
    model = tallmc.LogisticRegression(files, y="claim")   # or a Dask DataFrame
    setup = tallmc.setup(model, engine=engine)   # mode, covariance, control variates
    idata = tallmc.sample(model, tallmc.HmcEcs(subsample=2000), engine=engine)

Each shard (a Dask DataFrame's partition, or one Parquet file) is loaded once by a worker and
kept in its memory (:meth:`Engine.persist`). A pass is one task per shard calling the Rust
per-shard kernel (``tallmc._tallmc.shard_sums``, the GIL released) on the worker that holds the
shard; the driver adds the partial results in shard order, so the numbers are those of a local
run over the same shards, bit for bit (``tallmc.setup(model, by_shard=True)`` and
``tallmc.sample(…, by_shard=True)`` on the same files read with :func:`tallmc.read_parquet`).
HMC-ECS's subsample indices come from a random stream of their own, so every 128 iterations a
chain asks for the rows of the next window, one task per worker, while it samples. The driver
holds Newton's warm-start rows (100,000 evenly spaced rows, on tall data) during the set-up and
the chains' subsamples, never the data.

A model with ``standardize=True`` gets its covariates' means and sds over all the shards
first: two passes (column sums, then squared deviations and extremes), after which every pass
and every fetched row is standardized alike.

On a cluster: perturbed ``HmcEcs`` with ``subsample`` given, and the exact minibatch MH kernels
``Smh``, ``TunaMh`` and ``MhSs``. Their per-datum bounds come from one pass over the shards (8
bytes per row on the driver); their minibatches' indices, like HMC-ECS's subsamples, come from a
stream of their own, and each chain asks for the rows of its coming minibatches a window ahead.
The other samplers are refused for now, naming what to use.

Needs ``dask[distributed]`` (``pip install "dask[dataframe]" distributed``).
"""

from __future__ import annotations

import itertools

import numpy as np

from . import _sharded
from ._sharded import Sharded

__all__ = ["Engine", "ShardsOnWorkers"]


class ShardsOnWorkers:
    """A model's shards loaded into the workers' memory: one Dask future per shard, in shard
    order, and the rows of each. Made by :meth:`Engine.persist`."""

    def __init__(self, client, futures, lengths, data: Sharded):
        self.client = client
        self.futures = list(futures)
        self.lengths = [int(n) for n in lengths]
        self.data = data
        self.bounds = np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)
        self._tickets = itertools.count(1)  # next() is atomic: chains request from threads
        self._requests = {}

    @property
    def num_rows(self) -> int:
        return int(self.bounds[-1])

    def _workers(self):
        """Where each shard lives (a worker's address), asked of the scheduler: tasks on a
        shard run there and nowhere else, so a shard never travels between workers."""
        who = self.client.who_has(self.futures)
        return [(who.get(f.key) or [None])[0] for f in self.futures]

    def _submit(self, fn, where, *args):
        if where is None:  # lost and being recomputed: anywhere the scheduler likes
            return self.client.submit(fn, *args, pure=False)
        return self.client.submit(fn, *args, workers=[where], allow_other_workers=False,
                                  pure=False)

    def pass_sums(self, model_json: str, theta, kind_json: str):
        """Each shard's partial sums of one pass (a list of float64 arrays, in shard order):
        one task per shard, on the worker that holds it."""
        names, n = self.data.names, self.num_rows
        theta = [float(t) for t in theta]
        tasks = [self._submit(_sharded.shard_pass, w, f, model_json, names, theta, kind_json, n)
                 for f, w in zip(self.futures, self._workers())]
        # Arrays from the network may be unaligned views of the message: aligned copies.
        return [np.array(r, dtype=np.float64) for r in self.client.gather(tasks)]

    def request(self, indices):
        """Starts fetching the rows at the ascending global ``indices`` — one task per worker
        that holds some, reading its shards where they are — and returns at once with a ticket
        for :meth:`collect`."""
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size and (indices[0] < 0 or indices[-1] >= self.num_rows):
            raise IndexError(f"row {indices[-1]} asked of shards holding {self.num_rows} rows")
        shard_of = np.searchsorted(self.bounds, indices, side="right") - 1
        shards = np.unique(shard_of)
        workers = self._workers()
        by_worker = {}
        for s in shards:
            local = indices[shard_of == s] - self.bounds[s]
            by_worker.setdefault(workers[s], []).append((int(s), local))
        tasks = []
        for where, parts in by_worker.items():
            futures = [self.futures[s] for s, _ in parts]
            task = self._submit(_sharded.take, where, futures, [local for _, local in parts])
            tasks.append(([s for s, _ in parts], task))
        ticket = next(self._tickets)
        self._requests[ticket] = tasks
        return ticket

    def collect(self, ticket):
        """The rows of a :meth:`request`, in the order asked: (X, y, names)."""
        tasks = self._requests.pop(ticket)
        results = self.client.gather([task for _, task in tasks])
        by_shard = {}
        for (shards, _), parts in zip(tasks, results):
            by_shard.update(zip(shards, parts))
        parts = [by_shard[s] for s in sorted(by_shard)]
        p = len(self.data.names)
        # Concatenated into new (aligned) arrays: parts from the network may be unaligned.
        X = np.concatenate([x for x, _ in parts]) if parts else np.empty((0, p))
        y = np.concatenate([y for _, y in parts]) if parts else np.empty(0)
        return np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y), \
            list(self.data.names)

    def take(self, indices):
        """The rows at the ascending global ``indices``, fetched now: (X, y, names)."""
        return self.collect(self.request(indices))

    def __repr__(self) -> str:
        return (f"ShardsOnWorkers({len(self.futures)} shards, {self.num_rows} rows, "
                f"from {self.data.label})")


class _Source:
    """What the Rust driver calls (``partials``, ``request``, ``collect``) for one model's
    shards. The model's JSON comes with every pass: a standardizing model's gains the column
    means and sds of all the shards after the first two passes."""

    def __init__(self, shards: ShardsOnWorkers):
        self.shards = shards

    def partials(self, theta, kind_json, model_json):
        return self.shards.pass_sums(model_json, theta, kind_json)

    def request(self, indices):
        return self.shards.request(indices)

    def collect(self, ticket):
        return self.shards.collect(ticket)


class Engine:
    """Runs the passes over a model's shards, and serves the chains' rows, on a Dask cluster
    (``client``: a ``dask.distributed.Client``). Pass it as ``engine=`` to :func:`tallmc.setup`
    and :func:`tallmc.sample`.

    The shards of a model's data are loaded into the workers' memory at the first use and kept
    there (:meth:`persist`) for the passes that follow."""

    def __init__(self, client):
        try:
            from distributed import Client
        except ImportError:
            raise ImportError('tallmc.dask needs Dask\'s distributed scheduler: pip install '
                              '"dask[dataframe]" distributed') from None
        if not isinstance(client, Client):
            raise TypeError(f"client is a {type(client).__name__}; expected a "
                            "dask.distributed.Client (Client(LocalCluster()) on one machine)")
        self.client = client
        self._persisted = {}

    def persist(self, data: Sharded) -> ShardsOnWorkers:
        """Loads every shard into a worker's memory (once per data: later calls return the same
        shards) and counts their rows. A shard that does not read (a missing file, a null or
        NaN, a column that is not numbers) is an error naming it."""
        if not isinstance(data, Sharded):
            raise TypeError(f"data is a {type(data).__name__}; expected a model's data on the "
                            "cluster (a model made from a Dask DataFrame or Parquet files)")
        key = id(data)
        if key in self._persisted:
            return self._persisted[key][1]
        client = self.client
        if data.kind == "parquet":
            futures = [client.submit(_sharded.load_parquet, path, data.response, data.names,
                                     pure=False) for path in data.files]
        else:
            import dask

            parts = data.frame.to_delayed()
            load = dask.delayed(_sharded.load_partition, pure=True)
            futures = client.compute([load(p, data.response, data.names, s)
                                      for s, p in enumerate(parts)])
        lengths = client.gather([client.submit(_sharded.num_rows, f, pure=False)
                                 for f in futures])
        shards = ShardsOnWorkers(client, futures, lengths, data)
        # The data object is kept alive with its shards, so its id is not reused.
        self._persisted[key] = (data, shards)
        return shards

    def release(self) -> None:
        """Frees the workers' copies of every shard this engine loaded."""
        for _, shards in self._persisted.values():
            self.client.cancel(shards.futures)
        self._persisted.clear()

    def _source(self, model):
        shards = self.persist(model.sharded)
        return _Source(shards), shards.lengths

    def __repr__(self) -> str:
        return f"tallmc.dask.Engine({self.client!r})"
