"""Helpers for tests and users: example kernels (``workbench.testing.examples``)."""
