"""The main window's menus and toolbar: its actions (File, Document, Tags, View, Help) and the
feature groups' own (Workspace, Chat, Relations), in the order the user sees them. Kept out of
main_window.py so each stays small."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QKeySequence
from PySide6.QtWidgets import QStyle

from spar_desktop.ui.library.first_run import sample_corpus_dir


def build_actions(window) -> None:
    """Create the window's actions (as attributes of ``window``), its menu bar and toolbar."""
    sp = QStyle.StandardPixmap
    window.add_folder_action = window._action("Add folder…", window.choose_folder, sp.SP_DirIcon,
                                              QKeySequence.StandardKey.Open, "Index a folder (or drop folders onto the window)")
    window.rescan_action = window._action("Rescan", window.controller.rescan_all, sp.SP_BrowserReload, "F5",
                                          "Re-scan every indexed folder for changes")
    window.open_action = window._action("Open", window.open_current, sp.SP_DialogOpenButton, "Ctrl+Return",
                                        "Open the file in its application")
    window.reveal_action = window._action("Show in folder", window.reveal_current, sp.SP_DirOpenIcon, None,
                                          "Show the file in the file manager")
    window.view_action = window._action("View", window.view_current, sp.SP_FileDialogContentsView, "Space",
                                        "Show the document in the viewer")
    window.settings_action = window._action("Settings…", window.open_settings, sp.SP_FileDialogDetailedView,
                                            QKeySequence.StandardKey.Preferences)
    if not QKeySequence.keyBindings(QKeySequence.StandardKey.Preferences):  # none on Linux/Windows
        window.settings_action.setShortcut(QKeySequence("Ctrl+,"))
    window.find_tag_action = window._action("Filter tags", window.focus_tag_filter, None, "Ctrl+F",
                                            "Type to find a tag in the tree")
    window.search_action = window._action("Search the workspace", window.focus_workspace_search, None, "Ctrl+K",
                                          "Search the passages of the selected workspace")
    window.import_tax_action = window._action("Import taxonomy…", window.choose_taxonomy)
    window.import_assign_action = window._action("Import tag assignments (CSV)…", window.choose_assignments)
    window.suggest_tags_action = window._action("Suggest tags", lambda: window.tag_panel.suggest_requested.emit(), None,
                                                None, "Suggest tags for new and changed files (in the background)")
    window.review_tags_action = window._action("Review tag suggestions…",
                                               lambda: window.tag_panel.review_requested.emit(None))
    window.topics_action = window._action("Propose topics…", window.open_topics, None, None,
                                          "Group the files into topics and sub-topics to accept as tags")
    window.sample_action = window._action("Load sample corpus", window.controller.import_sample)
    window.sample_action.setEnabled(sample_corpus_dir() is not None)
    quit_action = window._action("Quit", window.close, None, QKeySequence.StandardKey.Quit)
    window.views.build_actions()
    for act in (window.open_action, window.reveal_action, window.view_action):
        act.setEnabled(False)
    _build_menus(window, quit_action)
    _build_toolbar(window)


def _build_menus(window, quit_action) -> None:
    file_menu = window.menuBar().addMenu("&File")
    for act in (window.add_folder_action, window.rescan_action, None, window.import_tax_action,
                window.import_assign_action, window.sample_action, None, window.settings_action, None, quit_action):
        file_menu.addSeparator() if act is None else file_menu.addAction(act)
    doc_menu = window.menuBar().addMenu("&Document")
    for act in (window.view_action, window.open_action, window.reveal_action):
        doc_menu.addAction(act)
    workspace_menu = window.features.build_menu()
    workspace_menu.addAction(window.chat_features.build_action())
    tags_menu = window.menuBar().addMenu("&Tags")
    for act in (window.find_tag_action, None, window.import_tax_action, window.import_assign_action, None,
                window.suggest_tags_action, window.review_tags_action, window.topics_action):
        tags_menu.addSeparator() if act is None else tags_menu.addAction(act)
    window.tags_menu = tags_menu  # the tag panel's suggestion actions join it
    view_menu = window.menuBar().addMenu("&View")
    for act in (window.views.library_action, window.views.workspace_action, window.overview_action,
                window.views.back_action):
        view_menu.addAction(act)
    view_menu.addSeparator()
    view_menu.addAction(window.relations.build_action())
    view_menu.addSeparator()
    view_menu.addAction(window.find_tag_action)
    view_menu.addAction(window.search_action)
    view_menu.addSeparator()
    for dock in (window.tags_dock, window.details_dock, window.workspace_dock, window.issues_dock):
        view_menu.addAction(dock.toggleViewAction())
    help_menu = window.menuBar().addMenu("&Help")
    window.shortcuts_action = window._action("Keyboard shortcuts", window.show_shortcuts, None, "Ctrl+/",
                                             "Every key the window answers to")
    help_menu.addAction(window.shortcuts_action)
    help_menu.addAction(window._action("Open log folder", lambda: QDesktopServices.openUrl(
        QUrl.fromLocalFile(str(window.settings.layout.logs)))))
    help_menu.addAction(window._action("About SPAR Desktop", window.about))


def _build_toolbar(window) -> None:
    bar = window.addToolBar("Main")
    bar.setObjectName("mainToolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for act in (window.add_folder_action, window.rescan_action, None, window.view_action, window.open_action,
                window.reveal_action, None, window.features.new_action, window.chat_features.chat_action, None,
                window.settings_action):
        bar.addSeparator() if act is None else bar.addAction(act)
