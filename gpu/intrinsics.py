"""PTX instructions the fast path needs that Numba-CUDA does not expose (device only: the
simulator runs none of them; its kernels take the plain paths)."""
from llvmlite import ir
from numba import types
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
