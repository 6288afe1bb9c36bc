"""Code generation: ttir -> host LLVM IR (:mod:`.cpu`), ttgir -> NVPTX (:mod:`.nvptx`), and
reading source line maps back from compiled texts (:mod:`.lineinfo`)."""

import llvmlite.binding as _llvm
from llvmlite.ir import values as _llvm_values

# llvmlite fills the byte-escaping table of string constants on its first call, and a second
# thread calling meanwhile reads a half-filled table (KeyError: 47, the byte of "/"). Filling
# it here, while the import lock is held, makes compiling on several threads at once safe.
_llvm_values._escape_string(bytes(range(256)))

# LLVM's parser verifies a module that carries debug info itself and aborts the process on a
# broken one ("Broken module found, compilation aborted!"), which would kill a notebook's
# kernel over a code generator bug. With its upgrade step off, the parse returns the module
# and the explicit ``verify()`` after every parse here raises an error that can be reported.
_llvm.set_option("workbench", "-disable-auto-upgrade-debug-info")
