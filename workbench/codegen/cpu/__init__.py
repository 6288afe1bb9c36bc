"""ttir -> host LLVM IR through llvmlite, optimised and JIT-compiled in process.

Entry points: :func:`.compile.build_module` (lowering), :func:`.compile.jit` (O3, ``llir`` and
``asm`` texts, MCJIT). Codegen emits code; :mod:`workbench.backends.cpu` runs it (its launcher
splits the grid across worker threads and takes ``tt.print``'s host calls).

Op families: :mod:`.scalar_ops` and :mod:`.extern` (elementwise) with :mod:`.vmath`
(vectorisable fp32 exp/exp2/log/log2), :mod:`.memory` (loads, stores, bounds checks) with
:mod:`.access` (contiguous accesses from AxisInfo), :mod:`.atomics`, :mod:`.reduce`,
:mod:`.control` (scf.for/if/while), :mod:`.tile_ops` (scan, join/split/cat, histogram,
gather), :mod:`.dot` with :mod:`.dot_kernel` (register-blocked micro-kernel),
:mod:`.debug_ops` (print, assert).
"""
