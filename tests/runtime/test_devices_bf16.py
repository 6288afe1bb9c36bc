"""bfloat16 device arrays: the CUDA array interface writes ``<V2``; the dtype comes from the
object itself."""
from workbench.runtime.devices import array_info


class _FakeCudaArray:
    def __init__(self, dtype, typestr):
        self.dtype = dtype
        self.__cuda_array_interface__ = {"typestr": typestr, "shape": (3, 4), "strides": None,
                                         "data": (4096, False), "version": 3}


def test_bf16_cuda_array_interface_is_bf16():
    info = array_info(_FakeCudaArray("bfloat16", "<V2"))
    assert (info.device, info.dtype, info.itemsize) == ("cuda", "bf16", 2)
    assert (info.lo, info.hi) == (4096, 4096 + 3 * 4 * 2)


def test_fp16_cuda_array_interface_unchanged():
    info = array_info(_FakeCudaArray("float16", "<f2"))
    assert info.dtype == "fp16"
