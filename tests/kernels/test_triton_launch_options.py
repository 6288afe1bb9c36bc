"""Triton launch options the workbench does not model (``maxnreg``,
``launch_cooperative_grid``, AMD's ``waves_per_eu``, ``matrix_instr_nonkdim``, ``kpack``; and
``launch_pdl`` on the host backends) are accepted without effect; an autotune key that is
not a parameter is left out with a warning (Triton leaves it out silently);
``CompiledKernel`` has Triton's ``n_regs``/``n_spills`` and ``_init_handles``."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@pytest.mark.parametrize("option, value", [
    ("maxnreg", 128), ("launch_pdl", True), ("launch_cooperative_grid", True),
    ("waves_per_eu", 2), ("matrix_instr_nonkdim", 16), ("kpack", 2)])
def test_foreign_launch_options_have_no_effect(backend, option, value):
    rng = np.random.default_rng()
    n = 333
    x = rng.standard_normal(n).astype(np.float32)
    factor = float(rng.uniform(-3, 3))
    out = np.full(n, np.nan, dtype=np.float32)
    scale[(3,)](x, out, n, factor, BLOCK=128, **{option: value})
    np.testing.assert_allclose(out, x * np.float32(factor), rtol=1e-6)


def test_autotune_key_that_is_not_a_parameter_is_left_out(backend):
    with pytest.warns(UserWarning, match="left out of the tuning key"):
        tuned = wb.autotune(configs=[wb.Config({"BLOCK": 64}), wb.Config({"BLOCK": 128})],
                            key=["n", "no_such_param"])(scale)
    rng = np.random.default_rng()
    n = 200
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    tuned[lambda meta: (triton_cdiv(n, meta["BLOCK"]),)](x, out, n, 2.0)
    np.testing.assert_allclose(out, x * 2.0, rtol=1e-6)


def triton_cdiv(a, b):
    return (a + b - 1) // b


def test_compiled_kernel_has_triton_register_fields(backend):
    x = np.ones(16, dtype=np.float32)
    k = scale.run(x, np.zeros(16, np.float32), 16, 1.0, BLOCK=16, grid=(1,), warmup=True)
    k._init_handles()
    # host targets report the same specialisation's cuda:90 figures (ptxas's, when present)
    assert k.extra["gpu_figures"] == "cuda:90"
    gpu = scale.compile_for(k.spec, k.options, "cuda:90")
    assert (k.n_regs, k.n_spills, k.metadata.shared) == \
        (gpu.n_regs, gpu.n_spills, gpu.metadata.shared)
