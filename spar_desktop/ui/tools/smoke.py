"""``spar-desktop --smoke OUTDIR``: a scripted run through the main flows with screenshots.

Steps are coroutines on the qasync loop, run in order; each may save a screenshot. A step
fails by raising; the run stops at the first failure (later steps build on earlier ones) and
exits non-zero. ``smoke-report.json`` in OUTDIR lists every step with its time and error.

To extend: write ``async def my_step(ctx: SmokeContext)`` and
``register(SmokeStep("my-step", my_step, "12-my-step.png"), after="chat")``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Awaitable, Callable, Optional

import numpy as np
from PySide6.QtWidgets import QWidget

from spar_desktop.core.library.overview import readable_files
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.ui.base.tasks import TaskHandle, TaskState

log = logging.getLogger(__name__)


class SmokeFailure(AssertionError):
    pass


@dataclass
class SmokeContext:
    window: "object"  # MainWindow (not imported: keeps this module cheap to import)
    outdir: Path
    data: dict = field(default_factory=dict)  # values steps hand to later steps
    screenshots: list[str] = field(default_factory=list)

    async def wait_until(self, predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise SmokeFailure(f"timed out after {timeout:.0f}s waiting for {what}")
            await asyncio.sleep(0.05)

    async def wait_task(self, handle: Optional[TaskHandle], what: str, timeout: float = 180.0) -> None:
        if handle is None:
            raise SmokeFailure(f"{what}: no task was started")
        await self.wait_until(lambda: handle.done, what, timeout)
        if handle.state is not TaskState.SUCCEEDED:
            raise SmokeFailure(f"{what}: {handle.state.value} {handle.error.message if handle.error else ''}")

    async def settle(self) -> None:
        """Wait for every task to finish, then give paint events a moment."""
        await self.wait_until(self.window.runner.is_idle, "background tasks to finish", 120)
        await asyncio.sleep(0.3)

    def shot(self, name: str, widget: Optional[QWidget] = None) -> None:
        self.outdir.mkdir(parents=True, exist_ok=True)
        target = self.outdir / name
        if not (widget or self.window).grab().save(str(target)):
            raise SmokeFailure(f"could not write {target}")
        self.screenshots.append(name)


@dataclass(frozen=True)
class SmokeStep:
    name: str
    run: Callable[[SmokeContext], Awaitable[None]]
    screenshot: Optional[str] = None
    timeout: float = 240.0


# ---------------------------------------------------------------------------- worker ops
def find_multipage_pdf(library, progress: ProgressCallback, cancel: CancelToken) -> Optional[tuple[int, str, str]]:
    """(file id, path, a phrase from page 2) of an indexed PDF with at least two pages."""
    import pymupdf

    from spar_desktop.core.pdf_lock import PYMUPDF_LOCK as PDF_LOCK

    for file_id, path in readable_files(library, "pdf", min_pages=2):
        with PDF_LOCK, pymupdf.open(path) as doc:
            words = doc[1].get_text("words")
        lines: dict[tuple[int, int], list[str]] = {}
        for w in words:  # (x0, y0, x1, y1, word, block, line, word_no)
            lines.setdefault((w[5], w[6]), []).append(w[4])
        # Words of one body line: a phrase across a line break may not be found verbatim.
        for line in list(lines.values())[2:]:
            phrase = " ".join(line[:6])
            if len(line) >= 4 and len(phrase) >= 16:
                return file_id, path, phrase
    return None


def find_text_file(library, progress: ProgressCallback, cancel: CancelToken) -> Optional[tuple[int, str]]:
    rows = readable_files(library, "md", limit=1)
    return rows[0] if rows else None


# ---------------------------------------------------------------------------- steps
async def step_start(ctx: SmokeContext) -> None:
    w = ctx.window
    await ctx.wait_until(lambda: w.controller.summary is not None, "the library summary")
    await ctx.settle()
    ctx.data["fresh"] = w.controller.summary.files == 0
    if ctx.data["fresh"] and not w.file_panel.library_empty:
        raise SmokeFailure("an empty library should show the drop-a-folder empty state")


async def step_index_sample(ctx: SmokeContext) -> None:
    w = ctx.window
    from spar_desktop.ui.library.first_run import sample_corpus_dir

    if not ctx.data.get("fresh"):
        log.info("library not empty: skipping the sample import")
    elif sample_corpus_dir() is None:
        raise SmokeFailure("the sample corpus is missing: build resources/sample_corpus "
                           "(python resources/make_sample_corpus.py) or point SPAR_RESOURCES at a resources folder")
    else:
        await ctx.wait_task(w.controller.import_sample(), "importing the sample corpus")
    await ctx.settle()
    if w.file_panel.library_empty or w.file_panel.model.rowCount() == 0:
        raise SmokeFailure("the file table is empty after indexing")
    if w.tag_panel.model.rowCount() == 0:
        raise SmokeFailure("the tag tree is empty after indexing")
    ctx.data["all_files"] = w.file_panel.model.total
    w.file_panel.select_file(w.file_panel.model.record(0).id)
    await ctx.settle()


async def step_filter_by_tag(ctx: SmokeContext) -> None:
    w = ctx.window
    infos = w.tag_panel.model.infos
    total = ctx.data["all_files"]
    # Prefer a taxonomy tag that narrows the table (the sample has "Project Falcon").
    candidates = sorted((i for i in infos.values() if 0 < i.file_count < total),
                        key=lambda i: (i.source != "taxonomy", i.value != "Project Falcon", -i.file_count))
    if not candidates:
        raise SmokeFailure("no tag narrows the file table")
    tag = candidates[0]
    if not w.tag_panel.select_tag(tag.id):
        raise SmokeFailure(f"could not select tag {tag.value}")
    await ctx.wait_until(lambda: w.file_panel.model.total == tag.file_count and w.runner.is_idle(),
                         f"the table to show the {tag.file_count} files tagged {tag.value}")
    ctx.data["tag"] = tag.value
    if w.file_panel.model.rowCount():
        w.file_panel.select_file(w.file_panel.model.record(0).id)
    await ctx.settle()


async def step_open_pdf(ctx: SmokeContext) -> None:
    w = ctx.window
    found = await w.runner.run_async(partial(find_multipage_pdf, w.library), title="Finding a PDF", visible=False)
    if found is None:
        raise SmokeFailure("the index has no PDF with two or more pages")
    file_id, path, phrase = found
    w.tag_panel.clear_selection()  # show the whole library so the PDF can be selected
    await ctx.wait_until(lambda: w.file_panel.model.total == ctx.data["all_files"] and w.runner.is_idle(),
                         "the unfiltered table")
    w.file_panel.select_file(file_id)
    w.open_document(path, page=2, highlight=phrase)
    await ctx.wait_until(lambda: w.viewer.rendered is not None and w.viewer.rendered.path == path
                         and w.viewer.current_page == 2, "page 2 of the PDF to render")
    if w.viewer.highlight_count == 0:
        raise SmokeFailure(f"the passage {phrase!r} was not highlighted on page 2")
    await ctx.settle()


async def step_text_viewer(ctx: SmokeContext) -> None:
    w = ctx.window
    found = await w.runner.run_async(partial(find_text_file, w.library), title="Finding a text file", visible=False)
    if found is None:
        raise SmokeFailure("no Markdown file in the index")
    file_id, path = found
    w.file_panel.select_file(file_id)
    w.open_document(path, highlight=ctx.data.get("tag", "the"))
    await ctx.wait_until(lambda: w.viewer.text_doc is not None and w.viewer.text_doc.path == path,
                         "the text view to load")
    await ctx.settle()


async def step_settings(ctx: SmokeContext) -> None:
    from spar_desktop.ui.base.settings_dialog import SettingsDialog

    dialog = SettingsDialog(ctx.window.settings, ctx.window)
    dialog.show()
    await asyncio.sleep(0.3)
    ctx.shot("06-settings.png", dialog)
    dialog.reject()
    ctx.window.views.show_library()


SMOKE_REQUEST = "incident reports from 2023"
SMOKE_QUERY = "gearbox failure root cause"
SMOKE_QUESTION = "What caused the gearbox failure?"


async def step_workspace_create(ctx: SmokeContext) -> None:
    """A workspace from a plain-language request: the explained filter, then create and build."""
    w = ctx.window
    await ctx.wait_until(lambda: w.workspaces.service is not None, "the workspace service")
    w.views.show_library()
    dialog = w.features.new_workspace(SMOKE_REQUEST)
    if dialog is None:
        raise SmokeFailure("the New workspace dialog did not open")
    # The first preview loads the encoder and embeds the tag vocabulary: allow for a slow machine.
    await ctx.wait_until(lambda: dialog.explanation is not None, "the request preview", 200)
    exp = dialog.explanation
    if exp.admitted == 0 or not exp.filter.groups:
        raise SmokeFailure(f"the request admitted no files: {' / '.join(exp.lines())}")
    await ctx.settle()
    ctx.shot("07-workspace-dialog.png", dialog)
    ctx.data["workspace"] = name = dialog.workspace_name()
    ctx.data["admitted"] = exp.admitted
    dialog.create(build=True)
    await ctx.wait_until(lambda: w.workspaces.current is not None and w.workspaces.current.name == name,
                         f"workspace {name!r} to be created and selected")


async def step_workspace_build(ctx: SmokeContext) -> None:
    w = ctx.window
    name = ctx.data["workspace"]
    await ctx.wait_until(lambda: (w.workspaces.row(name) is not None and w.workspaces.row(name).status == "active"
                                  and not w.workspaces.is_building(name)), f"the build of {name!r}", 220)
    await ctx.settle()
    if w.workspaces.row(name).chunk_count == 0:
        raise SmokeFailure(f"{name!r} was built with no passages")
    # A created workspace opens at the centre: its request and funnel in one line.
    if w.tabs.currentWidget() is not w.workspace_view:
        raise SmokeFailure("the new workspace did not open in the workspace view")
    if name not in w.workspace_view.title.text() or "files" not in w.workspace_view.funnel.text():
        raise SmokeFailure(f"the workspace view's header shows {w.workspace_view.funnel.text()!r}")


async def step_workspace_search(ctx: SmokeContext) -> None:
    w = ctx.window
    panel = w.workspace_panel
    w.focus_workspace_search()  # Ctrl+K
    if not panel.search_box.isVisible() or w.tabs.currentWidget() is not w.workspace_view:
        raise SmokeFailure("Ctrl+K did not show the workspace view's search box")
    panel.search_box.setText(SMOKE_QUERY)
    await ctx.wait_task(w.workspaces.search(SMOKE_QUERY), "the workspace search")
    await ctx.settle()
    if panel.results.count() == 0:
        raise SmokeFailure(f"no results for {SMOKE_QUERY!r}")
    panel.results.setCurrentRow(0)
    await asyncio.sleep(0.2)


async def step_open_top_hit(ctx: SmokeContext) -> None:
    w = ctx.window
    hit = w.workspace_panel.hit(0)
    w.workspace_panel.hit_activated.emit(hit)
    if hit.path.lower().endswith(".pdf"):
        await ctx.wait_until(lambda: w.viewer.rendered is not None and w.viewer.rendered.path == hit.path
                             and w.viewer.current_page == hit.page_start, f"page {hit.page_start} of the top hit")
    else:
        await ctx.wait_until(lambda: w.viewer.text_doc is not None and w.viewer.text_doc.path == hit.path,
                             "the top hit's text")
    await ctx.settle()
    if w.viewer.highlight_count == 0:
        raise SmokeFailure(f"the top hit's passage was not highlighted in {hit.path}")
    ctx.shot("10-hit-in-viewer.png")
    if not w.views.back() or w.tabs.currentWidget() is not w.workspace_view:  # Esc
        raise SmokeFailure("Back (Esc) did not return from the viewer to the search results")


async def step_chat(ctx: SmokeContext) -> None:
    """Ask in chat: streamed from Ollama when it runs, otherwise a retrieval-only answer."""
    w = ctx.window
    w.chat_features.focus_chat()  # the chat sits beside the results in the workspace view
    await ctx.wait_until(lambda: w.chat.session is not None and w.chat.workspace is not None, "the chat session")
    if not w.chat_pane.ask(SMOKE_QUESTION):
        raise SmokeFailure("the question could not be sent")
    await ctx.wait_until(lambda: not w.chat.answering, "the answer", 200)
    await ctx.settle()
    bubbles = w.chat_pane.messages.bubbles
    if len(bubbles) < 2 or not bubbles[-1].raw_text or bubbles[-1].message_id is None:
        raise SmokeFailure("no answer appeared in the chat")
    if not [b for b in bubbles[-1].chip_buttons() if b.isEnabled()]:
        raise SmokeFailure("the answer has no citation to open")


async def step_open_citation(ctx: SmokeContext) -> None:
    w = ctx.window
    bubble = w.chat_pane.messages.bubbles[-1]
    chip = next(b for b in bubble.chip_buttons() if b.isEnabled())
    n = int(chip.text()[1:chip.text().index("]")])
    passage = next(p for p in bubble.passages if p.n == n)
    chip.click()
    await ctx.wait_until(lambda: w.viewer.path == passage.path and w.viewer.current_page == passage.page_start
                         and (w.viewer.rendered is not None or w.viewer.text_doc is not None), "the cited page")
    await ctx.settle()
    w.views.back()
    if w.tabs.currentWidget() is not w.workspace_view:
        raise SmokeFailure("Back did not return from the cited page to the chat")
    await asyncio.sleep(0.2)


async def step_relations(ctx: SmokeContext) -> None:
    """The Relations tab: EDR-MQ over the whole sample index (offered with an estimate, built in the
    worker pool once accepted), coloured by Louvain community; one document selected and its
    neighbours expanded."""
    w = ctx.window
    view = w.relations.view
    view.set_scope("index")
    view.set_method("edrmq")
    w.relations.show()
    # The whole index is related only when the user asks: the tab offers it with an estimate.
    await ctx.wait_until(lambda: view.offering, "the offer to relate the whole index", 60)
    view.offer_button.click()
    await ctx.wait_until(lambda: view.payload is not None and view.payload.method == "edrmq"
                         and not w.runner.is_running("relations-graph"), "the relation graph", 400)
    p = view.payload
    if p.n_nodes < 10 or p.n_edges == 0:
        raise SmokeFailure(f"the relation graph is empty ({p.n_nodes} documents, {p.n_edges} relations)")
    # a typical document (median number of relations): expanding a hub would light up most of the graph
    degree = np.bincount(p.edges.ravel(), minlength=p.n_nodes)
    node = int(np.argsort(degree, kind="stable")[p.n_nodes // 2])
    view.select_row(node)
    view.expand_selected()
    if w.file_panel.current_record() is None or w.file_panel.current_record().id != p.file_ids[node]:
        raise SmokeFailure("selecting a node did not select its file in the table")
    await ctx.settle()


STEPS: list[SmokeStep] = [
    SmokeStep("start", step_start, "01-empty-state.png"),
    SmokeStep("index-sample", step_index_sample, "02-library.png"),
    SmokeStep("filter-by-tag", step_filter_by_tag, "03-tag-filter.png"),
    SmokeStep("open-pdf-page-2", step_open_pdf, "04-pdf-viewer.png"),
    SmokeStep("text-viewer", step_text_viewer, "05-text-viewer.png"),
    SmokeStep("settings", step_settings),
    SmokeStep("workspace-create", step_workspace_create, timeout=300),
    SmokeStep("workspace-build", step_workspace_build, "08-workspace.png", timeout=300),
    SmokeStep("workspace-search", step_workspace_search, "09-search-results.png"),
    SmokeStep("open-top-hit", step_open_top_hit),
    SmokeStep("chat", step_chat, "11-chat.png", timeout=300),
    SmokeStep("open-citation", step_open_citation),
    SmokeStep("relations", step_relations, "12-relations.png", timeout=420),
]


def register(step: SmokeStep, after: Optional[str] = None) -> None:
    """Add a step (at the end, or after the named one)."""
    names = [s.name for s in STEPS]
    STEPS.insert(names.index(after) + 1 if after in names else len(STEPS), step)


async def run_smoke(window, outdir: Path, crashes: Optional[list[str]] = None,
                    steps: Optional[list[SmokeStep]] = None) -> int:
    ctx = SmokeContext(window, Path(outdir))
    ctx.outdir.mkdir(parents=True, exist_ok=True)
    results = []
    ok = True
    for step in steps or STEPS:
        start = time.monotonic()
        error = None
        try:
            await asyncio.wait_for(step.run(ctx), step.timeout)
            if step.screenshot:
                ctx.shot(step.screenshot)
        except Exception as exc:  # noqa: BLE001 - report every kind of failure the same way
            error = f"{type(exc).__name__}: {exc}"
            log.error("smoke step %s failed: %s", step.name, error, exc_info=True)
            ctx.shot(f"failed-{step.name}.png")
        if crashes:
            error = error or f"uncaught exception: {crashes[-1].strip().splitlines()[-1]}"
        results.append({"step": step.name, "ok": error is None, "seconds": round(time.monotonic() - start, 2),
                        "error": error})
        print(f"smoke: {step.name}: {'ok' if error is None else 'FAILED ' + error}", flush=True)
        if error is not None:
            ok = False
            break
    report = {"ok": ok, "steps": results, "screenshots": ctx.screenshots}
    (ctx.outdir / "smoke-report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if ok else 1
