"""Background ops for the document viewer: the core's page view (core/documents/page_view.py: a PDF
page rendered to RGB bytes with a passage's rectangles, a file's text with the passage's spans)
and child-document copies (core/documents/member_copy.py). The viewer's TaskRunner calls them with
(progress, cancel) last; the logic lives in the core, Qt-free and testable without a window."""

from __future__ import annotations

from spar_desktop.core.documents.member_copy import (
    MemberCopy,
    copy_member,
    new_scratch_root,
    remove_member_copy,
    remove_scratch_root,
)
from spar_desktop.core.documents.page_view import RenderedPage, TextDocument, load_text, render_pdf_page

__all__ = ["MemberCopy", "RenderedPage", "TextDocument", "copy_member", "load_text", "new_scratch_root",
           "remove_member_copy", "remove_scratch_root", "render_pdf_page"]
