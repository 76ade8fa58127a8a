"""A tool's configuration: `tools/settings.toml` per stage, a local file, explicit overrides, and `Settings`.

Where a value comes from, the first that has it:
1. an override in the process environment, `MEDIAN_SETTING_<NAME>` (never a variable named NAME
   itself: the Lambda runtime and a shell set TZ, LANG, PATH, ... without asking);
2. away from a deployed Lambda only, `tools/settings.local.toml`: git-ignored, never bundled;
3. `tools/settings.toml`'s table for the stage, `[$MEDIAN_STAGE]`;
4. `tools/settings.toml`'s `[default]` table.

`tools/settings.toml` is part of the code, so a changed value changes the artifact and the
next deploy publishes a new version, however many values there are. A `Settings` subclass
names the values a tool needs, typed; each field is read from the variable named by the
field's name upper-cased (or its alias), once per container, at the first call of a tool that
takes it. A missing or malformed value fails that tool's calls alone (every other tool keeps
answering), naming the variable, the class's file:line and where to set it; `make check`, the
build and the deploy's preflight find it first, in every stage that can be deployed.

A stage is `default` or a table of settings.toml: any other $MEDIAN_STAGE is a typo, refused.
"""

from __future__ import annotations

import inspect
import json
import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Self

from pydantic import BaseModel, ConfigDict, ValidationError

# Re-exported, where authors' and tests' imports have always found them.
from median_lambda.protocol import ANY_STAGE as ANY_STAGE
from median_lambda.protocol import DEFAULT_STAGE as DEFAULT_STAGE
from median_lambda.protocol import STAGE_ENV as STAGE_ENV
from median_lambda.runtime.env import package_directory, running_in_deployed_lambda, shown_path
from median_lambda.runtime.time_limits import Stopped

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Mapping

    from median_lambda.authoring.registry import Tool

# What overrides a setting from the environment: MEDIAN_SETTING_CARRIER_BASE_URL for CARRIER_BASE_URL.
OVERRIDE_PREFIX = "MEDIAN_SETTING_"
SETTINGS_FILE = "settings.toml"
LOCAL_SETTINGS_FILE = "settings.local.toml"
LOCAL_SETTINGS_EXAMPLE_FILE = "settings.local.example.toml"
# The local file's tables of secrets and SSM parameters for moto's server (docs/configuration.md).
LOCAL_SEED_TABLES = ("secrets", "parameters")

# What a TOML value may be for a setting: what an environment variable could also carry as text.
_SCALARS = (str, int, float, bool)


class ConfigurationError(Exception):
    """A settings file cannot be read, or a Settings class cannot be built from the configuration."""


class SettingsCrashed(ConfigurationError):
    """A Settings class's own code (a validator, `model_post_init`) raised what pydantic does not report as
    a value's problem (anything but a ValueError): the author's bug, named by the class and the exception's
    type, never its message, which may quote a value. Its `__cause__` is that exception."""


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
    `make serve LOCAL_AWS=moto` (median_lambda/devserver/local_aws.py), and are left out here.
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


def known_stages() -> list[str]:
    """The stages a function may run as: `default`, and each table of settings.toml; `default` and
    ANY_STAGE when there is no settings.toml, whose stages no name can miss."""
    directory = settings_directory()
    if directory is None or not (directory / SETTINGS_FILE).is_file():
        return [DEFAULT_STAGE, ANY_STAGE]
    return [DEFAULT_STAGE, *(name for name in stage_tables() if name != DEFAULT_STAGE)]


def settings_file_shown() -> str:
    """settings.toml's path as the author reads it: "tools/settings.toml"."""
    directory = settings_directory()
    return shown_path(str(directory / SETTINGS_FILE)) if directory else f"tools/{SETTINGS_FILE}"


def unknown_stage(named: str, known: Iterable[str]) -> str | None:
    """Why `named` is no stage (a typo, most often), with the fix; None when it is one of `known`."""
    known = list(known)
    if named == DEFAULT_STAGE or named in known or ANY_STAGE in known:
        return None
    return (
        f"{STAGE_ENV}={named} names no stage of {settings_file_shown()}, whose stages are {', '.join(known)}: "
        f"check its spelling, or add a [{named}] table to the file (it may be empty)"
    )


def this_stage_problem() -> str | None:
    """Why this process's stage is no stage of settings.toml; None when it is one. Raises ConfigurationError
    when settings.toml itself cannot be read."""
    return unknown_stage(stage(), known_stages())


def _layers(for_stage: str, *, local: bool) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(source, values) of the files, from the highest precedence to the lowest."""
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


def override_of(name: str) -> str:
    """The variable that overrides the setting `name` from the environment: MEDIAN_SETTING_<name>."""
    return f"{OVERRIDE_PREFIX}{name}"


def find(name: str, *, for_stage: str | None = None) -> Found | None:
    """Where the variable `name` is set for this process (or, given `for_stage`, for that stage as deployed).

    For this process: its override in the environment (MEDIAN_SETTING_<name>), the local file (away
    from a deployed Lambda), then the stage's table and [default]. For a named stage: its table and
    [default] only, as a deploy would see them. A variable called `name` itself is never read.
    """
    if for_stage is not None:
        return _in_files(name, for_stage, local=False)
    override = os.environ.get(override_of(name), "").strip()  # sam local sets every declared one, unset ones to ""
    found = (
        Found(override, f"the environment ({override_of(name)})")
        if override
        else _in_files(name, stage(), local=not running_in_deployed_lambda())
    )
    if name not in _unread_said and not running_in_deployed_lambda():
        _say_if_unread(name, found)
    return found


def _in_files(name: str, for_stage: str, *, local: bool) -> Found | None:
    for source, values in _layers(for_stage, local=local):
        if name in values:
            return Found(values[name], source)
    return None


# The variables whose namesake in the environment was said to be unread, once each per process.
_unread_said: set[str] = set()


def _say_if_unread(name: str, found: Found | None) -> None:
    """On the author's machine: a variable named as the setting, set to another value, is said to be unread.

    Until this project read overrides from MEDIAN_SETTING_<NAME> only, a variable of the setting's own
    name won, so a test or a shell that still sets one would otherwise see the file's value in silence.
    """
    plain = os.environ.get(name, "").strip()
    if not plain or (found is not None and as_text(found.value) == plain):
        return
    _unread_said.add(name)
    from median_lambda.runtime import observability

    where = found.source if found is not None else "nowhere"
    observability.logger.warning(
        f"{name} is set in this environment and not read: the setting comes from {where}. To override a setting "
        f"from the environment, set {override_of(name)} (README.md's configuration guide)",
        extra={"setting": name},
    )


def as_text(found: Any) -> str:
    """A value as text (TOML numbers and booleans as TOML writes them): what a variable would carry."""
    if isinstance(found, bool):
        return "true" if found else "false"
    return str(found)


def value(name: str) -> str | None:
    """The variable's value as text for this process (TOML numbers and booleans as TOML writes them)."""
    found = find(name)
    return None if found is None else as_text(found.value)


def local_values() -> dict[str, str]:
    """Every value of the local file, as text: what `python -m median_lambda local-env` gives sam local."""
    directory = settings_directory()
    if directory is None:
        return {}
    document = _local_document(directory / LOCAL_SETTINGS_FILE)
    return {name: as_text(item) for name, item in document.items() if isinstance(item, _SCALARS)}


def local_file_problem() -> str | None:
    """What is wrong with this machine's tools/settings.local.toml, named as such; None when it reads (or is absent).

    It never ships, so it never stops a build or a deploy: it matters to `make serve`, the tests and
    `make check`'s "on this machine" line.
    """
    directory = settings_directory()
    if directory is None:
        return None
    try:
        _local_document(directory / LOCAL_SETTINGS_FILE)
    except ConfigurationError as error:
        return f"{error} (this machine's own file: make serve and the tests read it; the build and deploys never do)"
    return None


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
    (`Field(alias="CARRIER_URL")`), through tools/settings.toml, the local file and its override
    in the environment (MEDIAN_SETTING_CARRIER_URL). One instance per container, read at its first
    use: `CarrierSettings.current()`.
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
        """This container's instance, read at its first use; raises ConfigurationError naming the class's
        file:line, what is wrong and where to set it (SettingsCrashed where the class's own code raised)."""
        instance = _instances.get(cls)
        if instance is None:
            try:
                instance = _instances[cls] = cls._read(None)
            except SettingsCrashed as crashed:
                raise SettingsCrashed(f"{cls.location()}: {crashed}") from crashed.__cause__
            except ConfigurationError as error:
                raise ConfigurationError(f"{cls.location()}: {error}") from None
        return instance  # type: ignore[return-value]

    @classmethod
    def _validated(cls, values: dict[str, Any]) -> Self:
        """The instance `values` make, or pydantic's ValidationError; SettingsCrashed for whatever else the
        class's own code raises (a TypeError, a KeyError, ...: pydantic passes those through)."""
        try:
            return cls.model_validate(values)
        except (ValidationError, Stopped):
            raise
        except BaseException as error:  # a SystemExit too: the class's own code failed
            raise SettingsCrashed(
                f"{cls.__name__} cannot be built: its own code (a validator, or model_post_init) raised "
                f"{type(error).__name__}"
            ) from error

    @classmethod
    def _found(cls, for_stage: str | None) -> dict[str, Found]:
        found: dict[str, Found] = {}
        for variable in cls.variables():
            located = find(variable, for_stage=for_stage)
            if located is not None:
                found[variable] = located
        return found

    @classmethod
    def _read(cls, for_stage: str | None) -> Self:
        found = cls._found(for_stage)
        try:
            # Lax: "30" is the integer 30 when it comes from the environment, as text always does.
            return cls._validated({variable: located.value for variable, located in found.items()})
        except ValidationError as error:
            details = error.errors(include_url=False, include_input=False)
            raise ConfigurationError(cls._explain(details, found, for_stage)) from None

    @classmethod
    def check_stage(cls, for_stage: str, provided: Collection[str] = ()) -> None:
        """Raise ConfigurationError if a function deployed as `for_stage` could not read this class.

        `provided`: the variables the template sets for the function (MEDIAN_SETTING_<NAME>), whose
        values are the deploy's, unknown here: they count as set, and win over the files.
        """
        found = {variable: located for variable, located in cls._found(for_stage).items() if variable not in provided}
        try:
            cls._validated({variable: located.value for variable, located in found.items()})
        except ValidationError as error:
            details = [
                detail
                for detail in error.errors(include_url=False, include_input=False)
                if not (detail["type"] == "missing" and detail["loc"] and str(detail["loc"][0]) in provided)
            ]
            if details:
                raise ConfigurationError(cls._explain(details, found, for_stage)) from None

    @classmethod
    def _explain(cls, details: Iterable[Mapping[str, Any]], found: Mapping[str, Found], for_stage: str | None) -> str:
        problems = []
        for detail in details:
            variable = str(detail["loc"][0]) if detail["loc"] else "?"
            if detail["type"] == "missing":
                if for_stage is None:
                    problems.append(f"{variable} is not set: {where_to_set(variable)}")
                else:
                    tables = f"[{for_stage}]" + (f" or [{DEFAULT_STAGE}]" if for_stage != DEFAULT_STAGE else "")
                    problems.append(
                        f"{variable} is not set for stage {for_stage}: add `{variable} = ...` to "
                        f"{settings_file_shown()} {tables}"
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
    _unread_said.clear()


class NamedBySetting(NamedTuple):
    """A secret's or parameter's name that a variable holds: `Secret(setting="CARRIER_TOKEN_SECRET")`."""

    variable: str
    what: str  # "parcel_eta's secret"
    location: str  # where the tool is declared: "tools/parcels.py:40"


class DeployedStage(NamedTuple):
    """A stage something may deploy, and what does: "samconfig.toml's config-env staging"."""

    name: str
    why: str = ""


def deployable_stages(also: Iterable[DeployedStage] = ()) -> list[DeployedStage]:
    """`default` (what `make deploy` deploys unless told otherwise), each table of settings.toml, and each of
    `also` (the stages samconfig.toml deploys): each once, the first reason kept. Raises ConfigurationError
    when settings.toml cannot be read."""
    stages: dict[str, DeployedStage] = {}
    for each in [*also, *(DeployedStage(name) for name in known_stages() if name != ANY_STAGE)]:
        stages.setdefault(each.name, each)
    return sorted(stages.values(), key=lambda each: (each.name != DEFAULT_STAGE, each.name))


def problems_in_stages(
    classes: Iterable[type[Settings]],
    *,
    stages: Iterable[DeployedStage] | None = None,
    local: bool = False,
    names: Iterable[NamedBySetting] = (),
    provided: Collection[str] = (),
) -> list[ConfigurationProblem]:
    """`<Settings class file:line>: stage <name>: <what is wrong>` for every deployable stage and each class used.

    The stages are `default` and every table of settings.toml, each over [default], unless `stages`
    names them; a stage that is not one of those is a problem of its own (a function deployed as it
    refuses every request). The environment is not consulted: a deploy does not carry this one's;
    the variables the template sets (`provided`) count as set. With `local`, also what this
    machine's runs would read (make serve, the tests): problems_on_this_machine.
    """
    classes, names = list(classes), list(names)
    try:
        known = known_stages()
        stages = list(stages) if stages is not None else deployable_stages()
    except ConfigurationError as error:
        return [ConfigurationProblem(error)]
    problems: list[ConfigurationProblem] = []
    served: list[str] = []
    for each in stages:
        refused = unknown_stage(each.name, known)
        if refused is None:
            served.append(each.name)
            continue
        deployed_by = f" ({each.why})" if each.why else ""
        problems.append(
            ConfigurationProblem(
                f"stage {each.name}{deployed_by}: a function deployed as {each.name} would refuse every request: "
                f"{refused}"
            )
        )
    for settings_class in classes:
        for name in served:
            try:
                settings_class.check_stage(name, provided)
            except ConfigurationError as error:
                problems.append(ConfigurationProblem(f"{settings_class.location()}: stage {name}: {error}"))
    for named in names:
        for name in served:
            if named.variable not in provided and not _names_something(find(named.variable, for_stage=name)):
                where = f"[{name}]" + (f" or [{DEFAULT_STAGE}]" if name != DEFAULT_STAGE else "")
                problems.append(
                    ConfigurationProblem(
                        f"{named.location}: stage {name}: {named.variable} is not set, so {named.what}'s name is "
                        f"unknown: add `{named.variable} = ...` to {settings_file_shown()} {where}"
                    )
                )
    if local:
        problems.extend(problems_on_this_machine(classes, names))
    return problems


def _names_something(found: Found | None) -> bool:
    """Whether a setting that names a secret or parameter gives a name: set, and not to blank text."""
    return found is not None and bool(as_text(found.value).strip())


def changed_here() -> bool:
    """Whether this machine reads other values than a deploy of its stage would: a local file, or an override."""
    if any(name.startswith(OVERRIDE_PREFIX) and item.strip() for name, item in os.environ.items()):
        return True
    directory = settings_directory()
    return directory is not None and (directory / LOCAL_SETTINGS_FILE).exists()


def problems_on_this_machine(
    classes: Iterable[type[Settings]], names: Iterable[NamedBySetting] = ()
) -> list[ConfigurationProblem]:
    """`on this machine: ...`: what `make serve` and the tests would fail on here, and no deploy would.

    A local file that cannot be read, named as such; a $MEDIAN_STAGE that names no stage; and, when
    the local file or an override (MEDIAN_SETTING_<NAME>) changes what this machine reads, each class
    and secret's name as this process reads them. A settings.toml that cannot be read is every stage's
    problem, said there.
    """
    local_problem = local_file_problem()
    if local_problem is not None:
        return [ConfigurationProblem(f"on this machine: {local_problem}")]
    try:
        refused = this_stage_problem()
    except ConfigurationError:
        return []
    if refused is not None:
        return [ConfigurationProblem(f"on this machine: {refused}: make serve and the tests refuse to run as it")]
    if not changed_here():
        return []  # this machine reads what a deploy of its stage would: said there
    problems: list[ConfigurationProblem] = []
    for settings_class in classes:
        try:
            settings_class._read(None)
        except ConfigurationError as error:
            problems.append(ConfigurationProblem(f"{settings_class.location()}: on this machine: {error}"))
    for named in names:
        if not _names_something(find(named.variable)):
            problems.append(
                ConfigurationProblem(
                    f"{named.location}: on this machine: {named.variable} is not set, so {named.what}'s name is "
                    f"unknown: {where_to_set(named.variable)}"
                )
            )
    return problems


class Shown(NamedTuple):
    """One line of `make check`'s values: a variable, the value a stage gets, and where it comes from."""

    variable: str
    value: str
    source: str


_LONGEST_SHOWN = 80


def _as_toml(found: Any) -> str:
    if isinstance(found, bool):
        return "true" if found else "false"
    written = json.dumps(found, ensure_ascii=False) if isinstance(found, str) else str(found)
    return written if len(written) <= _LONGEST_SHOWN else written[: _LONGEST_SHOWN - 1] + "…"


def values_for(
    classes: Iterable[type[Settings]],
    names: Iterable[NamedBySetting],
    for_stage: str | None,
    provided: Mapping[str, str] | None = None,
) -> list[Shown]:
    """What each variable the tools read is, for `for_stage` as deployed (None: for this process), and from where.

    `provided`: the settings the template overrides for the function, with the values it writes.
    """
    provided = provided or {}
    shown: dict[str, Shown] = {}
    for settings_class in classes:
        for variable, field in settings_class.variables().items():
            if variable not in shown:
                info = settings_class.model_fields[field]
                default = None if info.is_required() else f"{settings_class.__name__}.{field}'s default"
                shown[variable] = _shown(variable, for_stage, provided, default, info.get_default())
    for named in names:
        if named.variable not in shown:
            shown[named.variable] = _shown(named.variable, for_stage, provided, None, None)
    return list(shown.values())


def _shown(
    variable: str, for_stage: str | None, provided: Mapping[str, str], default: str | None, default_value: Any
) -> Shown:
    if for_stage is not None and variable in provided:
        return Shown(variable, provided[variable], f"template.yaml's {override_of(variable)}")
    found = find(variable, for_stage=for_stage)
    if found is not None:
        return Shown(variable, _as_toml(found.value), found.source)
    if default is not None:
        return Shown(variable, _as_toml(default_value), default)
    return Shown(variable, "(not set)", "")
