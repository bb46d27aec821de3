"""Real servers on loopback for tests: a throwaway PostgreSQL cluster (Debian's packages) and a
Chroma server (`chroma run`, which comes with the chromadb dependency)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
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
def postgres_server(options: str = "", log: Optional[Path] = None, keep: Optional[Path] = None) -> Iterator[str]:
    """Start PostgreSQL on 127.0.0.1 in a temp dir; yield an SQLAlchemy URL; stop it after.
    ``options``: more server settings ("-c name=value ..."); ``log``: keep the server log there
    (benchmarks read the plans auto_explain writes to it); ``keep``: the cluster lives in that
    folder instead, is reused when it exists and is kept after (benchmarks re-run requests on it).

    Raises RuntimeError with the reason when no server can be started (tests then skip)."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("PostgreSQL server binaries not installed (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("psycopg not installed") from exc
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="spar-pg-"))
    base.mkdir(parents=True, exist_ok=True)
    data = base / "data"
    reuse = (data / "PG_VERSION").exists()
    (base / "log").unlink(missing_ok=True)  # a kept cluster's log holds this run's statements only
    prefix: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        prefix = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres")
    os.chmod(base, 0o755)
    port = free_port()
    run = lambda *cmd: subprocess.run(prefix + list(cmd), capture_output=True, text=True, timeout=120)  # noqa: E731
    r = run(initdb, "-D", str(data), "-A", "trust", "-U", "spar", "--no-sync") if not reuse else None
    if r is not None and r.returncode != 0:
        raise RuntimeError(f"initdb failed: {r.stderr.strip()[:300]}")
    r = run(pg_ctl, "-D", str(data), "-w", "-l", str(base / "log"), "-o",
            f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off {options}", "start")
    if r.returncode != 0:
        raise RuntimeError(f"pg_ctl start failed: {r.stderr.strip()[:300]}")
    try:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={port} user=spar dbname=postgres", autocommit=True) as conn:
            if not reuse:
                conn.execute("CREATE DATABASE spar")
        yield f"postgresql+psycopg://spar@127.0.0.1:{port}/spar"
    finally:
        run(pg_ctl, "-D", str(data), "-m", "fast" if keep else "immediate", "stop")
        if log is not None and (base / "log").exists():
            shutil.copyfile(base / "log", log)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server ``postgres_server`` started: one per test, so tests
    sharing a cluster never see each other's rows."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url)
    name = f"spar_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


def _chroma_exe() -> Optional[str]:
    here = Path(sys.executable).parent  # the venv's bin/Scripts: chromadb installs `chroma` there
    return shutil.which("chroma", path=str(here)) or shutil.which("chroma")


@contextmanager
def chroma_server(timeout: float = 120.0) -> Iterator[str]:
    """Start a Chroma server on 127.0.0.1 over a temp store; yield its URL; stop it after.

    Raises RuntimeError with the reason when no server can be started (tests then skip)."""
    exe = _chroma_exe()
    if not exe:
        raise RuntimeError("the chroma command is not installed (it comes with chromadb)")
    base = Path(tempfile.mkdtemp(prefix="spar-chroma-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
    with open(base / "log", "wb") as log:
        proc = subprocess.Popen([exe, "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(base / "data")],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                tail = (base / "log").read_text(errors="replace")[-500:]
                raise RuntimeError(f"chroma run exited with {proc.returncode}: {tail}")
            try:
                with direct.open(f"{url}/api/v2/heartbeat", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"chroma run did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(base, ignore_errors=True)
