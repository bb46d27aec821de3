import os

# Never reach out: models load from site-packages, Chroma telemetry off, Qt offscreen.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.pop("OLLAMA_HOST", None)
os.environ.pop("SPAR_DATA_DIR", None)
