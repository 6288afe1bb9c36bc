"""ttir -> host LLVM IR through llvmlite, optimised and JIT-compiled in process.

Entry points: :func:`.compile.build_module` (lowering), :func:`.compile.jit` (O3, ``llir`` and
``asm`` texts, MCJIT), :class:`.launcher.CpuLauncher` (the grid split across worker threads).

Op families: :mod:`.scalar_ops` and :mod:`.extern` (elementwise), :mod:`.memory` (loads,
stores, bounds checks), :mod:`.atomics`, :mod:`.control` (reduce, scf.for/if/while),
:mod:`.tile_ops` (scan, join/split/cat, histogram, gather), :mod:`.dot`, :mod:`.debug_ops`
(print, assert) with :mod:`.hostcalls` (the Python side of ``tt.print``).
"""
