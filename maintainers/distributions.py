"""`make dist`: median-lambda's wheel and sdist, built and checked as a package index would take them.

    python -m maintainers.distributions [--version X.Y.Z] [--out dist]

Builds both from median-lambda/ with uv (hatchling, the library's build backend), then refuses
them, naming what is wrong, unless:

- there is one wheel and one sdist, named for the version (_version.py's, or --version: the
  release workflow passes its tag's);
- the wheel's metadata is the library's: its name, version, Python, dependencies and extras, its
  README as a Markdown description, its licence, its links (project.urls) and classifiers; its
  `median` command and its two pytest plugins;
- both pass what a package index runs on an upload: `twine check --strict` (the metadata, and the
  description as PyPI renders it), the core metadata as `packaging` validates it (the library
  PyPI's own checks use), every classifier on PyPI's list (trove-classifiers) and none deprecated,
  every link's label and URL as PyPI accepts them;
- the wheel holds median_lambda/ and nothing else, with what the library reads at run time or
  ships to a project (py.typed, the inspector's page, the scaffold's templates, the locks of the
  tools it drives, the contract suite's vectors), and no cache or test of the repository's;
- the sdist holds the sources, README, CHANGELOG and LICENSE, and builds the same wheel again;
- the wheel, installed alone in a new venv from the index uv uses, runs: `median --version`
  prints its version, and `import median_lambda` gives its public names; with pytest beside it and
  no extra (`pip install median-lambda pytest`), a test of anyone's runs, the library's plugins
  standing aside, and one that asks for `median_aws` is told to install the `dev` extra.

The release workflow (.github/workflows/release.yml) runs it on a release tag before anything is
attached or published; .ci/run runs it on every change. Maintainers only: copier.yml excludes it.
"""

from __future__ import annotations

import argparse
import email
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "median-lambda"
NAME, MODULE = "median-lambda", "median_lambda"
# What the library reads or ships besides its modules: a wheel without one is broken.
DATA_FILES = (
    "median_lambda/py.typed",
    "median_lambda/devserver/inspector.html",
    "median_lambda/cli/templates/new_tool.py.template",
    "median_lambda/cli/templates/new_tool_test.py.template",
    "median_lambda/project/tooling/sam-cli.py.lock",
    "median_lambda/contract/signature_vectors.json",
)
ENTRY_POINTS = {
    ("console_scripts", "median"): "median_lambda.cli.commands:main",
    ("pytest11", "median_lambda"): "median_lambda.testing.pytest_plugin",
    ("pytest11", "median_lambda_contract"): "median_lambda.contract.fixtures",
}
SDIST_FILES = (
    "pyproject.toml",
    "README.md",
    "CHANGELOG.md",
    "LICENSE",
    "hatch_build.py",
    "src/median_lambda/__init__.py",
)
# PyPI refuses a link whose label is longer (warehouse's forms); its URL must be http or https.
URL_LABEL_LIMIT = 32
LEFT_OUT = re.compile(r"(^|/)(__pycache__|\.pytest_cache|\.mypy_cache|tests?)(/|$)|\.pyc$")


class NotDistributable(Exception):
    pass


def source_version() -> str:
    found = re.search(r'^__version__ = "([^"]+)"$', (LIBRARY / "src" / MODULE / "_version.py").read_text(), re.M)
    if found is None:
        raise NotDistributable("median-lambda/src/median_lambda/_version.py holds no __version__")
    return found[1]


def _uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else "uv"


def build(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([_uv(), "build", "--quiet", "--out-dir", str(out), str(LIBRARY)], check=True)  # noqa: S603


def wheel_problems(wheel: Path, version: str) -> list[str]:
    problems = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"median_lambda-{version}.dist-info"
        raw = archive.read(f"{info}/METADATA")
        metadata = email.message_from_bytes(raw)
        entry_points = archive.read(f"{info}/entry_points.txt").decode("utf-8")
    problems += [f"the wheel's {key} is {metadata[key]!r}" for key, value in (("Name", NAME), ("Version", version))
                 if metadata[key] != value]  # fmt: skip
    if metadata["Requires-Python"] != "<3.15,>=3.13":
        problems.append(
            f"the wheel requires Python {metadata['Requires-Python']!r}, not the Lambda runtimes' 3.13 and 3.14"
        )
    requires = " ".join(metadata.get_all("Requires-Dist") or [])
    problems += [f"the wheel does not require {needed}" for needed in ("aws-lambda-powertools", "pydantic")
                 if needed not in requires]  # fmt: skip
    problems += [f"the wheel has no extra {extra!r}" for extra in ("dev", "tracing")
                 if extra not in (metadata.get_all("Provides-Extra") or [])]  # fmt: skip
    if metadata["Description-Content-Type"] != "text/markdown" or "# median-lambda" not in metadata.get_payload():
        problems.append("the wheel's description is not median-lambda/README.md, as Markdown")
    problems += index_metadata_problems(raw)
    for (group, name), target in ENTRY_POINTS.items():
        if not re.search(
            rf"(?ms)^\[{re.escape(group)}\]\n(?:[^\[].*\n)*?{re.escape(name)} = {re.escape(target)}$", entry_points
        ):
            problems.append(f"the wheel's entry point [{group}] {name} is not {target}")
    strays = [name for name in names if not name.startswith((f"{MODULE}/", f"{info}/")) or LEFT_OUT.search(name)]
    problems += [f"the wheel holds {name}, which is not the library's" for name in strays]
    problems += [f"the wheel lacks {name}" for name in DATA_FILES if name not in names]
    return problems


def index_metadata_problems(raw: bytes) -> list[str]:
    """What PyPI would refuse in the wheel's core metadata: invalid as `packaging` reads it, a classifier not on its
    list or deprecated, a link it does not take; and what a release must carry: links, classifiers."""
    from packaging.metadata import InvalidMetadata, Metadata
    from trove_classifiers import classifiers, deprecated_classifiers

    try:
        metadata = Metadata.from_email(raw, validate=True)
    except (ExceptionGroup, InvalidMetadata) as invalid:
        errors = invalid.exceptions if isinstance(invalid, ExceptionGroup) else [invalid]
        return [f"the wheel's metadata is invalid: {error}" for error in errors]
    problems = [
        f"the wheel's classifier {name!r} is {'deprecated on' if name in deprecated_classifiers else 'not on'} "
        "PyPI's list"
        for name in metadata.classifiers or []
        if name not in classifiers or name in deprecated_classifiers
    ]
    if not metadata.classifiers:
        problems.append("the wheel has no classifiers")
    urls = metadata.project_urls or {}
    if "Homepage" not in urls:
        problems.append("the wheel's project.urls has no Homepage")
    for label, url in urls.items():
        if len(label) > URL_LABEL_LIMIT or not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", url):
            problems.append(f"the wheel's link {label!r} ({url}) is not one PyPI takes")
    return problems


def twine_problems(distributions: list[Path]) -> list[str]:
    """`twine check --strict` on the wheel and sdist: what an upload would be refused, or warned, for."""
    twine = Path(sys.executable).with_name("twine")
    checked = subprocess.run(  # noqa: S603 - the maintainers' venv's twine, on our own files
        [str(twine), "check", "--strict", *map(str, distributions)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    if checked.returncode == 0:
        return []
    said = [line.strip() for line in (checked.stdout + checked.stderr).splitlines() if line.strip()]
    return [f"twine check --strict: {line}" for line in said] or [f"twine check --strict exited {checked.returncode}"]


def sdist_problems(sdist: Path, version: str) -> list[str]:
    prefix = f"median_lambda-{version}/"
    with tarfile.open(sdist) as archive:
        names = {member.name.removeprefix(prefix) for member in archive.getmembers()}
    problems = [f"the sdist lacks {name}" for name in SDIST_FILES if name not in names]
    return problems + [f"the sdist holds {name}" for name in sorted(names) if LEFT_OUT.search(name)]


def rebuilt_from_sdist(sdist: Path, wheel: Path, scratch: Path) -> list[str]:
    """The wheel the sdist builds holds the same files as the one built from the checkout."""
    subprocess.run([_uv(), "build", "--quiet", "--wheel", "--out-dir", str(scratch), str(sdist)], check=True)  # noqa: S603
    [again] = scratch.glob("*.whl")
    with zipfile.ZipFile(wheel) as first, zipfile.ZipFile(again) as second:
        differ = sorted(set(first.namelist()) ^ set(second.namelist()))
    return [f"the sdist's wheel differs from the checkout's in {name}" for name in differ]


def installed_problems(wheel: Path, version: str, scratch: Path) -> list[str]:
    """Install the wheel alone in a new venv and run it."""
    venv = scratch / "venv"
    environment = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "VIRTUAL_ENV": str(venv)}
    subprocess.run([_uv(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=environment)  # noqa: S603
    subprocess.run([_uv(), "pip", "install", "--quiet", str(wheel)], check=True, env=environment)  # noqa: S603
    printed = subprocess.run(  # noqa: S603
        [str(venv / "bin" / "median"), "--version"], capture_output=True, text=True, check=False
    )
    problems = (
        [] if printed.stdout == f"median-lambda {version}\n" else [f"`median --version` printed {printed.stdout!r}"]
    )
    imported = subprocess.run(  # noqa: S603
        [str(venv / "bin" / "python"), "-c", "import median_lambda as m; print(sorted(m.__all__))"],
        capture_output=True,
        text=True,
        check=False,
    )
    if "'tool'" not in imported.stdout:
        problems.append(f"`import median_lambda` in a new venv failed: {imported.stderr.strip()[-300:]}")
    return problems + bare_pytest_problems(venv, environment, scratch)


# Anyone's tests, in a venv with median-lambda and pytest alone: its plugins load, stand aside, and say what
# median_aws needs.
ANYONES_TESTS = """
def test_anything():
    assert sum([1, 2]) == 3


def test_asks_for_median_aws(median_aws):
    pass
"""


def bare_pytest_problems(venv: Path, environment: dict[str, str], scratch: Path) -> list[str]:
    """`pip install median-lambda pytest`, then pytest on anyone's tests: the first passes, the second is told
    to install the dev extra."""
    subprocess.run([_uv(), "pip", "install", "--quiet", "pytest"], check=True, env=environment)  # noqa: S603
    tests = scratch / "anyones-tests"
    tests.mkdir()
    (tests / "test_anything.py").write_text(ANYONES_TESTS, encoding="utf-8")
    ran = subprocess.run(  # noqa: S603
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        cwd=tests,
        capture_output=True,
        text=True,
        check=False,
    )
    said = ran.stdout + ran.stderr
    if "1 passed, 1 error" not in said or "median_aws needs median-lambda's dev extra" not in said:
        return [f"pytest beside median-lambda alone (no extra) does not run anyone's test: {said.strip()[-600:]}"]
    return []


def check(out: Path, version: str) -> list[str]:
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    expected = ([f"median_lambda-{version}-py3-none-any.whl"], [f"median_lambda-{version}.tar.gz"])
    if ([path.name for path in wheels], [path.name for path in sdists]) != expected:
        return [f"{out} holds {[path.name for path in wheels + sdists]}, not {expected[0] + expected[1]}"]
    problems = wheel_problems(wheels[0], version) + sdist_problems(sdists[0], version)
    problems += twine_problems([wheels[0], sdists[0]])
    with tempfile.TemporaryDirectory(prefix="median-dist-") as scratch:
        problems += rebuilt_from_sdist(sdists[0], wheels[0], Path(scratch) / "rebuilt")
        problems += installed_problems(wheels[0], version, Path(scratch))
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.distributions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help="the version the distributions must carry (default: _version.py's)")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where they are built (default: dist/)")
    arguments = parser.parse_args(argv)
    try:
        expected = source_version()
        version = (arguments.version or expected).removeprefix("v")
        if version != expected:
            raise NotDistributable(f"the tag says {version}, median-lambda's _version.py says {expected}")
        build(Path(arguments.out))
        problems = check(Path(arguments.out), version)
    except NotDistributable as refused:
        problems = [str(refused)]
    for problem in problems:
        print(f"dist: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"dist: median-lambda {version}: wheel and sdist built and checked in {arguments.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
