"""Upgrades keep everything: schema migrations of the metadata index (core/migrations) on SQLite
and PostgreSQL, a data dir written by release 0.1.0 opened by today's code, the refusal of an
index written by a newer release, concurrent first opens, versioned settings.json."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, select, text

from spar_desktop.cli import main
from spar_desktop.core.config import Settings, SettingsError, SettingsTooNewError, load_settings
from spar_desktop.core.library.database import IndexTooNewError, Library, make_engine
from spar_desktop.core.library.models import Base, File, FileTag, Tag, TagEdge
from spar_desktop.core.migrations import HEAD_REVISION, runner

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests" / "fixtures" / "datadir-0.1.0.tar.gz"
# Where tests/fixtures/make_datadir_010.sh made the fixture: the index holds these absolute paths.
RELEASE_DIR = Path("/tmp/spar-fixture-0.1.0")
RELEASE_COMMIT = "203d98c"
TABLES_010 = ("folders", "files", "tags", "tag_edges", "file_tags", "scan_issues", "workspaces",
              "workspace_files", "query_log", "chat_threads", "chat_messages", "erm_memory", "erm_keys",
              "erm_progress")


# -- helpers ---------------------------------------------------------------------------------------
def unpack_010(tmp_path: Path) -> Path:
    """The 0.1.0 data dir in tmp_path/data; its corpus back where 0.1.0 indexed it (RELEASE_DIR)."""
    with tarfile.open(FIXTURE) as tar:
        members = tar.getmembers()
        tar.extractall(tmp_path, [m for m in members if not m.name.startswith("corpus")], filter="data")
        with runner.file_lock(Path(str(RELEASE_DIR) + ".lock")):  # other test runs may share it
            corpus = [m for m in members if m.name.startswith("corpus")]
            stale = [m for m in corpus if m.isfile() and not _same(RELEASE_DIR / m.name, m)]
            if stale or not (RELEASE_DIR / "corpus").is_dir():
                tar.extractall(RELEASE_DIR, corpus, filter="data")
    return tmp_path / "data"


def _same(path: Path, member: tarfile.TarInfo) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return st.st_size == member.size and int(st.st_mtime) == int(member.mtime)


def dump(db: Path, tables=TABLES_010, columns_of: Path | None = None) -> dict[str, list[tuple]]:
    """Every row of every 0.1.0 table, read with plain sqlite3 (no SPAR code involved); with
    ``columns_of``, only the columns that database has (later revisions add columns)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        if columns_of is None:
            return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
        old = sqlite3.connect(f"file:{columns_of}?mode=ro", uri=True)
        try:
            cols = {t: [r[1] for r in old.execute(f"PRAGMA table_info({t})")] for t in tables}
        finally:
            old.close()
        return {t: conn.execute(f"SELECT {', '.join(cols[t])} FROM {t} ORDER BY 1").fetchall() for t in tables}
    finally:
        conn.close()


def schema(engine) -> dict:
    """What sqlalchemy.inspect sees, in a comparable form (alembic_version left out)."""
    insp = inspect(engine)
    out = {}
    for t in sorted(n for n in insp.get_table_names() if n != "alembic_version"):
        out[t] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default"), c.get("autoincrement"))
                        for c in insp.get_columns(t)],
            "pk": insp.get_pk_constraint(t)["constrained_columns"],
            "fks": sorted((tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]),
                           f.get("options", {}).get("ondelete")) for f in insp.get_foreign_keys(t)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in insp.get_indexes(t)),
            "unique": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(t)),
        }
    return out


def sqlite_ddl(db: Path) -> list[tuple]:
    """The schema as SQLite stores it; the lines of a CREATE TABLE are sorted, since a table
    copied by a batch migration lists the same constraints in another order."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                            "WHERE name NOT LIKE '%alembic_version%' ORDER BY name").fetchall()
    finally:
        conn.close()
    return [(t, n, tbl, sorted(x.strip().rstrip(",") for x in (sql or "").splitlines())) for t, n, tbl, sql in rows]


def model_drift(engine) -> list:
    """Differences between the migrated schema and today's models (autogenerate's comparison)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    import spar_desktop.core.schema  # noqa: F401
    from spar_desktop.core.library.models import index_applies

    def on_this_dialect(obj, name, type_, reflected, compare_to) -> bool:  # PostgreSQL-only indexes
        return reflected or type_ != "index" or index_applies(obj, engine.dialect.name)

    opts = {"compare_type": True, "include_object": on_this_dialect}
    with engine.connect() as conn:
        return compare_metadata(MigrationContext.configure(conn, opts=opts), Base.metadata)


def create_010_schema(url: str, tmp_path: Path) -> None:
    """create_all of release 0.1.0's own models (read from git at RELEASE_COMMIT), as 0.1.0 did."""
    src = tmp_path / "release-0.1.0-models"
    files = ["spar_desktop/core/schema.py", "spar_desktop/core/library/models.py",
             "spar_desktop/core/workspaces/models.py", "spar_desktop/core/chat/models.py",
             "spar_desktop/core/memory/models.py"]
    for rel in files:
        r = subprocess.run(["git", "-C", str(REPO), "show", f"{RELEASE_COMMIT}:{rel}"], capture_output=True)
        if r.returncode != 0:
            pytest.skip(f"release 0.1.0's sources are not in this checkout: {r.stderr.decode()[:200]}")
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(r.stdout)
    for pkg in ("spar_desktop", "spar_desktop/core", "spar_desktop/core/library", "spar_desktop/core/workspaces",
                "spar_desktop/core/chat", "spar_desktop/core/memory"):
        (src / pkg / "__init__.py").write_text("")
    code = ("import sys, spar_desktop.core.schema\n"
            "from sqlalchemy import create_engine\n"
            "from spar_desktop.core.library.models import Base\n"
            "assert spar_desktop.__file__.startswith(sys.argv[2]), spar_desktop.__file__\n"
            "Base.metadata.create_all(create_engine(sys.argv[1]))\n")
    env = dict(os.environ, PYTHONPATH=str(src))
    subprocess.run([sys.executable, "-c", code, url, str(src)], env=env, cwd=src, check=True, timeout=120)


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


# -- revisions -------------------------------------------------------------------------------------
def test_head_revision_constant_is_the_only_head_of_the_scripts():
    heads = runner.script_directory().get_heads()
    assert heads == [HEAD_REVISION]
    assert runner.known_revisions() >= {"0001", HEAD_REVISION}


def test_a_new_index_is_created_at_head_and_matches_the_models(tmp_path):
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    try:
        assert lib.upgrade is not None and lib.upgrade.created and lib.upgrade.backup is None
        assert runner.current_revision(lib.engine) == HEAD_REVISION
        assert model_drift(lib.engine) == []  # a model changed without a new revision fails here
    finally:
        lib.close()
    again = Library.open(Settings(data_dir=tmp_path / "data"))
    assert again.upgrade is None  # at head: nothing to do, no backup
    again.close()
    assert not list((tmp_path / "data").glob("*.bak-*"))


def test_in_memory_databases_are_created_too():
    lib = Library(make_engine("sqlite://"), None)
    try:
        assert lib.upgrade.created
        with lib.session() as s:
            s.add(File(path="/x", rel_path="x", name="x", format="txt"))
    finally:
        lib.close()


# -- a data dir written by release 0.1.0 -----------------------------------------------------------
def test_010_data_dir_upgrade_keeps_everything(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SPAR_EMBED_RUNTIME", raising=False)  # as a user runs it: no fp32 pin
    from spar_desktop.core.chat.threads import ThreadStore
    from spar_desktop.core.library.tags import ancestor_ids
    from spar_desktop.core.memory.feedback import memory_stats
    from spar_desktop.core.workspaces.manager import Workspaces

    data = unpack_010(tmp_path)
    db = data / "library.sqlite3"
    before = dump(db)
    counts = {t: len(rows) for t, rows in before.items()}
    assert counts["files"] == 6 and counts["tag_edges"] > 0 and counts["chat_messages"] == 2
    assert counts["erm_memory"] > 0 and counts["erm_keys"] > 0 and counts["erm_progress"] == 1
    stored = json.loads((data / "settings.json").read_text())
    assert "version" not in stored  # 0.1.0 wrote none: read as version 1
    settings = load_settings(data)
    assert settings.ollama_model == stored["ollama_model"]
    # 0.1.0 embedded with fp32: the data dir keeps it although new ones get int8 (its workspaces
    # search and reactivate below without re-embedding).
    assert (settings.embed_runtime, settings.embed_runtime_origin) == ("onnx", "data dir")

    lib = Library.open(settings)
    try:
        report = lib.upgrade
        assert report is not None and report.from_revision == "0.1.0" and report.to_revision == HEAD_REVISION
        assert report.backup is not None and report.backup.parent == data
        assert report.backup.name.startswith("library.sqlite3.bak-0.1.0-")
        assert dump(report.backup) == before  # the backup is a readable SQLite copy of what was there
        assert dump(db, columns_of=report.backup) == before  # every row of every table, unchanged
        assert runner.current_revision(lib.engine) == HEAD_REVISION

        with lib.session() as s:  # through today's models
            files = {f.name: f for f in s.scalars(select(File))}
            assert set(files) == {"budget-2019.txt", "q1-report.md", "invoices.csv", "vaccine-trial.txt",
                                  "clinic-hours.md", "empty.txt"}
            tags = {t.key: t for t in s.scalars(select(Tag))}
            budget, money, urgent = tags["tax:Budget"], tags["tax:Money"], tags["user:urgent"]
            assert money.id in ancestor_ids(s, [budget.id])
            assert s.scalar(select(TagEdge).where(TagEdge.parent_id == money.id, TagEdge.child_id == budget.id))
            user_tags = {(files_by_id.name, tag.value) for files_by_id, tag in s.execute(
                select(File, Tag).join(FileTag, FileTag.file_id == File.id).join(Tag, Tag.id == FileTag.tag_id)
                .where(FileTag.source == "user"))}
            assert user_tags == {("budget-2019.txt", urgent.value), ("vaccine-trial.txt", urgent.value),
                                 ("budget-2019.txt", "Budget")}

        manager = Workspaces(lib)
        status = {w.name: w.status for w in manager.list()}
        assert status == {"finance": "active", "health": "archived", "draft": "draft"}
        for name in ("finance", "health", "draft"):  # every stored filter reads back (new keys may be added)
            old_filter = before_filter(before, name)
            now = json.loads(json.dumps(manager.current_filter(name).to_json()))
            assert {k: now.get(k) for k in old_filter} == old_filter
        assert {Path(f.path).name for f in manager.files("finance")} == {"budget-2019.txt", "q1-report.md",
                                                                         "invoices.csv"}
        assert {Path(f.path).name for f in manager.files("health")} == {"vaccine-trial.txt", "clinic-hours.md"}
        [thread] = ThreadStore(lib).list("finance")
        messages = ThreadStore(lib).messages(thread.id)
        assert [m.role for m in messages] == ["user", "assistant"]
        assert messages[0].content == "What happened to the warehouse?" and messages[1].mode == "retrieval-only"
        stats = memory_stats(manager, "finance")
        assert (stats.evolved_keys, stats.accepted) == (counts["erm_keys"], 2) and stats.units == counts["erm_memory"]
    finally:
        lib.close()

    again = Library.open(load_settings(data))
    assert again.upgrade is None
    again.close()
    assert len(list(data.glob("library.sqlite3.bak-*"))) == 1  # one backup, taken once

    # The upgraded workspace searches; the archived one comes back from the cache; the 0.1.0
    # export imports.
    code, out, err = spar(capsys, data, "ws", "search", "finance", "Rotterdam warehouse", "--json")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert hits and {Path(h["path"]).name for h in hits[:2]} == {"q1-report.md", "budget-2019.txt"}
    code, out, err = spar(capsys, data, "ws", "reactivate", "health")
    assert code == 0 and "2/2 files ready" in out and "0 newly embedded" in out, out + err
    code, out, err = spar(capsys, data, "ws", "import", str(tmp_path / "finance.sparws"), "--name", "from-010")
    assert code == 0 and "3/3 files found" in out and "1 threads" in out, out + err


def before_filter(rows: dict, name: str) -> dict:
    """The filter of a 0.1.0 workspace row (id, name, collection, status, filter_json, ...)."""
    [filter_json] = [r[4] for r in rows["workspaces"] if r[1] == name]
    return json.loads(filter_json)


def test_upgraded_010_index_has_the_schema_of_a_new_one(tmp_path):
    data = unpack_010(tmp_path)
    Library.open(load_settings(data)).close()
    Library.open(Settings(data_dir=tmp_path / "fresh")).close()
    old = create_engine(f"sqlite:///{data / 'library.sqlite3'}")
    new = create_engine(f"sqlite:///{tmp_path / 'fresh' / 'library.sqlite3'}")
    try:
        assert schema(old) == schema(new)
        assert model_drift(old) == []
    finally:
        old.dispose()
        new.dispose()
    # Even the CREATE statements are the same, byte for byte.
    assert sqlite_ddl(data / "library.sqlite3") == sqlite_ddl(tmp_path / "fresh" / "library.sqlite3")


def test_010_models_from_git_upgrade_on_sqlite(tmp_path):
    """The same through release 0.1.0's create_all (not the fixture): a row survives, schema = new."""
    db = tmp_path / "old" / "library.sqlite3"
    db.parent.mkdir()
    create_010_schema(f"sqlite:///{db}", tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO folders (path, ignore_patterns, watched, added_at, last_scan_complete) "
                     "VALUES ('/share', '[]', 1, '2026-01-01 00:00:00', 0)")
    conn.close()
    lib = Library.open(Settings(data_dir=db.parent))
    try:
        assert lib.upgrade.from_revision == "0.1.0" and lib.upgrade.backup.is_file()
        with lib.engine.connect() as c:
            assert c.execute(text("SELECT path FROM folders")).scalars().all() == ["/share"]
    finally:
        lib.close()
    Library.open(Settings(data_dir=tmp_path / "fresh")).close()
    assert sqlite_ddl(db) == sqlite_ddl(tmp_path / "fresh" / "library.sqlite3")


# -- a later revision (simulated: a copy of the scripts with one more revision after head) ----------
def _head() -> str:
    return runner.head_revision()


def _next(revision: str) -> str:
    return f"{int(revision) + 1:04d}"


REVISION_NEXT = """
import sqlalchemy as sa
from alembic import op

revision = "NEXT"
down_revision = "HEAD"
branch_labels = None
depends_on = None


def upgrade():
    # files is referenced by file_tags and workspace_files: SQLite copies the table to alter it,
    # which would cascade-delete their rows if foreign keys were on during the migration.
    with op.batch_alter_table("files", recreate="always") as batch:
        batch.add_column(sa.Column("note", sa.Text(), nullable=True))
    FAIL


def downgrade():
    pass
"""


@pytest.fixture
def scripts_with_next(tmp_path, monkeypatch):
    import shutil

    def install(fail: bool) -> None:
        scripts = tmp_path / f"migrations-{fail}"
        shutil.copytree(runner.HERE, scripts, ignore=shutil.ignore_patterns("__pycache__"))
        head = _head()
        body = REVISION_NEXT.replace("    FAIL\n", '    raise RuntimeError("disk on fire")\n' if fail else "")
        body = body.replace('"NEXT"', f'"{_next(head)}"').replace('"HEAD"', f'"{head}"')
        (scripts / "versions" / f"{_next(head)}_note.py").write_text(body)
        monkeypatch.setattr(runner, "HERE", scripts)
        monkeypatch.setattr(runner, "HEAD_REVISION", _next(head))
        runner.script_directory.cache_clear()

    yield install
    runner.script_directory.cache_clear()


def test_an_older_revision_is_backed_up_and_upgraded(tmp_path, scripts_with_next):
    data = unpack_010(tmp_path)
    Library.open(load_settings(data)).close()  # 0.1.0 -> head
    db = data / "library.sqlite3"
    before = dump(db)
    head = _head()
    scripts_with_next(fail=False)
    lib = Library.open(load_settings(data))
    try:
        assert (lib.upgrade.from_revision, lib.upgrade.to_revision) == (head, _next(head))
        assert lib.upgrade.backup.name.startswith(f"library.sqlite3.bak-rev{head}-")
        assert dump(lib.upgrade.backup) == before
        assert runner.current_revision(lib.engine) == _next(head)
        assert "note" in {c["name"] for c in inspect(lib.engine).get_columns("files")}
        after = dump(db)
        assert after["file_tags"] == before["file_tags"] and after["workspace_files"] == before["workspace_files"]
        assert [r[:-1] for r in after["files"]] == before["files"]  # the same rows, plus an empty note
        with lib.engine.connect() as c:
            assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1  # Library's own connections
    finally:
        lib.close()


def test_a_failed_upgrade_is_undone_and_says_where_the_backup_is(tmp_path, scripts_with_next):
    from spar_desktop.core.library.database import MigrationError

    data = unpack_010(tmp_path)
    Library.open(load_settings(data)).close()
    db = data / "library.sqlite3"
    before = dump(db)
    head = _head()
    scripts_with_next(fail=True)
    with pytest.raises(MigrationError, match="disk on fire") as exc:
        Library.open(load_settings(data))
    assert f"bak-rev{head}-" in str(exc.value)
    assert dump(db) == before  # the ALTER before the failure was rolled back with it
    engine = create_engine(f"sqlite:///{db}")
    try:
        assert runner.current_revision(engine) == head
        assert "note" not in {c["name"] for c in inspect(engine).get_columns("files")}
    finally:
        engine.dispose()


# -- refusal ---------------------------------------------------------------------------------------
def test_an_index_from_a_newer_release_is_refused_untouched(tmp_path, capsys):
    data = tmp_path / "data"
    Library.open(Settings(data_dir=data)).close()
    db = data / "library.sqlite3"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.close()
    before, names = db.read_bytes(), sorted(p.name for p in data.iterdir())

    with pytest.raises(IndexTooNewError) as exc:
        Library.open(Settings(data_dir=data))
    assert exc.value.revision == "9999"
    assert "this index was written by a newer SPAR Desktop (revision 9999); install that version or newer" \
        in str(exc.value)
    assert db.read_bytes() == before

    code, _, err = spar(capsys, data, "status")
    assert code == 2 and "spar: error: this index was written by a newer SPAR Desktop (revision 9999)" in err
    assert "Traceback" not in err
    assert db.read_bytes() == before
    assert not any(".bak-" in p.name for p in data.iterdir())
    assert {p.name for p in data.iterdir()} - set(names) <= {"library.sqlite3-wal", "library.sqlite3-shm"}


# -- two processes at once -------------------------------------------------------------------------
def _two_at_once(data: Path, *args: str) -> list[tuple[str, str, int]]:
    cmd = [sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data), *args]
    env = dict(os.environ, SPAR_CHROMA_PROCESS="0")
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    return [p.communicate(timeout=300) + (p.returncode,) for p in procs]


def test_two_processes_opening_a_fresh_data_dir_both_succeed(tmp_path):
    for trial in range(3):
        data = tmp_path / f"data{trial}"
        for out, err, code in _two_at_once(data, "status"):
            assert code == 0, f"trial {trial}: {err}"
            assert "files:     0" in out
        assert len(list(data.glob("*.bak-*"))) == 0
        lib = Library.open(Settings(data_dir=data))
        assert lib.upgrade is None  # created once, at head
        lib.close()




def test_two_spar_index_on_a_fresh_data_dir_both_succeed(tmp_path):
    share = tmp_path / "share"
    for i in range(12):
        p = share / f"d{i % 3}" / f"n{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"note {i}", encoding="utf-8")
    for trial in range(3):
        data = tmp_path / f"data{trial}"
        for out, err, code in _two_at_once(data, "index", "--quiet", str(share)):
            assert "already exists" not in err and "alembic" not in err and "upgrad" not in err, err
            # The scans take turns too (core/file_lock.py): before, one died on UNIQUE files.path.
            assert code == 0, f"trial {trial}: {err}"
        lib = Library.open(Settings(data_dir=data))
        try:
            assert lib.upgrade is None
            with lib.session() as s:
                assert len(s.scalars(select(File)).all()) == 12
        finally:
            lib.close()


def test_concurrent_first_opens_in_threads_create_once(tmp_path):
    data = tmp_path / "data"
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []
    reports = []

    def open_it() -> None:
        try:
            barrier.wait(30)
            lib = Library.open(Settings(data_dir=data))
            reports.append(lib.upgrade)
            lib.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert sum(1 for r in reports if r is not None) == 1  # exactly one created it


# -- settings.json -----------------------------------------------------------------------------------
def test_settings_json_is_versioned(tmp_path):
    data = tmp_path / "data"
    path = Settings(data_dir=data, ollama_model="qwen2.5").save()
    stored = json.loads(path.read_text())
    assert stored["version"] == 1 and stored["ollama_model"] == "qwen2.5"
    assert load_settings(data).ollama_model == "qwen2.5"

    path.write_text(json.dumps({"ollama_model": "old"}))  # 0.1.0: no version = 1
    assert load_settings(data).ollama_model == "old"

    path.write_text(json.dumps({"version": 2, "ollama_model": "future"}))
    with pytest.raises(SettingsTooNewError, match=r"newer SPAR Desktop \(settings version 2"):
        load_settings(data)
    with pytest.raises(FileExistsError, match="newer SPAR Desktop"):  # an older app never overwrites it
        Settings(data_dir=data).save()
    assert json.loads(path.read_text())["ollama_model"] == "future"

    for bad in ({"version": "2"}, {"version": 0}, [1, 2]):
        path.write_text(json.dumps(bad))
        with pytest.raises(SettingsError):
            load_settings(data)


# -- PostgreSQL --------------------------------------------------------------------------------------
def new_pg_database(server_url: str, name: str) -> str:
    import psycopg

    base, _, _ = server_url.rpartition("/")
    dsn = base.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"


@pytest.mark.postgres
def test_postgres_new_index_at_head_and_010_upgrade(pg_url, tmp_path):
    fresh_url = new_pg_database(pg_url, "fresh")
    lib = Library(make_engine(fresh_url), None)
    try:
        assert lib.upgrade.created and runner.current_revision(lib.engine) == HEAD_REVISION
        assert model_drift(lib.engine) == []
        fresh_schema = schema(lib.engine)
    finally:
        lib.close()
    again = Library(make_engine(fresh_url), None)
    assert again.upgrade is None
    again.close()

    old_url = new_pg_database(pg_url, "release010")
    create_010_schema(old_url, tmp_path)
    engine = create_engine(old_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO folders (path, ignore_patterns, watched, added_at, last_scan_complete) "
                          "VALUES ('/share', '[]', true, now(), false)"))
        conn.execute(text("INSERT INTO tags (key, value, source, created_at) VALUES ('tax:A', 'A', 'taxonomy', now())"))
    engine.dispose()
    lib = Library(make_engine(old_url), None)
    try:
        assert lib.upgrade.from_revision == "0.1.0" and lib.upgrade.backup is None
        assert schema(lib.engine) == fresh_schema
        with lib.session() as s:
            assert s.scalars(select(Tag.key)).all() == ["tax:A"]
    finally:
        lib.close()


@pytest.mark.postgres
def test_postgres_refuses_a_newer_index_and_serializes_first_opens(pg_url):
    url = new_pg_database(pg_url, "concurrent")
    barrier = threading.Barrier(3)
    errors: list[BaseException] = []
    reports = []

    def open_it() -> None:
        try:
            barrier.wait(30)
            lib = Library(make_engine(url), None)
            reports.append(lib.upgrade)
            lib.close()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and sum(1 for r in reports if r is not None) == 1

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    tables = sorted(inspect(engine).get_table_names())
    with pytest.raises(IndexTooNewError, match=r"revision 9999\); install that version or newer"):
        Library(make_engine(url), None)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == ["9999"]
    assert sorted(inspect(engine).get_table_names()) == tables
    engine.dispose()
