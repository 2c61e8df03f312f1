"""The compile progress bar (`ktir.progress`): shown only on a terminal, after a delay, unless quiet."""

from __future__ import annotations

import io

import pytest
import torch

import ktir
from ktir.passes.stages import expand_stages
from ktir.pipeline import parse_pipeline
from ktir.progress import StageProgress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_stages(stream: io.StringIO, quiet: bool, clock: Clock) -> StageProgress:
    with StageProgress(3, quiet=quiet, stream=stream, clock=clock, delay=2.0) as progress:
        progress.stage("importing")
        clock.now = 2.5  # the compile has taken long enough: the bar appears at the next stage
        progress.stage("ktir-fuse")
        progress.stage("ktir-lower-to-cores")
    return progress


def test_a_long_compile_on_a_terminal_shows_its_stages() -> None:
    stream = Terminal()
    progress = run_stages(stream, quiet=False, clock=Clock())
    assert progress.shown == ["ktir-fuse", "ktir-lower-to-cores"]  # not the first: it was quick
    assert "ktir-lower-to-cores" in stream.getvalue()


@pytest.mark.parametrize(("stream", "quiet"), [(io.StringIO(), False), (Terminal(), True)])
def test_nothing_when_piped_or_quiet(stream: io.StringIO, quiet: bool) -> None:
    progress = run_stages(stream, quiet=quiet, clock=Clock())
    assert progress.shown == [] and stream.getvalue() == ""


def test_a_short_compile_shows_nothing() -> None:
    stream = Terminal()
    with StageProgress(2, stream=stream, clock=Clock()) as progress:
        progress.stage("importing")
        progress.stage("ktir-fuse")
    assert progress.shown == [] and stream.getvalue() == ""


def test_compile_announces_every_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ktir.compile` reports the import, the folding and each stage of ktir-compile, in order."""
    seen: list[str] = []
    monkeypatch.setattr(StageProgress, "stage", lambda self, name: seen.append(name))
    ktir.compile(torch.nn.Linear(64, 32).half(), (torch.randn(8, 64).half(),), quiet=True)
    stages = [s.module_pass.name for s in expand_stages(parse_pipeline("ktir-compile"))]
    assert seen == ["importing (torch.export)", "folding constants", *stages]
    assert stages[0] == "ktir-propagate-layouts" and stages[-1] == "ktir-lower-to-cores"
