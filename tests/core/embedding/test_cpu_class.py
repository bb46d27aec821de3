"""The int8 encoder's identity names the kind of CPU its integer kernels ran on, so vectors from a
VNNI server and an AVX2 laptop never share a collection or cache row unnoticed."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from spar_desktop.core.embedding.cpu_class import _proc_flags, classify, cpu_class
from spar_desktop.core.embedding.encoder import Encoder

INTEL_ICELAKE = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 avx512f avx512bw avx512_vnni\n\nprocessor\t: 1\n"
GRAVITON = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes crc32 atomics asimddp\n"


@pytest.mark.parametrize("machine, flags, expected", [
    ("x86_64", {"avx2", "avx512bw", "avx512_vnni"}, "avx512vnni"),
    ("AMD64", {"avx2", "avx_vnni"}, "avxvnni"),  # Windows' name for x86-64; Alder Lake's 256-bit VNNI
    ("x86_64", {"avx2", "avx512bw"}, "avx512"),
    ("x86_64", {"avx2", "fma"}, "avx2"),
    ("x86_64", {"sse4_2"}, "sse"),
    ("aarch64", {"asimd", "asimddp", "i8mm"}, "armi8mm"),
    ("arm64", {"asimd", "asimddp"}, "armdot"),  # Apple silicon reports arm64
    ("aarch64", {"asimd"}, "neon"),
    ("riscv64", set(), "riscv64"),
])
def test_cpus_are_classed_by_the_int8_kernels_they_get(machine, flags, expected):
    assert classify(machine, flags) == expected


def test_proc_cpuinfo_flags_are_read_for_x86_and_arm(tmp_path):
    (tmp_path / "x86").write_text(INTEL_ICELAKE)
    (tmp_path / "arm").write_text(GRAVITON)
    assert classify("x86_64", _proc_flags(tmp_path / "x86")) == "avx512vnni"
    assert classify("aarch64", _proc_flags(tmp_path / "arm")) == "armdot"
    assert _proc_flags(tmp_path / "missing") == set()


@pytest.mark.skipif(not Path("/proc/cpuinfo").is_file(), reason="Linux only")
def test_this_cpu_agrees_with_its_proc_cpuinfo():
    import platform

    assert cpu_class() == classify(platform.machine(), _proc_flags())


def test_int8_model_id_names_cpu_class_and_kernel_fingerprint_the_same_in_every_process(encoder):
    int8 = Encoder("cpu", runtime="onnx-int8")
    pattern = re.escape(encoder.model_id) + r"\+onnx-int8@" + re.escape(cpu_class()) + r"-[0-9a-f]{6}"
    assert re.fullmatch(pattern, int8.model_id), int8.model_id
    again = subprocess.run([sys.executable, "-c", "from spar_desktop.core.embedding.encoder import Encoder; "
                            "print(Encoder('cpu', runtime='onnx-int8').model_id)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert again == int8.model_id  # a cache filled yesterday by this machine is still this machine's
    assert "@" not in encoder.model_id.split("@", 1)[1]  # fp32 is the same on every CPU: no class


def test_int8_that_cannot_be_built_runs_fp32_onnx_under_fp32_identity(monkeypatch, encoder):
    """The default must never leave a user without search, nor label fp32 vectors int8."""
    from spar_desktop.core.embedding import onnx_encoder

    real = onnx_encoder.ensure_graph

    def no_quantiser(model_dir, cache_dir, variant="fp32"):
        if variant == "int8":
            raise ImportError("onnxruntime.quantization is not in this bundle")
        return real(model_dir, cache_dir, variant)

    monkeypatch.setattr(onnx_encoder, "ensure_graph", no_quantiser)
    fallback = Encoder("cpu", runtime="onnx-int8")
    assert (fallback.runtime, fallback.variant) == ("onnx", "fp32") and "quantization" in fallback.fallback_reason
    assert fallback.model_id == encoder.model_id
