"""Op traits the layout passes ask about, read from the ops' specs (a helper, not a pass).

``ELEMENTWISE``: the ops whose spec carries the ``elementwise`` trait (every ``arith``/``math``
op but ``arith.constant``, and ``tt.addptr``, ``tt.fp_to_fp``, ``tt.bitcast``, ``tt.clampf``,
``tt.mulhiui``, ``tt.extern_elementwise``, ...): each result element depends only on the
operand elements at the same index, so the result may take whatever layout its operands share
(Triton's ``Elementwise`` trait, which its layout propagation tests with ``isElementwise``).
A new elementwise op joins the layout passes by carrying the trait in its spec.
"""
from __future__ import annotations

from ..ir.dialects import OPS

ELEMENTWISE = frozenset(n for n, s in OPS.items() if "elementwise" in s.traits)
