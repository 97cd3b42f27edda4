"""The shape of the library's functions: no long parameter lists (settings travel as records) and no ``*args`` /
``**kwargs`` handed on to another function, in ``bgbot/`` and ``training/`` (read as source, every function and
method, nested ones included)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bgbot", "training")
MAX_PARAMETERS = 8
"""Most parameters a function takes (``self`` and ``cls`` not counted; ``*args`` and ``**kwargs`` count one each)."""
VARIADIC_WRAPPERS = {
    ("bgbot/progress.py", "progress_bar"): "tqdm's own options, passed to tqdm",
    ("training/parts.py", "save_npz"): "arrays by name, as numpy.savez takes them",
}
"""The functions that hand ``**kwargs`` on, and why: thin wrappers of a library call that takes them so."""


def _functions(source: str):
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [f"*{a.vararg.arg}"] if a.vararg else []
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _passes_on(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``fn`` hands its own ``*args`` or ``**kwargs`` to a call."""
    own = {p.arg for p in (fn.args.vararg, fn.args.kwarg) if p is not None}
    for call in ast.walk(fn):
        if not isinstance(call, ast.Call):
            continue
        starred = [a.value for a in call.args if isinstance(a, ast.Starred)]
        starred += [k.value for k in call.keywords if k.arg is None]
        if any(isinstance(v, ast.Name) and v.id in own for v in starred):
            return True
    return False


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_parameter_counting_sees_every_kind_of_parameter():
    (fn,) = _functions("def f(self, a, /, b, *c, d, **e): pass")
    assert _parameters(fn) == ["a", "b", "d", "*c", "**e"]
    (nested,) = [f for f in _functions("def g():\n    async def h(a, b=1, *, c): pass") if f.name == "h"]
    assert _parameters(nested) == ["a", "b", "c"]
    (wrapper,) = _functions("def w(x, **kw):\n    return f(x, **kw)")
    (own,) = _functions("def w(x, **kw):\n    return f(x, **{'a': 1})")
    assert _passes_on(wrapper) and not _passes_on(own)


def test_no_function_takes_more_than_eight_parameters():
    long = [
        f"{path}:{fn.lineno} {fn.name} ({len(_parameters(fn))})"
        for path, source in _sources()
        for fn in _functions(source)
        if len(_parameters(fn)) > MAX_PARAMETERS
    ]
    assert long == []


def test_no_function_passes_its_args_or_kwargs_on():
    found = {(path, fn.name) for path, source in _sources() for fn in _functions(source) if _passes_on(fn)}
    assert found == set(VARIADIC_WRAPPERS)
