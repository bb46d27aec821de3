"""The app's own helper processes: how they are started and how they talk.

A helper is this interpreter running one of our modules (``python -m MODULE``; the frozen bundle's
binary understands ``-m`` too, installers/entry.py), on pipes, never a multiprocessing child: its
spawn mode imports the caller's ``__main__`` again (a whole script ran twice when it had no
``__main__`` guard), and fork would copy Qt's and ONNX Runtime's threads' state. The child sees EOF
on its stdin when the parent ends, however it ends.

Messages are pickles, each preceded by its length (8 bytes, network order). Both ends are this
package; nothing else writes these pipes, so unpickling them is safe.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

_HEADER = struct.Struct("!Q")


def send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    """The next message; EOFError when the other end is gone."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(header)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def helper_command(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def helper_env(**extra: str) -> dict[str, str]:
    """The child imports the spar_desktop this process runs (a checkout, a PYTHONPATH)."""
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)
