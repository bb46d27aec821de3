"""The default encoder's hot path must not import the torch stack (seconds of start-up)."""

import json
import subprocess
import sys

CODE = """
import json, sys
from spar_desktop.core.embedding.encoder import get_encoder
enc = get_encoder()
enc.encode(["a chunk of text", "another one"])
enc.encode_query("a query")
heavy = [m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules]
print(json.dumps({"runtime": enc.runtime, "heavy": heavy}))
"""


def test_default_encoder_never_imports_torch():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"runtime": "onnx", "heavy": []}
