"""The process's one SIGALRM timer, shared by nested limits (median_lambda/runtime/time_limits.py).

A tool's own limit stops it; inside it, the limits of its outbound calls interrupt them. Which
one is raised when several are due, where an interrupting one may land (a wait on the network,
never code that computes), and that nothing stays armed once they are lifted: each is what a
call cut short, or a tool left running, depends on. The waits are real: a socket pair, a
selector, a TLS connection on loopback, none of which is ever answered.
"""

from __future__ import annotations

import asyncio
import datetime
import inspect
import selectors
import signal
import socket
import ssl
import threading
import time
import traceback
import urllib.parse
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda.runtime import time_limits

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# Long enough that the wait below never ends on its own before a limit is due.
WAIT_SECONDS = 5.0


class Stopped(time_limits.Stopped):
    pass


class Interrupted(Exception):
    pass


class InnerInterrupted(Exception):
    pass


@pytest.fixture(autouse=True)
def nothing_left_armed() -> Iterator[None]:
    yield
    time_limits.lift_all()
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def started(thread: threading.Thread) -> threading.Thread:
    thread.start()
    return thread


def soon(seconds: float = 0.05) -> float:
    return time.monotonic() + seconds


def wait_in_network_code(seconds: float = WAIT_SECONDS) -> None:
    """Wait `seconds` as an HTTP client waits for its answer: in the socket module's reader (http.client's,
    urllib's), for bytes that never come."""
    left, right = socket.socketpair()
    try:
        left.settimeout(seconds)
        with left.makefile("rb") as reader, suppress(TimeoutError):
            reader.read(1)
    finally:
        left.close()
        right.close()


def wait_in_a_selector() -> None:
    """Wait as urllib3, httpx and asyncio wait for a socket to be readable: in a selector's poll."""
    left, right = socket.socketpair()
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(left, selectors.EVENT_READ)
            selector.select(WAIT_SECONDS)
    finally:
        left.close()
        right.close()


def compute_in_a_network_library(seconds: float) -> None:
    """Compute for `seconds` in urllib.parse, as a tool does with an answer that has come back."""
    query = "&".join(f"line{i}=refund%20{i}" for i in range(200))
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        urllib.parse.parse_qsl(query)


@contextmanager
def armed(*limits: time_limits.Limit | None) -> Iterator[None]:
    """Lift the limits however the block ends: one that repeats must not outlast its test."""
    try:
        yield
    finally:
        for limit in limits:
            time_limits.pop(limit)


def test_a_limit_that_stops_is_raised_where_the_code_waits() -> None:
    # GIVEN a limit that stops, due in a moment
    limit = time_limits.arm(soon(), Stopped, stops=True)
    # WHEN the code waits past it
    with pytest.raises(Stopped):
        time.sleep(WAIT_SECONDS)
    # THEN it was raised there, once
    assert time_limits.fired(limit)


def test_the_innermost_interrupting_limit_is_raised_and_holds_the_outer_one_back() -> None:
    # GIVEN an interrupting limit (a tool's outbound time) and one inside it (an AWS call's), due together
    outer = time_limits.arm(soon(), Interrupted, repeats=True)
    inner = time_limits.arm(soon(), InnerInterrupted)
    with armed(outer):
        # WHEN the code waits on the network past both
        with pytest.raises(InnerInterrupted):
            wait_in_network_code()
        # THEN the inner one's error came, and the outer one is held back while the inner is armed
        wait_in_network_code(3 * time_limits.REPEAT_SECONDS)
        assert not time_limits.fired(outer)
        # AND once the inner one is lifted, the outer one comes in turn
        time_limits.pop(inner)
        with pytest.raises(Interrupted):
            wait_in_network_code()


def test_a_due_limit_that_stops_wins_over_any_that_interrupts() -> None:
    # GIVEN a tool's limit that stops, and an outbound one inside it, both due
    tool = time_limits.arm(soon(), Stopped, stops=True)
    time_limits.arm(soon(), Interrupted, repeats=True)
    # WHEN the code waits on the network past them
    # THEN the tool is stopped: its time is up, whatever it was doing
    with armed(tool), pytest.raises(Stopped):
        wait_in_network_code()


def test_an_interrupting_limit_waits_for_a_wait_on_the_network() -> None:
    # GIVEN a limit that interrupts, already due
    limit = time_limits.arm(soon(0.0), Interrupted, repeats=True)
    with armed(limit):
        # WHEN the code first sleeps in its own code, then computes in a network library's
        time.sleep(3 * time_limits.REPEAT_SECONDS)
        compute_in_a_network_library(3 * time_limits.REPEAT_SECONDS)
        # THEN neither is interrupted: an answer that has come back is never lost to a limit
        assert not time_limits.fired(limit)
        # AND it is raised in the socket's wait that follows
        with pytest.raises(Interrupted):
            wait_in_network_code()
        assert time_limits.fired(limit)


def test_a_limit_that_stops_is_raised_in_code_that_computes_too() -> None:
    # GIVEN a tool's limit, which stops, due in a moment
    limit = time_limits.arm(soon(), Stopped, stops=True)
    # WHEN the tool computes past it, in a network library's code
    # THEN it is stopped there: its time is up, whatever it was doing
    with armed(limit), pytest.raises(Stopped):
        compute_in_a_network_library(WAIT_SECONDS)


def test_an_interrupting_limit_is_raised_in_a_selectors_wait() -> None:
    # GIVEN a limit that interrupts, due in a moment
    limit = time_limits.arm(soon(), Interrupted)
    # WHEN the code waits in a selector, as urllib3 and httpx wait for a socket
    # THEN it is interrupted there
    with armed(limit), pytest.raises(Interrupted):
        wait_in_a_selector()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for localhost and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(folder / "cert.pem"), str(folder / "key.pem")


def test_an_interrupting_limit_is_raised_in_an_ssl_read(tls_files: tuple[str, str]) -> None:
    # GIVEN a TLS connection on loopback whose server, handshake done, never sends a byte: as every AWS
    # endpoint and most HTTP APIs are reached, over TLS
    cert, key = tls_files
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    client_side = ssl.create_default_context(cafile=cert)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        accepted: list[ssl.SSLSocket] = []

        def serve() -> None:
            connection, _ = listener.accept()
            accepted.append(server_side.wrap_socket(connection, server_side=True))

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        with (
            socket.create_connection(listener.getsockname(), timeout=WAIT_SECONDS) as plain,
            client_side.wrap_socket(plain, server_hostname="localhost") as tls,
        ):
            server.join(WAIT_SECONDS)
            # AND a limit that interrupts, due in a moment
            limit = time_limits.arm(soon(), Interrupted)
            # WHEN the client waits for the answer
            # THEN it is interrupted in the SSL read
            with armed(limit), pytest.raises(Interrupted):
                tls.recv(1)
        for each in accepted:
            each.close()


def test_a_repeating_limit_is_raised_again_while_its_code_goes_on() -> None:
    # GIVEN a repeating limit past due, its first error caught as a library's retry would catch it
    with armed(time_limits.arm(soon(0.0), Interrupted, repeats=True)):
        with pytest.raises(Interrupted):
            wait_in_network_code()
        # WHEN the code goes on waiting on the network
        # THEN it meets the error again
        with pytest.raises(Interrupted):
            wait_in_network_code()


def test_a_limit_that_does_not_repeat_is_raised_once() -> None:
    # GIVEN an AWS call's limit past due, its error raised once
    with armed(time_limits.arm(soon(0.0), Interrupted)):
        with pytest.raises(Interrupted):
            wait_in_network_code()
        # WHEN botocore goes on with what it raised, waiting on the network again
        # THEN nothing more is raised: its veto on retries does the rest
        wait_in_network_code(3 * time_limits.REPEAT_SECONDS)


def test_lifting_a_limit_lifts_those_armed_inside_it_and_disarms_the_timer() -> None:
    # GIVEN a limit with two inside it, and a lifted limit left nothing behind
    outer = time_limits.arm(soon(WAIT_SECONDS), Stopped, stops=True)
    time_limits.arm(soon(WAIT_SECONDS), Interrupted)
    time_limits.arm(soon(WAIT_SECONDS), InnerInterrupted)
    # WHEN the outer one is lifted (a tool's end, whatever its calls left armed)
    time_limits.pop(outer)
    # THEN no timer is left to fire
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_dropping_a_stale_limit_keeps_those_armed_inside_it() -> None:
    # GIVEN an AWS call's limit left armed by a call that ended early, and a tool's limit armed after it
    stale = time_limits.arm(soon(WAIT_SECONDS), Interrupted)
    assert stale is not None
    tool = time_limits.arm(soon(), Stopped, stops=True)
    with armed(tool):
        # WHEN the stale one is dropped alone
        time_limits.drop(stale)
        # THEN the tool's limit still holds
        with pytest.raises(Stopped):
            time.sleep(WAIT_SECONDS)
        assert time_limits.fired(tool)


def test_off_the_main_thread_no_limit_is_armed() -> None:
    # GIVEN code on a thread of its own, where no signal reaches
    armed: list[object] = []
    worker = threading.Thread(target=lambda: armed.append(time_limits.arm(soon(), Stopped, stops=True)))
    # WHEN it asks for a limit
    worker.start()
    worker.join(WAIT_SECONDS)
    # THEN none is armed, and its caller falls back to its own bounds
    assert armed == [None]


def test_the_invocations_deadline_keeps_the_time_asked_for_its_answer() -> None:
    # GIVEN a Lambda context with 3 s left, and one that is none
    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return 3000

    # WHEN the outbound deadline is worked out, keeping half a second for the answer
    deadline = time_limits.invocation_deadline(Context(), 0.5)
    # THEN it is 2.5 s from now; without a context there is none
    assert deadline is not None
    assert deadline - time.monotonic() == pytest.approx(2.5, abs=0.1)
    assert time_limits.invocation_deadline(None, 0.5) is None


def test_a_limit_that_stops_is_raised_again_until_it_is_lifted() -> None:
    # GIVEN a limit that stops, due in a moment, over code that catches any BaseException and waits again, as a
    # `with ThreadPoolExecutor` block's exit or a `finally` waits while the stop unwinds the code
    limit = time_limits.arm(soon(), Stopped, stops=True)
    caught = 0
    with armed(limit):
        for _ in range(2):
            try:
                time.sleep(WAIT_SECONDS)
            except Stopped:
                caught += 1
        # WHEN it waits once more, past what it caught
        # THEN it is stopped there too: every wait after its time is cut short, until the limit is lifted
        with pytest.raises(Stopped):
            time.sleep(WAIT_SECONDS)
    assert caught == 2


@pytest.mark.parametrize(
    ("waits", "on_other_work"),
    [
        (lambda: threading.Event().wait(WAIT_SECONDS), True),
        (lambda: started(threading.Thread(target=time.sleep, args=(WAIT_SECONDS,), daemon=True)).join(), True),
        (lambda: time.sleep(WAIT_SECONDS), False),
        (lambda: compute_in_a_network_library(WAIT_SECONDS), False),
    ],
    ids=["an event another thread sets", "a thread's join", "its own sleep", "its own computing"],
)
def test_a_stop_says_whether_it_came_where_the_code_waited_on_another_threads_work(
    waits: Callable[[], object], on_other_work: bool
) -> None:
    # GIVEN a limit that stops, due in a moment
    limit = time_limits.arm(soon(), Stopped, stops=True)
    # WHEN the code is stopped waiting on another thread (a joined thread started, or an event), or in its own code
    with armed(limit), pytest.raises(Stopped) as stopped:
        waits()
    # THEN what it raised says which: the other thread's work may still be running
    assert stopped.value.waiting_on_other_work is on_other_work


@contextmanager
def a_wide_bodys_depth_measured() -> Iterator[Callable[[], object]]:
    """median_lambda's own code, to run past a stop for a while: the frame that armed one, or what runs between it
    and the tool, may."""
    from median_lambda.runtime.strict_json import nests_deeper_than

    wide = [[index] for index in range(300_000)]
    yield lambda: nests_deeper_than(wide, 2)


@contextmanager
def an_event_loops_turn() -> Iterator[Callable[[], object]]:
    """asyncio's own code, to run past a stop for a while, as an event loop's setup and cleanup may: a stop there
    would leave the thread marked as running a loop, and asyncio.run() refused in it from then on. A turn of many
    callbacks written in C, so that only asyncio's frames run it."""
    loop = asyncio.new_event_loop()
    cut_short: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _, what_asyncio_logs: cut_short.append(what_asyncio_logs))
    for _ in range(300_000):
        loop.call_soon(int)
    loop.call_soon(loop.stop)
    try:
        yield loop.run_forever
    finally:
        loop.close()
    # and none of its callbacks was cut short, the stop caught and logged by asyncio
    assert cut_short == []


@pytest.mark.parametrize(
    "runs_past_it", [a_wide_bodys_depth_measured, an_event_loops_turn], ids=["median_lambda's", "asyncio's"]
)
def test_a_stop_is_never_raised_in_median_lambdas_own_code_or_asyncios(
    runs_past_it: Callable[[], AbstractContextManager[Callable[[], object]]],
) -> None:
    # GIVEN a limit that stops, due in a moment, and code of median_lambda's own, or of asyncio's, that runs past it
    with runs_past_it() as runs_there:
        limit = time_limits.arm(soon(0.01), Stopped, stops=True)
        started_at = time.monotonic()
        # WHEN it runs there, and then returns to the caller's code
        with armed(limit), pytest.raises(Stopped) as stopped:
            runs_there()
            time.sleep(WAIT_SECONDS)
    # THEN the stop waited for it to return, however long it took, and came in the caller's code
    assert time.monotonic() - started_at > time_limits.REPEAT_SECONDS
    *_, raised_in, handler = traceback.extract_tb(stopped.value.__traceback__)
    assert (Path(raised_in.filename).name, handler.name) == (Path(__file__).name, "_on_alarm")
    # AND no event loop is left marked as running here: asyncio.run() runs
    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"


def test_botocores_sleep_between_two_attempts_is_a_wait_on_the_network() -> None:
    # GIVEN a client whose every attempt is refused, retried up to ten times with botocore's backoff between them
    import boto3
    from botocore.config import Config

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    client = boto3.client(
        "dynamodb",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        config=Config(retries={"mode": "standard", "total_max_attempts": 10}, connect_timeout=1),
    )
    limit = time_limits.arm(soon(0.2), Interrupted)
    # WHEN a limit that interrupts comes due while it backs off
    # THEN it is raised there, not left to run the retries out
    with armed(limit), pytest.raises(Interrupted):
        client.list_tables()


def test_botocores_retry_check_is_no_wait_before_a_retry_is_decided() -> None:
    # GIVEN botocore asking its handlers whether to retry an attempt that came back (a frame that also sleeps
    # between attempts, once one has asked for a retry)
    import boto3
    from botocore.stub import Stubber

    seen: list[bool] = []

    def look_at_the_frame_asking(**_: object) -> None:
        frame = inspect.currentframe()
        while frame is not None and frame.f_code.co_qualname != "Endpoint._needs_retry":
            frame = frame.f_back
        assert frame is not None, "botocore's Endpoint._needs_retry asks the needs-retry handlers"
        seen.append(time_limits.waiting_on_network(frame))

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url="http://127.0.0.1:9")
    client.meta.events.register_last("needs-retry", look_at_the_frame_asking)
    # WHEN an answer comes back (stubbed: botocore's own test double, before any wait on the network)
    with Stubber(client) as stubbed:
        stubbed.add_response("list_tables", {"TableNames": []})
        client.list_tables()
    # THEN its frame, holding the answer, is no wait: a limit would not take the answer from it
    assert seen in ([], [False])
