"""Griffe extensions for the Python reference (mkdocs.yml: mkdocstrings' ``extensions``).

- ``NewAsInit``: a class that is made by ``__new__`` alone (the native classes, and ``framefeed.VideoInput``,
  ``VideoReader`` and ``Mux`` over them) gets an ``__init__`` of the same parameters, since griffe reads a class's
  parameters from ``__init__`` only. The reference then lists every keyword (``merge_init_into_class``), and
  checks the class docstring's ``Args:`` against them.
- ``SphinxRoles``: the docstrings' Sphinx roles (``:class:`Batch```, ``:meth:`feed```, which ``help()`` shows as
  they are) become inline code in the rendered Markdown.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

import griffe

ROLE = re.compile(r":(?:class|meth|func|attr|exc|mod|obj|data):`~?\.?([^`]+)`")


class NewAsInit(griffe.Extension):
    """Gives each class without ``__init__`` one with its ``__new__``'s parameters (``cls`` as ``self``)."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        new = cls.members.get("__new__")
        if new is None or "__init__" in cls.members or not isinstance(new, griffe.Function):
            return
        params = list(new.parameters)
        if params and params[0].name == "cls":
            params[0] = griffe.Parameter("self", kind=params[0].kind)
        init = griffe.Function(
            "__init__", lineno=new.lineno, endlineno=new.endlineno, parameters=griffe.Parameters(*params)
        )
        cls.set_member("__init__", init)


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


class SphinxRoles(griffe.Extension):
    """Turns ``:role:`name``` into ```name``` in every docstring of the package, once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
