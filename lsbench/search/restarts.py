"""Iterated parallel tabu search: restarts of stagnant searches from a perturbed elite solution.

K searches run side by side (gpu-resident Ro-TS). A search whose best has not improved for
`stagnation` iterations since its last improvement or restart restarts from one of the `elite`
best distinct solutions of all K searches, perturbed by `strength` random swaps (Misevičius'
iterated tabu search perturbs its best by random swaps; sharing an elite across searches makes it
a parallel one). With `crossover`, the restart starts instead from a child of two elite solutions
(Benlic & Hao's uniform crossover for QAP: what both parents assign stays, each other position
takes one parent's item at random while it is free, the rest is filled at random), then the
swaps. With `pools` > 1 the searches form that many groups of neighbours (searches
q K / pools ..), each drawing from its own members' elite only, so that the groups drift apart
(pools = K: each search restarts from its own best, Misevičius' iterated tabu search K times over).
With `mix` > 0, that share of the restarts starts from a uniform crossover of the pool's pick and
the best solution of another pool drawn at random (the pools' bests recombine, as the islands of a
memetic search). With `strength_max` above `strength`, each restart draws its number of swaps
uniformly between the two (Misevičius' iterated tabu search varies its mutation's size so).
With `renew` > 0, a pool whose best has not improved for `renew` iterations starts afresh: each
member from a random permutation, its best forgotten by the search (the run keeps it), so that
a stalled pool becomes a new independent attempt; the pool holding the best of all never does.
With `walk` > 0, that share of each pool's members (its last ones) accept every new local optimum
instead: a stagnant walker restarts from its own best since its last restart, perturbed, and
forgets it (the run keeps its record), a random walk over local optima (the RW acceptance of
Stützle's iterated local search for QAP), while the pool's other members draw from the pool's
elite, walkers' records included. With `merge` > 0, neighbouring pools pair up every `merge`
iterations (33 pools, then 17, 9, 5, 3, 2, 1): the members of the pool with the worse best go on
from the better one's elite, so that the searches gather, pool by pool, where the run has gone
deepest (successive halving over the pools). Otherwise a restart keeps the search's own best; the tabu list
starts afresh in both. The draws
come from one NumPy generator seeded by the run's first seed, and decisions are taken every
`check_every` iterations, so the same seeds give the same run.
"""
import numpy as np


class EliteRestarts:
    """Decides, at chunk boundaries, which searches restart and from where."""

    def __init__(self, n, searches, stagnation, elite, strength, seed, crossover=False, pools=1, mix=0.0,
                 strength_max=None, renew=0, walk=0.0, merge=0):
        self.n, self.stagnation, self.elite, self.crossover = n, int(stagnation), int(elite), bool(crossover)
        self.groups = min(int(pools), searches)
        self.pool_of = np.arange(searches) * self.groups // searches  # each search's group
        self.swaps = max(2, int(round(strength * n))) if strength > 0 else 0  # 0: the elite itself
        self.most_swaps = max(self.swaps, int(round((strength_max or 0.0) * n)))
        self.mix = float(mix) if self.groups > 1 else 0.0
        self.rng = np.random.default_rng([int(seed), 0x1E1173])
        self.since = np.zeros(searches, dtype=np.int64)  # the iteration of each search's last gain or restart
        self.renew, self.merge = int(renew), int(merge)
        # the last round(walk * size) members of each pool walk
        size = np.bincount(self.pool_of, minlength=self.groups)
        rank = np.arange(searches) - np.searchsorted(self.pool_of, self.pool_of)
        self.walker = rank >= size[self.pool_of] - np.round(float(walk) * size[self.pool_of])
        self.pool_best = np.full(self.groups, np.iinfo(np.int64).max)  # each pool's best since it last started
        self.pool_since = np.zeros(self.groups, dtype=np.int64)  # ... and the iteration it was found

    def check_every(self, cap):
        """Chunk length: a quarter of the stagnation limit (a restart is at most that late), fixed so
        that the restarts fall on the same iterations in every run."""
        return int(min(cap, max(16, self.stagnation // 4)))

    def improved(self, searches, iterations):
        """Improvements (arrays of searches and their iterations) reset the stagnation clocks."""
        np.maximum.at(self.since, searches, iterations)

    def stagnant(self, iteration, finished):
        """The searches, not finished, whose best has not improved for `stagnation` iterations."""
        return np.flatnonzero((iteration - self.since >= self.stagnation) & ~finished)

    def pools_at(self, iteration):
        """(each search's pool, the number of pools) at this iteration: the first pools, or with
        `merge` their pairs, pairs of pairs, ... one level every `merge` iterations."""
        if not self.merge:
            return self.pool_of, self.groups
        pool_of = self.pool_of >> min(iteration // self.merge, 62)
        return pool_of, int(pool_of[-1]) + 1

    @staticmethod
    def best_members(bests, pool_of, groups):
        """Each of `groups` pools' search (pool_of: each search's pool) with the lowest best (the first
        on ties)."""
        order = np.lexsort((bests, pool_of))
        return order[np.searchsorted(pool_of[order], np.arange(groups))]

    def renewals(self, iteration, bests, finished):
        """[(search, random permutation)]: the members, not finished, of every pool whose best (in
        `bests`, the searches' bests since their last fresh start) has not improved for `renew`
        iterations, but the pool that holds the lowest of all; called at every chunk boundary."""
        if not self.renew:
            return []
        bests = np.asarray(bests)
        lowest = bests[self.best_members(bests, self.pool_of, self.groups)]  # (renew: never merged pools)
        better = lowest < self.pool_best
        self.pool_best[better] = lowest[better]
        self.pool_since[better] = iteration
        leader = self.pool_of[np.argmin(bests)]
        starts = []
        for group in np.flatnonzero(iteration - self.pool_since >= self.renew):
            if group == leader:
                continue
            for q in np.flatnonzero((self.pool_of == group) & ~finished):
                starts.append((int(q), self.rng.permutation(self.n).astype(np.int64)))
                self.since[q] = iteration
            self.pool_best[group] = np.iinfo(np.int64).max
            self.pool_since[group] = iteration
        return starts

    @property
    def forgets(self):
        """Whether some restarts make a search forget its best (renewals, walks): the run keeps records."""
        return bool(self.renew or self.walker.any())

    def perturbed(self, start):
        """start after the restart's random swaps (their number fixed, or drawn from the range). The
        pairs come in one draw, the same numbers as one draw a pair (NumPy's bounded integers), at
        a fraction of the host time between two chunks (hundreds of restarts a second)."""
        swaps = self.swaps if self.most_swaps == self.swaps else int(self.rng.integers(self.swaps, self.most_swaps + 1))
        order = start.tolist()
        for i, j in self.rng.integers(self.n, size=(swaps, 2)).tolist():
            order[i], order[j] = order[j], order[i]
        start[:] = order
        return start

    def walks(self, iteration, best_sols, finished):
        """[(search, start)] for the stagnant walkers, not finished: each from its own best since its
        last restart (best_sols), perturbed; the search forgets that best (the caller keeps it)."""
        starts = []
        for q in self.stagnant(iteration, finished):
            if self.walker[q]:
                starts.append((int(q), self.perturbed(np.array(best_sols[q], dtype=np.int64))))
                self.since[q] = iteration
        return starts

    def restarts(self, iteration, bests, best_sols, finished):
        """[(search, start permutation)] for the stagnant searches, not walkers, that have not
        finished."""
        stagnant = self.stagnant(iteration, finished)
        stagnant = stagnant[~self.walker[stagnant]]
        if stagnant.size == 0:
            return []
        bests = np.asarray(bests)
        pool_of, groups = self.pools_at(iteration)
        pools = {}
        starts = []
        mixing = self.mix and groups > 1
        leaders = self.best_members(bests, pool_of, groups) if mixing else None
        for q in stagnant:
            group = pool_of[q]
            if group not in pools:
                members = np.flatnonzero(pool_of == group)
                _, first = np.unique(bests[members], return_index=True)  # distinct best values, lowest first
                pools[group] = members[first[:self.elite]]
            pool = pools[group]
            if self.crossover and pool.size > 1:
                first, second = self.rng.choice(pool, size=2, replace=False)
                start = uniform_crossover(np.asarray(best_sols[first], dtype=np.int64),
                                          np.asarray(best_sols[second], dtype=np.int64), self.rng)
            else:
                start = np.array(best_sols[pool[self.rng.integers(pool.size)]], dtype=np.int64)
                if mixing and self.rng.random() < self.mix:
                    other = (group + 1 + self.rng.integers(groups - 1)) % groups
                    start = uniform_crossover(start, np.asarray(best_sols[leaders[other]], dtype=np.int64), self.rng)
            starts.append((int(q), self.perturbed(start)))
            self.since[q] = iteration
        return starts


def uniform_crossover(a, b, rng):
    """A child permutation of a and b: the positions where they agree keep their item; the others,
    in random order, take a's or b's item (a fair coin for which is tried first) while it is unused;
    the positions left get the unused items in random order."""
    child = np.full(a.size, -1, dtype=np.int64)
    same = a == b
    child[same] = a[same]
    used = np.zeros(a.size, dtype=bool)
    used[a[same]] = True
    for i in rng.permutation(np.flatnonzero(~same)):
        for item in ((a[i], b[i]) if rng.random() < 0.5 else (b[i], a[i])):
            if not used[item]:
                child[i] = item
                used[item] = True
                break
    left = np.flatnonzero(child < 0)
    child[left] = rng.permutation(np.flatnonzero(~used))
    return child
