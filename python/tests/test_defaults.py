"""Keyword defaults are the library's: every default of a keyword that names a choice or a URL option, in the
native signatures, the package's Python wrappers and the typed stubs, equals
``framefeed._framefeed.LIBRARY_DEFAULTS``, which the native module reads from the Rust library's own
``Default``s and constants."""

import ast
import inspect
import os

import framefeed as ff
from framefeed import _framefeed as native

PACKAGE = os.path.dirname(ff.__file__)


def signature_defaults(function):
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def source_defaults(path):
    """(function, keyword, default) for every literal keyword default in a Python source or stub file."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                if isinstance(default, ast.Constant) and default.value is not Ellipsis:
                    yield node.name, arg.arg, default.value


def test_native_signatures_default_to_the_library():
    want = native.LIBRARY_DEFAULTS
    seen = set()
    for function in (native.VideoInput, native.VideoInput.feed_url, native.VideoReader, ff.Mux.add_url):
        for name, default in signature_defaults(function).items():
            if name in want:
                assert default == want[name], (function, name, default, want[name])
                seen.add(name)
    assert seen == want.keys(), want.keys() - seen


def test_wrappers_and_stubs_default_to_the_library():
    want = native.LIBRARY_DEFAULTS
    checked = 0
    for path in (os.path.join(PACKAGE, "__init__.py"), os.path.join(PACKAGE, "_framefeed.pyi")):
        for function, name, default in source_defaults(path):
            if name in want and default is not None:
                assert default == want[name], (path, function, name, default, want[name])
                checked += 1
    assert checked >= 2 * len(want), checked
