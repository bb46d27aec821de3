"""Every table of the metadata index on one ``Base.metadata``: Alembic's view of the whole schema
(``migrations/env.py``, for autogenerate) and the schema-drift test's.

The running program never needs it: Alembic revisions create the tables, and each models module
imports the modules of the tables its foreign keys name (chat and memory → workspaces →
library), so a flush always finds them. It sits above every package whose tables it lists, and
nothing in the core imports it.
"""

from spar_desktop.core.chat import models as chat_models  # noqa: F401
from spar_desktop.core.library import models as library_models  # noqa: F401
from spar_desktop.core.memory import models as memory_models  # noqa: F401
from spar_desktop.core.workspaces import models as workspace_models  # noqa: F401
