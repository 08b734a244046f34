"""Live progress of the planning phase: workers publish their figures on the run board while they
plan, and the process that reports shows them (a bar on a terminal, lines in a log)."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from priced_toy import INI, write_toy

from llmjury.chat import Sample, Usage
from llmjury.errors import ConfigError
from llmjury.pricing import Price, PriceTable
from llmjury.running.settings import positive_number
from llmjury.session.progress import Board, Meter, RunTotals, Tally
from llmjury.session.progress_display import Display, progress_style, status_frame
from llmjury.store.location import StoreLocation

TOY_AGAIN = """

@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{i:02d}", family="toy") for i in range(12)])
def test_toy_again(outcome):
    assert outcome.verdicts
"""
LINE = re.compile(r"llmjury planning: (\d+)/(\d+) cases(?: \(\d+%\))?, ([\d,]+) calls \((\d+) in flight\), "
                  r"([\d,]+) tokens, est\. \$(\d+\.\d{4}), ETA (\?|\d+s|\d+m\d\ds|\d+h\d\dm\d\ds)$")
FINAL = "llmjury planned: 12/12 cases, 12 calls, 48 tokens, est. $48.0000, in *"


def board_at(folder: Path) -> Board:
    """A run board in a SQLite store of its own."""
    return Board(StoreLocation("sqlite", folder / "board.sqlite"), "run")


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    return write_toy(pytester)


def progress_lines(lines: list[str]) -> list[re.Match[str]]:
    found = [LINE.search(line) for line in lines if "llmjury planning:" in line]
    assert all(found), [line for line in lines if "llmjury planning:" in line]
    return [m for m in found if m is not None]


def hold_answer(server, prompt: str, timeout: float) -> tuple[threading.Event, threading.Event]:
    """The server answers `prompt` only once the first event is set (or `timeout` has passed); the
    second is set once it has answered."""
    release, answered = threading.Event(), threading.Event()

    def reply(body: dict, index: int) -> str:
        if body["messages"][-1]["content"] == prompt:
            release.wait(timeout=timeout)
            answered.set()
        return f"reply {index}"

    server.reply = reply
    return release, answered


def read_run(command: list[str], cwd, release: threading.Event, on_line, *, unbuffered: bool = False) -> list[str]:
    """Run `command` with its output on a pipe, as in a CI log, handing each line to `on_line` as it
    arrives; then release the held answer, and return the output of a run that passed. Not
    PYTHONUNBUFFERED unless asked: a CI log is a pipe, and progress lines must arrive while the run plans."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    output: list[str] = []
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env) as run:
        assert run.stdout is not None
        for line in run.stdout:
            output.append(line.rstrip("\n"))
            on_line(line)
    release.set()
    assert run.returncode == 0, "\n".join(output)
    return output


@pytest.fixture
def held_last_answer(openai_server) -> Iterator[threading.Event]:
    """The toy's last case ("hello 11") is answered only once the returned event is set."""
    release, _ = hold_answer(openai_server, "hello 11", timeout=120)
    yield release
    release.set()


@pytest.mark.e2e  # reads a pytest process's pipe while it plans
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_log_shows_progress_lines_while_workers_plan(toy, openai_server, held_last_answer, workers):
    """The last case's answer is held until the run has printed a progress line: so the line came
    from workers' figures while they were still planning, whatever the machine's speed."""
    release = held_last_answer
    command = [sys.executable, "-m", "pytest", "-n", workers, "--llm-progress", "lines",
               "--llm-progress-interval", "0.05", "--llm-judge", f"openai:priced;base_url={openai_server.base_url}"]
    seen_live: list[str] = []

    def on_line(line: str) -> None:
        live = LINE.search(line) if "llmjury planning:" in line else None
        # Held until a line shows calls and their cost: the figures reach the display while the
        # last answer is still awaited (a throttled write is made later, not skipped).
        if not release.is_set() and live and int(live[3].replace(",", "")) >= 1 and float(live[6]) >= 4.0:
            seen_live.append(line)
            release.set()

    output = read_run(command, toy.path, release, on_line)
    assert seen_live, "\n".join(output)  # calls and cost printed before the held answer was sent
    matches = progress_lines(output)
    assert all(int(m[2]) == 12 and int(m[1]) < 12 for m in matches)  # the whole run's cases, across workers
    assert [int(m[1]) for m in matches] == sorted(int(m[1]) for m in matches)  # never goes back
    pytest.LineMatcher(output).fnmatch_lines([FINAL])


@pytest.mark.e2e  # reads a pytest process's pipe while its tests report
def test_a_log_gets_lines_with_calls_in_flight_after_tests_report(toy, openai_server, held_last_answer):
    """The default (`auto`) in a CI log under `-n 2`: once tests have reported, lines keep coming
    from the workers' figures, with the cases done of all and the calls in flight. The last answer
    is held until a line after a test result shows 11 of 12 cases and its call in flight."""
    release = held_last_answer
    command = [sys.executable, "-m", "pytest", "-v", "-n", "2", "--llm-progress-interval", "0.05",
               "--llm-judge", f"openai:priced;base_url={openai_server.base_url}"]
    results: list[str] = []
    seen_live: list[str] = []

    def on_line(line: str) -> None:
        if " PASSED" in line:
            results.append(line)
        live = LINE.search(line) if "llmjury planning:" in line else None
        if results and live and (live[1], live[2], live[4]) == ("11", "12", "1") and not release.is_set():
            seen_live.append(line)
            release.set()

    output = read_run(command, toy.path, release, on_line, unbuffered=True)
    assert seen_live, "\n".join(output)  # after a test result, with the held call in flight
    pytest.LineMatcher(output).fnmatch_lines([FINAL, "*12 passed*"])


@pytest.mark.e2e  # reads a pytest process's pipe while it plans
def test_a_log_gets_lines_while_the_first_test_waits_for_its_case(toy, openai_server):
    """Under `-n 0` the first case's answer is held until a progress line shows the other cases'
    calls (or a minute has passed): the first test is still waiting, so no test has reported and the
    line was written from the wait, around pytest's output capture."""
    release, answered = hold_answer(openai_server, "hello 00", timeout=60)
    command = [sys.executable, "-m", "pytest", "-n", "0", "--llm-progress", "lines", "--llm-progress-interval",
               "0.05", "--llm-judge", f"openai:priced;base_url={openai_server.base_url}"]
    seen_while_held: list[str] = []

    def on_line(line: str) -> None:
        live = LINE.search(line) if "llmjury planning:" in line else None
        if live and int(live[1]) == 11 and not release.is_set():
            if not answered.is_set():
                seen_while_held.append(line)
            release.set()

    output = read_run(command, toy.path, release, on_line)
    assert seen_while_held, "\n".join(output)  # 11 of 12 cases shown while the first test waited
    pytest.LineMatcher(output).fnmatch_lines([FINAL, "*12 passed*"])


@pytest.mark.e2e  # reads a pytest process's pipe while it plans
@pytest.mark.parametrize("workers", ["0", "2"])
def test_tests_report_while_later_cases_are_still_being_judged(toy, openai_server, workers):
    """Planning runs beside pytest's test loop: the last case's answer is held until a test has
    reported (or a minute has passed), so a report seen before it was sent came while planning."""
    release, answered = hold_answer(openai_server, "hello 11", timeout=60)
    command = [sys.executable, "-m", "pytest", "-v", "-n", workers, "--llm-progress", "off",
               "--llm-judge", f"openai:priced;base_url={openai_server.base_url}"]
    reported_while_held: list[str] = []

    def on_line(line: str) -> None:
        if " PASSED" in line and not release.is_set():
            if not answered.is_set():
                reported_while_held.append(line)
            release.set()

    output = read_run(command, toy.path, release, on_line, unbuffered=True)
    assert reported_while_held, "\n".join(output)  # a test passed before the last answer was sent
    pytest.LineMatcher(output).fnmatch_lines(["*12 passed*"])


#: A status frame: the rest of pytest's line cleared, the line below drawn, the cursor put back.
STATUS = re.compile(r"\x1b\[K\r?\n\x1b\[2K(llmjury planning: [^\x1b]*)\x1b\[1A\r")
#: tqdm's planning bar.
BAR = re.compile(r"llmjury planning: +\d+%\|")
#: pytest's first result: a dot after the file's name, or where a status frame put the cursor back.
RESULT = re.compile(r"(?:test_toy\.py |\x1b\[\d+C)\.")


def run_on_a_terminal(command: list[str], cwd, release: threading.Event, on_output) -> str:
    """Run `command` on a pseudo-terminal of its own (160 columns), handing all it drew so far to
    `on_output` after each read; release the held answer at the end; return what it drew."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    screen, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    with subprocess.Popen(command, cwd=cwd, stdin=terminal, stdout=terminal, stderr=terminal, env=env) as run:
        os.close(terminal)
        drawn = b""
        while True:
            try:
                chunk = os.read(screen, 65536)
            except OSError:  # the terminal closed: the run is over
                break
            if not chunk:
                break
            drawn += chunk
            on_output(drawn.decode(errors="replace"))
        release.set()
    os.close(screen)
    text = drawn.decode(errors="replace")
    assert run.returncode == 0, text
    return text


@pytest.mark.e2e  # a pytest process on a pseudo-terminal of its own
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_terminal_shows_a_bar_then_a_status_line_below_pytests(toy, openai_server, held_last_answer, workers):
    """`auto` on a terminal: xdist's controller draws the bar while its workers start (`-n 0` has no
    bar: its tests start at once); once tests report, a status line below pytest's progress line,
    never a log line; then the final line. The last answer is held until the status line shows
    the run's cases after a test result, with that call in flight: figures from the workers'
    board, drawn after pytest's own output."""
    release = held_last_answer
    command = [sys.executable, "-m", "pytest", "-n", workers, "-p", "no:sugar",
               "--llm-judge", f"openai:priced;base_url={openai_server.base_url}"]
    seen_live: list[str] = []
    bar_drawn = threading.Event()
    if workers == "2":  # no answer, so no test result, until the controller has drawn its bar
        answer = openai_server.reply

        def reply_once_the_bar_is_drawn(body: dict, index: int) -> str:
            bar_drawn.wait(timeout=120)
            return answer(body, index)

        openai_server.reply = reply_once_the_bar_is_drawn

    def on_output(text: str) -> None:
        if BAR.search(text):
            bar_drawn.set()
        first_result = RESULT.search(text)
        after_results = text[first_result.end():] if first_result else ""
        live = [m[1] for m in STATUS.finditer(after_results) if "11/12 cases" in m[1] and "(1 in flight)" in m[1]]
        if live and not release.is_set():
            seen_live.append(live[0])
            release.set()

    try:
        text = run_on_a_terminal(command, toy.path, release, on_output)
    finally:
        bar_drawn.set()
    assert seen_live, text
    assert LINE.search(seen_live[0]), seen_live[0]  # cases, calls in flight, tokens, cost, ETA
    if workers == "2":
        bar = text[text.index("llmjury planning:"):]
        assert BAR.match(bar), bar[:200]  # tqdm's bar first
    else:
        assert not BAR.search(text)
    framed = {m.start(1) for m in STATUS.finditer(text)}
    loose = [m.start() for m in re.finditer(r"llmjury planning: \d+/\d+ cases", text) if m.start() not in framed]
    assert not loose, text  # status frames only: no log lines on a terminal
    assert re.search(r"llmjury planned: 12/12 cases, 12 calls, 48 tokens, est\. \$48\.0000, in \d+s", text)


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_the_final_line_sums_every_worker(toy, openai_server, workers):
    result = toy.runpytest_inprocess("-n", workers, "--llm-judge", f"openai:priced;base_url={openai_server.base_url}")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines([FINAL])
    progress_lines(result.outlines)
    run_id = json.loads((toy.path / "reports" / "latest" / "summary.json").read_text())["run"]["id"]
    with sqlite3.connect(toy.path / ".llmjury" / "cache.sqlite") as cache:  # the run's tallies go with the run
        assert cache.execute("SELECT COUNT(*) FROM tallies WHERE worker LIKE ?", (f"{run_id}/%",)).fetchone() == (0,)


def test_a_case_two_tests_share_is_planned_and_counted_once(toy, openai_server):
    (toy.path / "test_toy.py").write_text((toy.path / "test_toy.py").read_text() + TOY_AGAIN)
    result = toy.runpytest("--llm-judge", f"openai:priced;base_url={openai_server.base_url}")
    result.assert_outcomes(passed=24)
    result.stdout.fnmatch_lines([FINAL])


@pytest.mark.e2e  # two xdist workers; the final-line test's -n 2 case shows progress across workers
def test_progress_off_prints_nothing(toy, openai_server):
    result = toy.runpytest_inprocess("-n", "2", "--llm-progress", "off",
                                      "--llm-judge", f"openai:priced;base_url={openai_server.base_url}")
    result.assert_outcomes(passed=12)
    assert not [line for line in result.outlines if "llmjury plann" in line]


@pytest.mark.e2e  # two xdist workers, each with nothing to plan
def test_a_run_without_a_planning_phase_prints_no_progress(pytester):
    pytester.makeini(INI)
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_inprocess("-n", "2", "--llm-progress", "lines", "--llm-progress-interval", "0.01")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.outlines if "llmjury plann" in line]


@pytest.mark.parametrize(("args", "message"), [
    (["--llm-progress-interval", "soon"], "*--llm-progress-interval 'soon': not a number of seconds*"),
    (["-o", "llm_progress_interval=0"], "*ini llm_progress_interval '0': must be a positive number*"),
    (["-o", "llm_progress=bar"], "*ini llm_progress 'bar': use one of off, auto, lines*"),
])
def test_a_bad_progress_option_is_a_usage_error_naming_it(toy, args, message):
    result = toy.runpytest_inprocess(*args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


# -- the display, tick by tick ---------------------------------------------------------------------
def publish(board: Board, worker: str, **figures: object) -> None:
    board.publish(Tally(worker=worker, started=1000.0, **figures))


def test_lines_come_every_interval_when_something_changed(tmp_path):
    board, lines = board_at(tmp_path), []
    display = Display(board, "lines", 5.0, lines.append, expected_workers=lambda: 2)
    display.tick(now=1001.0, clock=0.0)
    assert lines == []  # nothing planned yet
    publish(board, "gw0", total=6, done=3, calls=3, prompt_tokens=30, completion_tokens=6, cost_usd=0.5)
    display.tick(now=1002.0, clock=0.5)
    assert lines == []  # gw1 still collecting: 3/6 would be a wrong total
    publish(board, "gw1", total=6)
    display.tick(now=1030.0, clock=1.0)
    assert lines == ["llmjury planning: 3/12 cases (25%), 3 calls (0 in flight), 36 tokens, est. $0.5000, ETA 1m30s"]
    display.tick(now=1031.0, clock=2.0)
    publish(board, "gw1", total=6, done=1, calls=1)
    display.tick(now=1032.0, clock=3.0)
    assert len(lines) == 1  # within the interval
    display.tick(now=1040.0, clock=7.0)
    assert lines[-1].startswith("llmjury planning: 4/12 cases (33%), 4 calls (0 in flight)")
    display.tick(now=1050.0, clock=20.0)
    assert len(lines) == 2  # nothing changed: no repeated line


def test_the_final_line_waits_for_every_expected_worker(tmp_path):
    board, lines = board_at(tmp_path), []
    display = Display(board, "lines", 5.0, lines.append, expected_workers=lambda: 2)
    publish(board, "gw0", total=6, done=6, calls=6, finished=True)
    display.tick(now=1010.0, clock=0.0)
    assert not display.done  # gw1 has not said it planned
    publish(board, "gw1", total=0, finished=True)  # an empty share says so too
    display.tick(now=1012.0, clock=1.0)
    assert display.done and lines[-1] == "llmjury planned: 6/6 cases, 6 calls, 0 tokens, est. $0.0000, in 12s"
    display.stop()
    assert len([line for line in lines if "planned" in line]) == 1


def test_a_terminal_gets_one_updating_bar(tmp_path):
    board, lines, screen = board_at(tmp_path), [], io.StringIO()
    display = Display(board, "bar", 5.0, lines.append, expected_workers=lambda: 1, bar_file=screen)
    publish(board, "main", total=12, done=3, calls=3, cost_usd=0.25, refused_calls=2)
    display.tick(now=1010.0, clock=0.0)
    publish(board, "main", total=12, done=5, calls=5, cost_usd=0.25, refused_calls=2)
    display.tick(now=1011.0, clock=0.1)
    drawn = screen.getvalue()
    assert "llmjury planning" in drawn and "5/12" in drawn and "2 refused by the budget" in drawn
    assert lines == []  # the bar, not lines
    display.stop()
    (final,) = lines
    assert final.startswith("llmjury planned: 5/12 cases, 5 calls, 0 tokens, est. $0.2500, "
                            "2 refused by the budget, in ")


def test_once_tests_report_the_bar_gives_way_and_the_final_line_still_comes(tmp_path):
    """pytest's progress takes over the terminal's current line once tests report: the bar is
    cleared and not drawn again, and the final line is written when planning ends."""
    board, lines, screen = board_at(tmp_path), [], io.StringIO()
    display = Display(board, "bar", 5.0, lines.append, expected_workers=lambda: 1, bar_file=screen)
    publish(board, "main", total=12, done=3, calls=3)
    display.tick(now=1010.0, clock=0.0)
    assert "3/12" in screen.getvalue()
    display.hand_over()
    drawn = len(screen.getvalue())
    publish(board, "main", total=12, done=7, calls=7)
    display.tick(now=1011.0, clock=1.0)
    assert "7/12" not in screen.getvalue()[drawn:] and lines == []
    publish(board, "main", total=12, done=12, calls=12, finished=True)
    display.tick(now=1012.0, clock=2.0)
    assert display.done and lines == ["llmjury planned: 12/12 cases, 12 calls, 0 tokens, est. $0.0000, in 12s"]


def test_the_thread_goes_on_after_tests_start_to_report_holding_the_lock(tmp_path):
    """xdist's controller: tests reporting do not stop the thread (a run whose workers all wait on
    long calls reports nothing for minutes), and it writes only while holding the lock the plugin
    holds around pytest's own writes."""
    board, lines, written = board_at(tmp_path), [], threading.Event()
    lock = threading.Lock()

    def write(line: str) -> None:
        assert lock.locked()  # held by the thread while it writes
        lines.append(line)
        written.set()

    display = Display(board, "lines", 0.01, write, expected_workers=lambda: 1, lock=lock)
    display.start()
    display.hand_over()
    publish(board, "main", total=12, done=7, calls=7, in_flight=3)
    assert written.wait(timeout=30)
    display.stop()
    assert lines[0].startswith("llmjury planning: 7/12 cases (58%), 7 calls (3 in flight)")


def test_once_tests_report_a_terminal_gets_a_status_line_drawn_again_after_pytest_writes(tmp_path):
    board, lines, frames = board_at(tmp_path), [], []
    display = Display(board, "bar", 5.0, lines.append, expected_workers=lambda: 1, bar_file=io.StringIO(),
                      status=frames.append)
    publish(board, "main", total=12, done=3, calls=3, in_flight=2)
    display.tick(now=1010.0, clock=0.0)
    assert frames == []  # the bar, until tests report
    display.hand_over()
    display.tick(now=1011.0, clock=1.0)
    display.redraw()  # pytest wrote its dot: the same frame again
    assert len(frames) == 2 and frames[0] == frames[1]
    assert frames[0].startswith("llmjury planning: 3/12 cases (25%), 3 calls (2 in flight), 0 tokens")
    publish(board, "main", total=12, done=12, calls=12, finished=True)
    display.tick(now=1012.0, clock=2.0)
    assert frames[-1] is None  # cleared before the final line
    assert lines == ["llmjury planned: 12/12 cases, 12 calls, 0 tokens, est. $0.0000, in 12s"]
    display.redraw()
    assert frames[-1] is None  # nothing is drawn once planning is over


def test_a_status_frame_draws_below_and_puts_the_cursor_back():
    assert status_frame("llmjury planning: 1/2", 14, 80) == "\x1b[K\n\x1b[2Kllmjury planning: 1/2\x1b[1A\r\x1b[14C"
    assert status_frame("x" * 100, 0, 40) == "\x1b[K\n\x1b[2K" + "x" * 39 + "\x1b[1A\r"  # never wraps
    assert status_frame(None, 3, 80) == "\x1b[K\n\x1b[2K\x1b[1A\r\x1b[3C"  # cleared


def test_a_call_is_in_flight_until_it_ends_however_it_ends(tmp_path):
    meter = Meter("gw0", board_at(tmp_path))
    with meter.flight("openai:priced"):
        with meter.flight("openai:priced"):
            assert meter.tally.in_flight == 2
        assert meter.tally.in_flight == 1
    with pytest.raises(TimeoutError), meter.flight("openai:priced"):
        raise TimeoutError
    assert meter.tally.in_flight == 0
    meter.close()


def test_a_meter_publishes_throttled_without_a_budget(tmp_path):
    board = board_at(tmp_path)
    meter = Meter("gw3", board, PriceTable({"priced": Price(input=1_000_000, output=0)}))
    meter.planning(2)
    meter.paid("openai:priced", [Sample(text="x", usage=Usage(prompt_tokens=2, completion_tokens=5))])
    meter.paid("openai:unknown", [Sample(text="y", usage=Usage(prompt_tokens=1, completion_tokens=1))])
    meter.case_done()
    meter.planned()  # always written
    (tally,) = board.read()
    assert (tally.worker, tally.total, tally.done, tally.finished, tally.calls) == ("gw3", 2, 1, True, 2)
    assert (tally.cost_usd, tally.unpriced) == (2.0, ["openai:unknown"])


class WatchedBoard(Board):
    """A board that says when a write shows `done` cases."""

    def __init__(self, folder, done: int) -> None:
        super().__init__(StoreLocation("sqlite", folder / "board.sqlite"), "run")
        self.done, self.shown = done, threading.Event()

    def publish(self, tally: Tally, spent_usd: float = 0.0) -> None:
        super().publish(tally, spent_usd)
        if tally.done >= self.done:
            self.shown.set()


def test_a_closed_meter_writes_nothing_to_a_board_that_is_gone(tmp_path):
    """The session ends (meter closed, board removed) while a call is still reporting on the
    engine's thread: that report must not fail nor recreate the run's folder."""
    board = board_at(tmp_path)
    meter = Meter("main", board)
    meter.planning(2)
    meter.close()
    board.remove()
    meter.case_done()
    meter.planned()  # a forced write: it raised FileNotFoundError, or left a timer that did
    assert board.read() == []


def test_a_throttled_write_is_made_later_not_skipped(tmp_path):
    """Cases finished inside the throttle's window reach the board though nothing happens after
    them: the display must not show a process stuck at its first figures while an answer is held."""
    board = WatchedBoard(tmp_path, done=3)
    meter = Meter("gw1", board)
    meter.planning(4)
    for _ in range(3):
        meter.case_done()  # inside the window: not written at once
    assert board.shown.wait(timeout=30), board.read()
    (tally,) = board.read()
    assert (tally.done, tally.finished) == (3, False)
    meter.close()


def test_eta_is_unknown_before_the_first_case():
    totals = RunTotals.of([Tally(worker="main", total=4, started=10.0)])
    assert totals.eta_s(100.0) is None and totals.line(100.0).endswith("ETA ?")


@pytest.mark.parametrize(("mode", "tty", "style"), [("auto", True, "bar"), ("auto", False, "lines"),
                                                   ("lines", True, "lines"), ("off", True, None)])
def test_auto_means_a_bar_on_a_terminal_and_lines_in_a_log(mode, tty, style):
    assert progress_style(mode, tty) == style


def test_seconds_names_the_option():
    with pytest.raises(ConfigError, match="--llm-progress-interval '-1'"):
        positive_number("-1", "--llm-progress-interval", "seconds")
