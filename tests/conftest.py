import os

# Never reach out: models load from site-packages, Chroma telemetry off, Qt offscreen.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.pop("OLLAMA_HOST", None)
os.environ.pop("SPAR_DATA_DIR", None)
# fp32 is the reference: results compared with references (and every subprocess) use it; the tests
# of the int8 default and of a data dir keeping its runtime unset this.
os.environ.setdefault("SPAR_EMBED_RUNTIME", "onnx")
# The encoder's ONNX graph (built from the packaged weights, content-keyed) is kept once for the
# whole suite and its subprocesses, instead of once per test data dir.
os.environ.setdefault("SPAR_MODEL_CACHE", os.path.join(__import__("tempfile").gettempdir(), "spar-test-model-cache"))


import pytest  # noqa: E402 - after the environment above, which must be set before anything imports


@pytest.fixture(scope="module")
def pg_url():
    """A PostgreSQL server on loopback for one test module (the team set-up's backend)."""
    from tests.support.servers import postgres_server

    try:
        with postgres_server() as url:
            yield url
    except RuntimeError as exc:
        if os.environ.get("CI"):
            raise  # .ci/run installs PostgreSQL: a missing server there is a failure, not a skip
        pytest.skip(str(exc))
