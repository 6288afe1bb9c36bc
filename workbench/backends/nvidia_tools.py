"""NVIDIA's command-line tools: ``ptxas`` (PTX -> cubin) and ``nvdisasm`` (cubin -> SASS).

Discovery: ``$WORKBENCH_PTXAS`` / ``$WORKBENCH_NVDISASM``, then ``PATH``, then the pip wheels'
``site-packages/nvidia/*/bin`` (``nvidia-cuda-nvcc``, ``nvidia-cuda-nvdisasm``: the ``sass``
extra). A missing tool is reported as None, never as an exception; a tool that rejects our PTX
raises :class:`PtxasError` with the command to reproduce it.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass

from ..config import env_text
from ..errors import WorkbenchError


class PtxasError(WorkbenchError):
    """ptxas rejected the PTX (a compiler bug): the message holds ptxas's output and the
    command line."""


def _site_dirs() -> list:
    import site
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: None)()
    if user:
        dirs.append(user)
    dirs.extend(p for p in sys.path if p.endswith("site-packages"))
    return list(dict.fromkeys(dirs))


def find_tool(name: str) -> str | None:
    """Absolute path of ``name`` (``"ptxas"``, ``"nvdisasm"``) or None when not installed.

    ``WORKBENCH_PTXAS`` / ``WORKBENCH_NVDISASM`` name the tool to use; one that is not an
    executable file gets a warning saying so, and the tool is then looked for on ``PATH`` and
    in the ``nvidia-cuda-*`` wheels (the ``sass`` extra)."""
    var = f"WORKBENCH_{name.upper()}"
    env = env_text(var)
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        warnings.warn(f"{var}={env!r} is not an executable file; looking for {name} on PATH "
                      "and in the nvidia-cuda-* packages instead", stacklevel=2)
    found = shutil.which(name)
    if found:
        return found
    for d in _site_dirs():
        for cand in sorted(glob.glob(os.path.join(d, "nvidia", "*", "bin", name))):
            if os.access(cand, os.X_OK):
                return cand
    return None


def tool_version(path: str) -> str:
    """The ``--version`` line of a tool (``"release 13.0, V13.0.88"``), or ``""``."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"release [^\n]*", out.stdout)
    if m:
        return m.group(0).strip()
    return out.stdout.strip().splitlines()[-1:][0] if out.stdout else ""


@dataclass
class PtxasReport:
    """What ``ptxas -v`` printed: ``n_regs`` registers per thread, ``n_spills`` bytes of spill
    stores + loads, ``shared`` bytes of static shared memory, ``stack`` bytes, ``text``."""

    n_regs: int | None
    n_spills: int | None
    shared: int
    stack: int
    text: str


def parse_ptxas_v(text: str) -> PtxasReport:
    """Parse ``ptxas -v`` output (``Used 26 registers``, ``0 bytes spill stores, 0 bytes spill
    loads``, ``N bytes smem``, ``N bytes stack frame``)."""
    regs = re.search(r"Used (\d+) registers", text)
    st = re.search(r"(\d+) bytes spill stores", text)
    ld = re.search(r"(\d+) bytes spill loads", text)
    smem = re.search(r"(\d+) bytes smem", text)
    stack = re.search(r"(\d+) bytes stack frame", text)
    spills = int(st.group(1)) + int(ld.group(1)) if st and ld else None
    return PtxasReport(int(regs.group(1)) if regs else None, spills,
                       int(smem.group(1)) if smem else 0, int(stack.group(1)) if stack else 0,
                       text)


def gpu_name(arch: int) -> str:
    """ptxas ``--gpu-name`` for an SM version: ``sm_90a`` for 90 (wgmma/setmaxnreg), else
    ``sm_<arch>``."""
    return f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"


class PtxasJob:
    """A ``ptxas -lineinfo -v --gpu-name=<sm> in.ptx -o out.cubin`` running in the
    background (:func:`start_assemble`), so the caller's Python work overlaps it. Call
    :meth:`wait` once for the result, or :meth:`cancel` to stop it; either removes its
    temporary folder. Raises PtxasError (from the constructor when ptxas cannot be started)."""

    def __init__(self, ptx: str, arch: int, ptxas: str, timeout: float = 120):
        self._tmp = tempfile.TemporaryDirectory(prefix="workbench-ptxas-")
        src = os.path.join(self._tmp.name, "kernel.ptx")
        self._dst = os.path.join(self._tmp.name, "kernel.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        self.cmd = [ptxas, "-lineinfo", "-v", f"--gpu-name={gpu_name(arch)}", src, "-o",
                    self._dst]
        self._deadline = time.monotonic() + timeout
        try:
            self._proc: subprocess.Popen | None = subprocess.Popen(
                self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except (OSError, subprocess.SubprocessError) as e:
            self._tmp.cleanup()
            raise PtxasError(f"could not run ptxas: {e}") from None

    def wait(self) -> tuple[bytes, PtxasReport]:
        """(cubin bytes, report) once ptxas has finished. Raises PtxasError when it fails,
        runs past its timeout (it is then killed) or was cancelled."""
        proc, self._proc = self._proc, None
        if proc is None:
            raise PtxasError("ptxas was cancelled or its result already taken")
        try:
            try:
                out, err = proc.communicate(timeout=max(self._deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired as e:
                proc.kill()
                proc.communicate()
                raise PtxasError(f"could not run ptxas: {e}") from None
            except BaseException:  # interrupted while waiting: no ptxas left behind
                proc.kill()
                proc.wait()
                raise
            if proc.returncode != 0:
                raise PtxasError(f"ptxas rejected the PTX (a compiler bug: please report it):"
                                 f"\n{err.strip()}\ncommand: {' '.join(self.cmd)}")
            with open(self._dst, "rb") as f:
                cubin = f.read()
        finally:
            self._tmp.cleanup()
        return cubin, parse_ptxas_v(out + err)

    def cancel(self) -> None:
        """Stop ptxas (if still running) and remove the temporary folder; idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.communicate()
            self._tmp.cleanup()


def start_assemble(ptx: str, arch: int, ptxas: str, timeout: float = 120) -> PtxasJob:
    """Start ptxas on ``ptx`` for ``sm_<arch>`` and return at once (:class:`PtxasJob`; its
    ``wait()`` gives what :func:`assemble` returns). Raises PtxasError when ptxas cannot be
    started."""
    return PtxasJob(ptx, arch, ptxas, timeout)


def assemble(ptx: str, arch: int, ptxas: str, timeout: float = 120) -> tuple[bytes, PtxasReport]:
    """Run ``ptxas -lineinfo -v --gpu-name=<sm> in.ptx -o out.cubin`` and wait for it.

    Returns (cubin bytes, report). Raises PtxasError with ptxas's message and the command when
    ptxas fails."""
    return start_assemble(ptx, arch, ptxas, timeout).wait()


def disassemble(cubin: bytes, nvdisasm: str, timeout: float = 120) -> str:
    """SASS text of a cubin: ``nvdisasm -c -g`` (code sections only, with
    ``//## File "...", line N`` comments from ``-lineinfo``). Raises PtxasError on failure."""
    with tempfile.TemporaryDirectory(prefix="workbench-nvdisasm-") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        cmd = [nvdisasm, "-c", "-g", path]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.SubprocessError) as e:
            raise PtxasError(f"could not run nvdisasm: {e}") from None
        if res.returncode != 0:
            raise PtxasError(f"nvdisasm failed: {res.stderr.strip()}\ncommand: {' '.join(cmd)}")
    return res.stdout


_SASS_LINE = re.compile(r'//## File "([^"]+)", line (\d+)')


def sass_line_locs(sass: str) -> list:
    """Per line of nvdisasm output, the source Location of the ``//## File`` comment above it
    (column 0: SASS carries lines only); None before the first comment."""
    from ..ir.core import Location

    out: list[Location | None] = []
    cur: Location | None = None
    for line in sass.splitlines():
        m = _SASS_LINE.search(line)
        if m:
            cur = Location(m.group(1), int(m.group(2)), 0)
            out.append(cur)
            continue
        out.append(cur if line.strip().startswith("/*") else None)
    return out


def cubin_summary(cubin: bytes) -> str:
    """A readable summary of a cubin (an ELF file): size, ELF class, and its sections with
    sizes (ELF64 section header table, System V gABI)."""
    import struct

    lines = [f"cubin: {len(cubin)} bytes (binary ELF; raw bytes in extra['cubin'])"]
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        return "\n".join(lines + ["(not an ELF64 file)"])
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    secs = []
    for i in range(shnum):
        off = shoff + i * shentsize
        name, _type, _flags, _addr, s_off, size = struct.unpack_from("<IIQQQQ", cubin, off)
        secs.append((name, s_off, size))
    if not secs or shstrndx >= len(secs):
        return "\n".join(lines)
    str_off = secs[shstrndx][1]
    lines.append("sections:")
    for name, _off, size in secs[1:]:
        end = cubin.index(b"\0", str_off + name)
        lines.append(f"  {cubin[str_off + name:end].decode(errors='replace'):<40} {size:>8} bytes")
    return "\n".join(lines)
