"""The monotonic clock inside compiled code, without the GIL.

:func:`monotonic` reads ``clock_gettime(CLOCK_MONOTONIC)``, the clock behind
``time.perf_counter`` on Linux, so a deadline computed in Python holds inside a compiled
loop. It is an LLVM call to the C library's symbol by name (registered once per process),
so the functions that use it can be cached on disk, and it costs about 30 ns.
"""

from __future__ import annotations

import ctypes
import time

import llvmlite.binding as llvm
import numba
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from snake.core.jit import JIT

_libc = ctypes.CDLL(None)
llvm.add_symbol("clock_gettime", ctypes.cast(_libc.clock_gettime, ctypes.c_void_p).value)
_CLOCK_MONOTONIC = 1


@intrinsic
def _monotonic_ns(typingctx):
    def codegen(context, builder, signature, args):
        i64, i32 = ir.IntType(64), ir.IntType(32)
        timespec = ir.LiteralStructType([i64, i64])
        clock_gettime = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i32, [i32, timespec.as_pointer()]), "clock_gettime")
        spec = cgutils.alloca_once(builder, timespec)
        builder.call(clock_gettime, [ir.Constant(i32, _CLOCK_MONOTONIC), spec])
        seconds = builder.load(cgutils.gep_inbounds(builder, spec, 0, 0))
        nanoseconds = builder.load(cgutils.gep_inbounds(builder, spec, 0, 1))
        return builder.add(builder.mul(seconds, ir.Constant(i64, 1_000_000_000)), nanoseconds)
    return types.int64(), codegen


def _monotonic():
    """Seconds on ``time.perf_counter``'s clock."""
    return _monotonic_ns() * 1e-9


# Under NUMBA_DISABLE_JIT=1 (debugging) the intrinsic cannot run: plain Python's clock.
monotonic = time.perf_counter if numba.config.DISABLE_JIT else njit(**JIT)(_monotonic)
