"""Live islands across ranks and workers (`lsbench multistart --exchange-every E` on an engine that
takes migration, rots on gpu-resident): each MPI rank or Dask worker runs its share of the K
searches as one run (a GPU full of resident searches), and the ring of lsbench/search/islands.py
carries elites between them while the runs go on. Messages go only to the next island and nobody
waits for them: MPI's isend/Iprobe, or a Dask queue per island served by a background thread.
"""
import threading
import time
import uuid
from collections import deque
from functools import partial

from lsbench.errors import LsbenchError
from lsbench.search.islands import LoopbackRing, Migration

from .batch import run_batch

TAG_RING = 23
MIN_CLOSE_WAIT_S = 600.0  # an island waits this long (or twice its own run) for its neighbour's end


class MpiRing:
    """Rank r sends to r + 1 and receives from r - 1 (mod size) on COMM_WORLD, never blocking;
    `close` ends the ring: an end marker after the last message (MPI keeps their order), then
    every message from the left is drained and every send has completed."""

    def __init__(self, comm):
        self.comm = comm
        self.position, self.size = comm.Get_rank(), comm.Get_size()
        self.right, self.left = (self.position + 1) % self.size, (self.position - 1) % self.size
        self.pending = []
        self.left_done = False

    def start(self, bound_s):
        barrier = self.comm.Ibarrier()
        deadline = time.monotonic() + bound_s
        while not barrier.Test():
            if time.monotonic() > deadline:
                raise LsbenchError(f"island ring: not every rank started its searches within {bound_s:.0f} s")
            time.sleep(0.001)

    def send(self, message):
        self.pending.append(self.comm.isend(message, dest=self.right, tag=TAG_RING))
        self.pending = [r for r in self.pending if not r.test()[0]]

    def poll(self):
        out = []
        while not self.left_done and self.comm.iprobe(source=self.left, tag=TAG_RING):
            message = self.comm.recv(source=self.left, tag=TAG_RING)
            if message["kind"] == "end":
                self.left_done = True
            else:
                out.append(message)
        return out

    def close(self, bound_s):
        self.send({"kind": "end"})
        deadline = time.monotonic() + bound_s
        while not self.left_done or self.pending:
            self.poll()
            self.pending = [r for r in self.pending if not r.test()[0]]
            if time.monotonic() > deadline:
                raise LsbenchError(f"island ring: rank {self.left} sent no end of its run within {bound_s:.0f} s "
                                   "(crashed or hung)")
            time.sleep(0.001)


class DaskRing:
    """Island i of a ring over Dask workers: its inbox is the queue `<name>-i` on the scheduler; a
    background thread moves messages between the queues and local buffers, so the search loop
    never waits for the scheduler."""

    def __init__(self, name, position, size, period_s=0.01):
        from distributed import Queue, get_client
        client = get_client()
        self.position, self.size = position, size
        self.inbox = Queue(f"{name}-{position}", client=client)
        self.outbox = Queue(f"{name}-{(position + 1) % size}", client=client)
        self.to_send, self.received = deque(), deque()
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.error = None
        self.period_s = period_s
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            while True:
                closing = self.closing.is_set()
                with self.lock:
                    outgoing = list(self.to_send)
                    self.to_send.clear()
                for message in outgoing:
                    self.outbox.put(message, timeout=60)
                if closing:
                    return
                incoming = self.inbox.get(batch=True)
                with self.lock:
                    self.received.extend(incoming)
                time.sleep(self.period_s)
        except Exception as e:  # the search goes on without the ring; close() reports it
            self.error = e

    def start(self, bound_s):
        pass  # workers start as the scheduler places them; a late island still receives

    def send(self, message):
        with self.lock:
            self.to_send.append(message)

    def poll(self):
        with self.lock:
            out = list(self.received)
            self.received.clear()
        return out

    def close(self, bound_s):
        self.closing.set()
        self.thread.join(timeout=bound_s)
        if self.thread.is_alive():
            raise LsbenchError(f"island ring: the Dask scheduler took messages for over {bound_s:.0f} s")
        if self.error is not None:
            raise LsbenchError(f"island ring over Dask: {type(self.error).__name__}: {self.error}")


def share(seeds, islands):
    """Island i's consecutive seeds: K searches split as evenly as they go."""
    k = len(seeds)
    return [seeds[i * k // islands:(i + 1) * k // islands] for i in range(islands)]


def run_island(spec, seeds, ring, every, migrants, start="copy"):
    """This island's searches as one run with the ring live; {seed: record or error}. The ring is
    closed whatever happens, so that the neighbours do not wait for this island."""
    migration = Migration(ring, every, migrants, start)
    t0 = time.monotonic()
    try:
        results = run_batch(spec, seeds, migration)
    finally:
        ring.close(max(MIN_CLOSE_WAIT_S, 2 * (time.monotonic() - t0)))
    island = migration.describe()
    for q, s in enumerate(seeds):
        if "error" not in results[s]:
            results[s]["islands"] = {**island, "restarted_from": migration.received_by(q)}
    return results


def island_seeds(seeds, via, places):
    """The seeds of each island, one island a place (a rank, a worker; one in this process)."""
    if via == "mpi" and len(seeds) < places:
        raise LsbenchError(f"--searches {len(seeds)}: fewer searches than the {places} islands (ranks)")
    return share(seeds, min(places, len(seeds)))


def runner(spec, every, migrants, start="copy"):
    """run_unit for hpc.dispatch: an island on its place, with the ring of that kind of place."""
    return partial(_island_at, spec, every, migrants, start, f"lsbench-ring-{uuid.uuid4().hex}")


def _island_at(spec, every, migrants, start, ring_name, seeds, place):
    ring = {"local": LoopbackRing, "mpi": lambda: MpiRing(place.comm),
            "dask": lambda: DaskRing(ring_name, place.index, place.size)}[place.via]()
    return run_island(spec, seeds, ring, every, migrants, start)
