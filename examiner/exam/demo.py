"""The demo's run folder: `examiner demo` may replace an earlier demo run, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from examiner.core import rundir
from examiner.core.errors import UserError
from examiner.core.owned import FOLDER_MARK
from examiner.core.runlock import refuse_if_in_use


def clear_earlier_demo(run_dir: Path) -> None:
    """Make room for a demo run in `run_dir`: nothing to do when it is new or empty; an earlier demo run
    (request.json says so) has the files an exam run writes removed, and only those; any other folder
    is refused in one line, so no file examiner did not write is ever deleted."""
    if not run_dir.exists():
        return
    if not run_dir.is_dir():
        raise UserError(f"--out {run_dir}: a file, not a folder")
    if not any(p.name not in (rundir.LOCK, FOLDER_MARK) for p in run_dir.iterdir()):
        return
    foreign = rundir.foreign_entries(run_dir)
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise UserError(f"--out {run_dir} is not empty and holds files examiner did not write ({shown}): "
                        "give `examiner demo --out` a new or empty folder")
    try:
        demo = bool(json.loads((run_dir / rundir.REQUEST).read_text(encoding="utf-8")).get("demo"))
    except (OSError, ValueError, AttributeError):
        demo = False
    if not demo:
        raise UserError(f"--out {run_dir} holds an exam run that `examiner demo` did not make: give `examiner demo "
                        "--out` a new or empty folder (`examiner resume` continues that run)")
    refuse_if_in_use(run_dir)
    rundir.remove_exam_outputs(run_dir)
