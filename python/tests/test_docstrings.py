"""The Python API reference is its docstrings: every public class, function, method and property of the package
is documented where it is defined, each parameter in its docstring's ``Args:`` section (Google style, what
mkdocstrings renders in ``docs/reference/python.md``), and the native module's docstrings say the same in both
places they live: at run time (``help()``, from the PyO3 ``///`` comments in ``python/src/*.rs``, the one source)
and in the type stubs (``framefeed/_framefeed.pyi``, which mkdocstrings reads without importing the module).

After editing a ``///`` comment and rebuilding, ``python python/tests/test_docstrings.py --write`` copies the
runtime docstrings into the stubs.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

PACKAGE = Path(__file__).resolve().parents[1] / "framefeed"
STUBS = PACKAGE / "_framefeed.pyi"
# The package's modules with a public API, as files (parsed, not imported: torch and ray need not be installed).
MODULES = {
    "framefeed": PACKAGE / "__init__.py",
    "framefeed.exceptions": PACKAGE / "exceptions.py",
    "framefeed.types": PACKAGE / "types.py",
    "framefeed.torch": PACKAGE / "torch.py",
    "framefeed.torch (ClipIndices, clip_indices)": PACKAGE / "_clips.py",
    "framefeed.ray": PACKAGE / "ray.py",
    "framefeed.compat.decord": PACKAGE / "compat" / "decord" / "__init__.py",
    "framefeed.compat.decord.audio": PACKAGE / "compat" / "decord" / "audio.py",
    "framefeed.compat.decord.bridge": PACKAGE / "compat" / "decord" / "bridge.py",
    "framefeed.compat.decord.ndarray": PACKAGE / "compat" / "decord" / "ndarray.py",
    "framefeed.compat.decord.base": PACKAGE / "compat" / "decord" / "base.py",
    "framefeed._framefeed": STUBS,
}
SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Attributes|Notes?):\s*$")
ENTRY = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*(\)[^)]*)*\))?:(\s|$)")

Def = ast.FunctionDef  # (and AsyncFunctionDef)


def sections(doc: str) -> Dict[str, List[str]]:
    """A Google-style docstring's sections: name -> its lines, dedented one level."""
    out: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in doc.splitlines():
        match = SECTION.match(line)
        if match:
            current = match.group(1)
            out[current] = []
        elif current is not None:
            if line and not line.startswith(" "):
                current = None
            elif line.strip():
                out[current].append(line[4:])
    return out


def documented_parameters(doc: str) -> List[str]:
    """The names an ``Args:`` section documents (``**camera`` as ``camera``)."""
    entries = sections(doc).get("Args", []) + sections(doc).get("Parameters", [])
    names = []
    for line in entries:
        if line.startswith(" "):
            continue  # a continuation line
        match = ENTRY.match(line)
        assert match, f"not an Args entry (`name (type): description`): {line!r}"
        names.append(match.group(1).lstrip("*"))
    return names


def parameters(node: ast.AST) -> List[str]:
    args = node.args  # type: ignore[attr-defined]
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return [n for n in names if n not in ("self", "cls")]


def is_property(node: ast.AST) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "property") or (isinstance(d, ast.Attribute) and d.attr == "setter")
        for d in getattr(node, "decorator_list", [])
    )


def public_names(tree: ast.Module) -> Optional[List[str]]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [e.value for e in node.value.elts]  # type: ignore[attr-defined]
    return None


def definitions(body: List[ast.stmt]) -> Iterator[ast.AST]:
    """Functions and classes, also those under ``if``: of ``if not TYPE_CHECKING: ... else: ...``, the typed
    signature only (the runtime one may take ``**kwargs`` and pass them on)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node
        elif isinstance(node, ast.If):
            test = node.test
            runtime_first = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            name = test.operand if runtime_first else test  # type: ignore[attr-defined]
            typed = isinstance(name, ast.Name) and name.id == "TYPE_CHECKING"
            if not (typed and runtime_first):
                yield from definitions(node.body)
            if not (typed and not runtime_first):
                yield from definitions(node.orelse)


def api(module: str, path: Path) -> Iterator[Tuple[str, ast.AST, Optional[ast.ClassDef]]]:
    """``(qualified name, node, its class)`` for every public function, class, method and property."""
    tree = ast.parse(path.read_text())
    names = public_names(tree)
    if path.name == "_clips.py":
        names = ["ClipIndices", "clip_indices"]  # what `framefeed.torch` re-exports
    for node in definitions(tree.body):
        name = node.name  # type: ignore[attr-defined]
        if (names is not None and name not in names) or name.startswith("_"):
            continue
        yield f"{module}.{name}", node, None
        if isinstance(node, ast.ClassDef):
            for member in definitions(node.body):
                member_name = member.name  # type: ignore[attr-defined]
                if not member_name.startswith("_") or member_name in ("__new__", "__init__"):
                    yield f"{module}.{name}.{member_name}", member, node


# Native classes that `framefeed/__init__.py` subclasses: their keywords are documented there (what users call).
SUBCLASSED = {"VideoInput", "VideoReader", "Mux"}


def problems_of(module: str, path: Path) -> List[str]:
    problems = []
    for name, node, owner in api(module, path):
        doc = ast.get_docstring(node, clean=True)
        member = node.name  # type: ignore[attr-defined]
        if member in ("__new__", "__init__"):
            if module == "framefeed._framefeed" and owner is not None and owner.name in SUBCLASSED:
                doc = python_class_doc(owner.name)
                name = f"framefeed.{owner.name} (the native {owner.name}.__new__'s keywords)"
            else:
                doc = (doc if doc and "Args:" in doc else None) or ast.get_docstring(owner, clean=True)
        if not doc:
            problems.append(f"{name}: no docstring")
            continue
        if isinstance(node, ast.ClassDef) or is_property(node):
            continue
        wanted = parameters(node)
        try:
            documented = documented_parameters(doc)
        except AssertionError as error:
            problems.append(f"{name}: {error}")
            continue
        missing = [p for p in wanted if p not in documented]
        if missing:
            problems.append(f"{name}: parameters not in its docstring's Args: {missing}")
        if member not in ("__new__", "__init__"):
            extra = [p for p in documented if p not in wanted]
            if extra:
                problems.append(f"{name}: Args documents what its signature lacks: {extra}")
            returns = node.returns  # type: ignore[attr-defined]
            says_none = returns is None or (isinstance(returns, ast.Constant) and returns.value is None)
            if not says_none and not ({"Returns", "Yields"} & set(sections(doc))):
                problems.append(f"{name}: returns a value but its docstring has no Returns (or Yields) section")
    return problems


def python_class_doc(name: str) -> Optional[str]:
    tree = ast.parse(MODULES["framefeed"].read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return ast.get_docstring(node, clean=True)
    return None


def test_every_public_callable_documents_every_parameter() -> None:
    problems = [p for module, path in MODULES.items() for p in problems_of(module, path)]
    assert not problems, "\n".join(problems)


def test_the_check_finds_an_undocumented_keyword(tmp_path: Path) -> None:
    """The check above can fail: a keyword left out of an Args section, a stale one, a missing Returns."""
    broken = tmp_path / "broken.py"
    broken.write_text(
        'def f(a: int, *, b: int = 0) -> int:\n    """Sums.\n\n    Args:\n        a (int): A.\n        c: C.\n    """\n'
    )
    problems = problems_of("broken", broken)
    assert any("['b']" in p for p in problems), problems
    assert any("['c']" in p for p in problems), problems
    assert any("no Returns" in p for p in problems), problems


# --- The native module: the stubs' docstrings are the runtime ones ---------------------------------------------


def stub_nodes() -> Iterator[Tuple[str, ast.AST]]:
    """``(dotted name inside the module, node)`` for every def and class of the stubs, private ones too."""
    tree = ast.parse(STUBS.read_text())
    for node in definitions(tree.body):
        yield node.name, node  # type: ignore[attr-defined]
        if isinstance(node, ast.ClassDef):
            for member in definitions(node.body):
                yield f"{node.name}.{member.name}", member  # type: ignore[attr-defined]


def runtime_doc(native: object, dotted: str) -> Tuple[bool, Optional[str]]:
    """``(whether PyO3 gives this object its own docstring, that docstring)``. Slot methods (``__len__``,
    ``__getitem__``...) take CPython's, and ``__new__`` is documented on its class: neither is compared."""
    owner_name, _, member = dotted.partition(".")
    obj = getattr(native, owner_name)
    if member:
        if member == "__new__":
            return False, None
        obj = vars(obj).get(member)
        if obj is None or type(obj).__name__ == "wrapper_descriptor":
            return False, None
    doc = obj.__doc__
    return True, inspect.cleandoc(doc) if doc else None


def mismatches(native: object) -> List[Tuple[str, ast.AST, Optional[str]]]:
    """The stub definitions whose docstring is not the runtime one: ``(name, node, runtime docstring)``."""
    out = []
    for dotted, node in stub_nodes():
        compared, doc = runtime_doc(native, dotted)
        if compared and ast.get_docstring(node, clean=True) != doc:
            out.append((dotted, node, doc))
    return out


def test_the_stubs_docstrings_are_the_runtime_ones() -> None:
    import framefeed._framefeed as native

    wrong = mismatches(native)
    assert not wrong, (
        "the stubs' docstrings differ from the module's (run `python python/tests/test_docstrings.py --write` "
        "after rebuilding): " + ", ".join(name for name, _, _ in wrong)
    )


def test_every_native_definition_is_in_the_stubs() -> None:
    """What the module defines is in the stubs, so that no docstring is left out of the reference."""
    import framefeed._framefeed as native

    stubbed = {dotted for dotted, _ in stub_nodes()}
    missing = []
    for name, obj in vars(native).items():
        if name.startswith("__") or not (inspect.isclass(obj) or inspect.isbuiltin(obj)):
            continue
        if name not in stubbed:
            missing.append(name)
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                pickling = member in ("__reduce__", "__reduce_ex__", "__getstate__", "__setstate__")
                if type(value).__name__ in ("method_descriptor", "getset_descriptor") and value.__doc__ and not pickling:
                    if f"{name}.{member}" not in stubbed:
                        missing.append(f"{name}.{member}")
    assert not missing, missing


def test_the_signatures_show_every_keyword() -> None:
    """``help()`` and ``inspect.signature`` show the keywords, the Python subclasses' included."""
    import framefeed as ff

    for cls in (ff.VideoInput, ff.VideoReader):
        native = inspect.signature(cls.__mro__[1])
        shown = inspect.signature(cls)
        assert set(native.parameters) <= set(shown.parameters), (cls, shown)
        assert "fill" in shown.parameters and "strict" in shown.parameters and "cpu_fallback" in shown.parameters
    assert "index_cache" in inspect.signature(ff.VideoInput.feed_url).parameters
    assert list(inspect.signature(ff.segments).parameters) == ["video", "every", "storage_options", "index_cache"]
    assert "stream" in inspect.signature(ff.decode_audio).parameters


def test_help_shows_every_keyword() -> None:
    """``help(framefeed.VideoInput)`` names (and documents) the keywords the README's table lacked."""
    import pydoc

    import framefeed as ff

    text = pydoc.render_doc(ff.VideoInput, renderer=pydoc.plaintext)
    for keyword in ("cpu_fallback (bool)", "strict (bool)", "fill (tuple", "storage_options (dict"):
        assert keyword in text, keyword
    assert "feed_url(" in text and "open_timeout (float)" in text


def test_the_packages_docstring_examples_run() -> None:
    import framefeed as ff

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(ff, "framefeed") if t.examples and t.name.startswith("framefeed")]
    for test in tests:
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0 and results.attempted >= 15, results


# --- `--write`: the runtime docstrings into the stubs ----------------------------------------------------------


def docstring_lines(doc: str, indent: str) -> List[str]:
    assert '"""' not in doc and "\\" not in doc, "a docstring the stubs cannot quote as it is"
    lines = doc.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{doc}"""']
    body = [f"{indent}{line}" if line else "" for line in lines[1:]]
    return [f'{indent}"""{lines[0]}'] + body + [f'{indent}"""']


def write_stubs() -> int:
    import framefeed._framefeed as native

    lines = STUBS.read_text().splitlines()
    wrong = mismatches(native)
    for dotted, node, doc in sorted(wrong, key=lambda w: -w[1].lineno):
        body = node.body  # type: ignore[attr-defined]
        first = body[0]
        has_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str
        )
        indent = " " * (node.col_offset + 4)
        new = docstring_lines(doc, indent) if doc else []
        if has_doc:
            lines[first.lineno - 1 : first.end_lineno] = new
            if not new and len(body) == 1:
                lines.insert(first.lineno - 1, indent + "...")
        elif isinstance(first, ast.Expr) and first.value.value is Ellipsis and len(body) == 1:  # type: ignore
            row = first.lineno - 1
            if lines[row].rstrip().endswith(": ...") and first.lineno == node.body[0].end_lineno:
                if lines[row].strip() == "...":
                    lines[row : row + 1] = new
                else:
                    lines[row] = lines[row].rstrip()[: -len(" ...")]
                    lines[row + 1 : row + 1] = new
            else:
                lines[row : row + 1] = new
        else:
            header = node.lineno if isinstance(node, ast.ClassDef) else body[0].lineno - 1
            lines[header:header] = new
        print(f"stub docstring of {dotted} written")
    STUBS.write_text("\n".join(lines) + "\n")
    return len(wrong)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_stubs()
    else:
        sys.exit("usage: python python/tests/test_docstrings.py --write")


def test_the_package_readmes_examples_run_as_written(tmp_path: Path, monkeypatch) -> None:
    """The package page's Python blocks, in order, in one scope, with ``a.mp4`` the package's sample video."""
    import framefeed as ff

    (tmp_path / "a.mp4").write_bytes(ff.SAMPLE_MP4)
    monkeypatch.chdir(tmp_path)
    readme = PACKAGE.parent / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
    assert len(blocks) >= 2
    scope: dict = {}
    for block in blocks:
        exec(compile(block, str(readme), "exec"), scope)
    assert scope["frames"].indices == [0, 30, 59] and scope["frames"].data.shape == (3, 224, 224, 3)
