"""The tag hierarchy as a lazily loaded tree over the tag DAG.

A tag with several parents (a MeSH term at two tree positions, a taxonomy term under two
branches) appears under each parent: tree nodes are *positions* (paths of tag ids), not tags.
Children are created only when a node is expanded (canFetchMore/fetchMore), so a 30k-term
taxonomy costs nothing until browsed. Top-level nodes group tags by source. The snapshot's tags
are a core/library/tag_view.TagInfos: from the library, only the roots are read at start-up and a
node's children (with their own children's ids, for the expand arrows) when it is expanded; the
counts come with the snapshot (ints, computed on a worker).

Folder tags are keyed by their path relative to a root, so the folders of every indexed root
would sit side by side at one level; when the snapshot says which roots hold which top-level
folders (``folder_roots``), Folders shows one node per root (named after the root folder,
disambiguated when two share a name) with that root's folders under it.
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QApplication, QStyle

from spar_desktop.core.library.models import TagSource
from spar_desktop.core.library.roots import RootFolders
from spar_desktop.core.library.tag_view import HeldTagInfos, TagInfos, TagMatches, as_tag_infos
from spar_desktop.ui.library.ops import TagSnapshot

TagIdRole = Qt.ItemDataRole.UserRole + 1
SourceRole = Qt.ItemDataRole.UserRole + 2

# (group id, label, tag sources shown under it), in display order.
GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("folders", "Folders", (TagSource.PATH,)),
    ("dates", "Dates", (TagSource.DATE,)),
    ("taxonomy", "Taxonomy", (TagSource.TAXONOMY,)),
    ("user", "User tags", (TagSource.USER,)),
    ("auto", "Automatic", (TagSource.AUTO, TagSource.LLM)),
)
GROUP_OF_SOURCE = {src: gid for gid, _, sources in GROUPS for src in sources}

Index = QModelIndex | QPersistentModelIndex
_ENABLED_SELECTABLE = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class _Node:
    __slots__ = ("tag_id", "group", "parent", "row", "children", "root")

    def __init__(self, tag_id: Optional[int], group: str, parent: Optional["_Node"], row: int,
                 root: Optional[RootFolders] = None) -> None:
        self.tag_id = tag_id
        self.group = group
        self.parent = parent
        self.row = row
        self.root = root  # a root folder's node under Folders (tag_id None)
        self.children: Optional[list[_Node]] = None  # None: not fetched yet

    @property
    def step(self) -> Any:
        if self.tag_id is not None:
            return self.tag_id
        return f"root:{self.root.path}" if self.root is not None else self.group

    def path(self) -> tuple:
        out: list = []
        node: Optional[_Node] = self
        while node is not None:
            out.append(node.step)
            node = node.parent
        return tuple(reversed(out))

    def root_node(self) -> Optional["_Node"]:
        node: Optional[_Node] = self
        while node is not None and node.root is None:
            node = node.parent
        return node


class TagTreeModel(QAbstractItemModel):
    COLUMNS = ("Tag", "Files")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.infos: TagInfos = HeldTagInfos({})
        self._groups: list[_Node] = []
        self._group_roots: dict[str, list[int]] = {}
        self.roots: tuple[RootFolders, ...] = ()
        style = QApplication.style()
        sp = QStyle.StandardPixmap
        self._icons = {
            "folders": style.standardIcon(sp.SP_DirIcon),
            "dates": style.standardIcon(sp.SP_FileDialogDetailedView),
            "taxonomy": style.standardIcon(sp.SP_FileDialogContentsView),
            "user": style.standardIcon(sp.SP_DialogApplyButton),
            "auto": style.standardIcon(sp.SP_BrowserReload),
        }
        self._bold = QFont()
        self._bold.setBold(True)
        self._muted = QColor(120, 120, 128)

    # ------------------------------------------------------------------ loading
    def set_snapshot(self, snapshot: TagSnapshot) -> None:
        self.beginResetModel()
        self.infos = as_tag_infos(snapshot.infos)
        roots: dict[str, list[int]] = {}
        for row in self.infos.rows(self.infos.root_ids()):  # a root deleted since the counts is left out
            roots.setdefault(GROUP_OF_SOURCE.get(row.source, "auto"), []).append(row.id)
        self._group_roots = {g: self._sorted(g, ids, top=True) for g, ids in roots.items()}
        folder_tags = set(self._group_roots.get("folders", ()))
        # Roots holding at least one folder (a root with only top-level files has none to show).
        self.roots = tuple(r for r in (getattr(snapshot, "folder_roots", None) or ())
                           if folder_tags & set(r.tag_files))
        self._groups = []
        for gid, _label, _ in GROUPS:
            if gid in self._group_roots:
                self._groups.append(_Node(None, gid, None, len(self._groups)))
        self.endResetModel()

    def _sorted(self, group: str, ids, top: bool = False) -> list[int]:
        """The tags that exist of ``ids``, in the tree's order (rows in one read; no edges needed)."""
        rows = self.infos.rows(ids)
        if group == "dates":  # newest year first; quarters/months in calendar order
            rows.sort(key=lambda r: r.key, reverse=top)
        else:
            rows.sort(key=lambda r: (r.value.casefold(), r.key))
        return [r.id for r in rows]

    def _child_ids(self, node: _Node) -> list[int]:
        if node.root is not None:
            return [t for t in self._group_roots.get("folders", []) if t in node.root.tag_files]
        if node.tag_id is None:
            if node.group == "folders" and self.roots:
                return list(range(len(self.roots)))  # positions of the root nodes
            return self._group_roots.get(node.group, [])
        kids = self.infos[node.tag_id].child_ids
        if not kids:
            return []
        # One read for the node's children's rows, not one per child; a tag deleted (or made) since
        # the snapshot's counts is left out until the next snapshot.
        return self._sorted(node.group, kids)

    def _ensure_children(self, node: _Node, ids: Optional[list[int]] = None) -> list[_Node]:
        if node.children is None:
            if node.tag_id is None and node.root is None and node.group == "folders" and self.roots:
                node.children = [_Node(None, node.group, node, i, root) for i, root in enumerate(self.roots)]
            else:
                ids = self._child_ids(node) if ids is None else ids
                node.children = [_Node(t, node.group, node, i) for i, t in enumerate(ids)]
        return node.children

    def root_of(self, index: Index) -> Optional[RootFolders]:
        """The indexed root a Folders node sits under (None elsewhere or without roots)."""
        node = self.node(index)
        up = node.root_node() if node is not None else None
        return up.root if up is not None else None

    # ------------------------------------------------------------------ helpers
    def node(self, index: Index) -> Optional[_Node]:
        return index.internalPointer() if index.isValid() else None

    def tag_id(self, index: Index) -> Optional[int]:
        node = self.node(index)
        return node.tag_id if node else None

    def index_for_path(self, path: tuple) -> QModelIndex:
        """The index of a node position (as returned by _Node.path), fetching on the way."""
        index = QModelIndex()
        nodes = self._groups
        for step in path:
            match = next((n for n in nodes if n.step == step), None)
            if match is None:
                return QModelIndex()
            index = self.createIndex(match.row, 0, match)
            if match.children is None:
                self.fetchMore(index)  # with begin/endInsertRows, so proxies and views see the rows
            nodes = match.children or []
        return index

    def top_nodes(self) -> list[_Node]:
        return list(self._groups)

    def index_of(self, node: _Node) -> QModelIndex:
        return self.createIndex(node.row, 0, node)

    def first_index_of_tag(self, tag_id: int) -> QModelIndex:
        """Index of one position of ``tag_id`` (follows first parents up to its root)."""
        chain = [tag_id]
        while self.infos[chain[-1]].parent_ids and len(chain) < 256:
            chain.append(min(self.infos[chain[-1]].parent_ids))
        group = GROUP_OF_SOURCE.get(self.infos[chain[-1]].source, "auto")
        if group == "folders" and self.roots:
            root = next((r for r in self.roots if chain[-1] in r.tag_files), None)
            if root is not None:
                return self.index_for_path((group, f"root:{root.path}", *reversed(chain)))
        return self.index_for_path((group, *reversed(chain)))

    # ------------------------------------------------------------------ model API
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        if parent.isValid():
            node = parent.internalPointer()
            children = node.children or []
        else:
            children = self._groups
        if 0 <= row < len(children) and 0 <= column < len(self.COLUMNS):
            return self.createIndex(row, column, children[row])
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer().parent
        return QModelIndex() if node is None else self.createIndex(node.row, 0, node)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.column() > 0:
            return 0
        if not parent.isValid():
            return len(self._groups)
        children = parent.internalPointer().children
        return len(children) if children is not None else 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:
        if not parent.isValid():
            return bool(self._groups)
        if parent.column() > 0:
            return False
        node: _Node = parent.internalPointer()
        # Asked of every row the view lays out: never sort the children to answer it (at 1M files
        # that made expanding a folder with 200 subfolders stall the window for 300 ms).
        if node.children is not None:
            return bool(node.children)
        if node.tag_id is not None:
            row = self.infos.row(node.tag_id)
            return row is not None and row.has_children
        return bool(self._child_ids(node))

    def canFetchMore(self, parent: Index) -> bool:
        return parent.isValid() and parent.internalPointer().children is None and self.hasChildren(parent)

    def fetchMore(self, parent: Index) -> None:
        if not parent.isValid():
            return
        node = parent.internalPointer()
        if node.children is not None:
            return
        ids = self._child_ids(node)
        if ids:
            self.beginInsertRows(parent, 0, len(ids) - 1)
            self._ensure_children(node, ids)
            self.endInsertRows()
        else:
            node.children = []

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node: _Node = index.internalPointer()
        col = index.column()
        if node.root is not None:
            return self._root_data(node.root, col, role)
        if node.tag_id is None:
            return self._group_data(node, col, role)
        info = self.infos.row(node.tag_id)  # asked of every painted row: no parent/child ids read
        if info is None:
            return None
        under = node.parent.root if node.parent is not None else None
        if role == Qt.ItemDataRole.DisplayRole:
            # A top-level folder under its root counts that root's files only.
            count = under.tag_files.get(node.tag_id, info.file_count) if under is not None else info.file_count
            return info.value if col == 0 else f"{count:,}"
        if role == Qt.ItemDataRole.ToolTipRole:
            up = node.root_node()
            tip = (f"{up.root.name}/{info.key}" if up is not None else info.key) if info.source == TagSource.PATH \
                else f"{info.value} ({info.source})"
            if info.description:
                tip += f"\n{info.description}"
            return tip + f"\n{info.file_count:,} files"
        if role == Qt.ItemDataRole.DecorationRole and col == 0 and node.group == "folders":
            return self._icons["folders"]
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return self._muted
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == TagIdRole:
            return node.tag_id
        if role == SourceRole:
            return info.source
        return None

    def _root_data(self, root: RootFolders, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return root.name if col == 0 else f"{root.files:,}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{root.path}\n{root.files:,} files"
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            return self._icons["folders"]
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return self._muted
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _group_data(self, node: _Node, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            # No count: a union over the group's tags is not what the numbers below mean.
            return next(label for gid, label, _ in GROUPS if gid == node.group) if col == 0 else None
        if role == Qt.ItemDataRole.FontRole and col == 0:
            return self._bold
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            return self._icons.get(node.group)
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return self._muted
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return "Select tags to filter the file table (any tag within a group, every group)"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return _ENABLED_SELECTABLE  # asked of every laid-out row: no enum arithmetic per call


class TagFilterProxy(QSortFilterProxyModel):
    """Filters by label/key/description, DAG-aware.

    Qt's recursive filtering only sees children that were already fetched, which in a lazy tree
    is almost none; instead the accepted set is asked of the tags (``TagInfos.matches``: a folded
    label index, then the hits' ancestors): a node is shown if its tag matches, leads to a match or
    sits below a match. The tag panel runs that search on a worker and hands the answer to
    ``set_matches``; ``set_filter_text`` searches here (a panel without a task runner).
    The tag panel puts this proxy between the tree and its view only while the filter has text:
    laying out every expanded row through it tripled the CPU of expanding a large node.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._text = ""
        self._matching: frozenset[int] = frozenset()
        self._visible: frozenset[int] = frozenset()
        self._groups: set[str] = set()

    @property
    def filter_text(self) -> str:
        return self._text

    def set_filter_text(self, text: str) -> None:
        model: Optional[TagTreeModel] = self.sourceModel()  # type: ignore[assignment]
        found = TagMatches(text.strip(), frozenset(), frozenset())
        if model is not None and found.text:
            found = model.infos.matches(text)
            model.infos.remember(found)
        self.set_matches(found)

    def set_matches(self, found: TagMatches) -> None:
        """Show ``found`` (remembered by the tree's infos first, so this reads nothing)."""
        self._text = found.text.strip().casefold()
        self._matching, self._visible = (found.matching, found.visible) if self._text else (frozenset(), frozenset())
        self._recompute_groups()
        # Drop the mappings (rebuilt as the view asks) rather than re-filter them: re-filtering
        # accepted every row the last filter had fetched again (1.5 s after a broad one at 100k).
        self.invalidate()

    def refresh(self) -> None:
        """Re-filter after the source model got a new snapshot: the last answer's tag ids and groups
        until the panel's new search answers (recomputing the groups here would read each visible
        tag's row from the new snapshot, one statement each, on the UI thread)."""
        if self._text:
            self.invalidate()

    def ancestors_of_matches(self) -> set[int]:
        return set(self._visible - self._matching)

    def _recompute_groups(self) -> None:
        model: Optional[TagTreeModel] = self.sourceModel()  # type: ignore[assignment]
        infos = model.infos if model is not None else None
        self._groups = set() if infos is None or not self._text else \
            {GROUP_OF_SOURCE.get(r.source, "auto") for i in self._visible if (r := infos.row(i)) is not None}

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self._text:
            return True
        model: TagTreeModel = self.sourceModel()  # type: ignore[assignment]
        node = model.node(model.index(source_row, 0, source_parent))
        if node is None:
            return False
        if node.root is not None:
            return any(t in self._visible for t in node.root.tag_files)
        if node.tag_id is None:
            return node.group in self._groups
        if node.tag_id in self._visible:
            return True
        up = node.parent
        while up is not None and up.tag_id is not None:
            if up.tag_id in self._matching:
                return True
            up = up.parent
        return False
