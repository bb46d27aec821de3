"""Settings dialog: edits a Settings value, validates it live (Settings.validate) and saves
settings.json in the data dir. The window applies the Ollama host and model and the reading
limits at once (MainWindow.apply_settings); storage, device and chunking changes apply on the
next start."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.config import (
    RUNTIME_LABELS,
    STORED_FIELDS,
    WORKSPACE_UPDATE_MODES,
    Settings,
    SettingsError,
    runtime_note,
)
from spar_desktop.core.library.database import Library

# Settings the running app cannot switch (open database, vector store, loaded encoder, built chunks).
RESTART_SETTINGS = (("database", "database_url"), ("Chroma server", "chroma_url"),
                    ("embedding device", "embedding_device"), ("embedding encoder", "embed_runtime"),
                    ("chunk size", "chunk_child_tokens"),
                    ("parent chunk size", "chunk_parent_tokens"), ("overlap", "chunk_overlap_tokens"))
# Every other preference applies as soon as it is saved: whoever holds the settings reads them
# when it acts (the window's, the library's that scans and builds read, chat's client).
LIVE_FIELDS = tuple(sorted(STORED_FIELDS - {f for _label, f in RESTART_SETTINGS}))
# Settings ▸ Reading files: the per-file budget and OCR, read by every scan and build (and the
# viewer). Ranges are Settings.validate's bounds.
READING_FIELDS = ("ocr_enabled", "extract_max_text_mb", "extract_max_seconds", "archive_max_inflated_mb",
                  "auto_tagging")
TEXT_MB_RANGE, SECONDS_RANGE, ARCHIVE_MB_RANGE = (1, 10_000), (1, 86_400), (1, 100_000)
# Settings ▸ Workspaces: "Keep workspaces up to date" labels, in WORKSPACE_UPDATE_MODES order.
UPDATE_MODE_LABELS = {"auto": "Automatically", "ask": "Ask", "never": "Never"}
IDLE_DAYS_RANGE = (0, 3650)  # 0: never archive


def reading_changed(old: Settings, new: Settings) -> bool:
    return any(getattr(old, f) != getattr(new, f) for f in READING_FIELDS)


def restart_changes(old: Settings, new: Settings) -> list[str]:
    """Labels of the saved changes that wait for a restart."""
    return [label for label, f in RESTART_SETTINGS if getattr(old, f) != getattr(new, f)]


def apply_live_settings(library: Library, saved: Settings) -> None:
    """Give the open library every preference that applies without a restart (the next scan,
    build, tag suggestion or LLM call reads them from library.settings); storage, device and
    chunking keep their running values until a restart."""
    if library.settings is not None:
        library.settings = replace(library.settings, **{f: getattr(saved, f) for f in LIVE_FIELDS})


def _bounded_spin(value: int, bounds: tuple[int, int], tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(*bounds)
    spin.setValue(min(max(value, bounds[0]), bounds[1]))
    spin.setGroupSeparatorShown(True)
    spin.setMinimumWidth(140)
    spin.setToolTip(tip)
    return spin


class SettingsDialog(QDialog):
    def __init__(self, settings: Settings, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self.original = settings
        self.result_settings: Optional[Settings] = None
        groups = (self._storage_group(settings), self._models_group(settings), self._chunking_group(settings),
                  self._reading_group(settings), self._workspaces_group(settings))
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        layout.addWidget(self._scrolled(groups), 1)
        layout.addLayout(self._note_row())
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self._connect_revalidation()
        self._revalidate()

    def _storage_group(self, settings: Settings) -> QGroupBox:
        """Data folder, database URL, Chroma server URL (after a restart)."""
        self.data_dir = QLineEdit(str(settings.data_dir))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        data_row = QHBoxLayout()
        data_row.addWidget(self.data_dir, 1)
        data_row.addWidget(browse)
        self.database_url = QLineEdit(settings.database_url or "")
        self.database_url.setPlaceholderText("SQLite file in the data folder (default)")
        self.chroma_url = QLineEdit(settings.chroma_url or "")
        # Say what is true: the app runs Chroma in a helper process it starts (load_settings(app=True)).
        self.chroma_url.setPlaceholderText(
            "Local, in a helper process the app runs (default)" if settings.chroma_process
            else "Local, inside the app (default)")
        self.chroma_url.setToolTip("Empty: the vectors are stored in the data folder by a Chroma the app runs "
                                   "itself. Enter http://host:port to use a shared Chroma server instead.")
        storage = QGroupBox("Storage")
        form = QFormLayout(storage)
        form.addRow("Data folder", data_row)
        form.addRow("Database URL", self.database_url)
        form.addRow("Chroma server URL", self.chroma_url)
        return storage

    def _models_group(self, settings: Settings) -> QGroupBox:
        """Ollama host and model (at once), embedding device (after a restart)."""
        self.ollama_host = QLineEdit(settings.ollama_host)
        self.ollama_model = QComboBox()
        self.ollama_model.setEditable(True)
        self.ollama_model.addItems(sorted({settings.ollama_model, "llama3.2", "llama3.1:8b", "qwen2.5:7b", "mistral"}))
        self.ollama_model.setCurrentText(settings.ollama_model)
        self.rerank_results = QCheckBox("Let the model rerank the results of unsure searches")
        self.rerank_results.setChecked(settings.rerank_results)
        self.rerank_results.setToolTip("When the two retrievers disagree about the top result, the model reorders "
                                       "the top 10 in the background; the results show first and are replaced "
                                       "when it answers (costs the model's generation time).")
        self.request_llm = QCheckBox("Let the model read workspace requests too (beside the rules)")
        self.request_llm.setChecked(settings.request_llm)
        self.request_llm.setToolTip(f"The model's reading of a request is merged with the rules' (their hard "
                                    f"constraints win); each constraint shows where it came from. Waits at most "
                                    f"{settings.request_llm_timeout_s:g} s, then the rules alone read it.")
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.device.setEditable(False)
        self.device.setCurrentText(settings.embedding_device)
        self.runtime = QComboBox()
        for runtime in ("onnx-int8", "onnx") + (("torch",) if settings.embed_runtime == "torch" else ()):
            self.runtime.addItem(RUNTIME_LABELS[runtime], runtime)
        self.runtime.setCurrentIndex(max(0, self.runtime.findData(settings.embed_runtime or "onnx")))
        self.runtime.setToolTip(f"Now: {runtime_note(settings)}. int8 embeds faster than fp32 at the same "
                                "search quality; switching re-embeds each workspace at its next build.")
        models = QGroupBox("Models")
        form = QFormLayout(models)
        form.addRow("Ollama host", self.ollama_host)
        form.addRow("Ollama model", self.ollama_model)
        form.addRow(self.rerank_results)
        form.addRow(self.request_llm)
        form.addRow("Embedding device", self.device)
        form.addRow("Embedding encoder", self.runtime)
        self.runtime_note = QLabel(f"Now: {runtime_note(settings)}.")
        self.runtime_note.setWordWrap(True)
        form.addRow("", self.runtime_note)
        return models

    def _chunking_group(self, settings: Settings) -> QGroupBox:
        """Child and parent chunk sizes and their overlap, in tokens (after a restart)."""
        # Wide ranges on purpose: out-of-range values get Settings.validate's explanation
        # instead of a spin box silently clamping them.
        self.child_tokens = self._spin(settings.chunk_child_tokens)
        self.parent_tokens = self._spin(settings.chunk_parent_tokens)
        self.overlap_tokens = self._spin(settings.chunk_overlap_tokens, minimum=0)
        chunking = QGroupBox("Chunking")
        form = QFormLayout(chunking)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Child chunk size", self.child_tokens)
        form.addRow("Parent chunk size", self.parent_tokens)
        form.addRow("Overlap", self.overlap_tokens)
        return chunking

    def _note_row(self) -> QHBoxLayout:
        """What applies at once and what after a restart."""
        icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation)
        note_icon = QLabel()
        note_icon.setPixmap(icon.pixmap(16, 16))
        note = QLabel("The Ollama host and model, the reading limits and the workspace options apply as soon as "
                      "you save. Storage, "
                      "device and chunking "
                      "changes take effect the next time SPAR Desktop starts.")
        note.setObjectName("muted")
        note.setWordWrap(True)
        note_row = QHBoxLayout()
        note_row.addWidget(note_icon, 0, Qt.AlignmentFlag.AlignTop)
        note_row.addWidget(note, 1)
        return note_row

    def _connect_revalidation(self) -> None:
        """Every edit re-checks the settings (Settings.validate), so Save is offered only when valid."""
        for w in (self.data_dir, self.database_url, self.chroma_url, self.ollama_host):
            w.textChanged.connect(self._revalidate)
        self.ollama_model.currentTextChanged.connect(self._revalidate)
        self.device.currentTextChanged.connect(self._revalidate)
        self.workspace_updates.currentIndexChanged.connect(self._revalidate)
        for s in (self.child_tokens, self.parent_tokens, self.overlap_tokens, self.max_text_mb, self.max_seconds,
                  self.max_archive_mb, self.idle_days):
            s.valueChanged.connect(self._revalidate)

    def _scrolled(self, groups: tuple[QWidget, ...]) -> QScrollArea:
        """The groups in a scroll area: on a short screen the dialog scrolls instead of squashing them."""
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(10)
        for group in groups:
            column.addWidget(group)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(content)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._content = content
        return scroll

    def showEvent(self, event) -> None:
        """Open tall enough for every group (the scroll area alone asks for much less), but never
        taller than the screen."""
        if not self.property("sized"):
            self.setProperty("sized", True)
            width = max(self.width(), self.minimumWidth())
            content = self._content
            scroll = content.parentWidget().parentWidget()  # the viewport's scroll area
            inner = width - self.layout().contentsMargins().left() - self.layout().contentsMargins().right()
            needed = content.heightForWidth(inner) if content.hasHeightForWidth() else -1
            wanted = self.sizeHint().height() - scroll.sizeHint().height() + max(needed, content.sizeHint().height())
            screen = self.screen().availableGeometry().height() if self.screen() is not None else wanted
            self.resize(width, min(wanted, int(screen * 0.92)))
        super().showEvent(event)

    def _reading_group(self, settings: Settings) -> QGroupBox:
        self.ocr_enabled = QCheckBox("Read scanned pages and images with OCR")
        self.ocr_enabled.setChecked(settings.ocr_enabled)
        self.ocr_enabled.setToolTip("When a workspace is built, pages without a text layer and images are "
                                    "read by optical character recognition (slower; the result is cached).")
        self.auto_tagging = QCheckBox("Suggest tags after a scan finds new files")
        self.auto_tagging.setChecked(settings.auto_tagging)
        self.auto_tagging.setToolTip("In the background, summarise new and changed files and suggest tags for "
                                     "them to review (Tags ▸ Review tag suggestions). Nothing is tagged "
                                     "until you accept it.")
        self.max_text_mb = _bounded_spin(settings.extract_max_text_mb, TEXT_MB_RANGE,
                                         "Characters of text kept per document; the rest of a larger one is "
                                         "left out, with a note.")
        self.max_seconds = _bounded_spin(settings.extract_max_seconds, SECONDS_RANGE,
                                         "A file that takes longer to read is skipped with a note.")
        self.max_archive_mb = _bounded_spin(settings.archive_max_inflated_mb, ARCHIVE_MB_RANGE,
                                            "A member of an archive or a mail attachment larger than this when "
                                            "unpacked is not read (protects against zip bombs).")
        group = QGroupBox("Reading files")
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow(self.ocr_enabled)
        form.addRow(self.auto_tagging)
        form.addRow("Text kept per file (million characters)", self.max_text_mb)
        form.addRow("Time limit per file (seconds)", self.max_seconds)
        form.addRow("Largest archive member (MB)", self.max_archive_mb)
        return group

    def _workspaces_group(self, settings: Settings) -> QGroupBox:
        self.workspace_updates = QComboBox()
        for mode in WORKSPACE_UPDATE_MODES:
            self.workspace_updates.addItem(UPDATE_MODE_LABELS.get(mode, mode), mode)
        index = self.workspace_updates.findData(settings.workspace_updates)
        self.workspace_updates.setCurrentIndex(max(0, index))
        self.workspace_updates.setToolTip(
            "When files change under a built workspace: update it in the background (search and chat keep "
            "answering from the previous build meanwhile), offer an Update button, or only say it is out of date.")
        self.idle_days = _bounded_spin(settings.workspace_idle_archive_days, IDLE_DAYS_RANGE,
                                       "A workspace not searched or built for this many days is archived when the "
                                       "app starts (its vectors are dropped; Reactivate rebuilds it). 0: never.")
        self.idle_days.setSpecialValueText("Never")
        group = QGroupBox("Workspaces")
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Keep workspaces up to date:", self.workspace_updates)
        form.addRow("Archive workspaces unused for (days):", self.idle_days)
        return group

    @staticmethod
    def _spin(value: int, minimum: int = 1) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(minimum, 100_000)
        spin.setValue(value)
        spin.setSuffix(" tokens")
        spin.setMinimumWidth(140)
        return spin

    def _browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Data folder", self.data_dir.text())
        if chosen:
            self.data_dir.setText(chosen)

    def edited_settings(self) -> Settings:
        """The settings as edited (not validated)."""
        return replace(
            self.original,
            data_dir=Path(self.data_dir.text().strip() or str(self.original.data_dir)).expanduser(),
            database_url=self.database_url.text().strip() or None,
            chroma_url=self.chroma_url.text().strip() or None,
            ollama_host=self.ollama_host.text().strip(),
            ollama_model=self.ollama_model.currentText().strip() or self.original.ollama_model,
            embedding_device=self.device.currentText(),
            embed_runtime=self.runtime.currentData() or self.original.embed_runtime,
            chunk_child_tokens=self.child_tokens.value(),
            chunk_parent_tokens=self.parent_tokens.value(),
            chunk_overlap_tokens=self.overlap_tokens.value(),
            ocr_enabled=self.ocr_enabled.isChecked(),
            auto_tagging=self.auto_tagging.isChecked(),
            rerank_results=self.rerank_results.isChecked(),
            request_llm=self.request_llm.isChecked(),
            extract_max_text_mb=self.max_text_mb.value(),
            extract_max_seconds=self.max_seconds.value(),
            archive_max_inflated_mb=self.max_archive_mb.value(),
            workspace_updates=self.workspace_updates.currentData() or self.original.workspace_updates,
            workspace_idle_archive_days=self.idle_days.value(),
        )

    def validation_error(self) -> Optional[str]:
        try:
            self.edited_settings().validate()
        except SettingsError as exc:
            return str(exc)
        if not self.ollama_host.text().strip():
            return "Ollama host must not be empty"
        return None

    def _revalidate(self, *_args) -> None:
        message = self.validation_error()
        self.error.setText(message or "")
        self.error.setVisible(message is not None)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(message is None)

    def accept(self) -> None:
        message = self.validation_error()
        if message is not None:
            self._revalidate()
            return
        settings = self.edited_settings().validate()
        try:
            settings.save()
        except OSError as exc:
            self.error.setText(f"Cannot save settings in {settings.data_dir}: {exc.strerror or exc}")
            self.error.setVisible(True)
            return
        self.result_settings = settings
        super().accept()
