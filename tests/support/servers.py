"""Real servers on loopback for tests: a throwaway PostgreSQL cluster (Debian's packages)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin(name: str) -> Optional[str]:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start PostgreSQL on 127.0.0.1 in a temp dir; yield an SQLAlchemy URL; stop it after.

    Raises RuntimeError with the reason when no server can be started (tests then skip)."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("PostgreSQL server binaries not installed (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("psycopg not installed") from exc
    base = Path(tempfile.mkdtemp(prefix="spar-pg-"))
    data = base / "data"
    prefix: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        prefix = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres")
    os.chmod(base, 0o755)
    port = free_port()
    run = lambda *cmd: subprocess.run(prefix + list(cmd), capture_output=True, text=True, timeout=120)  # noqa: E731
    r = run(initdb, "-D", str(data), "-A", "trust", "-U", "spar", "--no-sync")
    if r.returncode != 0:
        raise RuntimeError(f"initdb failed: {r.stderr.strip()[:300]}")
    r = run(pg_ctl, "-D", str(data), "-w", "-l", str(base / "log"), "-o",
            f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    if r.returncode != 0:
        raise RuntimeError(f"pg_ctl start failed: {r.stderr.strip()[:300]}")
    try:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={port} user=spar dbname=postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE spar")
        yield f"postgresql+psycopg://spar@127.0.0.1:{port}/spar"
    finally:
        run(pg_ctl, "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(base, ignore_errors=True)
