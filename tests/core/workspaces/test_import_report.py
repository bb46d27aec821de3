"""The import report's message says what the .sparws file named that was dropped: entries not in
this index and entries outside the folders indexed here, and the name the file gave when it was
cleaned (the app shows ``describe()``; the CLI prints the same report line by line)."""

from __future__ import annotations

from sqlalchemy import update

from spar_desktop.core.changes import Changes
from spar_desktop.core.chat import share
from spar_desktop.core.library.models import File
from spar_desktop.core.workspaces.sparws import import_workspace
from tests.core.workspaces.test_sparws_hostile import env, good_manifest, index_files, write_sparws  # noqa: F401


def test_the_import_message_names_what_was_dropped(env):  # noqa: F811
    mgr, tmp = env
    files = index_files(mgr)
    with mgr.library.session() as s:  # its folder was removed from this index
        s.execute(update(File).where(File.path == files[0]["path"]).values(folder_id=None))
    stranger = {"path": "/etc/passwd", "rel_path": "../../etc/passwd", "content_hash": "0" * 64}
    path = write_sparws(tmp / "d.sparws", good_manifest(mgr, name="ops\x1b[2J", files=files + [stranger]))
    report = import_workspace(mgr, str(path), threads=share)
    text = report.describe()
    assert text.startswith(f"Imported '{report.name}': 2 of 4 files found in this index")
    assert "dropped 1 not in this index and 1 outside the folders indexed here" in text
    assert report.renamed_from == "ops\x1b[2J" and "(the file named it 'ops\x1b[2J')" in text
    assert "\x1b" not in report.name
    assert report.matched == 2 and report.changes == Changes(workspaces=True)
