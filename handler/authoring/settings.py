"""A tool's configuration: `tools/settings.toml` per stage, a local file, the environment, and `Settings`.

Where a value comes from, the first that has it:
1. the process environment (a variable named as the setting);
2. away from a deployed Lambda only, `tools/settings.local.toml`: git-ignored, never bundled;
3. `tools/settings.toml`'s table for the stage, `[$MEDIAN_STAGE]`;
4. `tools/settings.toml`'s `[default]` table.

`tools/settings.toml` is part of the code, so a changed value changes the artifact and the
next deploy publishes a new version, however many values there are. A `Settings` subclass
names the values a tool needs, typed; each field is read from the variable named by the
field's name upper-cased (or its alias), once per container. A missing or malformed value
fails when the tool is registered, naming the variable, the class's file:line and where
to set it.
"""

from __future__ import annotations

import inspect
import os
import tomllib
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from handler.runtime.env import package_directory, running_in_deployed_lambda, shown_path

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from handler.authoring.registry import Tool

STAGE_ENV = "MEDIAN_STAGE"
DEFAULT_STAGE = "default"
SETTINGS_FILE = "settings.toml"
LOCAL_SETTINGS_FILE = "settings.local.toml"
LOCAL_SETTINGS_EXAMPLE_FILE = "settings.local.example.toml"
# The local file's tables of secrets and SSM parameters for moto's server (docs/configuration.md).
LOCAL_SEED_TABLES = ("secrets", "parameters")

# What a TOML value may be for a setting: what an environment variable could also carry as text.
_SCALARS = (str, int, float, bool)


class ConfigurationError(Exception):
    """A settings file cannot be read, or a Settings class cannot be built from the configuration."""


class ConfigurationProblem(str):
    """One line of `make check` about configuration: the tools would fail to start where it applies."""

    __slots__ = ()


class Found(NamedTuple):
    value: Any
    source: str  # where it was found, as an author reads it: "tools/settings.toml [production]"


def stage() -> str:
    """The stage this process runs as: $MEDIAN_STAGE (template.yaml's Stage parameter), else `default`."""
    return os.environ.get(STAGE_ENV, "").strip() or DEFAULT_STAGE


def settings_directory() -> Path | None:
    """The tools package's directory, where settings.toml lives; None when there is no package."""
    directory = package_directory()
    return Path(directory) if directory else None


# Each file read once per container, as Lambda never changes a running container's code.
_files: dict[Path, dict[str, Any]] = {}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return _files[path]
    except KeyError:
        pass
    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except FileNotFoundError:
        document = {}
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{shown_path(str(path))}: not valid TOML: {error}") from None
    _files[path] = document
    return document


def _stage_document(path: Path) -> dict[str, Any]:
    """settings.toml, refusing a value outside every table: it would belong to no stage, silently."""
    document = _read_toml(path)
    stray = [name for name, value in document.items() if not isinstance(value, dict)]
    if stray:
        raise ConfigurationError(
            f"{shown_path(str(path))}: {stray[0]} is outside every table; put it under [{DEFAULT_STAGE}] "
            "(every stage) or a stage's table, such as [production]"
        )
    return document


def _local_document(path: Path) -> dict[str, Any]:
    """settings.local.toml's values, refusing a stage's table: the file is one machine's, which has no stages.

    Its [secrets] and [parameters] tables are not values: they seed moto's server under
    `make serve LOCAL_AWS=moto` (devserver/local_aws.py), and are left out here.
    """
    document = _read_toml(path)
    tables = [name for name, value in document.items() if isinstance(value, dict) and name not in LOCAL_SEED_TABLES]
    if tables:
        raise ConfigurationError(
            f"{shown_path(str(path))}: [{tables[0]}] is a table; this file holds NAME = value lines only, which "
            "apply to every run on this machine (besides the [secrets] and [parameters] tables that seed "
            "`make serve LOCAL_AWS=moto`)"
        )
    return {name: value for name, value in document.items() if name not in LOCAL_SEED_TABLES}


def _table(path: Path, name: str) -> dict[str, Any]:
    document = _stage_document(path)
    table = document.get(name, {})
    if not isinstance(table, dict):
        raise ConfigurationError(
            f"{shown_path(str(path))}: `{name}` must be a table ([{name}]) of NAME = value lines, not a value"
        )
    return table


def stage_tables() -> list[str]:
    """The stages settings.toml names, `default` first when it has one."""
    directory = settings_directory()
    if directory is None:
        return []
    document = _stage_document(directory / SETTINGS_FILE)
    return sorted(document, key=lambda name: (name != DEFAULT_STAGE, name))


def _layers(
    for_stage: str, *, environment: Mapping[str, str] | None, local: bool
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(source, values) from the highest precedence to the lowest."""
    if environment is not None:
        yield "the environment", environment
    directory = settings_directory()
    if directory is None:
        return
    if local:
        local_path = directory / LOCAL_SETTINGS_FILE
        yield shown_path(str(local_path)), _local_document(local_path)
    path = directory / SETTINGS_FILE
    shown = shown_path(str(path))
    if for_stage != DEFAULT_STAGE:
        yield f"{shown} [{for_stage}]", _table(path, for_stage)
    yield f"{shown} [{DEFAULT_STAGE}]", _table(path, DEFAULT_STAGE)


def find(name: str, *, for_stage: str | None = None, environment: Mapping[str, str] | None = None) -> Found | None:
    """Where the variable `name` is set for this process (or, given `for_stage`, for that stage as deployed).

    For this process: the environment, the local file (away from a deployed Lambda), then the stage's
    table and [default]. For a named stage: its table and [default] only, as a deploy would see them.
    """
    if for_stage is None:
        layers = _layers(
            stage(),
            environment=os.environ if environment is None else environment,
            local=not running_in_deployed_lambda(),
        )
    else:
        layers = _layers(for_stage, environment=environment, local=False)
    for source, values in layers:
        if name in values:
            found = values[name]
            if source == "the environment":
                found = found.strip()
                if not found:  # sam local sets every variable the template declares, unset ones to ""
                    continue
            return Found(found, source)
    return None


def value(name: str) -> str | None:
    """The variable's value as text for this process (TOML numbers and booleans as TOML writes them)."""
    found = find(name)
    if found is None:
        return None
    if isinstance(found.value, bool):
        return "true" if found.value else "false"
    return str(found.value)


def local_values() -> dict[str, str]:
    """Every value of the local file, as text: what `python -m handler local-env` gives sam local."""
    directory = settings_directory()
    if directory is None:
        return {}
    document = _local_document(directory / LOCAL_SETTINGS_FILE)
    return {
        name: ("true" if item else "false") if isinstance(item, bool) else str(item)
        for name, item in document.items()
        if isinstance(item, _SCALARS)
    }


def where_to_set(name: str) -> str:
    """Advice naming the files, for a value that is missing."""
    directory = settings_directory()
    folder = shown_path(str(directory)) if directory else "tools"
    current = stage()
    table = f"[{current}] or [{DEFAULT_STAGE}]" if current != DEFAULT_STAGE else f"[{DEFAULT_STAGE}] or a stage's table"
    where = f"add `{name} = ...` to {folder}/{SETTINGS_FILE} {table}"
    if not running_in_deployed_lambda():
        where += f", or for your own machine to {folder}/{LOCAL_SETTINGS_FILE}"
    return where


class Settings(BaseModel):
    """Typed configuration for tools: subclass it, and annotate a tool's parameter with the subclass.

        class CarrierSettings(Settings):
            carrier_base_url: str           # read from CARRIER_BASE_URL
            carrier_timeout_seconds: float = 5.0

    Each field is read from the variable named by its name upper-cased, or by its alias
    (`Field(alias="CARRIER_URL")`), through tools/settings.toml, the local file and the
    environment. One instance per container: `CarrierSettings.current()`.
    """

    # Each field is filled from its variable: its alias when given, else its name upper-cased.
    # A test may still build one by field name: CarrierSettings(carrier_base_url="http://localhost").
    model_config = ConfigDict(frozen=True, alias_generator=str.upper, validate_by_name=True, validate_by_alias=True)

    @classmethod
    def variables(cls) -> dict[str, str]:
        """{variable: field name} for each field."""
        return {(info.alias or name.upper()): name for name, info in cls.model_fields.items()}

    @classmethod
    def current(cls) -> Self:
        """This container's instance, read once; raises ConfigurationError naming what is wrong and where."""
        instance = _instances.get(cls)
        if instance is None:
            instance = _instances[cls] = cls._read(None)
        return instance  # type: ignore[return-value]

    @classmethod
    def _read(cls, for_stage: str | None) -> Self:
        found: dict[str, Found] = {}
        for variable in cls.variables():
            located = find(variable, for_stage=for_stage)
            if located is not None:
                found[variable] = located
        data = {variable: located.value for variable, located in found.items()}
        try:
            # Lax: "30" is the integer 30 when it comes from the environment, as text always does.
            return cls.model_validate(data)
        except ValidationError as error:
            raise ConfigurationError(cls._explain(error, found, for_stage)) from None

    @classmethod
    def _explain(cls, error: ValidationError, found: Mapping[str, Found], for_stage: str | None) -> str:
        problems = []
        for detail in error.errors(include_url=False, include_input=False):
            variable = str(detail["loc"][0]) if detail["loc"] else "?"
            if detail["type"] == "missing":
                if for_stage is None:
                    problems.append(f"{variable} is not set: {where_to_set(variable)}")
                else:
                    directory = settings_directory()
                    file = shown_path(str(directory / SETTINGS_FILE)) if directory else SETTINGS_FILE
                    tables = f"[{for_stage}]" + (f" or [{DEFAULT_STAGE}]" if for_stage != DEFAULT_STAGE else "")
                    problems.append(
                        f"{variable} is not set for stage {for_stage}: add `{variable} = ...` to {file} {tables}"
                    )
            else:
                where = found[variable].source if variable in found else "its value"
                problems.append(f"{variable} (from {where}) is not valid: {detail['msg']}")
        return f"{cls.__name__} cannot be read: " + "; ".join(problems)

    @classmethod
    def location(cls) -> str:
        """ "tools/carrier.py:8", where the class is declared."""
        try:
            _, line = inspect.getsourcelines(cls)
            filename = inspect.getsourcefile(cls) or "<unknown>"
        except (OSError, TypeError):
            return f"{cls.__module__}.{cls.__qualname__}"
        return f"{shown_path(filename)}:{line}"


_instances: dict[type[Settings], Settings] = {}


# True while `make check` or the build imports the tools: they check every stage table instead
# of this process's values, which on a build machine are none.
_deferred = False


def reading_deferred() -> bool:
    return _deferred


@contextmanager
def reading_deferred_while() -> Iterator[None]:
    """Registration records the Settings classes a tool takes without reading them (make check, the build)."""
    global _deferred
    _deferred = True
    try:
        yield
    finally:
        _deferred = False


def settings_taken(tools: Iterable[Tool]) -> list[type[Settings]]:
    """Each Settings class the tools take, once, in the order they are first taken."""
    taken: list[type[Settings]] = []
    for each in tools:
        for _, dependency in each.dependencies:
            if isinstance(dependency, type) and issubclass(dependency, Settings) and dependency not in taken:
                taken.append(dependency)
    return taken


def forget_configuration() -> None:
    """Read the files and build each Settings anew at the next use: tests, and make serve's reload."""
    _files.clear()
    _instances.clear()


class NamedBySetting(NamedTuple):
    """A secret's or parameter's name that a variable holds: `Secret(setting="CARRIER_TOKEN_SECRET")`."""

    variable: str
    what: str  # "parcel_eta's secret"
    location: str  # where the tool is declared: "tools/parcels.py:40"


def problems_in_stages(
    classes: Iterable[type[Settings]], *, local: bool = False, names: Iterable[NamedBySetting] = ()
) -> list[ConfigurationProblem]:
    """`<Settings class file:line>: stage <name>: <what is wrong>` for every deployable stage and each class used.

    The stages are the tables of settings.toml other than [default], each over [default]; with
    none, [default] alone. The environment is not consulted: a deploy does not carry this one's.
    With `local`, and a local file present, also what this machine's runs would read
    (make serve, the tests): the environment, the local file, then $MEDIAN_STAGE's table.
    """
    classes, names = list(classes), list(names)
    if not classes and not names:
        return []
    try:
        tables = stage_tables()
    except ConfigurationError as error:
        return [ConfigurationProblem(error)]
    stages = [name for name in tables if name != DEFAULT_STAGE] or [DEFAULT_STAGE]
    problems: list[ConfigurationProblem] = []
    for settings_class in classes:
        for each in stages:
            try:
                settings_class._read(each)
            except ConfigurationError as error:
                problems.append(ConfigurationProblem(f"{settings_class.location()}: stage {each}: {error}"))
        directory = settings_directory()
        if local and directory is not None and (directory / LOCAL_SETTINGS_FILE).exists():
            try:
                settings_class._read(None)
            except ConfigurationError as error:
                problems.append(ConfigurationProblem(f"{settings_class.location()}: on this machine: {error}"))
    directory = settings_directory()
    file = shown_path(str(directory / SETTINGS_FILE)) if directory else SETTINGS_FILE
    for named in names:
        for each in stages:
            if find(named.variable, for_stage=each) is None:
                where = f"[{each}]" + (f" or [{DEFAULT_STAGE}]" if each != DEFAULT_STAGE else "")
                problems.append(
                    ConfigurationProblem(
                        f"{named.location}: stage {each}: {named.variable} is not set, so {named.what}'s name is "
                        f"unknown: add `{named.variable} = ...` to {file} {where}"
                    )
                )
    return problems
