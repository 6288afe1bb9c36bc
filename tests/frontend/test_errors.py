"""Every user error is a CompilationError naming file:line:col, showing the line with a caret
under the construct, and saying what to do."""
import linecache

import pytest
from fe_helpers import const, ptr, scalar, ttir

import workbench.language as tl
from workbench.errors import CompilationError, UnsupportedError
from workbench.frontend import KernelSource

THIS_FILE = __file__
NOT_CONSTEXPR_GLOBAL = 7


def plain_helper(x):
    return x + 1


def k_try(x_ptr):
    try:
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


def k_with(x_ptr):
    with open("f"):
        pass


def k_comprehension(x_ptr):
    xs = [i for i in range(4)]


def k_lambda(x_ptr):
    f = lambda v: v + 1  # noqa: E731


def k_return_in_loop(x_ptr, n):
    while n > 0:
        return


def k_break(x_ptr, n):
    for i in range(n):
        break


def k_continue(x_ptr, n):
    for i in range(n):
        continue


def k_plain_call(x_ptr, n):
    y = plain_helper(n)


def k_attr_assign(x_ptr, n):
    x = tl.load(x_ptr)
    x.dtype = tl.float16


def k_item_assign(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    x[0] = 1.0


def k_runtime_arange(x_ptr, n):
    offs = tl.arange(0, n)


def k_npot_arange(x_ptr):
    offs = tl.arange(0, 100)


def k_shapes(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    c = a + b


def k_undefined(x_ptr):
    y = x_ptr + offsets


def k_other_without_mask(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N), other=0.0)


def k_exp_fp16(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    y = tl.exp(x)


def k_global(x_ptr):
    y = x_ptr + NOT_CONSTEXPR_GLOBAL


def k_return_value(x_ptr):
    return x_ptr


def k_loop_type_change(x_ptr, n, N: tl.constexpr):
    acc = 0
    for i in range(n):
        acc = acc + tl.load(x_ptr + tl.arange(0, N))


def k_reassign_constexpr(x_ptr):
    B: tl.constexpr = 4
    B = 8


def k_float_offsets(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N) * 1.5
    tl.store(x_ptr + offs, 1.0)


CASES = [
    # kernel, spec, snippet under the caret (first occurrence in the line), line offset,
    # words in the reason, words in the hint, exception class
    (k_try, (ptr("x_ptr"),), "try:", 1, "try/except is not supported", "tl.static_assert",
     UnsupportedError),
    (k_with, (ptr("x_ptr"),), "with", 1, "with statements are not supported", None,
     UnsupportedError),
    (k_comprehension, (ptr("x_ptr"),), "[i for", 1, "list comprehensions are not supported",
     "tl.static_range", UnsupportedError),
    (k_lambda, (ptr("x_ptr"),), "lambda", 1, "lambda is not supported", None, UnsupportedError),
    (k_return_in_loop, (ptr("x_ptr"), scalar("n")), "return", 2,
     "return inside a loop is not supported", "flag", UnsupportedError),
    (k_break, (ptr("x_ptr"), scalar("n")), "break", 2, "break is not supported", "trip count",
     UnsupportedError),
    (k_continue, (ptr("x_ptr"), scalar("n")), "continue", 2, "continue is not supported",
     "wrap", UnsupportedError),
    (k_plain_call, (ptr("x_ptr"), scalar("n")), "plain_helper(n)", 1,
     "plain Python function 'plain_helper'", "@workbench.jit", UnsupportedError),
    (k_attr_assign, (ptr("x_ptr"), scalar("n")), "x.dtype", 2,
     "assigning to an attribute is not supported", "immutable", UnsupportedError),
    (k_item_assign, (ptr("x_ptr"), const("N", 8)), "x[0]", 2,
     "assigning to an item of a tensor is not supported", "tl.where", UnsupportedError),
    (k_runtime_arange, (ptr("x_ptr"), scalar("n")), "tl.arange(0, n)", 1,
     "arange's arguments must be compile-time ints", "tl.constexpr", CompilationError),
    (k_npot_arange, (ptr("x_ptr"),), "tl.arange(0, 100)", 1,
     "arange's range must be a power of 2", "tl.arange(0, 128)", CompilationError),
    (k_shapes, (ptr("x_ptr"),), "a + b", 3, "incompatible tile shapes [16] and [32]",
     "size 1", CompilationError),
    (k_undefined, (ptr("x_ptr"),), "offsets", 1, "name 'offsets' is not defined",
     "define it", CompilationError),
    (k_other_without_mask, (ptr("x_ptr"), const("N", 8)), "tl.load(", 1,
     "`other` cannot be provided without `mask`", "mask=", CompilationError),
    (k_exp_fp16, (ptr("x_ptr", "*fp16"), const("N", 8)), "tl.exp(x)", 2,
     "Expected dtype ['fp32', 'fp64'] but got fp16", "x.to(tl.float32)", CompilationError),
    (k_global, (ptr("x_ptr"),), "NOT_CONSTEXPR_GLOBAL", 1,
     "Cannot access global variable 'NOT_CONSTEXPR_GLOBAL'", "tl.constexpr(...)",
     CompilationError),
    (k_return_value, (ptr("x_ptr"),), "return", 1, "a kernel cannot return a value",
     "tl.store", UnsupportedError),
    (k_loop_type_change, (ptr("x_ptr"), scalar("n"), const("N", 4)), "for", 2,
     "loop-carried variable 'acc' has initial type", "tl.zeros", CompilationError),
    (k_reassign_constexpr, (ptr("x_ptr"),), "B = 8", 2, "cannot reassign the constexpr 'B'",
     "new name", CompilationError),
    (k_float_offsets, (ptr("x_ptr"), const("N", 8)), "x_ptr + offs", 2,
     "invalid operands of type pointer", "offsets must be integers", CompilationError),
]


@pytest.mark.parametrize("fn,spec,snippet,offset,reason,hint,cls", CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_error_points_at_user_line(fn, spec, snippet, offset, reason, hint, cls):
    with pytest.raises(CompilationError) as info:
        ttir(fn, *spec)
    e = info.value
    assert isinstance(e, cls)
    line = fn.__code__.co_firstlineno + offset
    src_line = linecache.getline(THIS_FILE, line).rstrip("\n")
    col = src_line.index(snippet) + 1
    assert (e.loc.file, e.loc.line, e.loc.col) == (THIS_FILE, line, col)
    msg = str(e).splitlines()
    assert msg[0] == f"{THIS_FILE}:{line}:{col}: {e.reason}"
    assert reason in e.reason
    assert msg[1] == "    " + src_line
    assert msg[2].startswith("    " + " " * (col - 1) + "^")
    assert set(msg[2].strip()) == {"^"}
    if hint is not None:
        assert hint in e.hint and msg[-1] == e.hint
    assert "Traceback" not in str(e) and "workbench/" not in str(e).replace(THIS_FILE, "")


def test_caret_spans_the_construct():
    with pytest.raises(CompilationError) as info:
        ttir(k_npot_arange, ptr("x_ptr"))
    caret = str(info.value).splitlines()[2].strip()
    assert caret == "^" * len("tl.arange(0, 100)")


def test_syntax_error_names_the_line(tmp_path):
    text = "def bad(x_ptr):\n    y = (x_ptr +\n    z = 1\n"
    path = tmp_path / "cell.py"
    path.write_text(text)
    linecache.checkcache(str(path))
    with pytest.raises(CompilationError) as info:
        KernelSource.from_text(text, str(path), first_line=1)
    e = info.value
    assert "invalid Python syntax in kernel" in e.reason
    assert e.loc.file == str(path) and e.loc.line in (2, 3)
    assert str(e).splitlines()[0].startswith(f"{path}:{e.loc.line}:")
    assert e.hint == "fix the syntax error"


def test_helper_error_reports_helper_line_with_call_site():
    class J:
        __workbench_jit__ = True

        def __init__(self, fn):
            self.fn = fn

    def bad_helper(x):
        return tl.arange(0, x)

    helper = J(bad_helper)

    def k(x_ptr, n):
        y = helper(n)

    with pytest.raises(CompilationError) as info:
        ttir(k, ptr("x_ptr"), scalar("n"))
    e = info.value  # Triton's form: the call's error, caused by the helper's
    assert e.loc.line == k.__code__.co_firstlineno + 1
    inner = e.__cause__
    assert isinstance(inner, CompilationError) and e.reason.endswith(inner.reason)
    assert inner.loc.line == bad_helper.__code__.co_firstlineno + 1
    assert inner.loc.caller.line == k.__code__.co_firstlineno + 1
    assert inner.at[:2] == (2, 11) and e.at[:2] == (2, 8)
    assert "at 2:11: of bad_helper" in str(inner) and "at 2:8: of k" in str(e)
    shown = "\n".join(e._render_traceback_())
    # the helper's line first, then the call's; Triton's def-relative positions only in str()
    assert shown.index("return tl.arange(0, x)") < shown.index("raised in a call made here") \
        < shown.index("y = helper(n)")
    assert "Triton's position" not in shown


def k_to_unknown_keyword(x_ptr):
    v = tl.load(x_ptr)
    w = v.to(tl.int32, rounding=1)  # noqa: F841


def k_to_too_many(x_ptr):
    v = tl.load(x_ptr)
    w = v.to(tl.int32, "rtne", False, 3)  # noqa: F841


@pytest.mark.parametrize("fn, what", [(k_to_unknown_keyword, "rounding"),
                                      (k_to_too_many, "too many")])
def test_tile_method_with_bad_arguments_is_a_caret_error(fn, what):
    """A tile method called with an argument it does not take (found by the bad-input fuzzer:
    a TypeError from Python's call binding escaped)."""
    with pytest.raises(CompilationError) as info:
        ttir(fn, ptr("x_ptr"))
    text = str(info.value)
    line = fn.__code__.co_firstlineno + 2
    assert f"{THIS_FILE}:{line}:9: bad arguments to tensor.to" in text and what in text
    assert "^" in text.splitlines()[2]
