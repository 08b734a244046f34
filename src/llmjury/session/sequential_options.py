"""The options of sequential runs (`--llm-sequential`) and of the judge's canary (`--llm-canary`), declared
and resolved beside the others."""

from __future__ import annotations

import pytest

from llmjury.errors import ConfigError
from llmjury.judgement.canary import CANARY
from llmjury.running.settings import whole_number
from llmjury.sequential.settings import BATCH, SequentialSettings


def declare_sequential(parser: pytest.Parser) -> None:
    """`--llm-sequential` and `--llm-sequential-batch`, with their ini keys."""
    group = parser.getgroup("llmjury")
    group.addoption("--llm-sequential", action="store_true", default=None,
                    help="judge cases in a seeded order, a batch at a time, check the gates on confidence "
                         "sequences (valid however often they are looked at) after each batch, and skip the "
                         "cases left as 'decided' once every gate is decided")
    group.addoption("--llm-sequential-batch", metavar="N",
                    help=f"cases per batch of a sequential run: a look at the gates follows each (default {BATCH})")
    parser.addini("llm_sequential", "judge in seeded batches and stop once every gate is decided (default false)",
                  type="bool", default=False)
    parser.addini("llm_sequential_batch", f"cases per batch of a sequential run (default {BATCH})")
    parser.addini("llm_sequential_scales", "METRIC=LOW:HIGH lines: the scale of a gated mean other than [0, 1], "
                  "e.g. custom.score.helpful.mean=1:5", type="linelist", default=[])


def resolve_sequential(config: pytest.Config) -> SequentialSettings | None:
    """The sequential settings, or None for a run that judges every case; a bad value names its option."""
    given = config.getoption("llm_sequential")
    if not (config.getini("llm_sequential") if given is None else given):
        return None
    raw, what = config.getoption("llm_sequential_batch"), "--llm-sequential-batch"
    if raw is None:
        raw, what = config.getini("llm_sequential_batch") or None, "ini llm_sequential_batch"
    batch = BATCH if raw is None else whole_number(raw, what)
    scales: dict[str, tuple[float, float]] = {}
    for line in config.getini("llm_sequential_scales"):
        metric, _, scale = line.partition("=")
        low, colon, high = scale.partition(":")
        try:
            bounds = (float(low), float(high))
        except ValueError:
            bounds = (0.0, 0.0)
        if not metric.strip() or not colon or not bounds[0] < bounds[1]:
            raise ConfigError(f"ini llm_sequential_scales {line!r}: write METRIC=LOW:HIGH with LOW < HIGH, "
                              "e.g. custom.score.helpful.mean=1:5")
        scales[metric.strip()] = bounds
    return SequentialSettings(batch, scales)


def declare_canary(parser: pytest.Parser) -> None:
    """`--llm-canary` and its ini key."""
    parser.getgroup("llmjury").addoption(
        "--llm-canary", metavar="N",
        help=f"with --llm-baseline: ask the judge again N of the baseline's stored judge requests (default {CANARY}; "
             "0: none) and report how many decisions flipped as judge.drift.flip_rate, a gateable rate")
    parser.addini("llm_canary", f"stored baseline judge requests asked again each run (default {CANARY})")
    parser.getgroup("llmjury").addoption(
        "--llm-bridge", action="store_true", default=False,
        help="re-judge stored answers with this run's judge: run on the baseline's code with a new --llm-judge, "
             "and the systems under test are replayed from the store instead of asked; the run is a baseline "
             "a pull request with that judge is compared with, pair for pair")


def bridged(config: pytest.Config) -> bool:
    """`--llm-bridge`: the roles under test replay their stored answers (main's), so only the judge is new."""
    return bool(config.getoption("llm_bridge"))
