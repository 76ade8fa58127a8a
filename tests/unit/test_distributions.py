"""`make dist` refuses a wheel a package index would refuse: its metadata held to what PyPI checks on an upload.

The wheel and sdist themselves are built and checked whole by `make dist` (maintainers/distributions.py), which
.ci/run and the Release workflow run; these hold the metadata rules to each family of mistake.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from trove_classifiers import classifiers, deprecated_classifiers

from maintainers.distributions import index_metadata_problems

ROOT = Path(__file__).resolve().parents[2]
# Core metadata as the library's wheel writes it, cut to what these rules read.
METADATA = """\
Metadata-Version: 2.4
Name: median-lambda
Version: 3.0.0
Summary: Serve your own tools to Median's customer-support agent from one AWS Lambda function
Project-URL: Homepage, https://median.sh
Project-URL: Source, https://github.com/acme/median-template
License-Expression: MIT-0
Classifier: Framework :: Pytest
Classifier: Typing :: Typed
Requires-Python: <3.14,>=3.13

"""


def problems_with(old: str, new: str) -> list[str]:
    assert old in METADATA
    return index_metadata_problems(METADATA.replace(old, new).encode("utf-8"))


def test_the_librarys_own_metadata_passes() -> None:
    assert index_metadata_problems(METADATA.encode("utf-8")) == []


def test_every_classifier_the_library_declares_is_on_pypis_list_and_none_deprecated() -> None:
    # GIVEN the classifiers median-lambda/pyproject.toml declares
    declared = tomllib.loads((ROOT / "median-lambda" / "pyproject.toml").read_text())["project"]["classifiers"]
    # THEN PyPI takes each
    assert declared
    assert [name for name in declared if name not in classifiers or name in deprecated_classifiers] == []


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("Name: median-lambda", "Name: median lambda!", "the wheel's metadata is invalid: 'median lambda!' is invalid"),
        (
            "Classifier: Typing :: Typed",
            "Classifier: Typing :: Typo",
            "the wheel's classifier 'Typing :: Typo' is not on PyPI's list",
        ),
        (
            "Classifier: Typing :: Typed",
            "Classifier: Natural Language :: Ukranian",
            "the wheel's classifier 'Natural Language :: Ukranian' is deprecated on PyPI's list",
        ),
        ("Classifier: Framework :: Pytest\nClassifier: Typing :: Typed\n", "", "the wheel has no classifiers"),
        ("Project-URL: Homepage, https://median.sh\n", "", "the wheel's project.urls has no Homepage"),
        (
            "Project-URL: Source, https://github.com/acme/median-template",
            "Project-URL: The template repository this release was built in, https://github.com/acme/x",
            "the wheel's link 'The template repository this release was built in' (https://github.com/acme/x) is "
            "not one PyPI takes",
        ),
        (
            "Project-URL: Source, https://github.com/acme/median-template",
            "Project-URL: Source, git@github.com:acme/median-template",
            "the wheel's link 'Source' (git@github.com:acme/median-template) is not one PyPI takes",
        ),
    ],
)
def test_what_an_index_refuses_is_named(old: str, new: str, said: str) -> None:
    # GIVEN the wheel's metadata with one thing an index would refuse
    # WHEN make dist checks it
    # THEN that thing is named
    assert any(problem.startswith(said) for problem in problems_with(old, new)), problems_with(old, new)
