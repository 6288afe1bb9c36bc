"""Hand-built modules for the IR tests: one that uses every op family of ir/dialects."""
from __future__ import annotations

from workbench.ir.builder import Builder
from workbench.ir.core import Location, module_op
from workbench.ir.dialects import BINARY_FLOAT, BINARY_INT, UNARY_MATH
from workbench.ir.types import (
    FunctionType,
    MemDescType,
    PointerType,
    TensorType,
    async_token,
    f16,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from workbench.layouts import BlockedLayout, SliceLayout, SwizzledSharedLayout

F = "kern.py"


def T(*shape, e=i32, enc=None):
    return TensorType(tuple(shape), e, enc)


def new_func(name="k", params=(), names=(), attrs=None, module_attrs=None):
    m = module_op(module_attrs)
    b = Builder(m.regions[0].block, loc=Location(F, 1, 1))
    f = b.create("tt.func", [], [], {"sym_name": name, "function_type": FunctionType(tuple(params)),
                                     "arg_attrs": attrs or [{} for _ in params]}, regions=1)
    blk = f.regions[0].add_block(list(params))
    for a, n in zip(blk.args, names, strict=False):
        a.name = n
    b.set_insertion_point_to_end(blk)
    return m, b, blk


def every_op_module():
    """A ttir-like module touching every op family (values are nonsense, types are right)."""
    P = PointerType(f32)
    m, b, blk = new_func("every", [P, P, i32, PointerType(i32)], ["x_ptr", "y_ptr", "n", "c_ptr"],
                         [{"tt.divisibility": 16}, {"tt.divisibility": 16}, {}, {}])
    x_ptr, y_ptr, n, c_ptr = blk.args

    def L(line, col=5, name=None):
        return Location(F, line, col, name)

    helper = Location("helper.py", 7, 12, "acc")
    with b.at_loc(L(2, name="pid")):
        pid = b.value("tt.get_program_id", [], i32, {"axis": 0})
        b.value("tt.get_num_programs", [], i32, {"axis": 2})
    with b.at_loc(L(3)):
        c4 = b.value("arith.constant", [], i32, {"value": 4})
        b.value("arith.constant", [], i64, {"value": -1})
        ctrue = b.value("arith.constant", [], i1, {"value": True})
        b.value("arith.constant", [], f32, {"value": 1.5})
        b.value("arith.constant", [], f32, {"value": float("-inf")})
        b.value("arith.constant", [], f16, {"value": float("nan")})
        dense = b.value("arith.constant", [], T(128, e=f32), {"value": 0.0})
        b.value("arith.constant", [], T(128, e=i1), {"value": False})
    with b.at_loc(L(4, name="offs")):
        r = b.value("tt.make_range", [], T(128), {"start": 0, "end": 128})
        s = b.value("tt.splat", [pid], T(128))
    ints = []
    with b.at_loc(L(5)):
        for op in BINARY_INT:
            ints.append(b.value("arith." + op, [r, s], T(128)))
        floats = [b.value("arith." + op, [dense, dense], T(128, e=f32)) for op in BINARY_FLOAT]
        for op in UNARY_MATH:
            e = i32 if op == "absi" else f32
            b.value("math." + op, [dense if e == f32 else r], T(128, e=e))
        b.value("math.fma", [dense, dense, dense], T(128, e=f32))
        cmp = b.value("arith.cmpi", [r, s], T(128, e=i1), {"predicate": "slt"})
        b.value("arith.cmpf", [dense, floats[0]], T(128, e=i1), {"predicate": "olt"})
        sel = b.value("arith.select", [cmp, dense, floats[1]], T(128, e=f32))
        b.value("arith.select", [ctrue, c4, pid], i32)
        ext = b.value("arith.extsi", [pid], i64)
        b.value("arith.extui", [pid], i64)
        b.value("arith.trunci", [ext], i8)
        b.value("arith.sitofp", [r], T(128, e=f32))
        b.value("arith.uitofp", [r], T(128, e=f32))
        b.value("arith.fptosi", [dense], T(128))
        b.value("arith.fptoui", [dense], T(128))
        h = b.value("arith.truncf", [dense], T(128, e=f16))
        b.value("arith.extf", [h], T(128, e=f32))
        b.value("arith.bitcast", [dense], T(128))
    with b.at_loc(L(6, name="x")):
        xs = b.value("tt.splat", [x_ptr], T(128, e=P))
        xp = b.value("tt.addptr", [xs, r], T(128, e=P))
        xv = b.value("tt.load", [xp, cmp, dense], T(128, e=f32),
                     {"cache": "ca", "evict": "evict_last"})
        b.value("tt.load", [xp], T(128, e=f32), {"isVolatile": True})
        b.create("tt.store", [xp, sel, cmp])
        b.create("tt.store", [xp, xv], attributes={"cache": "cg"})
        b.value("tt.addptr", [y_ptr, n], P)
    with b.at_loc(L(7, name="t")):
        e0 = b.value("tt.expand_dims", [r], T(1, 128), {"axis": 0})
        e1 = b.value("tt.expand_dims", [r], T(128, 1), {"axis": 1})
        b0 = b.value("tt.broadcast", [e0], T(64, 128))
        b.value("tt.broadcast", [e1], T(128, 64))
        tr = b.value("tt.trans", [b0], T(128, 64), {"order": (1, 0)})
        b.value("tt.reshape", [tr], T(8192))
        b.value("tt.reshape", [tr], T(64, 128), {"allow_reorder": True})
        j = b.value("tt.join", [r, r], T(128, 2))
        b.create("tt.split", [j], [T(128), T(128)])
        b.value("tt.cat", [r, r], T(256))
        b.value("tt.bitcast", [dense], T(128))
        pi = b.value("tt.ptr_to_int", [xp], T(128, e=i64))
        b.value("tt.int_to_ptr", [pi], T(128, e=P))
        b.value("tt.fp_to_fp", [dense], T(128, e=f16), {"rounding": "rtne"})
        b.value("tt.fp_to_fp", [h], T(128, e=f32))
        b.value("tt.clampf", [dense, dense, dense], T(128, e=f32), {"propagateNan": "none"})
        b.value("tt.precise_sqrt", [dense], T(128, e=f32))
        b.value("tt.precise_divf", [dense, dense], T(128, e=f32))
        b.value("tt.mulhiui", [r, r], T(128))
        b.value("tt.extern_elementwise", [dense, dense], T(128, e=f32),
                {"symbol": "__nv_powf", "libname": "", "libpath": "", "pure": True})
        b.value("tt.histogram", [r], T(16))
        b.value("tt.gather", [dense, r], T(128, e=f32), {"axis": 0})
        fa = b.value("arith.sitofp", [b0], T(64, 128, e=f32))
        fb = b.value("arith.sitofp", [tr], T(128, 64, e=f32))
        fc = b.value("arith.constant", [], T(64, 64, e=f32), {"value": 0.0})
        b.value("tt.dot", [fa, fb, fc], T(64, 64, e=f32))
        b.value("tt.dot", [fa, fb, fc], T(64, 64, e=f32), {"inputPrecision": "ieee"})
    with b.at_loc(L(8)):
        cs = b.value("tt.splat", [c_ptr], T(128, e=PointerType(i32)))
        cp = b.value("tt.addptr", [cs, r], T(128, e=PointerType(i32)))
        b.value("tt.atomic_rmw", [cp, r, cmp], T(128),
                {"atomic_rmw_op": "add", "sem": "acq_rel", "scope": "gpu"})
        b.value("tt.atomic_cas", [c_ptr, c4, pid], i32, {"sem": "relaxed", "scope": "cta"})
        b.create("tt.print", [pid, dense],
                 attributes={"prefix": "pid: ", "hex": False, "isSigned": (1, 1)})
        b.create("tt.print", [], attributes={"prefix": "hello \"q\"", "hex": True, "isSigned": ()})
        b.create("tt.assert", [cmp], attributes={"message": "bad offs"})
    with b.at_loc(L(9, name="acc").with_caller(L(10, 3, "s"))):
        red = b.create("tt.reduce", [b0, fa], [T(64), T(64, e=f32)], {"axis": 1}, regions=1)
        rb = red.regions[0].add_block([i32, f32, i32, f32])
        with b.at_end_of(rb), b.at_loc(helper.with_caller(L(10, 3, "s"))):
            a0 = b.value("arith.addi", [rb.args[0], rb.args[2]], i32)
            a1 = b.value("arith.maxnumf", [rb.args[1], rb.args[3]], f32)
            b.create("tt.reduce.return", [a0, a1])
        sc = b.create("tt.scan", [r], [T(128)], {"axis": 0, "reverse": False}, regions=1)
        sb = sc.regions[0].add_block([i32, i32])
        with b.at_end_of(sb):
            b.create("tt.scan.return", [b.value("arith.addi", sb.args, i32)])
    with b.at_loc(L(11, name="acc")):
        c0 = b.value("arith.constant", [], i32, {"value": 0})
        c1 = b.value("arith.constant", [], i32, {"value": 1})
        loop = b.create("scf.for", [c0, n, c1, dense, pid], [T(128, e=f32), i32], regions=1)
        lb = loop.regions[0].add_block([i32, T(128, e=f32), i32])
        lb.args[0].name = "i"
        with b.at_end_of(lb):
            nxt = b.value("arith.addf", [lb.args[1], dense], T(128, e=f32))
            cnt = b.value("arith.addi", [lb.args[2], lb.args[0]], i32)
            b.create("scf.yield", [nxt, cnt])
        loop.attributes["tt.num_stages"] = 2
        loop2 = b.create("scf.for", [c0, n, c1], [], regions=1)
        with b.at_end_of(loop2.regions[0].add_block([i32])):
            b.create("scf.yield")
        cond = b.value("arith.cmpi", [pid, n], i1, {"predicate": "slt"})
        iff = b.create("scf.if", [cond], [i32], regions=2)
        with b.at_end_of(iff.regions[0].add_block()):
            b.create("scf.yield", [c4])
        with b.at_end_of(iff.regions[1].add_block()):
            b.create("scf.yield", [loop.results[1]])
        if2 = b.create("scf.if", [cond], [], regions=2)
        with b.at_end_of(if2.regions[0].add_block()):
            b.create("tt.store", [xp, loop.results[0]])
            b.create("scf.yield")
        wh = b.create("scf.while", [pid], [i32], regions=2)
        before = wh.regions[0].add_block([i32])
        with b.at_end_of(before):
            cc = b.value("arith.cmpi", [before.args[0], n], i1, {"predicate": "slt"})
            b.create("scf.condition", [cc, before.args[0]])
        after = wh.regions[1].add_block([i32])
        with b.at_end_of(after):
            b.create("scf.yield", [b.value("arith.addi", [after.args[0], c1], i32)])
    with b.at_loc(Location("unknown", 0, 0)):
        b.create("tt.return")
    return m


def ttgir_ops_module():
    """A small ttgir module with layouts, shared memory and barriers."""
    blocked = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    b1 = BlockedLayout([1], [32], [4], [0])
    shared = SwizzledSharedLayout(8, 2, 4, [1, 0])
    attrs = {"ttg.num-ctas": 1, "ttg.num-warps": 4, "ttg.target": "cuda:90",
             "ttg.threads-per-warp": 32}
    m, b, blk = new_func("g", [PointerType(f16)], ["p"], module_attrs=attrs)
    with b.at_loc(Location(F, 2, 3)):
        r = b.value("tt.make_range", [], T(64, enc=SliceLayout(1, blocked)),
                    {"start": 0, "end": 64})
        e = b.value("tt.expand_dims", [r], T(64, 1, enc=blocked), {"axis": 1})
        bc = b.value("tt.broadcast", [e], T(64, 32, enc=blocked))
        ps = b.value("tt.splat", [blk.args[0]], T(64, 32, e=PointerType(f16), enc=blocked))
        pp = b.value("tt.addptr", [ps, bc], T(64, 32, e=PointerType(f16), enc=blocked))
        v = b.value("tt.load", [pp], T(64, 32, e=f16, enc=blocked))
        md = MemDescType((64, 32), f16, shared, True)
        a = b.value("ttg.local_alloc", [v], md)
        a2 = b.value("ttg.local_alloc", [], md, {"allocation.offset": 4096})
        b.create("ttg.local_store", [v, a2])
        b.create("gpu.barrier")
        w = b.value("ttg.local_load", [a], T(64, 32, e=f16, enc=blocked))
        b.create("ttg.local_dealloc", [a2])
        red = b.create("tt.reduce", [w], [T(64, e=f16, enc=SliceLayout(1, blocked))],
                       {"axis": 1}, regions=1)
        rb = red.regions[0].add_block([f16, f16])
        with b.at_end_of(rb):
            b.create("tt.reduce.return", [b.value("arith.addf", rb.args, f16)])
        b.value("ttg.convert_layout", [red.result], T(64, e=f16, enc=b1))
        b.create("tt.return")
    return m


def async_ops_module():
    """A Hopper ttgir module with the cp.async, memdesc, wgmma and call ops."""
    from workbench.layouts import MmaLayout, NVMMASharedLayout
    blocked = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    mma = MmaLayout(3, (4, 1), (16, 64, 16))
    nvmma = NVMMASharedLayout(128, False, 16)
    attrs = {"ttg.num-ctas": 1, "ttg.num-warps": 4, "ttg.target": "cuda:90",
             "ttg.threads-per-warp": 32}
    m, b, blk = new_func("a", [PointerType(f16), i32], ["p", "n"], module_attrs=attrs)
    helper = Builder(m.regions[0].block, loc=Location(F, 1, 1)).create(
        "tt.func", [], [], {"sym_name": "helper", "function_type": FunctionType((i32,), (i32,)),
                            "arg_attrs": [{}], "visibility": "private", "noinline": True},
        regions=1)
    hb = helper.regions[0].add_block([i32])
    with b.at_end_of(hb):
        b.create("tt.return", [hb.args[0]])
    with b.at_loc(Location(F, 2, 3)):
        called = b.create("tt.call", [blk.args[1]], [i32], {"callee": "helper"}).result
        ptrs = b.value("tt.splat", [blk.args[0]], T(64, 64, e=PointerType(f16), enc=blocked))
        mask = b.value("arith.constant", [], T(64, 64, e=i1, enc=blocked), {"value": True})
        pred = b.value("arith.cmpi", [called, blk.args[1]], i1, {"predicate": "slt"})
        bufs = b.value("ttg.local_alloc", [], MemDescType((2, 64, 64), f16, nvmma, True))
        c0 = b.value("arith.constant", [], i32, {"value": 0})
        slot = b.value("ttg.memdesc_index", [bufs, c0], MemDescType((64, 64), f16, nvmma, True))
        both = b.value("arith.andi", [b.value("tt.splat", [pred], mask.type), mask], mask.type)
        t1 = b.value("ttg.async_copy_global_to_local", [ptrs, slot, both], async_token,
                     {"contiguity": 8})
        t2 = b.value("ttg.async_copy_global_to_local", [ptrs, slot], async_token,
                     {"cache": "cg"})
        group = b.value("ttg.async_commit_group", [t1, t2], async_token)
        landed = b.value("ttg.async_wait", [group], async_token, {"num": 0})
        b.value("ttg.local_load", [slot, landed], T(64, 64, e=f16, enc=blocked))
        b.value("ttg.async_wait", [], async_token, {"num": 0})
        acc = b.value("arith.constant", [], T(64, 64, e=f32, enc=mma), {"value": 0.0})
        d = b.value("ttng.warp_group_dot", [slot, slot, acc], acc.type,
                    {"inputPrecision": "tf32", "isAsync": True})
        w = b.create("ttng.warp_group_dot_wait", [d, slot], [acc.type, slot.type],
                     {"pendings": 0})
        vals = b.value("arith.truncf", [w.results[0]], T(64, 64, e=f16, enc=mma))
        idx = b.value("arith.constant", [], T(64, 64, e=i32, enc=mma), {"value": 1})
        b.value("tt.gather", [vals, idx], vals.type, {"axis": 1})
        b.create("ttg.local_dealloc", [bufs])
        b.create("tt.return")
    return m
