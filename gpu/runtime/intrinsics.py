"""PTX instructions the fast path needs that Numba-CUDA does not expose (device only: the
simulator runs none of them; its kernels take the plain paths)."""
from llvmlite import ir
from numba import types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic


@intrinsic
def dp4a(typingctx, a, b, c):
    """c + the dot product of the four unsigned bytes of a and of b (one IDP4A instruction), all
    uint32: four terms of an 8-bit QAP move cost in one instruction, wrapping modulo 2^32."""
    if not all(t == types.uint32 for t in (a, b, c)):
        return None

    def codegen(context, builder, sig, args):
        fn = ir.FunctionType(ir.IntType(32), [ir.IntType(32)] * 3)
        return builder.call(ir.InlineAsm(fn, "dp4a.u32.u32 $0, $1, $2, $3;", "=r,r,r,r"), list(args))

    return types.uint32(a, b, c), codegen


def _redux(op):
    @intrinsic
    def reduce(typingctx, value):
        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[0], sig.args[0], types.uint32)
            fn = ir.FunctionType(ir.IntType(32), [ir.IntType(32)])
            asm = ir.InlineAsm(fn, f"redux.sync.{op}.u32 $0, $1, 0xffffffff;", "=r,r", side_effect=True)
            return builder.call(asm, [v])

        return types.uint32(value), codegen
    return reduce


# One redux instruction over the (full, converged) warp, the result in every lane, where a shuffle
# tree takes five dependent rounds.
warp_sum = _redux("add")  # the sum of 32-bit values (as uint32)
warp_min_u32 = _redux("min")  # the smallest uint32


@intrinsic
def load_quad(typingctx, array, index):
    """array[index], .., array[index + 3] of a uint32 array in one 128-bit load (LDS.128 from shared
    memory): index a multiple of 4 and the array 16-byte aligned, which the caller guarantees."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.uint32
            and isinstance(index, types.Integer)):
        return None
    quad = types.UniTuple(types.uint32, 4)

    def codegen(context, builder, sig, args):
        aryty, idxty = sig.args
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx], wraparound=False)
        vector = builder.load(builder.bitcast(ptr, ir.VectorType(ir.IntType(32), 4).as_pointer()), align=16)
        words = [builder.extract_element(vector, ir.Constant(ir.IntType(32), k)) for k in range(4)]
        return context.make_tuple(builder, quad, words)

    return quad(array, index), codegen


@intrinsic
def mul_hi_u64(typingctx, a, b):
    """The high 64 bits of the 128-bit product a b (uint64; one mul.hi.u64, a few IMADs)."""
    if not (a == types.uint64 and b == types.uint64):
        return None

    def codegen(context, builder, sig, args):
        fn = ir.FunctionType(ir.IntType(64), [ir.IntType(64)] * 2)
        return builder.call(ir.InlineAsm(fn, "mul.hi.u64 $0, $1, $2;", "=l,l,l"), list(args))

    return types.uint64(a, b), codegen
