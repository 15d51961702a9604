"""Python's exceptions take their codes from framefeed's one table (``framefeed.ERROR_CODES``, the Rust
``ErrorCode``): every code an exception can carry, names in its docs or defaults to, is in it."""

import inspect
import re

import pytest

import framefeed as ff
from framefeed import exceptions


def test_the_table_is_the_library_and_the_service():
    assert ff.ERROR_CODES["not_a_video"][0] == "library"
    assert ff.ERROR_CODES["too_many_uploads"] == ("service", 429, ff.ERROR_CODES["too_many_uploads"][2])
    assert ff.ERROR_CODES["corrupt"][1] is None
    assert all(source in ("library", "service") for source, _, _ in ff.ERROR_CODES.values())
    assert all(text for _, _, text in ff.ERROR_CODES.values())


def test_defaults_and_documented_codes_are_in_the_table():
    for cls in (ff.FramefeedError, ff.VideoError):
        default = inspect.signature(cls.__init__).parameters["code"].default
        assert ff.ERROR_CODES[default][0] == "library", (cls, default)
    documented = set(re.findall(r"``'([a-z_]+)'``", inspect.getsource(exceptions)))
    assert documented, "the exceptions' docs name codes"
    assert documented <= ff.ERROR_CODES.keys(), documented - ff.ERROR_CODES.keys()


def test_raised_exceptions_carry_codes_of_the_table():
    inp = ff.VideoInput(4, 1, blocking=False)
    with pytest.raises(ff.NoDataError) as no_data:
        inp.next_batch()
    assert no_data.value.code == "no_data"
    inp = ff.VideoInput(4, 1)
    inp.feed(b"this is not a video", label="text")
    inp.close()
    with pytest.raises(ff.VideoError) as failed:
        inp.next_batch()
    assert failed.value.code == "not_a_video"
    assert ff.ERROR_CODES[failed.value.code][0] == "library"
