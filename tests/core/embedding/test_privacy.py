"""Encoding writes nothing outside the data dir: no ONNX Runtime device id or telemetry queue in
the user's home (it wrote ~/.cache/Microsoft/DeveloperTools/.onnxruntime/{deviceid,onnxruntime.db})."""

from __future__ import annotations

import os
import subprocess
import sys


def test_encoding_leaves_no_telemetry_store_in_the_home_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORT_") and k != "ANONYMIZED_TELEMETRY"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    script = ("from spar_desktop.core.embedding.encoder import get_encoder\n"
              "print(get_encoder('cpu').encode_query('turbine').shape)\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "(384,)" in done.stdout
    written = [str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()]
    assert not [p for p in written if "Microsoft" in p or "onnxruntime" in p], written
