"""Tabu attributes shared by permutation problems: 'element a may not stand before element b'.

expiry[a, b] >= it forbids a before b (Janiak et al.'s tabu list of ordered pairs, whose fixed
length L equals a tenure of L iterations since one pair is recorded per iteration).
"""
from numba import njit

from ..neighborhoods import index_to_pair


@njit(cache=True)
def position_swap_tabu_flags(seq, expiry, it, flags):
    """Swap of positions i < j is tabu if it puts seq[j] before seq[i] while that is forbidden."""
    n = seq.shape[0]
    k = 0
    for i in range(n - 1):
        for j in range(i + 1, n):
            flags[k] = expiry[seq[j], seq[i]] >= it
            k += 1


@njit(cache=True)
def position_swap_tabu_record(seq, i, j, expiry, until):
    """After swapping positions i < j: forbid putting the old seq[i] before the old seq[j] again."""
    expiry[seq[i], seq[j]] = until


class PositionSwapMoves:
    """Moves that exchange the elements at positions i < j (TSP and PFSP swap neighbourhoods),
    with Janiak et al.'s ordered-pair tabu attributes. Mixed into a Neighbourhood with `n`."""

    def perform(self, solution, move):
        i, j = index_to_pair(move, self.n)
        solution[i], solution[j] = solution[j], solution[i]

    def tabu_flags(self, solution, memory, it, flags):
        position_swap_tabu_flags(solution, memory, it, flags)

    def tabu_record(self, solution_before, move, memory, until):
        i, j = index_to_pair(move, self.n)
        position_swap_tabu_record(solution_before, i, j, memory, until)
