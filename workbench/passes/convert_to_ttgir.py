"""placeholder replaced below"""
from dataclasses import dataclass
from .manager import Pass
@dataclass
class ConvertToTTGIR(Pass):
    name = "convert-triton-to-tritongpu"
    num_warps: int = 4
    target: str = "cuda:90"
def convert_to_ttgir(module, num_warps=4, target="cuda:90"):
    raise NotImplementedError
