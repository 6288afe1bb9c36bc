"""Argument binding and specialisation rules (as triton/runtime/jit.py specialises).

Nothing is compiled here."""
import numpy as np
import pytest

import workbench.language as tl
from workbench.errors import LaunchError
from workbench.runtime.binding import bind_arguments, kernel_params, param_location, specialize
from workbench.runtime.devices import byte_span
from workbench.runtime.specialization import ArgSpec


def kern(x_ptr, out_ptr, n, scale, flag, BLOCK: tl.constexpr, EXTRA: tl.constexpr = 7):
    pass


def annotated(a: tl.int64, b: "*fp32", C: "tl.constexpr"):  # noqa: F722 - Triton type
    pass


def spec_of(fn, *args, dns=frozenset(), **kwargs):
    params = kernel_params(fn)
    return specialize(fn, params, bind_arguments(fn, params, args, kwargs), dns)


def aligned(n, dtype=np.float32):
    """A fresh random array whose first element is 16-byte aligned."""
    a = np.random.default_rng().standard_normal(n + 16).astype(dtype)
    off = (-a.ctypes.data % 16) // a.itemsize
    return a[off:off + n]


def test_params_and_constexprs():
    ps = kernel_params(kern)
    assert [p.name for p in ps] == ["x_ptr", "out_ptr", "n", "scale", "flag", "BLOCK", "EXTRA"]
    assert [p.constexpr for p in ps] == [False] * 5 + [True, True]
    assert ps[6].default == 7
    ann = kernel_params(annotated)
    assert [(p.constexpr, p.fixed_type) for p in ann] == [(False, "i64"), (False, "*fp32"),
                                                          (True, None)]


def test_exact_argspecs_for_a_launch():
    x, out = aligned(100), aligned(100)
    b = spec_of(kern, x, out, 96, 0.5, True, BLOCK=64)
    assert b.spec.args == (
        ArgSpec("x_ptr", "pointer", "*fp32", True),
        ArgSpec("out_ptr", "pointer", "*fp32", True),
        ArgSpec("n", "scalar", "i32", True),
        ArgSpec("scale", "scalar", "fp32"),
        ArgSpec("flag", "scalar", "i1"),
        ArgSpec("BLOCK", "constexpr", "constexpr", value=64),
        ArgSpec("EXTRA", "constexpr", "constexpr", value=7),
    )
    assert b.device == "cpu"
    px, po, n, scale, flag = b.runtime_args
    assert (px.address, px.lo, px.hi, px.itemsize) == (x.ctypes.data, x.ctypes.data,
                                                       x.ctypes.data + 400, 4)
    assert px.obj is x and po.obj is out
    assert (n, scale, flag) == (96, 0.5, True)
    assert b.spec.signature_text() == "*fp32:16, *fp32:16, i32:16, fp32, i1"


@pytest.mark.parametrize("value, typ, div16, eq1", [
    (0, "i32", True, False), (1, "i32", False, True), (17, "i32", False, False),
    (-32, "i32", True, False), (2 ** 31 - 1, "i32", False, False), (2 ** 31, "i64", True, False),
    (-(2 ** 31), "i32", True, False), (-(2 ** 31) - 1, "i64", False, False),
    (2 ** 63, "u64", True, False), (2 ** 64 - 1, "u64", False, False),
    (np.int64(48), "i64", True, False), (np.int8(3), "i8", False, False),
    (np.uint32(1), "u32", False, True),
])
def test_int_specialisation(value, typ, div16, eq1):
    b = spec_of(kern, aligned(4), aligned(4), value, 1.0, False, BLOCK=4)
    a = b.spec.args[2]
    assert (a.kind, a.type, a.divisible_by_16, a.equal_to_1) == ("scalar", typ, div16, eq1)
    assert a.passed == (not eq1)
    assert len(b.runtime_args) == (4 if eq1 else 5)
    if not eq1:
        assert b.runtime_args[2] == int(value) and type(b.runtime_args[2]) is int


@pytest.mark.parametrize("value, typ, py", [
    (2.5, "fp32", 2.5), (16.0, "fp32", 16.0), (np.float32(1.5), "fp32", 1.5),
    (np.float64(2.0), "fp64", 2.0), (np.float16(0.5), "fp16", 0.5),
    (True, "i1", True), (np.bool_(False), "i1", False),
])
def test_float_and_bool_never_specialised(value, typ, py):
    b = spec_of(kern, aligned(4), aligned(4), 5, value, False, BLOCK=4)
    a = b.spec.args[3]
    assert (a.type, a.divisible_by_16, a.equal_to_1) == (typ, False, False)
    assert b.runtime_args[3] == py and type(b.runtime_args[3]) is type(py)


def test_pointer_alignment_and_dtypes():
    base = aligned(64)
    assert spec_of(kern, base, base, 3, 1.0, True, BLOCK=4).spec.args[0].divisible_by_16
    off = spec_of(kern, base[1:], base, 3, 1.0, True, BLOCK=4)
    assert off.spec.args[0] == ArgSpec("x_ptr", "pointer", "*fp32", False)
    assert off.runtime_args[0].address == base.ctypes.data + 4
    for dt, short in [(np.float16, "*fp16"), (np.float64, "*fp64"), (np.int8, "*i8"),
                      (np.uint16, "*u16"), (np.int64, "*i64"), (np.bool_, "*i1")]:
        arr = np.zeros(8, dt)
        assert spec_of(kern, arr, arr, 3, 1.0, True, BLOCK=4).spec.args[0].type == short


def test_do_not_specialize():
    b = spec_of(kern, aligned(8)[1:], aligned(8), 1, 1.0, True, BLOCK=4,
                dns=frozenset({"n", "x_ptr"}))
    assert b.spec.args[0].divisible_by_16 is False
    assert b.spec.args[2] == ArgSpec("n", "scalar", "i32")
    assert b.runtime_args[2] == 1


def test_none_and_dtype_are_constexprs():
    b = spec_of(kern, aligned(4), None, 5, 1.0, True, BLOCK=tl.float16)
    assert b.spec.args[1] == ArgSpec("out_ptr", "constexpr", "constexpr", value=None)
    assert b.spec.args[5].kind == "constexpr" and b.spec.args[5].value is tl.float16
    assert len(b.runtime_args) == 4  # out_ptr left the runtime arguments


@pytest.mark.parametrize("shape, index", [
    ((6, 8), np.s_[1:5, ::3]), ((6, 8), np.s_[::-1, :]), ((6, 8), np.s_[4:0:-2, 7:1:-3]),
    ((10,), np.s_[::-2]), ((5, 4, 3), np.s_[:, 1, ::2]), ((6, 8), np.s_[:, 2:2]),
])
def test_strided_views_are_passed_without_copy_with_their_span(shape, index):
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    view = base[index]
    b = spec_of(kern, view, view, 4, 1.0, True, BLOCK=4)
    p = b.runtime_args[0]
    assert p.obj is view  # no copy
    assert p.address == view.__array_interface__["data"][0]
    if view.size == 0:
        assert p.lo == p.hi
        return
    # reference span: address of every element
    offs = np.zeros(view.shape, dtype=np.int64)
    for ax, (n, st) in enumerate(zip(view.shape, view.strides, strict=True)):
        shp = [1] * view.ndim
        shp[ax] = n
        offs = offs + (np.arange(n) * st).reshape(shp)
    addrs = p.address + offs
    assert (p.lo, p.hi) == (int(addrs.min()), int(addrs.max()) + 4)
    assert base.ctypes.data <= p.lo and p.hi <= base.ctypes.data + base.nbytes


def test_byte_span_empty_and_negative():
    assert byte_span(1000, (0, 5), (20, 4), 4) == (1000, 1000)
    assert byte_span(1000, (3,), (-8,), 4) == (984, 1004)


def line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def test_wrong_number_of_arguments_points_at_def():
    with pytest.raises(LaunchError) as ei:
        spec_of(kern, 1, 2, 3, 4, 5, 6, 7, 8)
    msg = str(ei.value)
    assert f"{__file__}:{line_of(kern, 'def kern')}:1:" in msg
    assert "takes 7 arguments" in msg and "8 were given" in msg
    assert "def kern(x_ptr" in msg and "\n    ^" in msg


def test_missing_argument_names_parameter_with_caret():
    with pytest.raises(LaunchError) as ei:
        spec_of(kern, aligned(4), aligned(4), 3, 1.0, True)
    msg = str(ei.value)
    assert "missing argument for constexpr parameter 'BLOCK'" in msg
    loc = param_location(kern, "BLOCK")
    assert f":{loc.line}:{loc.col}:" in msg
    caret_line = msg.splitlines()[2]
    assert caret_line == " " * (4 + loc.col - 1) + "^" * len("BLOCK")


def test_wrong_type_names_parameter():
    with pytest.raises(LaunchError) as ei:
        spec_of(kern, aligned(4), "oops", 3, 1.0, True, BLOCK=4)
    assert "argument 'out_ptr'" in str(ei.value) and "str" in str(ei.value)
    with pytest.raises(LaunchError, match="argument 'scale'.*list"):
        spec_of(kern, aligned(4), aligned(4), 3, [1.0], True, BLOCK=4)
    with pytest.raises(LaunchError, match="argument 'x_ptr'.*complex128"):
        spec_of(kern, np.zeros(4, np.complex128), aligned(4), 3, 1.0, True, BLOCK=4)
    # a list (a common slip for an array) is named with its length, never a cut repr
    n = int(np.random.default_rng().integers(50, 500))
    with pytest.raises(LaunchError) as ei:
        spec_of(kern, list(aligned(n)), aligned(4), 3, 1.0, True, BLOCK=4)
    first = str(ei.value).splitlines()[0]
    assert f"argument 'x_ptr': a list of {n} item(s) cannot be passed" in first
    assert "np.asarray" in first and "np.float32(" not in first
    # any other object: its repr, cut with an ellipsis past 40 characters
    with pytest.raises(LaunchError) as ei:
        spec_of(kern, aligned(4), aligned(4), 3, {"k": "v" * n}, True, BLOCK=4)
    first = str(ei.value).splitlines()[0]
    assert "a dict ({'k': 'vvv" in first and "…) cannot be passed to a kernel" in first
    with pytest.raises(LaunchError, match="constexpr parameter 'BLOCK' was given an array"):
        spec_of(kern, aligned(4), aligned(4), 3, 1.0, True, BLOCK=aligned(4))


def test_unknown_keyword_and_duplicate():
    with pytest.raises(LaunchError, match="has no parameter 'BLOK'"):
        spec_of(kern, aligned(4), aligned(4), 3, 1.0, True, BLOK=4)
    with pytest.raises(LaunchError, match="'n' given both by position and by keyword"):
        spec_of(kern, aligned(4), aligned(4), 3, 1.0, True, n=3, BLOCK=4)


def test_annotated_types_fix_the_signature():
    b = spec_of(annotated, 5, aligned(4), C=2)
    assert b.spec.args[0] == ArgSpec("a", "scalar", "i64")
    with pytest.raises(LaunchError, match="annotated \\*fp32"):
        spec_of(annotated, 5, np.zeros(4, np.float16), C=2)
    with pytest.raises(LaunchError, match="'b' is annotated \\*fp32 but was given a float"):
        spec_of(annotated, 5, 2.0, C=2)


def test_numpy_scalar_constexpr_is_a_python_scalar():
    b = spec_of(kern, aligned(4), aligned(4), 3, 1.0, True, BLOCK=np.int64(64))
    assert b.spec.args[5] == ArgSpec("BLOCK", "constexpr", "constexpr", value=64)
    assert type(b.spec.args[5].value) is int
    assert b.spec.key() == spec_of(kern, aligned(4), aligned(4), 3, 1.0, True,
                                   BLOCK=64).spec.key()
