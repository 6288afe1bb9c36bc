"""Triton's private compiled module path (``triton._C``), for the tutorials that reach it."""
