"""Live islands: the K searches an engine holds (a GPU's resident searches) are one island, and
islands form a ring (`lsbench multistart --exchange-every E`, hpc/islands.py carries the messages
over MPI ranks or Dask workers).

The engine calls `Migration.at_chunk` at each chunk boundary, between two launches, so the device
never waits for the ring, and the chunks stay the engine's own (cut to the exchange period, they
cost the searches 5 % of their rate): at the first boundary from every E iterations on, the
island's best distinct solutions go to the next island (only permutations and costs travel, and the send does not wait for the receiver), and the
solutions that have arrived restart this island's worst searches (a restart that keeps the
search's own best, as an elite restart does): from the arrived solution itself (`start="copy"`), or
(`start="cross"`) from its crossing with the restarted search's own best -- the assignments the two
share kept, the others dealt at random -- so that the islands' elites recombine instead of being
copied (a memetic step, as Benlic and Hao's BMA recombines its population's elites). An island that reaches the target tells the ring,
and every island stops at its next chunk boundary. Arrival times depend on the other islands'
speed, so a run with islands is not repeatable; each search's record lists what it received.
"""
import time
from collections import deque

import numpy as np

from .. import rng
from ..errors import LsbenchError

STARTS = ("copy", "cross")  # how an arrived solution restarts a search (Migration, --migrant-start)

START_WAIT_S = 600.0  # islands wait this long for each other's compile and warm-up


class LoopbackRing:
    """A ring of one island (no other rank or worker): what it sends comes back to it."""

    position, size = 0, 1

    def __init__(self):
        self.box = deque()

    def send(self, message):
        self.box.append(message)

    def poll(self):
        out = list(self.box)
        self.box.clear()
        return out

    def start(self, bound_s):
        pass

    def close(self, bound_s):
        self.box.clear()


class Migration:
    """An island's side of the ring: what to send, which searches take what arrived, when to stop."""

    def __init__(self, ring, every, migrants, start="copy"):
        if every < 1:
            raise LsbenchError(f"--exchange-every: must be at least 1, got {every}")
        if migrants < 1:
            raise LsbenchError(f"--migrants: must be at least 1, got {migrants}")
        if start not in STARTS:
            raise LsbenchError(f"--migrant-start: one of {', '.join(STARTS)}, got {start!r}")
        self.ring, self.every, self.migrants, self.migrant_start = ring, int(every), int(migrants), start
        self.next_send = self.every
        self.stop_sent = False
        self.sent = self.received = 0
        self.replaced = []  # [search, iteration, cost, from island]
        self.host_s, self.max_host_s, self.calls = 0.0, 0.0, 0
        self.stopped_by = None  # the island whose target stopped this one

    def start(self):
        """Before the first timed chunk: where the ring can, every island starts together (an island
        that started late would have only received, never given)."""
        self.ring.start(START_WAIT_S)

    def at_chunk(self, iteration, bests, best_solutions, finished, target_reached):
        """After a chunk that ended at `iteration`: sends, receives and picks restarts. `bests`:
        the searches' best costs; `best_solutions()`: their best permutations (read only when a send
        is due or a crossed restart needs them). Returns ([(search, start permutation)], stop): stop when this island or another
        reached the target."""
        t0 = time.perf_counter()
        stop = False
        if target_reached and not self.stop_sent:
            self.ring.send({"kind": "stop", "from": self.ring.position})
            self.stop_sent = stop = True
        arrived = []
        for message in self.ring.poll():
            if message["kind"] == "stop":
                stop = True
                self.stopped_by = message["from"] if self.stopped_by is None else self.stopped_by
                if message["from"] != self.ring.position and not self.stop_sent:
                    self.ring.send(message)  # on round the ring
                    self.stop_sent = True
            else:
                self.received += 1
                arrived.append(message)
        starts = []
        if not stop:
            if iteration >= self.next_send:
                self.ring.send(self.elites(bests, best_solutions(), iteration))
                self.sent += 1
                self.next_send = (iteration // self.every + 1) * self.every
            starts = self.restarts(arrived, bests, finished, iteration)
            if starts and self.migrant_start == "cross":
                own = best_solutions()
                starts = [(q, crossed(solution, own[q], rng.new_state(iteration * 1_000_003 + q)))
                          for q, solution in starts]
        took = time.perf_counter() - t0
        self.host_s += took
        self.max_host_s = max(self.max_host_s, took)
        self.calls += 1
        return starts, stop

    def elites(self, bests, solutions, iteration):
        """The island's `migrants` best distinct costs and one solution of each."""
        _, first = np.unique(np.asarray(bests), return_index=True)  # lowest first
        chosen = first[:self.migrants]
        return {"kind": "elites", "from": self.ring.position, "iteration": int(iteration),
                "costs": [int(bests[q]) for q in chosen], "solutions": [np.asarray(solutions[q]).tolist() for q in chosen]}

    def restarts(self, arrived, bests, finished, iteration):
        """Each arrived solution, best first, restarts this island's worst search still running if
        it is better than that search's best and its cost is not one of this island's bests."""
        offers = sorted((c, s, m["from"]) for m in arrived for c, s in zip(m["costs"], m["solutions"]))
        have = set(int(v) for v in bests)
        worst_first = [int(q) for q in np.argsort(-np.asarray(bests), kind="stable") if not finished[q]]
        starts = []
        for cost, solution, source in offers:
            if cost in have:
                continue
            if not worst_first or bests[worst_first[0]] <= cost:
                break
            q = worst_first.pop(0)
            have.add(cost)
            starts.append((q, np.asarray(solution, dtype=np.int64)))
            self.replaced.append([q, int(iteration), int(cost), int(source)])
        return starts

    def withdraw(self, searches, iteration):
        """The restarts of `searches` picked at `iteration` did not happen (the run ended there)."""
        gone = set(searches)
        self.replaced = [r for r in self.replaced if not (r[0] in gone and r[1] == iteration)]

    def describe(self):
        return {"exchange_every": self.every, "migrants": self.migrants, "migrant_start": self.migrant_start,
                "ring_size": self.ring.size,
                "position": self.ring.position, "sent": self.sent, "received": self.received,
                "replaced": len(self.replaced), "stopped_by": self.stopped_by, "exchange_calls": self.calls,
                "exchange_host_s": round(self.host_s, 6), "max_exchange_host_s": round(self.max_host_s, 6)}

    def received_by(self, search):
        """[[iteration, cost, from island]] of the solutions that restarted `search`."""
        return [[it, cost, src] for q, it, cost, src in self.replaced if q == search]


def crossed(a, b, state):
    """A permutation that keeps every assignment a and b share (a_i = b_i) and deals the values
    left to the other positions in a random order drawn from `state`."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    child = np.where(a == b, a, -1)
    free = np.flatnonzero(child < 0)
    left = np.setdiff1d(a, child[child >= 0])  # (sorted: the draw alone decides the order)
    order = rng.permutation(state, len(free))
    child[free] = left[order]
    return child
