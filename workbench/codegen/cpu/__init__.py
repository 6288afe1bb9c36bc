"""ttir -> host LLVM IR through llvmlite, optimised and JIT-compiled in process.

Entry points: :func:`.compile.build_module` (lowering), :func:`.compile.jit` (O3, ``llir`` and
``asm`` texts, MCJIT), :class:`.launcher.CpuLauncher` (the grid split across worker threads).
"""
