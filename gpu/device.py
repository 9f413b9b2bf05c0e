"""Device functions: move parameters, move costs and tabu tests, one call per move.

Where the CPU's definition suits a thread (move numbering, the random generator, PPP rows, the
Weierstrass neighbours) it is compiled here from the same Python source (`twin`); the rest are
written for a thread that owns one move and may not allocate (same arithmetic, same move
numbering). Integer results must equal the CPU's exactly; the simulator tests compare them.
"""
import types

from numba import cuda

from lsbench import neighborhoods, rng
from lsbench.problems import ppp, tsp, weierstrass
from lsbench.problems.ppp import PENALTY


# ------------------------------------------------------------------ one source for CPU and GPU
def twin(cpu_function, **replace):
    """The GPU build of a CPU function: its Python source compiled as a CUDA device function (the
    njit functions it calls compile for the device too), so both sides run one definition.
    `replace` gives device versions of global names it calls (gpu/runtime/rounded.DEVICE_OPS)."""
    py = getattr(cpu_function, "py_func", cpu_function)
    if replace:
        py = types.FunctionType(py.__code__, {**py.__globals__, **replace}, py.__name__, py.__defaults__,
                                py.__closure__)
    return cuda.jit(device=True, inline=True)(py)


GOLDEN = rng.GOLDEN
index_to_pair = twin(neighborhoods.index_to_pair)
index_to_insertion = twin(neighborhoods.index_to_insertion)
index_to_triple = twin(neighborhoods.index_to_triple)
mix64 = twin(rng.mix64)
unit_interval = twin(rng.unit_interval)
tie_rank = twin(rng.tie_rank)
fill_permutation = twin(rng.fill_permutation)
fill_bits = twin(rng.fill_bits)
flip_signs = twin(ppp.flip_signs)
row_after_flip = twin(ppp.row_after_flip)
crown_neighbour = twin(weierstrass.neighbour)
weierstrass_sum = twin(weierstrass.weierstrass_sum)
_after_swap = twin(tsp.city_after_swap)


# ------------------------------------------------------------------ QAP
@cuda.jit(device=True, inline=True)
def qap_swap_delta(a, b, p, r, s):
    """Luong et al.'s per-thread O(n) move cost (general, asymmetric)."""
    pr = p[r]
    ps = p[s]
    d = (a[r, r] - a[s, s]) * (b[ps, ps] - b[pr, pr]) + (a[r, s] - a[s, r]) * (b[ps, pr] - b[pr, ps])
    for k in range(p.shape[0]):
        if k != r and k != s:
            pk = p[k]
            d += (a[k, r] - a[k, s]) * (b[pk, ps] - b[pk, pr]) + (a[r, k] - a[s, k]) * (b[ps, pk] - b[pr, pk])
    return d


# ------------------------------------------------------------------ TSP
@cuda.jit(device=True, inline=True)
def tsp_swap_delta(d, t, i, j):
    n = t.shape[0]
    e0 = (i - 1 + n) % n
    e2 = (j - 1 + n) % n
    delta = 0
    for which in range(4):
        e = e0 if which == 0 else (i if which == 1 else (e2 if which == 2 else j))
        dup = (which >= 1 and e == e0) or (which >= 2 and e == i) or (which >= 3 and e == e2)
        if not dup:
            f = (e + 1) % n
            delta += d[_after_swap(t, e, i, j), _after_swap(t, f, i, j)] - d[t[e], t[f]]
    return delta


@cuda.jit(device=True, inline=True)
def tsp_two_opt_delta(d, t, fwd, bwd, edge, i, j):
    """As lsbench.problems.tsp.two_opt_delta; the removed edges come from `edge` (coalesced) and
    the two added ones from rows t[i-1] and t[i] of d, shared by the threads of one i."""
    n = t.shape[0]
    if i == 0 and j == n - 1:
        return (bwd[n - 1] + d[t[0], t[n - 1]]) - (fwd[n - 1] + edge[n - 1])
    prev = t[(i - 1 + n) % n]
    nxt = t[(j + 1) % n]
    return (d[prev, t[j]] + d[t[i], nxt] - edge[(i - 1 + n) % n] - edge[j]
            + (bwd[j] - bwd[i]) - (fwd[j] - fwd[i]))


# ------------------------------------------------------------------ PPP
@cuda.jit(device=True, inline=True)
def ppp_flip_delta(a, x, y, hist, target_hist, k1, k2, k3, scratch):
    """Fitness change of flipping up to three bits, with this thread's zeroed scratch histogram
    (left zeroed on return). Two passes over the rows instead of the CPU's touched list (a thread
    may not allocate one)."""
    m = y.shape[0]
    n1 = target_hist.shape[0]
    c1, c2, c3 = flip_signs(x, k1, k2, k3)
    delta = 0
    for j in range(m):
        old = y[j]
        new = row_after_flip(a, y, j, k1, k2, k3, c1, c2, c3)
        if new != old:
            if old < 0:
                delta -= PENALTY * (-2 * old)
            elif old < n1:
                scratch[old] -= 1
            if new < 0:
                delta += PENALTY * (-2 * new)
            elif new < n1:
                scratch[new] += 1
    for j in range(m):
        old = y[j]
        new = row_after_flip(a, y, j, k1, k2, k3, c1, c2, c3)
        if new != old:
            for v in (old, new):
                if v >= 0 and v < n1 and scratch[v] != 0:
                    delta += abs(hist[v] + scratch[v] - target_hist[v]) - abs(hist[v] - target_hist[v])
                    scratch[v] = 0
    return delta


# ------------------------------------------------------------------ Weierstrass
@cuda.jit(device=True, inline=True)
def weierstrass_neighbour_value(x, key, t, count, radius, b, h, terms, y):
    """Neighbour t of x (into the thread's local y, of x's precision) and its Weierstrass value."""
    crown_neighbour(x, key, t, count, radius, y)
    return weierstrass_sum(y, x.shape[0], b, h, terms)
