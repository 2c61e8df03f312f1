"""The envelope every ktir JSON file carries (`ktir.ir.json_format`)."""

import pytest

from ktir.ir.json_format import read_envelope


class _Bad(ValueError):
    pass


def test_an_envelope_of_the_right_format_and_version_is_its_object():
    assert read_envelope('{"format": "f", "version": 3, "x": 1}', "f", 3, "ktir thing", _Bad)["x"] == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON: "),
        ("[1]", 'not a ktir thing (no "format": "f")'),
        ('{"format": "g", "version": 3}', 'not a ktir thing (no "format": "f")'),
        ('{"format": "f", "version": 2}', "thing version 2, expected 3"),
        ('{"format": "f"}', "thing version None, expected 3"),
    ],
)
def test_anything_else_is_the_callers_error_saying_what_is_wrong(text, message):
    with pytest.raises(_Bad, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_envelope(text, "f", 3, "ktir thing", _Bad)
