"""Resource limits: each gives OutOfResources naming the kernel, the resource, what it needs,
what the device allows and what to change, before any launch, and shows in the compile
report. CUDA kernels are compiled for cuda:90 / cuda:80 without a GPU."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import limits
from workbench.errors import CompilationError, OutOfResources, WorkbenchError
from workbench.runtime import errors as runtime_errors
from workbench.viz.ir_view import compile_report, render_compiled

H200_SHARED_OPTIN = 232448   # 227 KiB
A100_SHARED_OPTIN = 166912   # 163 KiB


@wb.jit
def transpose(a, b, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(a + rm[:, None] * N + rn[None, :])
    tl.store(b + rn[:, None] * M + rm[None, :], tl.trans(x))


@wb.jit
def fill(out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0) + tl.program_id(1) + tl.program_id(2)
    offs = tl.arange(0, BLOCK)
    tl.atomic_max(out + offs, tl.zeros((BLOCK,), tl.int32) + pid + 1, mask=offs < n)


def test_out_of_resources_has_tritons_names_and_attributes():
    assert runtime_errors.OutOfResources is OutOfResources is wb.OutOfResources
    assert wb.runtime.OutOfResources is OutOfResources
    assert issubclass(OutOfResources, WorkbenchError)
    e = OutOfResources(300000, 232448, "shared memory", "k", "Use smaller blocks.", "bytes")
    assert (e.required, e.limit, e.name, e.kernel) == (300000, 232448, "shared memory", "k")
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and back.required == 300000


def test_architecture_table_and_its_source():
    assert limits.table_limits(90).shared_optin == H200_SHARED_OPTIN
    assert limits.table_limits(80).shared_optin == A100_SHARED_OPTIN
    assert limits.table_limits(89).shared_optin == 99 * 1024
    assert limits.table_limits(91).shared_optin == H200_SHARED_OPTIN  # nearest lower entry
    assert "Technical Specifications per Compute Capability" in limits.table_limits(90).source


def _over(kernel):
    assert kernel.over_limit is not None
    with pytest.raises(OutOfResources) as info:
        kernel.launch((1, 1, 1), [0, 0])
    return info.value, str(info.value)


def test_shared_memory_over_the_opt_in_limit_cuda90():
    """A 128x256 fp64 transpose goes through 256 KiB of shared memory: over sm_90's 227 KiB.
    The launch raises before touching a driver (no GPU here), and the report says so."""
    k = wb.compile(transpose, "*fp64", "*fp64", target="cuda:90", M=128, N=256, num_warps=32)
    need = k.metadata.shared
    assert need == 128 * 256 * 8 > H200_SHARED_OPTIN
    err, msg = _over(k)
    assert (err.required, err.limit, err.name) == (need, H200_SHARED_OPTIN, "shared memory")
    for part in ("'transpose'", f"{need} bytes", f"{H200_SHARED_OPTIN} bytes", "num_stages",
                 "smaller blocks", "def transpose(a, b, M: tl.constexpr, N: tl.constexpr):"):
        assert part in msg
    report = dict(compile_report(k))
    assert report["shared memory"].startswith(f"{need} of {H200_SHARED_OPTIN} bytes")
    assert "over the limit" in report["shared memory"]
    assert "cannot launch: shared memory" in render_compiled(k)


def test_a_kernel_within_the_limits_reports_each_check():
    k = wb.compile(transpose, "*fp16", "*fp16", target="cuda:80", M=32, N=64, num_warps=2)
    assert k.over_limit is None
    report = dict(compile_report(k))
    assert report["shared memory"] == f"{k.metadata.shared} of {A100_SHARED_OPTIN} bytes"
    assert report["threads per block"] == "64 of 1024 threads"
    if k.n_regs is not None:  # ptxas ran: its register count is checked too
        assert report["registers per thread"] == f"{k.n_regs} of 255 registers"
        assert report["registers per block"] == \
            f"{limits.regs_per_block(k.n_regs, 2)} of 65536 registers"


def test_registers_over_255_per_thread_and_per_block():
    """ptxas never reports more than 255, so the checks are fed a report directly."""
    checks = limits.gpu_checks(8, 1024, 300, limits.table_limits(90))  # 77824 per block
    bad = [c for c in checks if not c.ok]
    assert [c.resource for c in bad] == ["registers per thread", "registers per block"]
    msg = str(bad[0].error("matmul_kernel"))
    assert "registers per thread: kernel 'matmul_kernel' needs 300 registers; the limit is " \
           "255 registers" in msg and "smaller blocks" in msg
    # 128 registers x 1024 threads: twice the 64K registers of a block
    per_block = limits.gpu_checks(32, 0, 128, limits.table_limits(80))[-1]
    assert (per_block.need, per_block.allow, per_block.ok) == (131072, 65536, False)
    assert "fewer warps" in per_block.hint
    assert limits.regs_per_block(33, 1) == 1280  # 33 * 32 = 1056, rounded up to 5 * 256


def test_more_threads_than_a_block_allows():
    with pytest.raises(OutOfResources) as info:
        wb.compile(fill, "*i32", "i32", target="cuda:90", BLOCK=64, num_warps=64)
    msg = str(info.value)
    assert info.value.name == "threads per block"
    assert "kernel 'fill' needs 2048 threads; the limit is 1024 threads" in msg
    assert "num_warps <= 32" in msg and "def fill(out, n, BLOCK: tl.constexpr):" in msg


def test_more_warps_is_harmless_on_the_host(backend):
    out = np.zeros(16, np.int32)
    fill[(1,)](out, 10, BLOCK=16, num_warps=64)
    assert (out[:10] == 1).all() and (out[10:] == 0).all()


@pytest.mark.parametrize("grid, axis, most", [((2 ** 31,), "x", 2 ** 31 - 1),
                                              ((1, 65536), "y", 65535),
                                              ((1, 1, 70000), "z", 65535)])
def test_grid_over_the_device_limits_on_every_backend(backend, grid, axis, most):
    out = np.zeros(16, np.int32)
    fill[(1,)](out, 16, BLOCK=16)  # compiled; later launches take the fast path
    for g in (grid, lambda meta: grid):
        with pytest.raises(OutOfResources) as info:
            fill[g](out, 16, BLOCK=16)
        msg = str(info.value)
        assert f"grid size along {axis}: kernel 'fill' needs {grid[-1]} programs; the limit " \
               f"is {most} programs" in msg and "larger BLOCK" in msg
    if backend == "cpu":  # the largest z is fine (131070 programs: too slow to interpret)
        fill[(1, 2, 65535)](out, 1, BLOCK=16)
        assert out[0] == 1 + 1 + 65534 and (out[1:] == 1).all()


def test_the_fast_grid_leaves_grids_over_the_limits_to_the_checked_path():
    from workbench.runtime.grid import grid3_fast, normalize_grid
    for g in [(2 ** 31 - 1,), (1, 65535), (1, 1, 65535), 2 ** 31 - 1]:
        assert grid3_fast(g) == normalize_grid(g)
    for g, full in [((2 ** 31,), (2 ** 31, 1, 1)), ((1, 65536), (1, 65536, 1)),
                    ((1, 1, 65536), (1, 1, 65536)), (2 ** 31, (2 ** 31, 1, 1))]:
        assert grid3_fast(g) is None and normalize_grid(g) == full


@pytest.mark.gpu
def test_the_gpu_reports_the_tables_figures():
    """On the H200 (and any GPU in the table), the driver's answers equal the table's."""
    from workbench.runtime import driver
    arch = driver.active.get_current_target().arch
    got, table = limits.gpu_limits(arch), limits.table_limits(arch)
    assert "as its driver reports" in got.source
    assert (got.shared_optin, got.threads_per_block, got.regs_per_block, got.grid) == \
        (table.shared_optin, 1024, 65536, limits.MAX_GRID)
    assert driver.active.utils.get_device_properties()["max_shared_mem"] == got.shared_optin


def test_grid_limit_is_checked_before_the_missing_gpu():
    k = wb.compile(fill, "*i32", "i32", target="cuda:90", BLOCK=64)
    with pytest.raises(OutOfResources, match="grid size along y"):
        k.launch((1, 65536, 1), [0, 4])


def test_huge_tile_is_a_compile_error_at_the_users_line(backend):
    @wb.jit
    def huge(out, N: tl.constexpr):
        a = tl.zeros((N, N), tl.float32)
        tl.store(out + tl.arange(0, N), tl.sum(a, axis=0))
    with pytest.raises(CompilationError) as info:
        huge[(1,)](np.zeros(1 << 14, np.float32), N=1 << 14)
    msg = str(info.value)
    assert "tile of 268435456 elements exceeds the limit of 1048576" in msg
    assert "a = tl.zeros((N, N), tl.float32)" in msg and "^^^" in msg


def test_cpu_scratch_memory_over_the_host_limit(monkeypatch):
    """Tiles live in per-worker scratch arenas; one arena larger than the share of host memory
    a launch may take is refused before the launch (the limit is lowered to show it)."""
    @wb.jit
    def transpose_big(a, b, M: tl.constexpr, N: tl.constexpr):
        rm = tl.arange(0, M)
        rn = tl.arange(0, N)
        x = tl.load(a + rm[:, None] * N + rn[None, :])
        tl.store(b + rn[:, None] * M + rm[None, :], tl.trans(x))
    monkeypatch.setattr(limits, "host_memory_bytes", lambda: 1 << 18)  # a 256 KiB host
    k = wb.compile(transpose_big, np.zeros(1, np.float32), np.zeros(1, np.float32), target="cpu",
                   M=256, N=256)
    assert k.extra["scratch_bytes"] >= 256 * 256 * 4
    with pytest.raises(OutOfResources) as info:
        k[(1,)](np.zeros(256 * 256, np.float32), np.zeros(256 * 256, np.float32))
    msg = str(info.value)
    assert "scratch memory for tiles: kernel 'transpose_big' needs" in msg
    assert "the limit is 131072 bytes" in msg and "smaller blocks" in msg
    assert "over the limit" in dict(compile_report(k))["scratch memory for tiles"]


def test_cpu_launcher_runs_fewer_workers_when_arenas_would_not_fit(monkeypatch):
    rng = np.random.default_rng()
    a = rng.standard_normal((64, 128)).astype(np.float32)
    k = wb.compile(transpose, a, a, target="cpu", M=64, N=128)
    arena = k.extra["scratch_bytes"]
    monkeypatch.setattr(limits, "host_memory_bytes", lambda: 2 * (arena + 64) * 2)
    launcher = k.launcher
    launcher.workers, launcher._pool = 8, []
    out = np.zeros((128, 64), np.float32)
    k[(3,)](a, out)
    np.testing.assert_array_equal(out, a.T)
    assert len(launcher._pool[0].arenas) == 2


def test_the_autotuner_counts_a_config_over_the_limits_as_failed():
    """Triton's autotuner skips configs raising OutOfResources; so does ours. Here a small
    BLOCK needs more than 65535 programs along y."""
    import math

    @wb.autotune(configs=[wb.Config({"BLOCK": 8}), wb.Config({"BLOCK": 1024})], key=["n"])
    @wb.jit
    def double(x, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs, 2 * tl.load(x + offs, mask=offs < n), mask=offs < n)

    n = 8 * 65535 + 1  # BLOCK=8: 65536 programs along y, one too many
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    double[lambda meta: (1, wb.cdiv(n, meta["BLOCK"]))](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    assert double.best_config.kwargs == {"BLOCK": 1024}
    assert double.autotune_results[0][1] == math.inf
    assert math.isfinite(double.autotune_results[1][1])


def test_registers_over_255_through_the_compile_path(monkeypatch):
    """ptxas caps a kernel at 255 registers and spills the rest, so no real kernel reports
    more; here ptxas's report is raised to 300 so the check runs where it would: the compiled
    kernel refuses to launch, naming the kernel, the resource, both figures and what to change,
    and the compile report shows it."""
    import dataclasses

    from workbench.backends import nvidia_tools
    if nvidia_tools.find_tool("ptxas") is None:
        pytest.skip("ptxas is not installed (pip install 'tile-workbench[sass]')")
    real = nvidia_tools.PtxasJob.wait  # the backend runs ptxas in the background

    def more_registers(self):
        cubin, report = real(self)
        return cubin, dataclasses.replace(report, n_regs=300)
    monkeypatch.setattr(nvidia_tools.PtxasJob, "wait", more_registers)
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")  # nothing of this compile is kept

    @wb.jit
    def many_registers(out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs, offs.to(tl.float32) * 2.0, mask=offs < n)

    k = wb.compile(many_registers, "*fp32", "i32", target="cuda:90", BLOCK=128, num_warps=4)
    assert k.n_regs == 300 and k.over_limit is not None
    err, msg = _over(k)
    assert (err.required, err.limit, err.name, err.kernel) == \
        (300, 255, "registers per thread", "many_registers")
    assert "registers per thread: kernel 'many_registers' needs 300 registers; the limit is " \
           "255 registers" in msg and "smaller blocks" in msg
    assert "def many_registers(out, n, BLOCK: tl.constexpr):" in msg
    report = dict(compile_report(k))
    assert report["registers per thread"].startswith("300 of 255 registers")
    assert "over the limit" in report["registers per thread"]
