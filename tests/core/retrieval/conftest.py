import pytest


@pytest.fixture(scope="session")
def encoder():
    """The real packaged MiniLM encoder, loaded once per test session (CPU keeps runs comparable)."""
    from spar_desktop.core.embedding.encoder import get_encoder

    return get_encoder("cpu")
