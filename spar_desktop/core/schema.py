"""Imports every module that defines tables, so creating the schema creates all of them."""

from spar_desktop.core.library import models as library_models  # noqa: F401
from spar_desktop.core.workspaces import models as workspace_models  # noqa: F401
from spar_desktop.core.chat import models as chat_models  # noqa: F401
from spar_desktop.core.memory import models as memory_models  # noqa: F401
