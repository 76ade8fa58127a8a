"""What a tool's input model can only show once its module has run: whether pydantic can finish it.

With `from __future__ import annotations` (the README's snippet and the scaffold use it),
pydantic does not fail at import on a field whose annotation names nothing (`amountCents: itn`):
it leaves the model unfinished, and the mistake surfaced later as a pydantic traceback from the
framework's schema code (`make check`), a 500 `internal_error` (GET), or a dead reloader. A
model whose Median schema cannot be built (a `Callable` field, an arbitrary class) failed there
too. Checked once the tools package has imported, each is one more `tools/<file>.py:<line>:
<what is wrong>` line of the ToolLoadError the loader raises, at the field the author wrote. So
are two tools with one name, which the sync rules refuse as well: in a test run (`make
test-tools`) the first registered answered both names' calls, and the other's tests passed on it.

The checks build every tool's schema, so they run only where that costs nobody: away from a
deployed Lambda. A deployed artifact was checked by `sam build` (`python -m handler check`
runs them first), and its cold POST keeps building only the called tool's validator.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, PydanticUndefinedAnnotation, TypeAdapter

from handler.manifest.schema import flat_input_schema
from handler.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Sequence

    from handler.authoring.registry import Tool

_SCALARS_HINT = "a field is one of str, float, int, bool, a Literal or an Enum"


def registration_problems(tools: Sequence[Tool]) -> list[str]:
    """One `file:line: what is wrong` line per input model that pydantic cannot finish, each model once,
    and per tool whose name another has."""
    lines: list[str] = []
    seen: set[type[BaseModel]] = set()
    for tool in tools:
        if tool.input_model in seen:
            continue
        seen.add(tool.input_model)
        line = _model_problem(tool)
        if line is not None and line not in lines:
            lines.append(line)
    return lines + repeated_names(tools)


def repeated_names(tools: Sequence[Tool]) -> list[str]:
    """A line per tool named as an earlier one, naming both places: a call would reach one of them only,
    whichever the modules' order registered first, and the tests of the other would pass on it."""
    first: dict[str, Tool] = {}
    lines = []
    for tool in tools:
        if tool.name not in first:
            first[tool.name] = tool
            continue
        lines.append(
            f"{tool.location}: two tools are named {tool.name}, here and at {first[tool.name].location}: a call "
            'reaches only one; rename one (@tool(name="..."))'
        )
    return lines


def _model_problem(tool: Tool) -> str | None:
    model = tool.input_model
    try:
        flat_input_schema(model)
    except Exception as error:  # the author's model: any failure is theirs to fix, and is named
        undefined = _undefined_annotation(model)
        if undefined is not None:
            return undefined
        return _schema_failure(tool, model, error)
    return None


def _undefined_annotation(model: type[BaseModel]) -> str | None:
    """The line of a field whose postponed annotation names nothing, if that is why the model is unfinished."""
    found = unresolved_annotation(model)
    return f"{found[0]}: {found[1]}" if found is not None else None


def unresolved_annotation(model: type[BaseModel]) -> tuple[str, str] | None:
    """(file:line, what is wrong) of a field whose postponed annotation names nothing, if that leaves
    the model unfinished. A tool's Settings class is held to it too (handler/authoring/api.py)."""
    for cls in _authored_models(model):
        if cls.__pydantic_complete__:
            continue
        try:
            # An empty namespace of the caller's: by default pydantic would also resolve the
            # annotation among this function's local variables, which are not the author's.
            cls.model_rebuild(raise_errors=True, _parent_namespace_depth=0)
        except PydanticUndefinedAnnotation as undefined:
            name = undefined.name or str(undefined)
            field = _field_naming(cls, name)
            declaring = _declaring_class(cls, field) if field else cls
            place = _field_line(declaring, field) if field else _class_line(cls)
            where = f"{declaring.__name__}.{field}" if field else cls.__name__
            return (
                place,
                f"{where}: the annotation names {name!r}, which is not defined or imported "
                "in this module; fix its spelling, or import it",
            )
        except Exception:  # noqa: S112 - another reason; the schema's own failure names it
            continue
    return None


def _schema_failure(tool: Tool, model: type[BaseModel], error: Exception) -> str:
    field = _field_failing_schema(model)
    what = _first_paragraph(error)
    if field is not None:
        declaring = _declaring_class(model, field)
        return (
            f"{_field_line(declaring, field)}: {declaring.__name__}.{field}: Median's input schema cannot be "
            f"built for this field ({what}); {_SCALARS_HINT}"
        )
    return (
        f"{_class_line(model) or tool.location}: {model.__name__}, the input of {tool.name}: its input schema "
        f"cannot be built ({type(error).__name__}: {what})"
    )


def _authored_models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The model and the pydantic models it derives from, but BaseModel: where the author's fields are declared."""
    return [
        cls for cls in model.__mro__ if isinstance(cls, type) and issubclass(cls, BaseModel) and cls is not BaseModel
    ]


def _field_naming(model: type[BaseModel], name: str) -> str | None:
    """The field whose written (postponed) annotation mentions `name`."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    for cls in _authored_models(model):
        for field, annotation in vars(cls).get("__annotations__", {}).items():
            if isinstance(annotation, str) and pattern.search(annotation):
                return str(field)
    return None


def _field_failing_schema(model: type[BaseModel]) -> str | None:
    """The first field whose own JSON Schema cannot be built; None if none fails alone."""
    for name, info in model.model_fields.items():
        annotation: Any = info.annotation
        try:
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                annotation.model_json_schema()
            else:
                # Allowed here, whatever the model says: the question is the schema, not the validator.
                TypeAdapter(annotation, config=ConfigDict(arbitrary_types_allowed=True)).json_schema()
        except Exception:
            return name
    return None


def _declaring_class(model: type[BaseModel], field: str) -> type[BaseModel]:
    for cls in _authored_models(model):
        if field in vars(cls).get("__annotations__", {}):
            return cls
    return model


def _class_line(cls: type) -> str:
    """ "tools/refund.py:8", where the class is defined; empty if its source cannot be found."""
    try:
        _, line = inspect.getsourcelines(cls)
        filename = inspect.getsourcefile(cls)
    except (OSError, TypeError):
        return ""
    return f"{shown_path(filename)}:{line}" if filename else ""


def _field_line(cls: type, field: str) -> str:
    """ "tools/refund.py:10", the line declaring `field` in the class; the class's line if not found."""
    try:
        source, first = inspect.getsourcelines(cls)
        filename = inspect.getsourcefile(cls)
        tree = ast.parse(textwrap.dedent("".join(source)))
    except (OSError, TypeError, SyntaxError):
        return _class_line(cls)
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    for statement in body:
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.target.id == field
            and filename
        ):
            return f"{shown_path(filename)}:{first + statement.lineno - 1}"
    return _class_line(cls)


def _first_paragraph(error: BaseException) -> str:
    """pydantic's messages run to paragraphs and a link: the first paragraph, on one line."""
    return " ".join(str(error).strip().split("\n\n", 1)[0].split()) or type(error).__name__


# --- pydantic's refusals at import, which it raises at the `class` line: the field's line instead --------


def refusal_at_class(error: BaseException, filename: str, line: int) -> tuple[int, str] | None:
    """(the line, what is wrong) of a model pydantic refused while its `class` statement ran, at the
    field or validator the refusal is about; None when the refusal is not one of those known here."""
    code = getattr(error, "code", None)
    try:
        tree = ast.parse(Path(filename).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    model = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and line in (node.lineno, *(d.lineno for d in node.decorator_list))
        ),
        None,
    )
    if model is None:
        return None
    message = str(error)
    if code == "schema-for-unknown-type":
        named = re.search(r"<class '(?:[\w.]+\.)?(\w+)'>", message)
        field = _annotated_naming(model, named.group(1)) if named else None
        if field is not None and named is not None:
            return field.lineno, (
                f"{model.name}.{_target(field)}: pydantic cannot validate {named.group(1)}, a class it does not "
                f"know; {_SCALARS_HINT}"
            )
    elif code == "model-field-missing-annotation":
        named = re.search(r"Field '(\w+)'", message)
        assigned = _assigned(model, named.group(1)) if named else None
        if assigned is not None and named is not None:
            return assigned.lineno, (
                f"{model.name}.{named.group(1)}: a field needs a type annotation, as in "
                f'`{named.group(1)}: str = Field(description="...")`'
            )
    elif code == "decorator-missing-field":
        fields = {_target(node) for node in model.body if isinstance(node, ast.AnnAssign)}
        for function in (node for node in model.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)):
            for decorator in function.decorator_list:
                named_fields = [
                    argument.value
                    for argument in (decorator.args if isinstance(decorator, ast.Call) else [])
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str)
                ]
                unknown = [name for name in named_fields if name not in fields and name != "*"]
                if unknown:
                    return decorator.lineno, (
                        f"{model.name}.{function.name}: the validator names {unknown[0]!r}, which is no field of "
                        f"{model.name}; name one of its fields: {', '.join(sorted(fields)) or 'none yet'}"
                    )
    return None


def _target(node: ast.AnnAssign) -> str:
    return node.target.id if isinstance(node.target, ast.Name) else ast.unparse(node.target)


def _annotated_naming(model: ast.ClassDef, name: str) -> ast.AnnAssign | None:
    for node in model.body:
        if isinstance(node, ast.AnnAssign) and any(
            (isinstance(part, ast.Name) and part.id == name) or (isinstance(part, ast.Attribute) and part.attr == name)
            for part in ast.walk(node.annotation)
        ):
            return node
    return None


def _assigned(model: ast.ClassDef, name: str) -> ast.Assign | None:
    for node in model.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node
    return None
