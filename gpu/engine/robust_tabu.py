"""The registry's engine for `--algorithm rots --backend gpu-resident`: K robust tabu searches
(QAP) on the resident Ro-TS kernel of gpu/engine/rots/, with its parameters (shape, iterated
restarts, pools) declared once."""
from lsbench.params import Param, Rule, with_defaults

from ..runtime.chunks import ResidentEngine
from .rots.host import ResidentRots


class ResidentRotsEngine(ResidentEngine):
    """The registry's engine for rots on gpu-resident: K searches (seeds s..s+K-1) in one run (the
    warm-up of every resident engine)."""

    problems = ("qap",)
    takes_migration = True
    parameters = (
        Param("block", int, "threads per search block (default: chosen for the instance and K)", low=32, high=1024),
        Param("cluster", int, "blocks per search: a thread block cluster (Hopper GPUs)", choices=(1, 2, 4, 8, 16)),
        Param("split", int, "threads that only recompute the O(n) moves (0: every thread does both; "
              "default: whole warps for one round of them where the others can own every move)", low=0),
        Param("restart", int, "iterated parallel tabu: a search restarts from a perturbed elite solution "
              "after this many iterations without improvement (0: never; then each search is the CPU's)", low=0),
        Param("elite", int, "restart: the number of best distinct solutions of all searches it draws from", default=4,
              low=1),
        Param("perturb", float, "restart: random swaps, as a fraction of n", default=0.25, low=0.0, high=4.0),
        Param("crossover", bool, "restart: from a uniform crossover of two elite solutions, then the swaps",
              default=False),
        Param("pools", int, "restart: the searches form this many groups, each drawing from its own elite "
              "(1: one elite for all; K: each search restarts from its own best)", default=1, low=1),
        Param("mix", float, "restart: the share of restarts from a crossover of the pool's pick and another "
              "pool's best (needs pools > 1)", default=0.0, low=0.0, high=1.0),
        Param("renew", int, "restart: a pool whose best has not improved for this many iterations starts afresh "
              "from random permutations, but the pool holding the best of all (0: never)", default=0, low=0),
        Param("walk", float, "restart: the share of each pool's searches that restart from their own last "
              "local optimum and forget it (random-walk acceptance; the run keeps their records)", default=0.0,
              low=0.0, high=1.0),
        Param("merge", int, "restart: every this many iterations neighbouring pools pair up, the worse one's "
              "searches going on from the better one's elite (33 pools, then 17, 9, ... 1; 0: never)", default=0,
              low=0),
        Param("perturb_max", float, "restart: random swaps drawn uniformly from perturb to this fraction of n "
              "(default: perturb, a fixed number)", low=0.0, high=4.0),
        Param("persistent", int, "blocks of a persistent grid that take the searches' chunks from a queue (0: one "
              "block per search; default: a queue past one search per SM where full waves do not fit)", low=0),
    )

    rules = tuple(Rule(lambda v, run, key=key: v[key] and v["pools"] < 2,
                       f"--param {key}={{{key}}}: needs pools of searches (--param pools=G, G >= 2)")
                  for key in ("mix", "renew", "merge")) + (
        Rule(lambda v, run: v["merge"] and v["renew"],
             "--param merge={merge}: not with renew (a merged pool has no stall clock of its own)"),
        Rule(lambda v, run: v["walk"] and v["renew"],
             "--param walk={walk}: not with renew (a renewal would hand a pool back the records of its walkers)"),
        Rule(lambda v, run: v["walk"] and not v.get("restart"),
             "--param walk={walk}: needs restarts (--param restart=S, S > 0)"),
        Rule(lambda v, run: v.get("perturb_max") is not None and v["perturb_max"] < v["perturb"],
             "--param perturb_max={perturb_max}: below perturb={perturb} (the range of random swaps runs from "
             "perturb up to perturb_max)"),
    )

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        params = with_defaults(self.parameters, params)
        self.search = ResidentRots(problem, search.params(problem), threads=params.get("block"),
                                     cluster=params.get("cluster"), split=params.get("split"),
                                     persistent=params.get("persistent"),
                                     restart={"stagnation": params.get("restart") or 0, "elite": params["elite"],
                                              "strength": params["perturb"], "crossover": params["crossover"],
                                              "pools": params["pools"], "mix": params["mix"],
                                              "strength_max": params.get("perturb_max"), "renew": params["renew"],
                                              "walk": params["walk"], "merge": params["merge"]})
        self.count = 0
        self.migration = None

    def run(self, seeds, stop, progress=None, migration=None):
        self.count, self.migration = len(seeds), migration
        return self.search.run(seeds, stop, progress, migration=migration)

    def describe(self):
        info = {**super().describe(), "searches": self.count, "chunks": self.search.chunks_run,
                "max_chunk_s": round(self.search.max_chunk_s, 6)}
        if self.migration:
            info["islands"] = self.migration.describe()
        return info
