"""Every package your tools import is one the function will have.

The build (`median build-artifact`, which `sam build` runs through the Makefile) runs it before it
copies anything, and `median check-artifact` (median_lambda/build/check.py) holds a built artifact to
it. Your tests, `make check` and `make serve` run in the dev venv, which holds every group (pytest, moto, PyYAML, ...):
a tool importing a package that only a group brings passes them all, and fails only deployed, at
its first call when the import is lazy (inside the function, as docs/performance.md advises).

So every module of tools/ is read (with `ast`, never run) for the imports it makes when it runs:
at its top and inside functions alike; not those under `if TYPE_CHECKING:`, which never run, nor
those inside a `try` that catches ImportError, which the author made optional. Each one that is
neither the standard library nor the project's own (handler, tools) must come from a package
the lock puts into the artifact ([project].dependencies, with what they bring: median-lambda's
runtime among them) or that the Lambda runtime provides (boto3 and what it brings). median-lambda's
developer's parts (its testing kit, its CLI, its dev server) never ship: a tool importing one of
them is named too. An
import name is not a package's name (`yaml` is PyYAML's, `dateutil` python-dateutil's): the
installed packages' own records say which provides which (importlib.metadata). Each one missing
is named at its file and line, with the fix.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

ROOT = Path.cwd()  # the project's: the build runs in its root
THE_FIX = "to [project].dependencies in pyproject.toml, then make lock"
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


@dataclass(frozen=True)
class Import:
    """An import a module of tools/ makes when it runs: where, and the module it names."""

    path: str  # as the author reads it: tools/orders.py
    line: int
    module: str

    @property
    def top(self) -> str:
        return self.module.split(".", 1)[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_import_error(node: ast.Try | ast.TryStar) -> bool:
    for handler in node.handlers:
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(name, ast.Name) and name.id in _IMPORT_ERRORS for name in caught):
            return True
    return False


def _imported_by_call(node: ast.Call) -> str | None:
    """`importlib.import_module("x")` or `__import__("x")` with a name written out: the module it names."""
    function = node.func
    named = (isinstance(function, ast.Attribute) and function.attr == "import_module") or (
        isinstance(function, ast.Name) and function.id in ("import_module", "__import__")
    )
    if not named or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("."):
        return first.value
    return None


def runtime_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, module) of each absolute import the module makes when it runs, lazy ones included."""
    if isinstance(tree, ast.If) and _is_type_checking(tree.test):
        for branch in tree.orelse:
            yield from runtime_imports(branch)
        return
    if isinstance(tree, ast.Try | ast.TryStar) and _catches_import_error(tree):
        guarded: list[ast.AST] = [*tree.handlers, *tree.orelse, *tree.finalbody]
        for part in guarded:
            yield from runtime_imports(part)
        return
    if isinstance(tree, ast.Import):
        yield from ((tree.lineno, alias.name) for alias in tree.names)
    elif isinstance(tree, ast.ImportFrom) and tree.level == 0 and tree.module:
        yield tree.lineno, tree.module
    elif isinstance(tree, ast.Call) and (module := _imported_by_call(tree)) is not None:
        yield tree.lineno, module
    for child in ast.iter_child_nodes(tree):
        yield from runtime_imports(child)


def imports_of_tools(root: Path, package: str = "tools") -> list[Import]:
    """Every import the modules of `package` (the ones the build ships) make when they run, but the
    standard library's, `__future__` and the project's own packages'."""
    from median_lambda.build.sources import PACKAGES, belongs, package_files

    own = {*PACKAGES, package, "__future__"}
    found: list[Import] = []
    for path, relative in package_files(root, package)[0]:  # what the build copies, through links to folders too
        if not belongs(relative):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # the build's `handler check` names it at its line first
        for line, module in runtime_imports(tree):
            imported = Import(relative.as_posix(), line, module)
            if imported.top not in own and imported.top not in sys.stdlib_module_names:
                found.append(imported)
    return found


def import_problems(imports: list[Import], providers: Mapping[str, list[str]], available: Collection[str]) -> list[str]:
    """`file:line: ...` for each import no package of `available` (normalised names) provides.
    `providers` maps an import name to the installed packages that provide it."""
    from packaging.utils import canonicalize_name

    from median_lambda.build.sources import DEVELOPER_PARTS

    problems = []
    for imported in imports:
        if (
            imported.top == "median_lambda"
        ):  # the library's runtime ships, copied by the build; its developer's parts never
            part = imported.module.split(".")[1] if "." in imported.module else ""
            if part in DEVELOPER_PARTS or f"{part}.py" in DEVELOPER_PARTS:
                problems.append(
                    f"{imported.path}:{imported.line}: imports {imported.module}, a part of median-lambda that never "
                    "ships (its testing kit, CLI and dev server run on your machine only): import it in tests/, not in "
                    "tools/"
                )
            continue
        packages = providers.get(imported.top, [])
        if any(canonicalize_name(package) in available for package in packages):
            continue
        if packages:
            named = ", ".join(sorted(set(packages)))
            problems.append(
                f"{imported.path}:{imported.line}: imports {imported.module} (the package {named}), which the "
                f"deployed function will not have: add {named} {THE_FIX}"
            )
        else:
            problems.append(
                f"{imported.path}:{imported.line}: imports {imported.module}, which no package installed here "
                f"provides and the deployed function will not have: add the package that provides it {THE_FIX}"
            )
    return problems


def deployed_packages(machine: str, python: str, project: Path = ROOT) -> set[str]:
    """Normalised names of what a deployed function can import: the lock's artifact packages and the runtime's."""
    from median_lambda.project.lock import locked_artifact_versions, runtime_packages

    return {*locked_artifact_versions(machine, python, project), *runtime_packages(project / "uv.lock")}


def main(argv: list[str]) -> int:
    """Check the project in argv's one folder (else the working directory) as the build does; 1 on a problem."""
    from importlib.metadata import packages_distributions

    from median_lambda.project.sam_config import lambda_architecture, runtime_python, wheel_machine

    root = Path(argv[0]) if argv else Path.cwd()
    template = root / "template.yaml"
    problems = import_problems(
        imports_of_tools(root),
        packages_distributions(),
        deployed_packages(wheel_machine(lambda_architecture(template)), runtime_python(template), root),
    )
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(
            f"The build stops: {len(problems)} import(s) of tools/ would fail in the deployed function, which holds "
            "only [project].dependencies (uv.lock) beside the Lambda runtime's boto3.",
            file=sys.stderr,
        )
        return 1
    return 0
