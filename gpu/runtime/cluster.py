"""Thread block clusters (Hopper, compute capability 9.0+): one search spread over several SMs.

Numba-CUDA 0.30 has neither cluster launches nor cluster intrinsics, so this module adds what the
cluster Ro-TS needs, as PTX: an asynchronous store into another block's shared memory (distributed
shared memory: `mapa`, then `st.async`, its bytes counted on that block's mbarrier), the mbarrier
operations to wait for them, and the cluster-wide barrier (release/acquire, at a
kernel's start and end); the launch with cluster dimensions goes through cuda.core (in
gpu.launch.PreparedLauncher). None of them runs under the simulator: the cluster tests run on a
device (tests/test_gpu.py).
"""
from llvmlite import ir
from numba import cuda, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic

_BITS = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}
_CONSTRAINT = {8: "c", 16: "h", 32: "r", 64: "l"}


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


def _element_pointer(context, builder, arr_t, arr, idx):
    ary = context.make_array(arr_t)(context, builder, value=arr)
    return cgutils.get_item_pointer(context, builder, arr_t, ary, [idx], wraparound=False)


def _shared_address(context, builder, arr_t, arr, idx):
    """The 32-bit shared-window address of arr[idx] (arr in shared memory), made in LLVM IR rather
    than converted inside the asm: there the generic address was rebuilt and converted at every
    call (S2R of the CTA id and the shared window, some eight dependent instructions on the
    exchange's path, ncu on an H200); here the compiler folds the conversion into the array's own
    shared address plus the index."""
    ptr = _element_pointer(context, builder, arr_t, arr, idx)
    shared = builder.addrspacecast(ptr, ir.PointerType(ptr.type.pointee, addrspace=3))
    return builder.ptrtoint(shared, ir.IntType(32))


# Asynchronous exchange (sm_90 st.async): a store into another block's shared memory that counts
# its bytes on that block's mbarrier; the receiver waits on its own mbarrier for the bytes it
# expects, so no cluster-wide barrier and no release fence (which waits for every outstanding store
# to be acknowledged) sits on the critical path.

@intrinsic
def mbarrier_init(typingctx, bars, index, count):
    """Initialises the mbarrier bars[index] (a shared int64 array) for `count` arrivals a phase.
    Then mbarrier_init_fence() and a cluster barrier before any other block uses it."""
    def codegen(context, builder, sig, args):
        addr = _shared_address(context, builder, sig.args[0], args[0], args[1])
        cnt = context.cast(builder, args[2], sig.args[2], types.uint32)
        fn = ir.FunctionType(ir.VoidType(), [ir.IntType(32), ir.IntType(32)])
        asm = ir.InlineAsm(fn, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}", side_effect=True)
        builder.call(asm, [addr, cnt])
        return context.get_dummy_value()

    return types.void(bars, index, count), codegen


@intrinsic
def mbarrier_init_fence(typingctx):
    """Makes this thread's mbarrier initialisations visible to the cluster (before its barrier)."""
    def codegen(context, builder, sig, args):
        asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), "fence.mbarrier_init.release.cluster;", "~{memory}",
                           side_effect=True)
        builder.call(asm, [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def mbarrier_arrive_expect(typingctx, bars, index, nbytes):
    """One arrival on bars[index] (this block's), which also expects `nbytes` more bytes this phase."""
    def codegen(context, builder, sig, args):
        addr = _shared_address(context, builder, sig.args[0], args[0], args[1])
        tx = context.cast(builder, args[2], sig.args[2], types.uint32)
        fn = ir.FunctionType(ir.VoidType(), [ir.IntType(32), ir.IntType(32)])
        asm = ir.InlineAsm(fn, "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1; }",
                           "r,r,~{memory}", side_effect=True)
        builder.call(asm, [addr, tx])
        return context.get_dummy_value()

    return types.void(bars, index, nbytes), codegen


@intrinsic
def mbarrier_done(typingctx, bars, index, parity):
    """1 once the phase of bars[index] with this parity (0, 1, 0, ... phase by phase) has completed:
    every arrival and every expected byte is in, and the bytes' stores are visible; else 0 (try
    again). CTA scope: every byte this block reads from other blocks came by st.async into its own
    shared memory, counted on this mbarrier (as a TMA multicast's bytes), and the wait at cluster
    scope invalidated the whole L1 cache at every pass (CCTL.IVALL, ncu on an H100)."""
    def codegen(context, builder, sig, args):
        addr = _shared_address(context, builder, sig.args[0], args[0], args[1])
        par = context.cast(builder, args[2], sig.args[2], types.uint32)
        fn = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ir.IntType(32)])
        asm = ir.InlineAsm(fn, "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [$1], $2; "
                               "selp.u32 $0, 1, 0, p; }",
                           "=r,r,r,~{memory}", side_effect=True)
        return builder.call(asm, [addr, par])

    return types.uint32(bars, index, parity), codegen


def _store_async(in_ir):
    """The typing and codegen of array[index] = value in the shared memory of the cluster's block
    `rank`, its bytes counted on that block's mbarrier bars[bar_index] (32- or 64-bit elements).
    `in_ir`: the shared addresses made in LLVM IR (_shared_address), else from the generic
    addresses inside the asm."""
    def typer(typingctx, array, index, rank, value, bars, bar_index):
        if not isinstance(array, types.Array) or array.dtype.bitwidth not in (32, 64):
            return None

        def codegen(context, builder, sig, args):
            arr_t, idx_t, rank_t, val_t, bars_t, bi_t = sig.args
            bits = arr_t.dtype.bitwidth
            stored = context.cast(builder, args[3], val_t, arr_t.dtype)
            rank32 = context.cast(builder, args[2], rank_t, types.uint32)
            store = "st.async.shared::cluster.mbarrier::complete_tx::bytes.%s [ra], $3, [rb]; }" % _BITS[bits]
            if in_ir:
                addr = _shared_address(context, builder, arr_t, args[0], args[1])
                bar = _shared_address(context, builder, bars_t, args[4], args[5])
                text = "{ .reg .u32 ra, rb; mapa.shared::cluster.u32 ra, $0, $2; mapa.shared::cluster.u32 rb, $1, $2; "
                constraints = "r,r,r,%s,~{memory}"
            else:
                addr = _element_pointer(context, builder, arr_t, args[0], args[1])
                bar = _element_pointer(context, builder, bars_t, args[4], args[5])
                text = ("{ .reg .u64 a, b; .reg .u32 la, lb, ra, rb; cvta.to.shared.u64 a, $0; cvt.u32.u64 la, a; "
                        "cvta.to.shared.u64 b, $1; cvt.u32.u64 lb, b; mapa.shared::cluster.u32 ra, la, $2; "
                        "mapa.shared::cluster.u32 rb, lb, $2; ")
                constraints = "l,l,r,%s,~{memory}"
            fn = ir.FunctionType(ir.VoidType(), [addr.type, bar.type, ir.IntType(32), stored.type])
            asm = ir.InlineAsm(fn, text + store, constraints % _CONSTRAINT[bits], side_effect=True)
            builder.call(asm, [addr, bar, rank32, stored])
            return context.get_dummy_value()

        return types.void(array, index, rank, value, bars, bar_index), codegen
    typer.__name__ = "cluster_store_async" if in_ir else "cluster_store_async_generic"
    return typer


# Two forms of one store, each where it measured faster: the exchange's keys with addresses in LLVM
# IR; the recomputed moves' puts with generic addresses converted in the asm.
cluster_store_async = intrinsic(_store_async(in_ir=True))
cluster_store_async_generic = intrinsic(_store_async(in_ir=False))


def supported():
    """Whether this device runs thread block clusters (compute capability 9.0 or later)."""
    from numba import config

    from .. import available
    if config.ENABLE_CUDASIM or not available():
        return False
    return cuda.get_current_device().compute_capability >= (9, 0)
