"""Fixtures shared by the language tests."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    """A generator with a fresh seed, printed so a failing run can be repeated."""
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)
