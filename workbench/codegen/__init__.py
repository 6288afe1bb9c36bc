"""Code generation: ttir -> host LLVM IR (:mod:`.cpu`), ttgir -> NVPTX (:mod:`.nvptx`), and
reading source line maps back from compiled texts (:mod:`.lineinfo`)."""

from llvmlite.ir import values as _llvm_values

# llvmlite fills the byte-escaping table of string constants on its first call, and a second
# thread calling meanwhile reads a half-filled table (KeyError: 47, the byte of "/"). Filling
# it here, while the import lock is held, makes compiling on several threads at once safe.
_llvm_values._escape_string(bytes(range(256)))
