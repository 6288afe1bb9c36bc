"""ttir -> host LLVM IR through llvmlite, optimised and JIT-compiled in process.

Entry points: :func:`.compile.build_module` (lowering), :func:`.compile.jit` (O3, ``llir`` and
``asm`` texts, MCJIT), :class:`.launcher.CpuLauncher` (the grid split across worker threads).

Op families: :mod:`.scalar_ops` and :mod:`.extern` (elementwise) with :mod:`.vmath`
(vectorisable fp32 exp/exp2/log/log2), :mod:`.memory` (loads, stores, bounds checks) with
:mod:`.access` (contiguous accesses from AxisInfo), :mod:`.atomics`, :mod:`.reduce`,
:mod:`.control` (scf.for/if/while), :mod:`.tile_ops` (scan, join/split/cat, histogram,
gather), :mod:`.dot` with :mod:`.dot_kernel` (register-blocked micro-kernel),
:mod:`.debug_ops` (print, assert) with :mod:`.hostcalls` (the Python side of ``tt.print``).
Launching: :mod:`.launcher` with :mod:`.workers` (the helper-thread pool).
"""
