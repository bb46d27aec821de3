"""Reading a root's tree for a scan: one listing per folder, ignore rules applied, odd entries reported.

The walk is iterative (deep trees must not hit the recursion limit) and yields, per folder, the
'/'-terminated path of the folder relative to the root, its regular files (DirEntries, or a path in
single-file mode) and its file symlinks. Folder symlinks are not followed (loops, duplicates) but
are reported. The walk starts at a real path and never enters a link, so every folder path it
builds is real (the data-dir check needs no realpath).
"""

from __future__ import annotations

import logging
import os
from operator import attrgetter, itemgetter
from typing import Callable, Iterator, Optional

from spar_desktop.core.library.paths import IgnoreMatcher, display_path
from spar_desktop.core.library.probe import special_file_message
from spar_desktop.core.library.scan_report import NAME_CLASH_FILE, NAME_CLASH_FOLDER, os_error_message
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback

log = logging.getLogger(__name__)

_entry_name = attrgetter("name")

# (folder path relative to the root, '/'-terminated or ""; regular files; file symlinks)
FolderListing = tuple[str, list, list]


class TreeWalk:
    """One walk of one subtree of a root; what it could not read lands in ``issues`` and ``failed_dirs``."""

    def __init__(self, root: str, ignore: IgnoreMatcher, excluded: set[str], progress: ProgressCallback,
                 cancel: Optional[CancelToken], files_seen: Callable[[], int]) -> None:
        self.root = root
        self.ignore = ignore
        self.excluded = excluded
        self.progress = progress
        self.cancel = cancel
        self.files_seen = files_seen  # for the progress line after each folder
        self.issues: list[tuple[str, str]] = []
        self.failed_dirs: list[str] = []
        self._venv = False  # the folder just sorted is a Python virtual environment

    def walk(self, top: str) -> Iterator[FolderListing]:
        if os.path.isfile(top):
            yield from self._single_file(top)
            return
        root_prefix = self.root.rstrip(os.sep) + os.sep
        stack = [top]
        while stack:
            if self.cancel is not None and self.cancel.cancelled:
                return
            current = stack.pop()
            entries = self._list_dir(current)
            if entries is None:
                continue
            if current == self.root:
                rel_prefix = ""
            else:
                rel_prefix = current[len(root_prefix):] + "/"
                if os.sep != "/":
                    rel_prefix = rel_prefix.replace(os.sep, "/")
            pushed = len(stack)
            regular, links, odd_names = self._sort_entries(entries, rel_prefix, stack)
            if self._venv and current != top:
                # A Python virtual environment under any name (env/, .env311/...): thousands of
                # library files nobody searches, like the .venv and venv folders the default
                # patterns skip. Told by its own listing, not by a stat of every folder's pyvenv.cfg.
                del stack[pushed:]
                continue
            if odd_names:
                regular, links = self._drop_name_clashes(regular, links, stack, pushed)
            yield rel_prefix, regular, links
            self.progress(Progress(self.files_seen(), None, f"scanning {display_path(current)}"))

    def _single_file(self, top: str) -> Iterator[FolderListing]:
        """Single-file mode: the user named this file, ignore patterns aside."""
        shown = display_path(top)
        if shown != top and os.path.lexists(shown):
            self.issues.append((shown, NAME_CLASH_FILE))
            return
        rel = os.path.basename(top) if top == self.root else os.path.relpath(top, self.root).replace(os.sep, "/")
        yield rel.rpartition("/")[0] + "/" if "/" in rel else "", [top], []

    def _list_dir(self, current: str) -> Optional[list[os.DirEntry]]:
        """The folder's entries in name order, or None (reported) when it cannot be listed."""
        try:
            with os.scandir(current) as it:
                entries = list(it)
        except OSError as exc:
            self.failed_dirs.append(current)
            self.issues.append((display_path(current), f"folder skipped: {os_error_message(exc, False)}"))
            return None
        entries.sort(key=_entry_name)
        return entries

    def _sort_entries(self, entries: list[os.DirEntry], rel_prefix: str,
                      stack: list[str]) -> tuple[list, list, bool]:
        """Regular files and file links of one folder; subfolders go on ``stack``; the rest is
        reported. Also says whether a name is not ASCII (only then can two names clash)."""
        exact, glob_re, path_re = self.ignore.name_rules
        glob_match = glob_re.match if glob_re is not None else None
        hints = self.ignore.glob_hints
        starts, ends = hints if hints is not None else ("", "")  # "": every name may match
        path_match = path_re.match if path_re is not None else None
        excluded = self.excluded
        regular, links = [], []
        odd_names = self._venv = False
        for entry in entries:
            name = entry.name
            if name == "pyvenv.cfg" and entry.is_file():
                self._venv = True
            if name in exact or (glob_match is not None and (name.startswith(starts) or name.endswith(ends))
                                 and glob_match(name)) or (path_match is not None and path_match(rel_prefix + name)):
                continue
            if not name.isascii():
                odd_names = True
            try:
                if entry.is_file(follow_symlinks=False):
                    regular.append(entry)
                elif entry.is_dir(follow_symlinks=False):
                    if entry.path not in excluded:
                        stack.append(entry.path)
                elif entry.is_symlink():
                    try:
                        if os.path.isdir(entry.path):
                            self.issues.append((display_path(entry.path), "symbolic link to a folder: not followed"))
                            continue
                    except OSError:
                        pass
                    links.append(entry)
                else:  # FIFO, socket, device: never opened (a FIFO would block), but said
                    self.issues.append((display_path(entry.path),
                                        special_file_message(entry.stat(follow_symlinks=False).st_mode)))
            except OSError as exc:
                self.issues.append((display_path(entry.path), os_error_message(exc, False)))
        return regular, links, odd_names

    def _drop_name_clashes(self, regular: list, links: list, stack: list[str], pushed: int) -> tuple[list, list]:
        """Drop the entries of one folder whose stored name would be another's.

        A name that is not valid UTF-8 is stored with its undecodable bytes written as \\xNN, so
        b'a\\xff.txt' and a file literally named 'a\\xff.txt' (or b'\\xff\\\\xfe' and b'\\\\xff\\xfe')
        would be one path, and the index refuses the second row (it stopped the whole scan).
        A name that is exact text keeps its path; of two escaped names, the first in name order
        does. The other one is reported and skipped, on every scan, until one is renamed.
        """
        dirs = stack[pushed:]
        named = [(e.name, e) for e in regular] + [(e.name, e) for e in links] + [(os.path.basename(d), d) for d in dirs]
        taken = {name for name, _ in named if display_path(name) is name}
        dropped: set[int] = set()
        for name, item in sorted(((n, i) for n, i in named if display_path(n) is not n), key=itemgetter(0)):
            shown = display_path(name)
            if shown in taken:
                dropped.add(id(item))
                path = item if item.__class__ is str else item.path
                self.issues.append((display_path(path), NAME_CLASH_FOLDER if item.__class__ is str else NAME_CLASH_FILE))
                log.warning("skipped %s: its name reads the same as another once undecodable bytes are escaped",
                            display_path(path))
            else:
                taken.add(shown)
        if not dropped:
            return regular, links
        stack[pushed:] = [d for d in dirs if id(d) not in dropped]
        return [e for e in regular if id(e) not in dropped], [e for e in links if id(e) not in dropped]
