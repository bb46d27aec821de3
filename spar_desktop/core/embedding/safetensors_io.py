"""Read a ``.safetensors`` file with numpy alone.

The format is an 8-byte little-endian header length, a JSON header mapping tensor names to dtype,
shape and byte offsets, then the raw little-endian buffers. Reading it ourselves keeps the ONNX
graph builder free of torch (and of the ``safetensors`` package's torch-oriented API); the file is
memory-mapped, so only the tensors actually used are paged in.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

_DTYPES: dict[str, type] = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8, "BOOL": np.bool_,
}
_MAX_HEADER = 100 * 1024 * 1024  # the spec's own limit: refuses a garbage length early


class SafetensorsError(ValueError):
    """The file is not a readable safetensors file."""


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor in ``path`` as a read-only numpy array (bf16 is widened to float32)."""
    path = Path(path)
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise SafetensorsError(f"{path}: too short for a safetensors file")
        (n,) = struct.unpack("<Q", head)
        if n > min(_MAX_HEADER, size - 8):
            raise SafetensorsError(f"{path}: header length {n} does not fit the file")
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SafetensorsError(f"{path}: unreadable header ({exc})") from exc
    base = 8 + n
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    out: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = meta["dtype"], tuple(int(d) for d in meta["shape"])
        start, end = (int(o) for o in meta["data_offsets"])
        if not 0 <= start <= end <= size - base:
            raise SafetensorsError(f"{path}: tensor {name} lies outside the file")
        buf = raw[base + start : base + end]
        count = int(np.prod(shape, dtype=np.int64))
        if dtype == "BF16":  # no numpy bf16: its bits are the top half of a float32
            if buf.size != 2 * count:
                raise SafetensorsError(f"{path}: tensor {name} has {buf.size} bytes for shape {shape}")
            arr = (buf.view("<u2").astype(np.uint32) << 16).view(np.float32)
        elif dtype in _DTYPES:
            np_dtype = np.dtype(_DTYPES[dtype]).newbyteorder("<")
            if buf.size != np_dtype.itemsize * count:
                raise SafetensorsError(f"{path}: tensor {name} has {buf.size} bytes for shape {shape}")
            arr = buf.view(np_dtype)
        else:
            raise SafetensorsError(f"{path}: tensor {name} has unsupported dtype {dtype}")
        out[name] = arr.reshape(shape)
    return out


def tensor_dtypes(path: str | Path) -> set[str]:
    """The dtypes of the tensors in ``path``, from its header alone (a few kB read)."""
    with Path(path).open("rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n > _MAX_HEADER:
            raise SafetensorsError(f"{path}: header length {n} is not plausible")
        header = json.loads(f.read(n))
    return {meta["dtype"] for name, meta in header.items() if name != "__metadata__"}


def write_safetensors(path: str | Path, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> None:
    """``tensors`` as a safetensors file (little-endian, offsets in the order given)."""
    names = {np.dtype(v): k for k, v in _DTYPES.items()}
    header: dict[str, object] = {"__metadata__": dict(metadata)} if metadata else {}
    offset, buffers = 0, []
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype=np.dtype(array.dtype).newbyteorder("<"))
        raw = data.tobytes()
        header[name] = {"dtype": names[np.dtype(array.dtype)], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        buffers.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)  # the format aligns the data on 8 bytes
    with Path(path).open("wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for raw in buffers:
            f.write(raw)
