"""A first scan's new files probed in a second process, ahead of the scan.

A first scan of a big share spends about half its time probing (open, fstat, read, hash, sniff:
system calls, waits for the disk) and half building and writing rows (Python and SQLite), one
after the other on one core. Threads did not overlap them: the probe's Python parts need the GIL,
and each of its system calls gave the GIL up and queued behind the scan's thread to get it back
(four reading threads at 100k files: no gain, +20% CPU). A helper process (helper_process.py)
probes the next folders' new files on the other core, with its own GIL, and hands the results
back in the scan's order.

Results are used only for their own file; a probe's exception is raised to the scan as if it had
probed the file itself, so statuses and messages are the same either way. The helper starts only
once a scan has met ``START_AFTER`` new files (small scans and re-scans pay nothing); when it
cannot start or dies, the files not yet answered are probed in line, as before. Memory is
bounded by ``AHEAD_FILES`` results and the folders listed ahead (``AHEAD_FOLDERS``).
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import Callable, Iterator, Optional

from spar_desktop.core.helper_process import helper_command, helper_env, receive, send
from spar_desktop.core.library.paths import display_path
from spar_desktop.core.library.probe import probe_file
from spar_desktop.core.library.probe_result import ProbeResult

log = logging.getLogger(__name__)

START_AFTER = 2000  # new files met before a helper is worth starting (~0.3 s of the other core)
AHEAD_FILES = 4096  # files sent and not yet used
AHEAD_FOLDERS = 512
BATCH_FILES = 256  # files per message: one pickle and one pipe write per batch, not per file

Outcome = tuple[Optional[tuple], Optional[BaseException]]


class ProbeAhead:
    """Wraps a walk's folder listings (``listings``); ``take(path)`` gives a file's probe."""

    def __init__(self, start_after: int = START_AFTER) -> None:
        self.start_after = start_after
        self._process: Optional[subprocess.Popen] = None
        self._failed = False  # could not start, or died: the rest is probed in line
        self._new_seen = 0
        self._sent = 0  # messages sent; replies come back in the same order
        self._received: dict[int, list[Outcome]] = {}
        self._n_received = 0
        self._waiting: dict[str, tuple[int, int]] = {}  # path -> (message number, index in it)

    def listings(self, walk: Iterator, new_files: Callable[[list], list[tuple[str, str]]]) -> Iterator:
        """The walk's listings in order. Once the helper runs, each listing's new files
        (``new_files(regular)``: (path, name) pairs) are sent when it is listed, and it is
        yielded once ``AHEAD_FILES`` files or ``AHEAD_FOLDERS`` folders are ahead of it."""
        ahead: deque[tuple[object, int]] = deque()
        batch: list[tuple[str, str]] = []
        in_flight = 0
        try:
            for listing in walk:
                items = new_files(listing[1]) if not self._failed else []
                if items and self._process is None:
                    self._new_seen += len(items)
                    if self._new_seen >= self.start_after:
                        self._start()
                if self._process is None or self._failed:
                    items = []
                    if not ahead:
                        yield listing
                        continue
                batch.extend(items)
                ahead.append((listing, len(items)))
                in_flight += len(items)
                if len(batch) >= BATCH_FILES:
                    batch = self._send(batch)
                while ahead and (in_flight > AHEAD_FILES or len(ahead) > AHEAD_FOLDERS):
                    if in_flight - len(batch) < ahead[0][1]:
                        batch = self._send(batch)  # the listing about to be used has files not sent yet
                    done, n = ahead.popleft()
                    in_flight -= n
                    yield done
            batch = self._send(batch)
            while ahead:
                yield ahead.popleft()[0]
        finally:
            self.close()

    def take(self, path: str) -> Optional[ProbeResult]:
        """The probe of ``path`` if the helper made it (None: probe it in line); its exception is raised."""
        found = self._waiting.pop(path, None)
        if found is None:
            return None
        number, index = found
        outcomes = self._reply(number)
        if outcomes is None:
            return None
        fields, exc = outcomes[index]
        if exc is not None:
            raise exc
        return ProbeResult(*fields)

    def close(self) -> None:
        process, self._process = self._process, None
        self._waiting.clear()
        self._received.clear()
        if process is None:
            return
        try:
            process.stdin.close()  # EOF: the helper ends after the message in hand
        except OSError:
            pass
        try:
            process.stdout.close()
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    # -- the parent's side ------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)
            self._process = subprocess.Popen(helper_command(__name__), stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, env=helper_env(), creationflags=flags)
        except OSError as exc:
            log.info("cannot probe files in a second process (%s): they are probed in line", exc)
            self._failed = True
            return

    def _send(self, batch: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Send ``batch`` (if any) and return a new empty one."""
        if not batch or self._process is None or self._failed:
            return []
        try:
            send(self._process.stdin, batch)
        except (OSError, ValueError):
            self._fail("the helper stopped reading")
            return []
        number = self._sent
        self._sent += 1
        for i, (path, _) in enumerate(batch):
            self._waiting[path] = (number, i)
        return []

    def _reply(self, number: int) -> Optional[list[Outcome]]:
        """Message ``number``'s outcomes, read in this thread (a reading thread's every wake-up
        queued behind the scan for the GIL, and the scan's system calls behind it)."""
        while number >= self._n_received and not self._failed:
            try:
                self._received[self._n_received] = receive(self._process.stdout)
            except Exception:  # noqa: BLE001 - EOF, a torn message: the helper is gone
                self._fail("the helper ended")
                break
            self._n_received += 1
        for old in [k for k in self._received if k < number]:  # used in order: earlier ones are done
            del self._received[old]
        return self._received.get(number)

    def _fail(self, why: str) -> None:
        if not self._failed:
            log.warning("probing files in a second process stopped (%s): the rest is probed in line", why)
        self._failed = True


def new_entries(regular: list, known: dict) -> list[tuple[str, str]]:
    """(path, name) of a listing's files (DirEntries) that ``known`` (stored path -> ...) lacks."""
    return [(e.path, e.name) for e in regular if e.__class__ is not str
            and (e.path if e.path.isascii() else display_path(e.path)) not in known]


# -- the helper process ---------------------------------------------------------------------------
def _outcome(path: str, name: str) -> Outcome:
    """A probe as (its fields in ProbeResult's order, None) or (None, the exception). Fields,
    not the dataclass: unpickling an object sets its attributes one by one (17 us a result)."""
    try:
        r = probe_file(path, name)
    except Exception as exc:  # noqa: BLE001 - handed to the scan, which decides what it means
        return None, exc
    return (r.size, r.mtime_ns, r.format, r.content_hash, r.status, r.error, r.title, r.author, r.created_at,
            r.page_count, r.extra), None


def _serve() -> int:
    """In the helper: answer each message of (path, name) pairs with their outcomes, until EOF.
    A thread reads the messages as they come, so the parent never waits to write one while it
    has not yet read the answers this process waits to write (both pipes full)."""
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the parent's to handle
    channel_in = sys.stdin.buffer
    channel_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints, even from native code, go to stderr
    requests: "queue.Queue[Optional[list[tuple[str, str]]]]" = queue.Queue()
    threading.Thread(target=_read_requests, args=(channel_in, requests), daemon=True).start()
    while (items := requests.get()) is not None:
        outcomes = [_outcome(path, name) for path, name in items]
        try:
            send(channel_out, outcomes)
        except (OSError, ValueError):
            return 0
        except Exception:  # noqa: BLE001 - an exception that does not pickle: send its text instead
            send(channel_out, [(r, None if e is None else RuntimeError(f"{type(e).__name__}: {e}"))
                               for r, e in outcomes])
    return 0


def _read_requests(channel_in, requests: "queue.Queue") -> None:
    while True:
        try:
            requests.put(receive(channel_in))
        except Exception:  # noqa: BLE001 - EOF: the parent is done (or gone)
            requests.put(None)
            return


if __name__ == "__main__":
    sys.exit(_serve())
