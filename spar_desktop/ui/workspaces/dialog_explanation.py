"""The workspace dialog's (dialog.py) editors and an Explanation, a mixin of WorkspaceDialog: what it
shows (the tags matched per keyword as checkable groups, left-out groups unchecked, unmatched
keywords; the constraint editors; the counts: funnel, size, Show more / fewer, notes) and the
filter read back from the edited editors (``current_filter``)."""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Optional

from PySide6.QtCore import QDate, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTreeWidgetItem

from spar_desktop.ui.workspaces import ops
from spar_desktop.ui.workspaces.filter_widgets import HOW_TEXT, tag_label

GROUP_ROLE = Qt.ItemDataRole.UserRole + 1
TAG_ROLE = Qt.ItemDataRole.UserRole + 2
DROPPED_ROLE = Qt.ItemDataRole.UserRole + 3  # a group relaxation left out; checking it requires it again
MUTED = QColor("#8a909b")
# The core's notes name the CLI's words; here they must name what is on screen.
GUI_WORDS = (("choose 'match every group'", "check “Every keyword must match”"),)


def gui_words(note: str) -> str:
    for cli, gui in GUI_WORDS:
        note = note.replace(cli, gui)
    return note


class FilterExplanationView:
    """Fills the dialog's editors and counts and reads them back; the dialog provides the widgets
    (``_build``), ``base``, ``_filling``, ``_recount`` and ``_update_buttons``."""

    def _show_explanation(self, explanation) -> None:
        """A fresh preview: fill every editor from it."""
        flt = explanation.filter
        self._previewing = None
        self.base = flt
        self._filling = True
        if flt.request and not self.request_edit.text().strip():  # a loaded filter; never overwrite typing
            self.request_edit.setText(flt.request)
        self.tree.clear()
        for g in flt.groups:
            self._add_group(g)
        for g in flt.dropped:
            self._add_group(g, dropped=True)
        for kw in flt.unmatched:
            item = QTreeWidgetItem([f"“{kw}” — no matching tag", "", ""])
            item.setToolTip(0, "Not used to choose files; search and chat still use these words")
            item.setForeground(0, MUTED)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(item)
            item.setFirstColumnSpanned(True)
        for check, edit, value in ((self.since_check, self.since_edit, flt.since), (self.until_check, self.until_edit, flt.until)):
            check.setChecked(value is not None)
            if value is not None:
                edit.setDate(QDate(value.year, value.month, value.day))
        self.types_edit.setText(", ".join(flt.formats))
        self.authors_edit.setText(", ".join(flt.authors))
        self.match_all_check.setChecked(not flt.ranked and flt.tolerance == 0)
        self.suggested_check.setChecked(flt.include_unconfirmed)
        self._filling = False
        self.tree.expandAll()
        self.status_label.setStyleSheet("")
        self.status_label.setText("Uncheck tags that do not fit, add tags or change the constraints; the counts follow.")
        self._show_counts(explanation)

    def _add_group(self, group, dropped: bool = False) -> QTreeWidgetItem:
        n = len(group.tags)
        text = f"“{group.label}”  ·  {'any of ' if n > 1 else ''}{n} tag{'s' if n != 1 else ''}"
        if dropped:
            text += "  ·  left out: with it no file matched"
        elif group.required:
            text += "  ·  always required"
        top = QTreeWidgetItem([text, "", ""])
        top.setData(0, GROUP_ROLE, group)
        top.setData(0, DROPPED_ROLE, dropped)
        top.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsAutoTristate)
        font = top.font(0)
        font.setBold(True)
        top.setFont(0, font)
        if dropped:
            top.setForeground(0, MUTED)
            top.setToolTip(0, "No file has a tag of every keyword, so this least certain keyword was left out. "
                              "Check it to require it again; the counts show what that leaves.")
        self.tree.addTopLevelItem(top)
        top.setFirstColumnSpanned(True)
        for t in group.tags:
            child = QTreeWidgetItem([tag_label(t), f"{t.score:.2f}", HOW_TEXT.get(t.how, t.how)])
            child.setData(0, TAG_ROLE, t)
            child.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            child.setCheckState(0, Qt.CheckState.Unchecked if dropped else Qt.CheckState.Checked)
            child.setToolTip(0, t.key)
            top.addChild(child)
        for t in group.pruned:
            child = QTreeWidgetItem([f"{t.value} — covered by a broader tag above", f"{t.score:.2f}", HOW_TEXT.get(t.how, t.how)])
            child.setFlags(Qt.ItemFlag.NoItemFlags)
            top.addChild(child)
        top.setExpanded(True)
        return top

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if not self._filling and column == 0:
            self._recount.start()

    def group_item(self, label: str) -> Optional[QTreeWidgetItem]:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            g = item.data(0, GROUP_ROLE)
            if g is not None and g.label == label:
                return item
        return None

    def tag_item(self, tag_id: int) -> Optional[QTreeWidgetItem]:
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                t = top.child(j).data(0, TAG_ROLE)
                if t is not None and t.tag_id == tag_id:
                    return top.child(j)
        return None

    def set_tag_checked(self, tag_id: int, checked: bool) -> bool:
        item = self.tag_item(tag_id)
        if item is not None:
            item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        return item is not None

    def _show_counts(self, explanation) -> None:
        self.explanation = explanation
        self.funnel.set_explanation(explanation)
        n = explanation.admitted
        if explanation.emptied_by:
            self.admitted_label.setText(f"No file matches: “{explanation.emptied_by}” removed the last ones. "
                                        "Uncheck that group or relax the constraint.")
            self.admitted_label.setStyleSheet("color: #b3261e;")
        else:
            self.admitted_label.setText(f"{n:,} file{'s' if n != 1 else ''} will be in the workspace")
            self.admitted_label.setStyleSheet("")
        self._show_size(explanation)
        flt = explanation.filter
        lines = [f"<span style='color:#545b68'>Note: {html.escape(gui_words(t))}</span>" for t in flt.notes]
        lines += [f"<span style='color:#b3261e'>Problem: {html.escape(t)}</span>" for t in flt.problems]
        if explanation.suggested_only:
            names = [p.replace("\\", "/").rpartition("/")[2] for p in explanation.suggested_only]
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            lines.append(f"<span style='color:#8a5a00'>{len(names)} only through unconfirmed tag suggestions: "
                         f"{html.escape(', '.join(names[:5]))}{more}</span>")
        self.notes_label.setToolTip("\n".join(explanation.suggested_only[:50]))
        self.notes_label.setText("<br>".join(lines))
        self.notes_label.setVisible(bool(lines))
        self.sources_view.show_filter(flt)
        self._update_buttons()
        self.explained.emit(explanation)

    def _show_size(self, explanation) -> None:
        """“420 files, 8% of the index”, and (ranked) Show more / Show fewer."""
        n, ranking = explanation.admitted, explanation.ranking
        scoped = explanation.filter.scoped and explanation.indexed > 0
        self.size_label.setText(f"{n:,} file{'s' if n != 1 else ''}, {explanation.share:.0%} of the index"
                                if scoped else "")
        self.more_button.setVisible(ranking is not None)
        self.fewer_button.setVisible(ranking is not None)
        if ranking is not None:
            self.more_button.setEnabled(ranking.candidates > len(ranking.admitted))
            self.fewer_button.setEnabled(len(ranking.admitted) > 1)
            self.more_button.setToolTip(f"Admit up to {max(len(ranking.admitted), ranking.budget) * 2:,} of the "
                                        f"{ranking.candidates:,} files with some evidence")

    def current_filter(self):
        """The filter as edited: checked tags per group, then the constraint editors."""
        from spar_desktop.core.workspaces.selection import WorkspaceFilter

        base = self.base or WorkspaceFilter(request=self.request_edit.text().strip())
        groups, dropped = [], []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            g = top.data(0, GROUP_ROLE)
            if g is None:
                continue
            tags = tuple(top.child(j).data(0, TAG_ROLE) for j in range(top.childCount())
                         if top.child(j).data(0, TAG_ROLE) is not None
                         and top.child(j).checkState(0) == Qt.CheckState.Checked)
            if tags:
                # Keeps pruned and required; a left-out group the user checked again is required.
                groups.append(replace(g, tags=tags, required=g.required or bool(top.data(0, DROPPED_ROLE))))
            elif top.data(0, DROPPED_ROLE):
                dropped.append(g)  # still left out: stays listed (and saved) so it can be added later
        since = self.since_edit.date().toPython() if self.since_check.isChecked() else None
        until = self.until_edit.date().toPython() if self.until_check.isChecked() else None
        authors = tuple(dict.fromkeys(a.strip() for a in self.authors_edit.text().split(",") if a.strip()))
        # "Every keyword must match" turns a ranked filter into an all-or-nothing one; off again, it
        # ranks (or, for a filter saved before ranking, tolerates one missing keyword).
        every = self.match_all_check.isChecked()
        ranked = base.ranked and not every
        tolerance = 0 if every or ranked else max(1, base.tolerance)
        return replace(base, groups=tuple(groups), dropped=tuple(dropped), since=since, until=until,
                       formats=ops.parse_types(self.types_edit.text()), authors=authors, tolerance=tolerance,
                       ranked=ranked, include_unconfirmed=self.suggested_check.isChecked())
