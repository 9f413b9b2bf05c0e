"""Where a multistart's units of work run: in this process, on MPI ranks or on Dask workers.

A unit is a list of seeds run as one (`run_unit(unit, place) -> {seed: result}`): a batch of
searches that fills a GPU, or an island whose searches pass elites round a ring. The driver (this
process, MPI rank 0 or the Dask client) receives each unit's results as the unit ends; only results
travel, so nodes need no shared file system. Independent units are dealt round the places; units
that must run at the same time (island rings) take one place each.
"""
import threading
import time
import uuid
from dataclasses import dataclass

from lsbench.errors import LsbenchError
from lsbench.provenance import host_info

from . import mpi
from .batch import place_rank

VIAS = ("local", "mpi", "dask")
TAG_RESULT = 21
GATE_WAIT_S = 300.0  # Dask units wait this long at most for each other's compile and warm-up


@dataclass(frozen=True)
class Place:
    """Where a unit runs: its index among `size` places, the MPI communicator there (None
    elsewhere), and what the records say of it (`where`)."""

    via: str
    index: int
    size: int
    where: dict
    comm: object = None
    gate: object = None  # called once a run has compiled and warmed up, before it is timed


class StartGate:
    """MPI ranks start their timed searches together: each rank waits here once, after its first
    run's compilation and warm-up (a rank with nothing to run, at its end), so that the aggregate
    rate measures the GPUs, not the ranks' start-up skew."""

    def __init__(self, comm, after=None):
        self.comm, self.after, self.passed = comm, after, False

    def __call__(self):
        if not self.passed:
            self.passed = True
            self.comm.Barrier()
            if self.after:
                self.after()


class DaskStartGate:
    """Dask workers' units start their timed searches together: the first `expected` units to
    warm up (one a worker, as the scheduler hands them out) wait here for each other, at most
    GATE_WAIT_S; later units pass at once. Arrivals are counted in a named distributed.Queue."""

    def __init__(self, name, expected):
        self.name, self.expected, self.passed = name, expected, False

    def __call__(self):
        if self.passed:
            return
        self.passed = True
        from distributed import Queue
        arrivals = Queue(self.name)
        arrivals.put(1)
        deadline = time.monotonic() + GATE_WAIT_S
        while arrivals.qsize() < self.expected and time.monotonic() < deadline:
            time.sleep(0.02)


def dispatch(via, make_units, run_unit, start, backend, workers=None, scheduler=None, at_once=False):
    """Run every unit of `make_units(places)` by `run_unit(unit, place)`; on the driver, `start(n)`
    (n: the places, or with `at_once` the units) makes the collector whose `add(results, where)`
    takes each unit's {seed: result} as it ends. `at_once`: unit i runs on place i, all at the same
    time; else the units are dealt round the places. Returns the collector on the driver, None on
    the other MPI ranks. A unit whose Dask worker is lost comes back as an error for each of its
    seeds; an error of `make_units` is raised on every rank."""
    if via == "local":
        place = Place("local", 0, 1, {"host": host_info()["hostname"]})
        units = make_units(1)
        collector = start(len(units) if at_once else 1)
        for unit in units:
            collector.add(run_unit(unit, place), place.where)
        return collector
    if via == "mpi":
        return _over_mpi(make_units, run_unit, start, backend, at_once)
    if via == "dask":
        return _over_dask(make_units, run_unit, start, workers, scheduler, at_once)
    raise LsbenchError(f"--via: unknown {via!r} (known: auto, {', '.join(VIAS)})")


def _over_mpi(make_units, run_unit, start, backend, at_once):
    MPI = mpi("lsbench multistart --via mpi")
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    where = place_rank(MPI, comm, backend)
    plan = None
    if rank == 0:  # rank 0 decides (its output folder says which searches are done)
        try:
            plan = ("units", make_units(size))
        except LsbenchError as e:
            plan = ("error", str(e))
    kind, units = comm.bcast(plan, root=0)
    if kind == "error":
        raise LsbenchError(units)
    mine = units[rank:rank + 1] if at_once else units[rank::size]
    if rank != 0:
        gate = None if at_once else StartGate(comm)  # (live islands start together through their ring)
        place = Place("mpi", rank, size, where, comm, gate)
        for unit in mine:
            results = run_unit(unit, place)
            if gate:  # (a run that failed before its warm-up ended passes it here: sends follow the barrier)
                gate()
            comm.send((results, where), dest=0, tag=TAG_RESULT)  # (a unit's records in one message)
        if gate:
            gate()
        return None
    collector = start(len(units) if at_once else size)
    expected = len(units) - len(mine)  # (one message a unit)

    def listen():  # the other ranks' results are received while rank 0 runs its own units
        for _ in range(expected):
            collector.add(*comm.recv(source=MPI.ANY_SOURCE, tag=TAG_RESULT))

    listener = threading.Thread(target=listen, daemon=True)
    # the other ranks send only after the gate: listening starts there, so no MPI call runs beside the barrier
    gate = None if at_once else StartGate(comm, after=listener.start)
    if gate is None:
        listener.start()
    place = Place("mpi", rank, size, where, comm, gate)
    for unit in mine:
        collector.add(run_unit(unit, place), where)
    if gate:
        gate()
    listener.join()
    return collector


def _on_worker(run_unit, unit, index, size, gate=None):
    import distributed
    where = {"host": host_info()["hostname"], "worker": distributed.get_worker().address}
    try:
        return run_unit(unit, Place("dask", index, size, where, gate=gate)), where
    finally:
        if gate:  # a unit that failed before its warm-up still arrives: the others wait no longer for it
            gate()


def _over_dask(make_units, run_unit, start, workers, scheduler, at_once):
    from distributed import as_completed
    from lsbench.hpc.dask_grid import connected_workers, start_client
    # a unit whose worker dies is reported failed, not silently run again elsewhere
    client, cluster = start_client(workers, scheduler, allowed_failures=0)
    try:
        addresses = connected_workers(client)
        units = make_units(len(addresses))
        collector = start(len(units) if at_once else len(addresses))
        futures = {}
        # (live islands start together through their ring)
        gate_name = None if at_once else f"lsbench-start-{uuid.uuid4().hex}"
        for i, unit in enumerate(units):
            pinned = {"workers": [addresses[i]], "allow_other_workers": False} if at_once else {}
            size = len(units) if at_once else len(addresses)
            gate = None if at_once else DaskStartGate(gate_name, min(len(addresses), len(units)))
            futures[client.submit(_on_worker, run_unit, unit, i, size, gate, pure=False, retries=0, **pinned)] = unit
        for future in as_completed(list(futures)):
            try:
                results, where = future.result()
            except Exception as e:  # noqa: BLE001 (the worker's failure becomes each seed's error)
                why = f"worker lost or failed: {type(e).__name__}: {e}"
                results, where = {s: {"seed": s, "error": why} for s in futures[future]}, None
            collector.add(results, where)
        return collector
    finally:
        client.close(timeout=10)
        if cluster is not None:
            cluster.close(timeout=10)
