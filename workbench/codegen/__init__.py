"""Code generation: ttir -> host LLVM IR (:mod:`.cpu`), ttgir -> NVPTX (:mod:`.nvptx`), and
reading source line maps back from compiled texts (:mod:`.lineinfo`)."""
