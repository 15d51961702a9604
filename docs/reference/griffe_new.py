"""A griffe extension for the Python reference (mkdocs.yml: mkdocstrings' ``extensions``): a class that is made
by ``__new__`` alone (the native classes, and ``framefeed.VideoInput``, ``VideoReader`` and ``Mux`` over them)
gets an ``__init__`` of the same parameters, since griffe reads a class's parameters from ``__init__`` only.
The reference then shows ``VideoInput(sequence_length, batch_size, *, ...)`` with every keyword
(``merge_init_into_class``), and checks the class docstring's ``Args:`` against them."""

from __future__ import annotations

from typing import Any

import griffe


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
