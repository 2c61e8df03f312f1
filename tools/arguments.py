"""
The ktir tools' command-line parser: argparse that says "did you mean" for a misspelled option,
choice or pass name.

```
$ ktir-opt m.mlir --pass-pipline='builtin.module(cse)'
ktir-opt: error: unrecognized arguments: --pass-pipline=builtin.module(cse) (did you mean '--pass-pipeline'?)
```

Python 3.11's argparse has no `suggest_on_error` (it came in 3.14), so `ArgumentParser.error`
adds the suggestion to argparse's own message; `did_you_mean` is the same suggestion for names
a tool checks itself (pass names in a pipeline, pass options).
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable
from typing import NoReturn, cast

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<words>.*)")
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)")


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'NAME'?)` for the known name closest to `word`, or "" if none is close."""
    close = difflib.get_close_matches(word, sorted(set(known)), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class ArgumentParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` whose usage errors suggest the closest option or choice."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and `message`, with a suggestion when one is close; exit 2."""
        super().error(message + self.suggestion(message))

    def suggestion(self, message: str) -> str:
        """The "did you mean" for argparse's `message`: an unknown option's or a bad choice's."""
        if match := _UNRECOGNIZED.match(message):
            options = list(self._option_string_actions)
            for word in match["words"].split():
                name = word.split("=", 1)[0]
                if name.startswith("-") and (hint := did_you_mean(name, options)):
                    return hint
            return ""
        if match := _INVALID_CHOICE.search(message):
            return did_you_mean(match["word"], re.findall(r"'([^']*)'", match["choices"]))
        return ""


def suggesting(parser: argparse.ArgumentParser, prog: str) -> ArgumentParser:
    """
    `parser` (built by someone else: xDSL's `xDSLOptMain` makes a plain one) with the
    suggestions of `ArgumentParser`, named `prog` in its messages.
    """
    parser.__class__ = ArgumentParser  # a subclass that adds no state, only `error`
    parser.prog = prog
    return cast(ArgumentParser, parser)  # its class is ArgumentParser now


__all__ = ["ArgumentParser", "did_you_mean", "suggesting"]
