"""Device functions: move parameters, move costs and tabu tests, one call per move.

These are the CUDA ports of the CPU neighbourhood code in `lsbench/problems/` (same arithmetic, same
move numbering as `lsbench/neighborhoods.py`), written for a thread that owns one move and may not
allocate. Integer results must equal the CPU's exactly; the simulator tests compare them.
"""
import math

import numpy as np
from numba import cuda

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# ------------------------------------------------------------------ move numbering, hashing
@cuda.jit(device=True, inline=True)
def index_to_pair(k, n):
    i = int(n - 2 - math.floor((math.sqrt(4.0 * n * (n - 1) - 8.0 * k - 7.0) - 1.0) / 2.0))
    if i < 0:
        i = 0
    while i > 0 and i * (2 * n - i - 1) // 2 > k:
        i -= 1
    while (i + 1) * (2 * n - i - 2) // 2 <= k:
        i += 1
    return i, k - i * (2 * n - i - 1) // 2 + i + 1


@cuda.jit(device=True, inline=True)
def index_to_insertion(idx, n):
    i = idx // (n - 1)
    k = idx % (n - 1)
    if k >= i:
        k += 1
    return i, k


@cuda.jit(device=True, inline=True)
def c2(m):
    return m * (m - 1) // 2 if m >= 2 else 0


@cuda.jit(device=True, inline=True)
def index_to_triple(idx, n):
    i = 0
    while idx >= c2(n - i - 1):
        idx -= c2(n - i - 1)
        i += 1
    j = i + 1
    while idx >= n - j - 1:
        idx -= n - j - 1
        j += 1
    return i, j, j + 1 + idx


@cuda.jit(device=True, inline=True)
def mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@cuda.jit(device=True, inline=True)
def tie_rank(k, key):
    return mix64(np.uint64(k) ^ key)


@cuda.jit(device=True, inline=True)
def unit_random(key, t, c):
    z = mix64(key ^ mix64(np.uint64(t) * _GOLDEN + np.uint64(c) + np.uint64(1)))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


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
def _after_swap(t, q, i, j):
    if q == i:
        return t[j]
    if q == j:
        return t[i]
    return t[q]


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
def ppp_row_after(a, y, j, k1, k2, k3, c1, c2_, c3):
    new = y[j] + c1 * a[j, k1]
    if k2 >= 0:
        new += c2_ * a[j, k2]
    if k3 >= 0:
        new += c3 * a[j, k3]
    return new


@cuda.jit(device=True, inline=True)
def ppp_flip_delta(a, x, y, hist, target_hist, k1, k2, k3, scratch):
    """Fitness change of flipping up to three bits, with this thread's zeroed scratch histogram
    (left zeroed on return). Two passes over the rows instead of the CPU's touched list."""
    m = y.shape[0]
    n1 = target_hist.shape[0]
    c1 = -2 * (2 * x[k1] - 1)
    c2_ = 0 if k2 < 0 else -2 * (2 * x[k2] - 1)
    c3 = 0 if k3 < 0 else -2 * (2 * x[k3] - 1)
    delta = 0
    for j in range(m):
        old = y[j]
        new = ppp_row_after(a, y, j, k1, k2, k3, c1, c2_, c3)
        if new != old:
            if old < 0:
                delta -= 30 * (-2 * old)
            elif old < n1:
                scratch[old] -= 1
            if new < 0:
                delta += 30 * (-2 * new)
            elif new < n1:
                scratch[new] += 1
    for j in range(m):
        old = y[j]
        new = ppp_row_after(a, y, j, k1, k2, k3, c1, c2_, c3)
        if new != old:
            for v in (old, new):
                if v >= 0 and v < n1 and scratch[v] != 0:
                    delta += abs(hist[v] + scratch[v] - target_hist[v]) - abs(hist[v] - target_hist[v])
                    scratch[v] = 0
    return delta


# ------------------------------------------------------------------ Weierstrass
@cuda.jit(device=True, inline=True)
def weierstrass_neighbour_value(x, key, t, count, radius, b, h, terms, y):
    """Neighbour t of x (into the thread's local y) and its Weierstrass value."""
    d = x.shape[0]
    norm = 0.0
    for c in range(d):
        g = 2.0 * unit_random(key, t, c) - 1.0
        y[c] = g
        norm += g * g
    norm = math.sqrt(norm)
    if norm == 0.0:
        norm = 1.0
    r = radius * (t + unit_random(key, t, d)) / count
    for c in range(d):
        v = x[c] + r * y[c] / norm
        y[c] = min(1.0, max(-1.0, v))
    total = x[0] * 0
    for i in range(d):
        bk = x[0] * 0 + 1
        s = x[0] * 0
        xi = x[0] * 0 + y[i]
        for k in range(1, terms + 1):
            bk = bk * b
            s += bk ** (-h) * math.sin(bk * xi)
        total += s
    return total
