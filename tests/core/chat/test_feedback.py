"""What a rating or an opened citation teaches the evolving keys (core/chat/feedback.py): the
question answered, the cited chunks, success or not; nothing for a repeated or cleared rating."""

from __future__ import annotations

import asyncio

from spar_desktop.core.chat.feedback import LearnTarget, open_citation, rate_answer
from spar_desktop.core.chat.session import ChatSession

QUESTION = "Why did the gearbox bearing fail?"


def test_ratings_and_opened_citations_name_the_question_and_the_cited_chunks(workspace_env, fast_ollama,
                                                                             fake_ollama):
    mgr, _ = workspace_env
    session = ChatSession(mgr, fast_ollama, k=4)
    fake_ollama.set(reply="The bearing failed after oil contamination [1].")
    thread = session.threads.create("ops")
    result = asyncio.run(session.answer(thread.id, QUESTION))
    store, cited = session.threads, result.citations[0]
    chunk = f"{cited.file_id}#{cited.chunk_id}"

    good = rate_answer(store, result.message_id, True)
    assert good == LearnTarget("ops", QUESTION, (chunk,), True)  # only the cited passage, not all four
    assert rate_answer(store, result.message_id, True) is None  # a repeated click teaches nothing new
    assert rate_answer(store, result.message_id, None) is None  # nor does clearing it
    bad = rate_answer(store, result.message_id, False)
    assert bad is not None and not bad.success

    opened = open_citation(store, result.message_id, 1)
    assert opened == LearnTarget("ops", QUESTION, (chunk,), True)
    assert open_citation(store, result.message_id, 1) is None  # the first open counts, once
    assert open_citation(store, result.message_id, 42) is None  # no such citation
