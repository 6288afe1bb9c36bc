"""The numpy interpreter of ttir, split by concern: dtypes, memory, elementwise ops, tile ops,
control flow, analysis (batching), compiler (ttir -> closures) and launch. The backend class is
:class:`workbench.backends.interpreter.InterpreterBackend`."""
