"""Attributes of Triton 3.6's ``JITFunction`` that scripts read or call on a kernel
(``triton/runtime/jit.py``): ``arg_names``, ``constexprs``, ``signature``, ``raw_src``,
``starting_line_number``, ``module``, ``cache_key``, ``version``, ``parse()``,
``get_capture_scope()``, ``is_gluon()`` and the pre-run hooks (``add_pre_run_hook``,
``pre_run_hooks``). A mixin of :class:`~workbench.runtime.jit.JITFunction`, which provides
``fn``, ``src`` and ``params``."""
from __future__ import annotations

import ast
import hashlib
import inspect
import re
import textwrap


class TritonJITAttributes:
    """Triton's informational attributes of a ``@jit`` function (see the module)."""

    version = None

    @property
    def arg_names(self) -> list:
        """The parameter names, in order."""
        return [p.name for p in self.params]  # type: ignore[attr-defined]

    @property
    def constexprs(self) -> list:
        """Indices of the ``tl.constexpr`` parameters."""
        return [p.index for p in self.params if p.constexpr]  # type: ignore[attr-defined]

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.fn)  # type: ignore[attr-defined]

    @property
    def raw_src(self) -> list:
        """The function's source lines, decorators included (``inspect.getsourcelines``)."""
        return inspect.getsourcelines(self.fn)[0]  # type: ignore[attr-defined]

    @property
    def starting_line_number(self) -> int:
        """The file line of the first source line (its first decorator)."""
        return inspect.getsourcelines(self.fn)[1]  # type: ignore[attr-defined]

    @property
    def module(self) -> str:
        return self.fn.__module__  # type: ignore[attr-defined]

    def _def_source(self) -> str:
        src = textwrap.dedent("".join(self.raw_src))
        start = re.search(r"^def\s+\w+\s*\(", src, re.MULTILINE)
        return src[start.start():] if start else src

    @property
    def cache_key(self) -> str:
        """A SHA-256 hex digest of the function's source from ``def`` and its ``version``.
        (Each compile's own key, :meth:`kernel_hash`, also covers the helpers it calls,
        the specialisation, the options and the target.)"""
        text = f"{self._def_source()}\0{self.version!r}"
        return hashlib.sha256(text.encode()).hexdigest()

    def parse(self) -> ast.Module:
        """The function's source from ``def`` parsed: a module holding one FunctionDef."""
        return ast.parse(self._def_source())

    def get_capture_scope(self) -> dict:
        """The names the function can read: its globals and the closure's variables."""
        fn = self.fn  # type: ignore[attr-defined]
        return fn.__globals__ | inspect.getclosurevars(fn).nonlocals

    def is_gluon(self) -> bool:
        """False: Gluon (Triton's lower-level dialect) has no counterpart here."""
        return False

    @property
    def pre_run_hooks(self) -> list:
        """Callables run before each launch with the launch's ``(*args, **kwargs)``."""
        hooks = self.__dict__.get("_pre_run_hooks")
        if hooks is None:
            hooks = self.__dict__["_pre_run_hooks"] = []
        return hooks

    def add_pre_run_hook(self, hook) -> None:
        """Run ``hook(*args, **kwargs)`` before every launch (and warmup) of this kernel.
        Raises TypeError when ``hook`` is not callable."""
        if not callable(hook):
            raise TypeError(f"add_pre_run_hook needs a callable, not {hook!r}")
        self.pre_run_hooks.append(hook)
