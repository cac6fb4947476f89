"""The `tvlm` console script: runs the command line built into the package
(texturevlm/bin/tvlm), with this process's arguments, in this process's place."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def executable() -> Path:
    """Where the package keeps its `tvlm`."""
    return Path(__file__).resolve().parent / "bin" / "tvlm"


def main() -> None:
    """Replaces this process with `tvlm` and the same arguments; exits with 2 and a reason
    where the package has no command line (a build with TVLM_BUILD_APPS off)."""
    tvlm = executable()
    if not os.access(tvlm, os.X_OK):
        sys.stderr.write(
            f"tvlm: this texturevlm has no command line at {tvlm}: reinstall it with pip install . "
            "(the command line is built with the package)\n"
        )
        sys.exit(2)
    os.execv(tvlm, [str(tvlm), *sys.argv[1:]])
