"""`make check ALSO=...`: this endpoint's manifest checked with the organisation's other endpoints.

Median wants each tool name once across an organisation's endpoints, and 20 tools in all.
The others are saved manifest files, or endpoints asked with a signed GET: here the dev
server (a real process serving a tools package of the test's own), and a small HTTP server
for the answers a wrong URL gets.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.cli.commands import main
from median_lambda.testing import TEST_KEY
from pydantic import BaseModel, Field

from tests.devserver_process import running_devserver
from tests.project_copy import copy_project
from tests.support.ports import free_port
from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from median_lambda.authoring.registry import Registry

    from tests.devserver_process import DevServerProcess

ORGANISATION_RULE = "Median wants each name once across the organisation"


class InvoiceInput(BaseModel):
    invoice: str = Field(description="The invoice number.")


def _register(*names: str) -> None:
    for name in names:

        def look_up(args: InvoiceInput) -> str:
            """Look up an invoice."""
            return args.invoice

        tool(risk="low", name=name)(look_up)


@pytest.fixture
def serve(scratch_registry: Registry) -> Callable[..., None]:
    """This endpoint's tools: exactly the names a test registers."""
    scratch_registry.tools.clear()
    scratch_registry.diagnostics.clear()
    return _register


def _entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Look up an invoice.",
        "risk": "low",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    }


def _manifest(*names: str) -> dict[str, Any]:
    return {"version": 1, "tools": [_entry(name) for name in names], "diagnostics": False}


@pytest.fixture
def saved(tmp_path: Path) -> Callable[..., str]:
    """A saved manifest file (as `median manifest > file` writes it), by its path."""

    def write(file_name: str, *names: str, document: Any = None, text: str | None = None) -> str:
        path = tmp_path / file_name
        path.write_text(text if text is not None else json.dumps(document or _manifest(*names)), encoding="utf-8")
        return str(path)

    return write


def _check(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, list[str], list[str]]:
    status = main(["check", *arguments])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.splitlines()


# --- saved manifests -----------------------------------------------------------------------


def test_a_name_another_endpoint_serves_is_one_line_naming_both(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN this endpoint serves findInvoice and refundInvoice, and a second endpoint serves findInvoice too
    serve("findInvoice", "refundInvoice")
    billing = saved("billing.json", "findInvoice", "sendReceipt")
    # WHEN the two are checked together
    status, _, err = _check(capsys, "--also", billing)
    # THEN one line names the shared tool and both endpoints, and the check fails
    assert status == 1
    assert f"findInvoice: name: is served by this endpoint and {billing}; {ORGANISATION_RULE}" in err
    assert [line for line in err if "is served by" in line] == [err[0]]


def test_a_name_two_other_endpoints_share_is_named_too(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two other endpoints that both serve sendReceipt, which this one does not
    serve("findInvoice")
    billing = saved("billing.json", "sendReceipt")
    shop = saved("shop.json", "sendReceipt", "trackParcel")
    # WHEN all three are checked together
    status, _, err = _check(capsys, "--also", billing, shop)
    # THEN the line names the two endpoints that share it
    assert status == 1
    assert f"sendReceipt: name: is served by {billing} and {shop}; {ORGANISATION_RULE}" in err


def test_more_than_20_tools_in_all_is_one_line_counting_each_endpoint(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN 2 tools here, 10 and 9 on two other endpoints: 21 in all, no name twice
    serve("findInvoice", "refundInvoice")
    billing = saved("billing.json", *(f"billing{index}" for index in range(10)))
    shop = saved("shop.json", *(f"shop{index}" for index in range(9)))
    # WHEN they are checked together
    status, _, err = _check(capsys, "--also", billing, shop)
    # THEN one line gives the total and the count per endpoint, and the check fails
    assert status == 1
    assert (
        f"organisation: tools: has 21 tools across 3 endpoints (this endpoint 2, {billing} 10, {shop} 9); "
        "Median accepts at most 20"
    ) in err


def test_exactly_20_tools_with_distinct_names_pass(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN 2 tools here and 18 elsewhere, every name once
    serve("findInvoice", "refundInvoice")
    billing = saved("billing.json", *(f"billing{index}" for index in range(18)))
    # WHEN they are checked together
    status, out, err = _check(capsys, "--also", billing)
    # THEN the check passes and says so for the organisation too
    assert status == 0, err
    assert out[-1] == "OK across the organisation: 20/20 tools across 2 endpoints, each name once."


def test_an_endpoint_with_no_tools_yet_is_checked_with_the_others(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN no tools here yet (the examples deleted), and another endpoint with three
    serve()
    billing = saved("billing.json", "findInvoice", "refundInvoice", "sendReceipt")
    # WHEN they are checked together
    status, out, err = _check(capsys, "--also", billing)
    # THEN both checks pass, and the organisation's count is the other endpoint's
    assert status == 0, err
    assert out[-1] == "OK across the organisation: 3/20 tools across 2 endpoints, each name once."


def test_a_name_repeated_inside_one_other_endpoint_is_left_to_its_own_check(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN another endpoint whose manifest repeats a name this endpoint does not serve
    serve("findInvoice")
    shop = saved("shop.json", "trackParcel", "trackParcel")
    # WHEN they are checked together
    status, _, err = _check(capsys, "--also", shop)
    # THEN that endpoint's own check is where it belongs: no organisation problem is made of it
    assert status == 0, err


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("<html>Not found</html>", "is not JSON, so it is no manifest"),
        ("", "is not JSON, so it is no manifest"),
        ("[1, 2]", "holds JSON list, not a manifest object"),
        ('{"version": 1}', 'has no "tools" list, so it is no manifest'),
        ('{"version": 1, "tools": {}}', 'has no "tools" list, so it is no manifest'),
        ('{"tools": []}', 'has no "version": 1'),
        ('{"version": 2, "tools": []}', 'has no "version": 1'),
        ('{"version": 1, "tools": [{"description": "x"}]}', "has a tool without a name (tools[0])"),
        ('{"version": 1, "tools": ["findInvoice"]}', "has a tool without a name (tools[0])"),
        ("[" * 100_000, "is not JSON, so it is no manifest"),
    ],
)
def test_a_file_that_is_no_manifest_is_one_line_naming_it(
    serve: Callable[..., None],
    saved: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
    content: str,
    reason: str,
) -> None:
    # GIVEN a SOURCE file that holds something other than a manifest
    serve("findInvoice")
    source = saved("other.json", text=content)
    # WHEN it is checked with this endpoint
    status, _, err = _check(capsys, "--also", source)
    # THEN one line names the file and what it holds instead, and the check fails
    assert status != 0
    assert len(err) == 1
    assert err[0].startswith(f"error: --also {source}: {reason}")


def test_a_file_that_cannot_be_read_is_one_line_naming_it(
    serve: Callable[..., None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a SOURCE that does not exist, and one that is a folder
    serve("findInvoice")
    for source in (str(tmp_path / "missing.json"), str(tmp_path)):
        # WHEN it is checked with this endpoint
        status, _, err = _check(capsys, "--also", source)
        # THEN one line names it and why it cannot be read
        assert status != 0
        assert len(err) == 1
        assert err[0].startswith(f"error: --also {source}: cannot read it: ")


def test_a_source_given_twice_is_refused(
    serve: Callable[..., None], saved: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the same SOURCE twice (every name would seem served twice)
    serve("findInvoice")
    billing = saved("billing.json", "sendReceipt")
    # WHEN it is checked
    status, _, err = _check(capsys, "--also", billing, billing)
    # THEN the mistake itself is named
    assert status == 2
    assert err == [f"error: --also names {billing} twice; give each endpoint once"]


def test_without_also_nothing_is_said_about_the_organisation(
    serve: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN this endpoint alone
    serve("findInvoice")
    # WHEN it is checked without --also
    status, out, _ = _check(capsys)
    # THEN the check is this endpoint's alone
    assert status == 0
    assert not [line for line in out if "organisation" in line]


# --- endpoints asked by URL ------------------------------------------------------------------------

REMOTE_TOOLS = """
from pydantic import BaseModel, Field

from median_lambda import tool


class ParcelInput(BaseModel):
    parcel: str = Field(description="The parcel number.")


@tool(risk="low")
def track_parcel(args: ParcelInput) -> str:
    \"\"\"Track a parcel.\"\"\"
    return args.parcel


@tool(risk="low")
def find_invoice(args: ParcelInput) -> str:
    \"\"\"Find the invoice of a parcel.\"\"\"
    return args.parcel
"""


@pytest.fixture(scope="module")
def other_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServerProcess]:
    """Another endpoint: the dev server serving trackParcel and findInvoice, verifying with TEST_KEY."""
    root = tmp_path_factory.mktemp("other-endpoint")
    (root / "tools").mkdir()
    (root / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (root / "tools" / "parcels.py").write_text(REMOTE_TOOLS, encoding="utf-8")
    with running_devserver(root, cwd=root, tools_package=None, env={"MEDIAN_DEV_KEY": TEST_KEY}) as server:
        yield server


def test_an_endpoint_url_is_read_with_a_signed_get_under_median_key(
    serve: Callable[..., None],
    other_endpoint: DevServerProcess,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the other endpoint's key in $MEDIAN_KEY, and findInvoice served by both endpoints
    monkeypatch.setenv("MEDIAN_KEY", TEST_KEY)
    serve("findInvoice")
    # WHEN this endpoint is checked with that one's URL
    status, _, err = _check(capsys, "--also", other_endpoint.url)
    # THEN its manifest was fetched (the signature verified) and the shared name is named with both endpoints
    assert status == 1
    assert f"findInvoice: name: is served by this endpoint and {other_endpoint.url}; {ORGANISATION_RULE}" in err


def test_an_endpoint_url_is_read_with_the_key_in_key_file(
    serve: Callable[..., None],
    other_endpoint: DevServerProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the key in a file, nothing in $MEDIAN_KEY, and no name in common
    monkeypatch.delenv("MEDIAN_KEY", raising=False)
    key_file = tmp_path / "median.key"
    key_file.write_text(TEST_KEY + "\n", encoding="utf-8")
    serve("refundInvoice")
    # WHEN this endpoint is checked with the other's URL, signing with --key-file
    status, out, err = _check(capsys, "--also", other_endpoint.url, "--key-file", str(key_file))
    # THEN both manifests were read and together they pass
    assert status == 0, err
    assert out[-1] == "OK across the organisation: 3/20 tools across 2 endpoints, each name once."


def test_an_endpoint_that_refuses_the_key_is_one_line_naming_it(
    serve: Callable[..., None],
    other_endpoint: DevServerProcess,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a key the other endpoint does not verify with
    monkeypatch.setenv("MEDIAN_KEY", "mk_test_another_organisations_key")
    serve("refundInvoice")
    # WHEN this endpoint is checked with its URL
    status, _, err = _check(capsys, "--also", other_endpoint.url)
    # THEN one line names the URL, its 401, and the likely cause
    assert status != 0
    assert err == [
        f"error: --also {other_endpoint.url}: GET answered 401 Unauthorized, not a manifest "
        "(is $MEDIAN_KEY, or --key-file, that endpoint's key?)"
    ]


def test_an_unreachable_endpoint_is_one_line_naming_it(
    serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a URL nothing listens on
    monkeypatch.setenv("MEDIAN_KEY", TEST_KEY)
    serve("refundInvoice")
    url = f"http://127.0.0.1:{free_port()}/"
    # WHEN this endpoint is checked with it
    status, _, err = _check(capsys, "--also", url)
    # THEN one line names the URL and that no answer came
    assert status != 0
    assert len(err) == 1
    assert err[0].startswith(f"error: --also {url}: the signed GET got no answer: ")


class _FixedAnswer(BaseHTTPRequestHandler):
    """Answers every GET with the server's `answer`: what a wrong URL, or a broken endpoint, sends."""

    def do_GET(self) -> None:
        status, content_type, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's signature
        pass


@pytest.fixture
def fixed_server() -> Iterator[Callable[[int, str, bytes], str]]:
    """A loopback HTTP server answering what the test sets; gives its URL."""
    with serving_in_a_thread(ThreadingHTTPServer(("127.0.0.1", 0), _FixedAnswer)) as server:

        def answer(status: int, content_type: str, body: bytes) -> str:
            server.answer = (status, content_type, body)  # type: ignore[attr-defined]
            return f"http://127.0.0.1:{server.server_address[1]}/"

        yield answer


@pytest.mark.parametrize(
    ("status", "content_type", "body", "reason"),
    [
        (500, "application/json", b'{"error":{"code":"invalid_manifest"}}', "GET answered 500 Internal Server Error"),
        (404, "text/html", b"<html>Not Found</html>", "GET answered 404 Not Found"),
        (200, "text/html", b"<html>Welcome</html>", "is not JSON, so it is no manifest"),
        (200, "application/json", b'{"message":"hello"}', 'has no "version": 1'),
    ],
)
def test_an_endpoint_that_answers_no_manifest_is_one_line_naming_it(
    serve: Callable[..., None],
    fixed_server: Callable[[int, str, bytes], str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
    content_type: str,
    body: bytes,
    reason: str,
) -> None:
    # GIVEN a URL that answers an error, or a page that is not a manifest
    monkeypatch.setenv("MEDIAN_KEY", TEST_KEY)
    serve("refundInvoice")
    url = fixed_server(status, content_type, body)
    # WHEN this endpoint is checked with it
    exit_status, _, err = _check(capsys, "--also", url)
    # THEN one line names the URL and what came back instead of a manifest
    assert exit_status != 0
    assert len(err) == 1
    assert err[0].startswith(f"error: --also {url}: {reason}")


# --- make check ALSO=... ------------------------------------------------------------------------------


def test_make_check_takes_its_sources_from_also(tmp_path: Path) -> None:
    # GIVEN a project serving findInvoice, and two other endpoints' saved manifests, one also serving it
    project = copy_project(tmp_path / "project")
    project.write(
        "tools/invoices.py",
        """
        from pydantic import BaseModel, Field

        from median_lambda import tool


        class InvoiceInput(BaseModel):
            invoice: str = Field(description="The invoice number.")


        @tool(risk="low")
        def find_invoice(args: InvoiceInput) -> str:
            \"\"\"Find an invoice.\"\"\"
            return args.invoice
        """,
    )
    project.write("billing.json", json.dumps(_manifest("findInvoice")))
    project.write("shop.json", json.dumps(_manifest("trackParcel")))
    # WHEN `make check ALSO="billing.json shop.json"` runs there
    checked = project.make("check", "ALSO=billing.json shop.json")
    # THEN both were read: the shared name is named with its two endpoints, and make fails
    assert checked.returncode != 0
    assert f"findInvoice: name: is served by this endpoint and billing.json; {ORGANISATION_RULE}" in checked.stderr


def test_tools_that_fail_to_import_are_reported_and_the_sources_still_read(tmp_path: Path) -> None:
    # GIVEN a project whose one tool module raises when imported, and another endpoint's saved manifest
    project = copy_project(tmp_path / "project")
    project.write("tools/broken.py", "raise RuntimeError('the database URL is not set')\n")
    project.write("billing.json", json.dumps(_manifest("findInvoice")))
    # WHEN it is checked with the other endpoint
    checked = project.median("check", "--also", "billing.json")
    # THEN the import problem is the answer, in a line naming the module, and no traceback
    assert checked.returncode == 1
    assert "tools/broken.py:1" in checked.stderr
    assert "Traceback" not in checked.stderr
    assert ORGANISATION_RULE not in checked.stderr
