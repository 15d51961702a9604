"""A test that needs what a machine may lack (the ffmpeg CLI, the corpus, a GPU, torch, Ray, mypy) is skipped with
its reason printed, and fails instead where ``FRAMEFEED_REQUIRE`` names the need (CI names what it installs)."""

import pytest

from conftest import missing, required


@pytest.mark.parametrize(
    "listed, need, named",
    [("ffmpeg,corpus", "corpus", True), (" torch , gpu", "torch", True), ("all", "ray", True),
     ("ffmpeg", "corpus", False), ("", "ffmpeg", False)],
)
def test_the_require_list_names_a_need_or_all(monkeypatch, listed, need, named):
    monkeypatch.setenv("FRAMEFEED_REQUIRE", listed)
    assert required(need) is named


def test_a_missing_need_skips_with_its_reason_unless_required(monkeypatch):
    monkeypatch.delenv("FRAMEFEED_REQUIRE", raising=False)
    with pytest.raises(pytest.skip.Exception, match="the ffmpeg CLI is absent"):
        missing("ffmpeg", "the ffmpeg CLI is absent")
    monkeypatch.setenv("FRAMEFEED_REQUIRE", "corpus,ffmpeg")
    with pytest.raises(pytest.fail.Exception, match="FRAMEFEED_REQUIRE names ffmpeg but the ffmpeg CLI is absent"):
        missing("ffmpeg", "the ffmpeg CLI is absent")
