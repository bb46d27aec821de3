"""Right dock: metadata and tags of the selected file, with Open / Show in folder / View."""

from __future__ import annotations

import html
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.documents.virtual import is_virtual
from spar_desktop.core.library.models import FileStatus, TagSource
from spar_desktop.ui.base.child_docs import (
    container_name,
    copies_summary,
    elide_middle,
    plural,
    workspace_state_text,
)
from spar_desktop.ui.library.file_table import format_label, human_size
from spar_desktop.ui.library.ops import FileDetails, FileRecord

SOURCE_LABELS = {TagSource.PATH: "Folder", TagSource.DATE: "Date", TagSource.TAXONOMY: "Taxonomy",
                 TagSource.USER: "User", TagSource.AUTO: "Automatic", TagSource.LLM: "Automatic"}
# Chip colours per tag source (background, text): subtle, readable on a light window.
CHIP_COLOURS = {TagSource.PATH: ("#e8eef8", "#27466e"), TagSource.DATE: ("#eef3e6", "#3d5a1e"),
                TagSource.TAXONOMY: ("#f3ebf8", "#553070"), TagSource.USER: ("#fdf1de", "#7a4a06")}


def _value_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)  # a title or path with '<' is not markup
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class DetailsPanel(QWidget):
    open_requested = Signal()
    reveal_requested = Signal()
    view_requested = Signal()
    container_requested = Signal(int)  # file id of the archive or mail holding the shown document

    FIELDS = ("Inside", "Contains", "Folder", "Format", "Size", "Modified", "Created", "Title", "Author", "Pages",
              "Status", "Text", "Copies", "Workspaces")
    # Shown only when they say something (a child document, a container, copies, OCR text...).
    OPTIONAL = ("Inside", "Contains", "Text", "Copies", "Workspaces")
    COPIES_LISTED = 3
    TOOLTIP_PATHS = 40

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.details: Optional[FileDetails] = None
        self.record: Optional[FileRecord] = None
        self.placeholder = QLabel("Select a file to see its details")
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self._build_body())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)

    def _build_body(self) -> QScrollArea:
        """Name, path, the file's buttons, its fields and tags, in a scroll area."""
        self.name = QLabel()
        self.name.setObjectName("detailsTitle")
        self.name.setWordWrap(True)
        self.name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.path = QLabel()
        self.path.setObjectName("muted")
        self.path.setWordWrap(True)
        self.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        body = QWidget()
        col = QVBoxLayout(body)
        col.setContentsMargins(12, 12, 12, 12)
        col.setSpacing(8)
        col.addWidget(self.name)
        col.addWidget(self.path)
        col.addLayout(self._build_buttons())
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setObjectName("separator")
        col.addWidget(line)
        col.addLayout(self._build_fields())
        col.addWidget(self.error)
        col.addSpacing(6)
        col.addWidget(self.tags_title)
        col.addWidget(self.tags)
        col.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        return scroll

    def _build_buttons(self) -> QHBoxLayout:
        """View, Open, Show in folder."""
        style = self.style()
        sp = QStyle.StandardPixmap
        self.open_button = QPushButton(style.standardIcon(sp.SP_DialogOpenButton), "Open")
        self.reveal_button = QPushButton(style.standardIcon(sp.SP_DirOpenIcon), "Show in folder")
        self.view_button = QPushButton(style.standardIcon(sp.SP_FileDialogContentsView), "View")
        self.open_button.clicked.connect(self.open_requested)
        self.reveal_button.clicked.connect(self.reveal_requested)
        self.view_button.clicked.connect(self.view_requested)
        buttons = QHBoxLayout()
        buttons.setSpacing(6)
        for b in (self.view_button, self.open_button, self.reveal_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        return buttons

    def _build_fields(self) -> QFormLayout:
        """One row per field (FIELDS), then the error line and the tags under them."""
        form = self.form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(6)
        self.values: dict[str, QLabel] = {}
        for name in self.FIELDS:
            self.values[name] = _value_label()
            label = QLabel(name)
            label.setObjectName("muted")
            form.addRow(label, self.values[name])
        inside = self.values["Inside"]
        inside.setTextFormat(Qt.TextFormat.RichText)  # the container's name links to its row
        inside.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        inside.linkActivated.connect(self._container_link)
        self.error = _value_label()
        self.error.setObjectName("errorText")
        self.tags_title = QLabel("Tags")
        self.tags_title.setObjectName("sectionTitle")
        self.tags = QLabel()
        self.tags.setWordWrap(True)
        self.tags.setTextFormat(Qt.TextFormat.RichText)
        return form

    def show_record(self, record: Optional[FileRecord]) -> None:
        """Show what the table already knows at once; tags follow from show_details()."""
        self.record = record
        if record is None:
            self.details = None
            self.stack.setCurrentWidget(self.placeholder)
            return
        if self.details is not None and self.details.record.id != record.id:
            self.details = None
        self.stack.setCurrentIndex(1)
        self.name.setText(record.name)
        self.path.setText(record.path)
        v = self.values
        v["Folder"].setText(record.folder or "(top level)")
        v["Format"].setText(format_label(record.format))
        v["Size"].setText(f"{human_size(record.size)}  ({record.size:,} bytes)")
        v["Modified"].setText(record.modified_at.strftime("%Y-%m-%d %H:%M") if record.modified_at else "—")
        v["Created"].setText(record.created_at.strftime("%Y-%m-%d %H:%M") if record.created_at else "—")
        v["Title"].setText(record.title or "—")
        v["Author"].setText(record.author or "—")
        v["Pages"].setText(str(record.page_count) if record.page_count else "—")
        v["Status"].setText("OK" if record.status == FileStatus.OK else record.status)
        self.error.setText(record.error or "")
        self.error.setVisible(bool(record.error))
        if self.details is None:
            self.tags.setText("<i>loading…</i>")
        self._show_extras(record)
        missing = record.status == FileStatus.MISSING
        child = is_virtual(record.path)
        self.open_button.setEnabled(not missing and not child)  # no app can open a path inside a zip
        self.open_button.setToolTip(f"It is inside {container_name(record.path)}: use View, or open that"
                                    if child else "Open with the default app")
        self.reveal_button.setToolTip("Show its container in the file manager" if child else "")
        self.reveal_button.setEnabled(not missing)
        self.view_button.setEnabled(not missing and record.status in (FileStatus.OK, FileStatus.EMPTY))

    def show_details(self, details: Optional[FileDetails]) -> None:
        if details is None or self.record is None or details.record.id != self.record.id:
            return
        self.details = details
        self.show_record(details.record)
        chips = []
        for _tag_id, key, label, source in details.tags:
            bg, fg = CHIP_COLOURS.get(source, ("#eeeeee", "#333333"))
            shown = key if source == TagSource.PATH else label
            chips.append(f'<span style="background:{bg}; color:{fg};">&nbsp;{html.escape(shown)}&nbsp;</span>')
        text = "&nbsp; ".join(chips) if chips else "<i>no tags</i>"
        if details.suggested:  # not the file's tags until someone accepts them (Tags ▸ Review suggestions)
            text += "<br><i>Suggested, to review: " + ", ".join(
                f"{html.escape(label)} ({score:.2f})" for _i, label, score in details.suggested) + "</i>"
        self.tags.setText(text)
        self.tags.setToolTip("\n".join(f"{SOURCE_LABELS.get(s, s)}: {k}" for _i, k, _l, s in details.tags))

    # ------------------------------------------------------------------ child documents, copies, OCR
    def _show_extras(self, record: FileRecord) -> None:
        """The optional rows, from the loaded details when they are this record's."""
        d = self.details if self.details is not None and self.details.record.id == record.id else None
        v = self.values
        texts: dict[str, str] = dict.fromkeys(self.OPTIONAL, "")
        if is_virtual(record.path):
            texts["Inside"] = html.escape(container_name(record.path) or "")
            v["Inside"].setToolTip(record.path.rsplit("!/", 1)[0])
            if d is not None and d.container is not None:
                texts["Inside"] = f'<a href="file:{d.container[0]}">{texts["Inside"]}</a>'
                v["Inside"].setToolTip(f"{d.container[1]}\nClick to select it in the file list")
        if d is not None:
            if d.members:
                texts["Contains"] = plural(d.members, "document")
                if d.nested_members > d.members:
                    texts["Contains"] += f" ({d.nested_members:,} with those inside them)"
            texts["Text"] = "from OCR (scanned pages or images)" if d.text_from_ocr else ""
            texts["Copies"] = self._copies_text(d.copies)
            texts["Workspaces"] = "\n".join(f"{name}: {workspace_state_text(state, note)}"
                                            for name, state, note in d.workspaces)
        v["Copies"].setToolTip(self._copies_tooltip(d.copies) if d is not None else "")
        for name in self.OPTIONAL:
            v[name].setText(texts[name])
            self.form.setRowVisible(v[name], bool(texts[name]))

    def _copies_text(self, copies: tuple[str, ...]) -> str:
        if not copies:
            return ""
        lines = [copies_summary(copies)] + [elide_middle(p, 60) for p in copies[:self.COPIES_LISTED]]
        if len(copies) > self.COPIES_LISTED:
            lines.append(f"… and {len(copies) - self.COPIES_LISTED:,} more")
        return "\n".join(lines)

    def _copies_tooltip(self, copies: tuple[str, ...]) -> str:
        more = len(copies) - self.TOOLTIP_PATHS
        return "\n".join(copies[:self.TOOLTIP_PATHS]) + (f"\n… and {more:,} more" if more > 0 else "")

    def _container_link(self, href: str) -> None:
        if href.startswith("file:"):
            self.container_requested.emit(int(href[5:]))
