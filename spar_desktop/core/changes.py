"""What an operation changed, so that whoever shows that data reloads it (Anki's OpChanges).

Core operations that write say what they wrote: a scan's summary, a build's report, a tag edit's
result carry a ``changes`` value; the app's task runner announces it once the operation ends and
each view reloads what it shows of those parts (ui/base/tasks.py ``TaskRunner.changed``). Qt-free, so
the CLI and tests read the same values.

    Changes(files=True) | Changes(tags=True) == Changes(files=True, tags=True)
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Changes:
    files: bool = False  # file rows: added, changed, removed, their status or metadata
    tags: bool = False  # tags, their hierarchy or which files carry them
    workspaces: bool = False  # workspaces: created, built, archived, deleted, their filter
    relations: bool = False  # stored document relations (the graph)

    def __or__(self, other: "Changes") -> "Changes":
        if not isinstance(other, Changes):
            return NotImplemented
        return Changes(*(getattr(self, f.name) or getattr(other, f.name) for f in fields(self)))

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def names(self) -> tuple[str, ...]:
        """The parts that changed, e.g. ('files', 'tags'): for logs and messages."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name))


NOTHING = Changes()


def changes_of(value: object) -> Changes:
    """The ``changes`` a result carries (a report's attribute), else NOTHING."""
    found = getattr(value, "changes", None)
    return found if isinstance(found, Changes) else NOTHING
