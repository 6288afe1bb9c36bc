"""Host-side helpers with Triton's names (``triton.tools``): :mod:`.tensor_descriptor`."""
