import os
import sys

# `python -m porter` puts the current folder first on sys.path: a user's json.py or
# typing.py there would then be imported in place of the standard library's. porter
# never imports the code it reads, so the folder goes before anything else is imported.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from porter.cli import main  # noqa: E402

main()
