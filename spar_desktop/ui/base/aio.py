"""qasync glue.

qasync's QEventLoop never installs asyncio's async-generator hooks (``BaseEventLoop.run_forever``
does). Without them an async generator dropped mid-iteration — the httpx response stream under
every streamed chat answer — is closed synchronously by the garbage collector, and its cleanup
(which awaits) fails with "async generator ignored GeneratorExit" and anyio cancel-scope errors,
leaving the HTTP connection to be reset. With the hooks the loop closes it in a task, exactly as
under ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Callable


def install_asyncgen_hooks(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Route async-generator finalization to ``loop``; returns a function restoring the old hooks."""
    old = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
                           finalizer=loop._asyncgen_finalizer_hook)  # type: ignore[attr-defined]
    return lambda: sys.set_asyncgen_hooks(*old)
