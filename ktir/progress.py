"""
Progress of a long compile: a rich progress bar on stderr with the stage running now.

It shows only when it helps: stderr is a terminal, the caller did not ask for quiet, and the
compile has run for more than `DELAY_SECONDS` (short compiles print nothing). The bar is
transient: it disappears when the compile ends, leaving the terminal as it was.

```python
with StageProgress(total=9, quiet=False) as progress:
    progress.stage("importing with torch.export")
    ...
    progress.stage("ktir-fuse")
```
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

DELAY_SECONDS = 2.0
"""A compile shorter than this shows no progress."""


class StageProgress:
    """
    Counts stages and, once shown, displays the current one. `stream` (default: stderr) and
    `clock` are parameters so that tests can drive it.
    """

    def __init__(
        self,
        total: int,
        *,
        quiet: bool = False,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        delay: float = DELAY_SECONDS,
    ) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.clock = clock
        self.delay = delay
        self.started = clock()
        self.begun = 0
        """Stages started so far."""
        self.shown: list[str] = []
        """The stages displayed so far (for tests and for the last line)."""
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def stage(self, name: str) -> None:
        """Stage `name` starts (the previous one is done)."""
        completed, self.begun = self.begun, self.begun + 1
        if self._bar is None and self.enabled and self.clock() - self.started > self.delay:
            self._bar, self._task = self._show(name)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=name, completed=completed)
            self.shown.append(name)

    def _show(self, name: str) -> tuple[Progress, TaskID]:
        """
        The bar, started at stage `name`. rich is imported here: most runs never show a bar,
        and its import is a tenth of `ktir-opt`'s start.
        """
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        bar = Progress(*columns, console=console, transient=True)
        bar.start()
        return bar, bar.add_task(name, total=self.total)

    def close(self) -> None:
        """Remove the bar, if it was shown."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self) -> StageProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


__all__ = ["DELAY_SECONDS", "StageProgress"]
