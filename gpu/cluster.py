"""Thread block clusters (Hopper, compute capability 9.0+): one search spread over several SMs.

Numba-CUDA 0.30 has neither cluster launches nor cluster intrinsics, so this module adds the three
pieces the cluster Ro-TS needs, as PTX: a store into another block's shared memory (distributed
shared memory: `mapa`, then a generic store), the cluster-wide barrier (release/acquire, so every
store before it is seen after it), and a launch with cluster dimensions through cuda.core (in
gpu.launch.PreparedLauncher). None of them runs under the simulator: the cluster tests run on a device (tests/test_gpu.py).
"""
from llvmlite import ir
from numba import cuda, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic

_BITS = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}
_CONSTRAINT = {8: "c", 16: "h", 32: "r", 64: "l"}


@intrinsic
def cluster_store(typingctx, array, index, rank, value):
    """array[index] = value in the shared memory of the cluster's block `rank` (array: a shared
    array of this block; every block of the cluster has it at the same place)."""
    if not isinstance(array, types.Array) or array.dtype.bitwidth not in _BITS:
        return None

    def codegen(context, builder, sig, args):
        arr_t, idx_t, rank_t, val_t = sig.args
        arr, idx, rnk, val = args
        ary = context.make_array(arr_t)(context, builder, value=arr)
        ptr = cgutils.get_item_pointer(context, builder, arr_t, ary, [idx], wraparound=False)
        bits = arr_t.dtype.bitwidth
        stored = context.cast(builder, val, val_t, arr_t.dtype)
        rank32 = context.cast(builder, rnk, rank_t, types.uint32)
        fn = ir.FunctionType(ir.VoidType(), [ptr.type, ir.IntType(32), stored.type])
        asm = ir.InlineAsm(fn, "{ .reg .u64 ra; mapa.u64 ra, $0, $1; st.%s [ra], $2; }" % _BITS[bits],
                           "l,r,%s,~{memory}" % _CONSTRAINT[bits], side_effect=True)
        builder.call(asm, [ptr, rank32, stored])
        return context.get_dummy_value()

    return types.void(array, index, rank, value), codegen


@intrinsic
def cluster_sync(typingctx):
    """Every thread of every block of the cluster waits here; stores before it (to any block's
    shared memory or to global memory) are visible to every thread after it. Warp-uniform."""

    def codegen(context, builder, sig, args):
        fn = ir.FunctionType(ir.VoidType(), [])
        asm = ir.InlineAsm(fn, "barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;",
                           "~{memory}", side_effect=True)
        builder.call(asm, [])
        return context.get_dummy_value()

    return types.void(), codegen


def supported():
    """Whether this device runs thread block clusters (compute capability 9.0 or later)."""
    from numba import config

    from . import available
    if config.ENABLE_CUDASIM or not available():
        return False
    return cuda.get_current_device().compute_capability >= (9, 0)
