"""Which family of integer kernels ONNX Runtime runs the int8 encoder with on this CPU.

ONNX Runtime picks its int8 matrix kernels by instruction set: AVX-512 VNNI, AVX-VNNI, AVX-512 BW,
AVX2 (whose 16-bit multiply-adds saturate where VNNI's do not), SSE, ARM dot-product or plain NEON.
The same text then gives slightly different int8 vectors on two machines, so the int8 encoder's
model id carries this class (and a fingerprint of what the kernels produced, encoder.py): vectors
made on a laptop and on a server never share a collection unnoticed. fp32 does not need it (its
vectors agree to ~1e-7 everywhere).

Flags come from numpy's runtime CPU dispatch table (the same CPUID probe on every OS) and, on
Linux, /proc/cpuinfo, which also names AVX-VNNI (numpy's table has no entry for it).
"""

from __future__ import annotations

import platform
from functools import lru_cache
from pathlib import Path

# Most capable first: the first class whose flags are all present names the CPU.
_X86_CLASSES = (("avx512vnni", ("avx512_vnni",)), ("avxvnni", ("avx_vnni",)),
                ("avx512", ("avx512bw",)), ("avx2", ("avx2",)))
_ARM_CLASSES = (("armi8mm", ("i8mm",)), ("armdot", ("asimddp",)), ("neon", ("asimd",)))
# numpy's names for the flags above (its table lower-cased), where they differ.
_NUMPY_NAMES = {"avx512vnni": "avx512_vnni", "neon": "asimd"}


def _numpy_flags() -> set[str]:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features  # numpy 2
    except ImportError:  # pragma: no cover - numpy 1.x
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return set()
    return {_NUMPY_NAMES.get(name.lower(), name.lower()) for name, on in features.items() if on}


def _proc_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):  # x86, ARM
            flags.update(value.split())
    return flags


def classify(machine: str, flags: set[str]) -> str:
    """The kernel class of a CPU from its architecture and (lower-case) feature flags."""
    arch = machine.lower()
    if arch in ("x86_64", "amd64", "i386", "i686", "x86"):
        table, fallback = _X86_CLASSES, "sse"
    elif arch in ("arm64", "aarch64") or arch.startswith("arm"):
        table, fallback = _ARM_CLASSES, "arm"
    else:
        return arch or "unknown"
    return next((name for name, need in table if all(f in flags for f in need)), fallback)


@lru_cache(maxsize=1)
def cpu_class() -> str:
    """This machine's int8 kernel class, e.g. 'avx512vnni', 'avx2', 'armdot'."""
    return classify(platform.machine(), _numpy_flags() | _proc_flags())
