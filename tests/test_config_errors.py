"""Every configuration error is one usage error at start-up (exit 4) naming the option and the cause,
before any model call: option keys and families, provider specs and their options, counts, data
files named by family options, and gates on families the run does not select."""

from __future__ import annotations

import pytest

from llmjury.testing import FakeOpenAI

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly --strict-markers
pythonpath = .
llm_families = toyfam:FAMILY
{extra}
"""

# A family of our own, so the data-file check is tested whatever the shipped families declare.
TOYFAM = """
from llmjury.family import Dataset, Family, FamilyOptions, Result, Section


class ToyOptions(FamilyOptions):
    items: str | None = None
    folder: str | None = None
    limit: int = 10


class ToyResult(Result):
    ok: bool = True


class ToySection(Section):
    pass


class Toy(Family):
    name = "toyfam"
    options = ToyOptions
    results = {"check": ToyResult}
    section = ToySection
    datasets = (Dataset("items", "items", "toy items, one JSON object a line"),
                Dataset("folder", "folder", "a folder of toy items"))

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        return ToySection()


FAMILY = Toy()
"""

# Cases of the registered family and of an ad-hoc one, each judged by one call to the judge.
CASES = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat


class Item(Case):
    text: str


async def judge(case, jury):
    completion = await jury.complete("judge", case.family, chat(("user", case.text)))
    return Outcome([Verdict(case_id=case.id, family="adhoc", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Item(id=f"toy-{i}", family="toyfam", text=f"toy {i}") for i in range(3)])
def test_toy(outcome):
    assert outcome.verdicts


@llmjury.pipeline(judge)
@llmjury.parametrize([Item(id=f"adhoc-{i}", family="adhoc", text=f"adhoc {i}") for i in range(3)])
def test_adhoc(outcome):
    assert outcome.verdicts
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI.format(extra=""))
    pytester.makepyfile(toyfam=TOYFAM, test_cases=CASES)
    return pytester


def usage_error(pytester: pytest.Pytester, *args: str, ini: str = "") -> pytest.RunResult:
    if ini:
        pytester.makeini(INI.format(extra=ini))
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    return result


# -- family options ----------------------------------------------------------------------------------
def test_unknown_family_is_named_with_the_known_ones(project):
    result = usage_error(project, "--llm-option", "toyfan.limit=3")
    result.stderr.fnmatch_lines(["ERROR: --llm-option toyfan.limit=3: unknown family 'toyfan' "
                                 "(did you mean 'toyfam'?); known families: *toyfam*"])


def test_unknown_option_key_is_named_with_the_known_keys(project):
    result = usage_error(project, "--llm-option", "toyfam.limt=3")
    result.stderr.fnmatch_lines(["ERROR: --llm-option toyfam.limt=3: unknown option toyfam.limt "
                                 "(did you mean 'limit'?); toyfam knows folder, items, limit"])


def test_unknown_option_key_in_ini_is_refused_naming_the_ini_key(project):
    # It used to be blamed on --llm-option, which the user never gave.
    result = usage_error(project, ini="llm_options = toyfam.itemz=a.jsonl")
    result.stderr.fnmatch_lines(["ERROR: ini llm_options toyfam.itemz=a.jsonl: unknown option toyfam.itemz "
                                 "(did you mean 'items'?); toyfam knows folder, items, limit"])


def test_an_ini_key_llmjury_does_not_read_is_refused_with_the_key_meant(project):
    # pytest itself only warns (unless --strict-config), and the run went on with the defaults.
    result = usage_error(project, ini="llm_option = toyfam.limit=3")
    result.stderr.fnmatch_lines(["ERROR: ini llm_option: not an llmjury setting (did you mean 'llm_options'?); "
                                 "llmjury reads *llm_cache, *, llm_options, *"])


def test_an_unknown_llm_key_in_pyproject_is_refused_too(pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\naddopts = "-p no:deepeval -p no:randomly"\n'
                               'llm_judge_run = "5"\n')
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = usage_error(pytester)
    result.stderr.fnmatch_lines(["ERROR: ini llm_judge_run: not an llmjury setting (did you mean 'llm_judge_runs'?)*"])


@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-option", "toyfam.limit=many"], "",
     "ERROR: --llm-option toyfam.limit=many: Input should be a valid integer, unable to parse string as an integer"),
    ([], "llm_options = toyfam.limit=many",
     "ERROR: ini llm_options toyfam.limit=many: Input should be a valid integer*"),
    ([], "llm_options = toyfan.limit=3", "ERROR: ini llm_options toyfan.limit=3: unknown family 'toyfan' (did you*"),
    ([], "llm_options = toyfam.items=missing.jsonl",
     "ERROR: ini llm_options toyfam.items=missing.jsonl: missing.jsonl: no such file or folder"),
    (["--llm-option", "toyfam.limit=3"], "llm_options = toyfam.limit=many",  # the command line wins
     None),
], ids=["cli-type", "ini-type", "ini-family", "ini-file", "cli-over-ini"])
def test_an_option_error_names_where_the_option_was_set(project, args, ini, line):
    if line is None:
        project.makeini(INI.format(extra=ini))
        project.runpytest_inprocess(*args, "-k", "adhoc").assert_outcomes(passed=3)
    else:
        usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-option", "geval.items=x.json"], "llm_options = geval.items_name=dstc9",
     "ERROR: ini llm_options geval.items_name=dstc9: 'dstc9' is a shipped dataset's name; name your items after "
     "their corpus"),
    (["--llm-option", "geval.items=x.json", "--llm-option", "geval.items_criteria=fluency"], "",
     "ERROR: --llm-option geval.items_criteria=fluency: unknown criterion 'fluency'; use any of overall, *"),
    ([], "llm_options = geval.tasks_dstc9=dialog",
     "ERROR: ini llm_options geval.tasks_dstc9=dialog: unknown task 'dialog'; use dialogue and/or response"),
    (["--llm-option", "geval.items=x.json", "--llm-option", "geval.items_dimensions=fluency"], "",
     "ERROR: --llm-option geval.items_dimensions=fluency: 'fluency': write DIMENSION=CRITERION*"),
], ids=["items-name", "items-criteria", "tasks", "dimensions"])
def test_a_rule_across_keys_is_blamed_on_the_line_of_the_key_at_fault(project, args, ini, line):
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


def test_a_rule_naming_no_given_key_names_every_place_the_family_was_set():
    from pydantic import model_validator

    from llmjury.errors import ConfigError
    from llmjury.family import FamilyOptions
    from llmjury.running.settings import OptionLine, checked_options

    class Options(FamilyOptions):
        low: int = 0
        high: int = 1

        @model_validator(mode="after")
        def _ordered(self) -> Options:
            if self.low > self.high:
                raise ValueError("the range is empty")
            return self

    lines = [OptionLine("low", "5", "ini llm_options", "ranged.low=5"),
             OptionLine("high", "2", "--llm-option", "ranged.high=2")]
    with pytest.raises(ConfigError, match=r"^ini llm_options and --llm-option ranged\.\*: the range is empty$"):
        checked_options("ranged", Options, lines)


@pytest.mark.parametrize(("option", "message"), [
    ("geval.n=0", "Input should be greater than or equal to 1"),
    ("geval.n=-5", "Input should be greater than or equal to 1"),
    ("geval.top_logprobs=0", "Input should be greater than or equal to 1"),
    ("geval.deepeval_items=-1", "Input should be greater than or equal to 0"),
    ("geval.top_p=0", "Input should be greater than 0"),
    ("geval.temperature=-0.5", "Input should be greater than or equal to 0"),
])
def test_geval_counts_below_their_bound_are_usage_errors_naming_the_option(project, option, message):
    usage_error(project, "--llm-option", option).stderr.fnmatch_lines([f"ERROR: --llm-option {option}: {message}"])


def test_geval_switching_deepeval_off_with_zero_is_accepted(project):
    project.runpytest_inprocess("--llm-option", "geval.deepeval_items=0", "-k", "adhoc").assert_outcomes(passed=3)


@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-role", "toyfan.judge=offline"], "",
     "ERROR: --llm-role toyfan.judge=offline: unknown family 'toyfan' (did you mean 'toyfam'?); known families: "
     "*toyfam (or write judge=SPEC for every family)"),
    ([], "llm_roles = socratik.candidate=offline",
     "ERROR: ini llm_roles socratik.candidate=offline: unknown family 'socratik' (did you mean 'socratic'?)*"),
], ids=["cli", "ini"])
def test_a_per_family_role_naming_an_unknown_family_is_refused(project, args, ini, line):
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-role", "socratic.candiate=offline"], "",
     "ERROR: --llm-role socratic.candiate=offline: the socratic family asks for no role 'candiate' "
     "(did you mean 'candidate'?); its roles: judge, candidate, baseline, teacher, student"),
    ([], "llm_roles = arena.jugde=offline",
     "ERROR: ini llm_roles arena.jugde=offline: the arena family asks for no role 'jugde' (did you mean 'judge'?)*"),
], ids=["cli", "ini"])
def test_a_per_family_role_the_family_never_asks_for_is_refused(project, args, ini, line):
    """`socratic.candiate=SPEC` was accepted and never used: every candidate call went offline."""
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


def test_a_role_close_to_one_a_family_asks_for_is_warned_about_and_a_name_of_ones_own_is_not(project):
    result = project.runpytest_inprocess("--llm-role", "candiate=offline", "--llm-role", "grader=offline",
                                         "-k", "toy")
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*ConfigWarning: --llm-role candiate=offline: no family asks for role 'candiate' "
                                 "(did you mean 'candidate'?); only a test of your own that asks for 'candiate' "
                                 "uses it"])
    assert "'grader'" not in result.stdout.str()
    strict = project.runpytest_inprocess("--llm-role", "candiate=offline", "-W", "error::llmjury.errors.ConfigWarning")
    assert strict.ret == 4
    strict.stderr.fnmatch_lines(["ERROR: --llm-role candiate=offline: no family asks for role 'candiate'*"])


def test_a_per_family_role_of_a_known_family_starts_the_run(project):
    result = project.runpytest_inprocess("--llm-role", "toyfam.judge=offline", "--llm-role", "judge=offline",
                                         "-k", "toy")
    result.assert_outcomes(passed=3)


# -- provider specs ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-judge", "opneai:gpt-4o"], "",
     "ERROR: --llm-judge: provider spec 'opneai:gpt-4o': unknown kind 'opneai' (did you mean 'openai'?); "
     "use one of openai, gemini, http, offline"),
    ([], "llm_judge = gemni:gemini-2.0-flash",
     "ERROR: ini llm_judge: provider spec 'gemni:gemini-2.0-flash': unknown kind 'gemni' (did you mean 'gemini'?)*"),
    (["--llm-role", "candidate=opneai:gpt-4o"], "",
     "ERROR: --llm-role candidate=opneai:gpt-4o: provider spec 'opneai:gpt-4o': unknown kind 'opneai'*"),
    ([], "llm_roles =\n    toyfam.judge=offline\n    candidate=openai:",
     "ERROR: ini llm_roles candidate=openai:: provider spec 'openai:': name a model after 'openai:'"),
    (["--llm-judge", "offline+opneai:gpt-4o"], "",
     "ERROR: --llm-judge: provider spec 'opneai:gpt-4o': unknown kind 'opneai'*"),
    (["--llm-judge", "openai:gpt-4o*0"], "",
     "ERROR: --llm-judge: jury spec 'openai:gpt-4o*0': a juror count must be at least 1"),
    (["--llm-judge", "openai:gpt-4o*two"], "",
     "ERROR: --llm-judge: jury spec 'openai:gpt-4o*two': '*two' is not a whole number of jurors"),
    (["--llm-judge", "openai:gpt-4o+"], "",
     "ERROR: --llm-judge: jury spec 'openai:gpt-4o+': empty juror between '+'"),
    (["--llm-judge", "socratik=openai:gpt-4o"], "",
     "ERROR: --llm-judge: provider spec 'socratik=openai:gpt-4o': unknown kind 'socratik=openai'*; a family's own "
     "judge is --llm-role FAMILY.judge=SPEC (ini llm_roles)"),
], ids=["judge", "ini-judge", "role", "ini-role", "jury-member", "jury-zero", "jury-count", "jury-empty",
        "judge-per-family"])
def test_provider_spec_typos_stop_the_run_at_start_up(project, args, ini, line):
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


@pytest.mark.parametrize(("spec", "line"), [
    ("openai:gpt-4o;timeout=abc", "*option timeout='abc' is not a number of seconds"),
    ("openai:gpt-4o;timeout=0", "*option timeout='0' must be above 0 seconds"),
    ("gemini:gemini-2.0-flash;max_n=-1", "*option max_n='-1' must be at least 1"),
    ("openai:gpt-4o;timout=30",
     "*unknown option 'timout' (did you mean 'timeout'?); openai reads api_key, api_key_env, base_url, batch, "
     "max_n, timeout, version"),
    ("http:http://127.0.0.1:1/chat;max_n=2", "*unknown option 'max_n'; http reads body, reply, timeout, version"),
    ("offline;seed=1", "*unknown option 'seed'; offline takes no options"),
    ("openai:gpt-4o;base_url", "*option 'base_url' is not key=value"),
    ("openai:gpt-4o;base_url=127.0.0.1:18082/v1",
     "*option base_url='127.0.0.1:18082/v1' is not an http:// or https:// address: write http://127.0.0.1:18082/v1"),
    ("gemini:gemini-2.0-flash;base_url=ftp://x", "*option base_url='ftp://x' is not an http:// or https:// address"),
], ids=["not-a-number", "zero-timeout", "negative-max-n", "unknown-option", "not-for-this-kind", "offline", "no-value",
        "no-scheme", "other-scheme"])
def test_spec_options_are_checked_against_what_the_kind_reads(project, spec, line):
    result = usage_error(project, "--llm-judge", spec)
    result.stderr.fnmatch_lines([f"ERROR: --llm-judge: provider spec '{spec}': {line[1:]}"])


def test_a_misspelt_key_option_is_named_with_the_one_meant_and_its_value_masked(project):
    result = usage_error(project, "--llm-judge", "openai:gpt-4o;apikey=sk-secret-value")
    result.stderr.fnmatch_lines(["ERROR: --llm-judge: provider spec 'openai:gpt-4o;apikey=***': unknown option "
                                 "'apikey' (did you mean 'api_key'?); openai reads *"])
    assert "sk-secret-value" not in result.stderr.str() + result.stdout.str()


def test_spec_options_of_the_right_type_start_the_run(project):
    with FakeOpenAI() as server:
        spec = f"openai:gpt-4o;base_url={server.base_url};timeout=5;max_n=4"
        project.runpytest_inprocess("--llm-judge", spec, "-k", "toy").assert_outcomes(passed=3)
        assert len(server.requests) == 3


# -- counts --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-sample", "-3"], "", "ERROR: --llm-sample -3: must be at least 1"),
    (["--llm-sample", "0"], "", "ERROR: --llm-sample 0: must be at least 1"),
    (["--llm-runs", "0"], "", "ERROR: --llm-runs 0: must be at least 1"),
    (["--llm-concurrency", "0"], "", "ERROR: --llm-concurrency 0: must be at least 1"),
    (["--llm-concurrency", "-2"], "", "ERROR: --llm-concurrency -2: must be at least 1"),
    ([], "llm_judge_runs = 0", "ERROR: ini llm_judge_runs 0: must be at least 1"),
    ([], "llm_concurrency = -1", "ERROR: ini llm_concurrency -1: must be at least 1"),
    ([], "llm_concurrency = lots", "ERROR: ini llm_concurrency 'lots': not a whole number"),
    ([], "llm_retry_attempts = 0", "ERROR: ini llm_retry_attempts 0: must be at least 1"),
    ([], "llm_seed = abc", "ERROR: ini llm_seed 'abc': not a whole number"),
    ([], "llm_rate_limits = openai:gpt-4o rpm=0",
     "ERROR: llm_rate_limits line 'openai:gpt-4o rpm=0': rpm must be above 0"),
    ([], "llm_rate_limits = openai:gpt-4o concurrency=0",
     "ERROR: llm_rate_limits line 'openai:gpt-4o concurrency=0': concurrency must be a whole number of at least 1"),
    ([], "llm_rate_limits = openai:gpt-4o tpm=-5",
     "ERROR: llm_rate_limits line 'openai:gpt-4o tpm=-5': tpm must be above 0"),
    ([], "llm_rate_limits = opneai:gpt-4o rpm=60",
     "ERROR: llm_rate_limits line 'opneai:gpt-4o rpm=60': provider spec 'opneai:gpt-4o': unknown kind 'opneai'*"),
    ([], "llm_cache = recrod",
     "ERROR: ini llm_cache 'recrod' (did you mean 'record'?): use one of replay, record, refresh, off"),
    ([], "llm_gate_uncertain = maybe", "ERROR: ini llm_gate_uncertain 'maybe': use one of inconclusive, pass"),
], ids=["sample-negative", "sample-zero", "runs-zero", "concurrency-zero", "concurrency-negative", "ini-runs",
        "ini-concurrency", "ini-concurrency-word", "ini-retries", "ini-seed", "rpm-zero", "limit-concurrency",
        "tpm-negative", "limit-spec", "ini-cache", "ini-uncertain"])
def test_counts_below_one_and_bad_words_are_refused(project, args, ini, line):
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


def test_zero_counts_no_longer_fall_back_to_the_defaults(project):
    # `--llm-runs 0` used to run 3 judge runs and `--llm-concurrency 0` 16 calls: a 1 is kept as given.
    result = project.runpytest_inprocess("--llm-runs", "1", "--llm-concurrency", "1", "-k", "adhoc")
    result.assert_outcomes(passed=3)


# -- data files named by family options --------------------------------------------------------------------
@pytest.mark.parametrize(("content", "cause"), [
    (None, "no such file or folder"),
    (b"  \n", "empty file"),
    ("café".encode("latin-1"), "not UTF-8 text (byte 3, line 1); save it as UTF-8"),
], ids=["missing", "empty", "not-utf8"])
def test_a_bad_data_file_named_by_an_option_is_refused_naming_it(project, content, cause):
    if content is not None:
        (project.path / "items.jsonl").write_bytes(content)
    result = usage_error(project, "--llm-option", "toyfam.items=items.jsonl")
    result.stderr.fnmatch_lines([f"ERROR: --llm-option toyfam.items=items.jsonl: items.jsonl: {cause}"])


def test_a_missing_data_folder_is_refused_and_an_existing_one_accepted(project):
    result = usage_error(project, "--llm-option", "toyfam.folder=nowhere")
    result.stderr.fnmatch_lines(["ERROR: --llm-option toyfam.folder=nowhere: nowhere: no such file or folder"])
    (project.path / "items").mkdir()
    (project.path / "items.jsonl").write_text('{"text": "x"}\n')
    result = project.runpytest_inprocess("--llm-option", "toyfam.folder=items", "--llm-option",
                                         "toyfam.items=items.jsonl", "-k", "adhoc")
    result.assert_outcomes(passed=3)


@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-data", "fixturez"], "", "ERROR: --llm-data fixturez: no such folder (*fixturez)"),
    ([], "llm_data = fixturez", "ERROR: ini llm_data fixturez: no such folder (*fixturez)"),
    ([], "llm_prompts = promts", "ERROR: ini llm_prompts promts: no such folder (*promts)"),
    ([], "llm_prices = prices.toml", "ERROR: ini llm_prices: price table *prices.toml: *No such file*"),
], ids=["data-option", "data-ini", "prompts", "prices"])
def test_configured_folders_and_price_tables_must_exist(project, args, ini, line):
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


def test_a_malformed_price_table_is_refused_at_start_up(project):
    (project.path / "prices.toml").write_text("[models.'openai:gpt-4o']\ninput = 'cheap'\n")
    result = usage_error(project, ini="llm_prices = prices.toml")
    result.stderr.fnmatch_lines(["ERROR: ini llm_prices: price table *prices.toml: *"])


# -- gates on families the run does not select ---------------------------------------------------------------
@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_a_gate_on_a_family_left_out_by_k_stops_the_run_before_any_call(project, workers):
    with FakeOpenAI() as server:
        result = usage_error(project, "-n", workers, "-k", "adhoc", "--llm-judge",
                             f"openai:gpt-4o;base_url={server.base_url}", "--llm-gate", "toyfam.valid>=1")
        assert server.requests == []
    result.stderr.fnmatch_lines(["ERROR: gate 'toyfam.valid>=1': no case of family 'toyfam' is selected "
                                 "(by -k, -m or --llm-sample); this run's cases are of adhoc"])


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_a_gate_on_an_unknown_family_stops_the_run(project, workers):
    result = usage_error(project, "-n", workers, "--llm-gate", "toyfan.valid>=1")
    result.stderr.fnmatch_lines(["ERROR: gate 'toyfan.valid>=1': unknown family 'toyfan' (did you mean 'toyfam'?); "
                                 "this run's cases are of adhoc, toyfam"])


OWN_EVAL = """
import llmjury
from llmjury import Case

CASES = [Case(id=f"r{i}", family="recipes") for i in range(3)]


@llmjury.parametrize(CASES)
async def test_recipe(case, jury):
    verdict = await jury.compare("a stew", "a soup", criteria="tastier")
    assert verdict.valid
"""


def test_a_gate_on_the_family_only_your_own_cases_name_points_at_custom_before_any_call(pytester):
    """Before: `recipes.win_rate>=0.5` passed start-up (the cases' family), the run paid for every call,
    and the gate failed with `no metric 'recipes' in this run` (a user trial)."""
    pytester.makepyfile(test_recipes=OWN_EVAL)
    with FakeOpenAI() as server:
        result = usage_error(pytester, "--llm-judge", f"openai:judge;base_url={server.base_url}",
                             "--llm-gate", "recipes.win_rate>=0.5")
        assert server.requests == []
    result.stderr.fnmatch_lines(["ERROR: gate 'recipes.win_rate>=0.5': 'recipes' is the family your cases name, "
                                 "and no family of that name reports metrics: your own tests' verdicts are under "
                                 "custom (custom.compare.TEST.win_rate, *"])


def test_a_gate_comparing_with_an_unselected_family_is_refused_too(project):
    result = usage_error(project, "-k", "adhoc", "--llm-gate", "adhoc.valid>=toyfam.valid")
    result.stderr.fnmatch_lines(["ERROR: gate 'adhoc.valid>=toyfam.valid': no case of family 'toyfam'*"])


def test_a_gate_on_a_selected_family_or_the_run_passes_start_up(project):
    result = project.runpytest_inprocess("-k", "adhoc", "--llm-gate", "adhoc.valid>=3",
                                         "--llm-gate", "usage.total_cost_usd<=0")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK


# -- family options whose bad values used to pass start-up ------------------------------------------------
def test_a_missing_geval_steps_folder_is_refused_naming_the_option(project):
    result = usage_error(project, "--llm-option", "geval.steps_dir=nonexistent")
    result.stderr.fnmatch_lines(["ERROR: --llm-option geval.steps_dir=nonexistent: nonexistent: "
                                 "no such file or folder"])
    (project.path / "steps").mkdir()
    project.runpytest_inprocess("--llm-option", "geval.steps_dir=steps", "-k", "adhoc").assert_outcomes(passed=3)


@pytest.mark.parametrize("threshold", ["nan", "inf", "-inf", "NaN"])
def test_a_gate_threshold_that_is_no_finite_number_is_refused_at_start_up(project, threshold):
    with FakeOpenAI() as server:
        result = usage_error(project, "--llm-judge", f"openai:gpt-4o;base_url={server.base_url}",
                             "--llm-gate", f"toyfam.valid>={threshold}")
        assert server.requests == []
    result.stderr.fnmatch_lines([f"ERROR: *gate 'toyfam.valid>={threshold}': the threshold '{threshold}' is not a "
                                 "finite number*"])


def test_a_dstc9_models_file_of_the_wrong_shape_is_a_usage_error_naming_the_option(pytester):
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    pytester.makeini(INI.replace("llm_families = toyfam:FAMILY\n", "").format(extra=""))
    pytester.makepyfile(test_geval_suite=(repo / "evals" / "test_geval.py").read_text(encoding="utf-8"))
    (pytester.path / "models.json").write_text('["chatbot1", "chatbot2"]', encoding="utf-8")
    result = usage_error(pytester, "--llm-option", "geval.datasets=dstc9", "--llm-option",
                         f"geval.dstc9={repo / 'fixtures' / 'dstc9' / 'dstc9_sample.json'}",
                         "--llm-option", "geval.dstc9_models=models.json", "-p", "no:xdist")
    result.stderr.fnmatch_lines(['ERROR: --llm-option geval.dstc9_models=models.json: models.json: expected a JSON '
                                 'object {"models": *, "flowscore": *}, got a JSON list'])
    assert "AttributeError" not in result.stdout.str() + result.stderr.str()


# -- the run store ---------------------------------------------------------------------------------
def test_an_unknown_store_in_the_ini_is_named_with_the_known_ones(project):
    result = usage_error(project, ini="llm_store = postgress")
    result.stderr.fnmatch_lines(["ERROR: ini llm_store 'postgress': unknown store (use sqlite or postgres)"])


def test_a_postgres_store_that_does_not_answer_stops_the_run_at_start_up_without_its_password(project, monkeypatch):
    # A port nothing listens on: the run stops before any call, naming the cause and where the
    # connection string comes from, and never printing the string's password.
    monkeypatch.setenv("LLMJURY_STORE_DSN", "postgresql://llmjury:s3cret@127.0.0.1:9/evals?connect_timeout=3")
    result = usage_error(project, "--llm-store", "postgres")
    result.stderr.fnmatch_lines(["ERROR: --llm-store postgres: cannot connect (*); the connection string comes "
                                 "from LLMJURY_STORE_DSN or libpq's PG* variables"])
    assert "s3cret" not in result.stdout.str() + result.stderr.str()


def test_a_lease_must_be_a_positive_number_of_seconds(project):
    result = usage_error(project, "--llm-lease", "0")
    result.stderr.fnmatch_lines(["ERROR: --llm-lease '0': must be a positive number of seconds"])


def test_a_dsn_that_is_no_connection_string_is_a_usage_error_naming_the_cause(project, monkeypatch):
    monkeypatch.setenv("LLMJURY_STORE_DSN", "this is not a dsn")
    result = usage_error(project, "--llm-store", "postgres")
    result.stderr.fnmatch_lines(["ERROR: --llm-store postgres: cannot connect (*missing \"=\"*); the connection "
                                 "string comes from LLMJURY_STORE_DSN or libpq's PG* variables"])


@pytest.mark.parametrize(("dsn", "secret", "cause"), [
    ("postgresql://alice:S3cret%zzPassw0rd@127.0.0.1:1/evals", "S3cret%zzPassw0rd",
     'invalid percent-encoded token: "***"'),
    ("postgresql://alice:pw@127.0.0.1:1/evals?sslmode=Zq9Secret", "Zq9Secret", 'invalid sslmode value: "***"'),
], ids=["password-not-url-encoded", "secret-in-a-setting"])
def test_a_connection_error_never_shows_the_connection_strings_secrets(project, monkeypatch, dsn, secret, cause):
    """libpq quotes what it could not read: a generated password with a `%` that was not URL-encoded
    reached the terminal and CI logs, which mask only the whole connection string."""
    monkeypatch.setenv("LLMJURY_STORE_DSN", dsn)
    result = usage_error(project, "--llm-store", "postgres")
    assert secret not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines([f"ERROR: --llm-store postgres: cannot connect (*{cause}*)*"])


@pytest.mark.parametrize(("args", "ini", "line"), [
    (["--llm-store-outage", "abc"], "", "ERROR: --llm-store-outage 'abc': not a number of seconds*"),
    ([], "llm_store_outage = -5", "ERROR: ini llm_store_outage '-5'*"),
], ids=["option", "ini"])
def test_a_bad_store_outage_is_refused_on_sqlite_too(project, args, ini, line):
    """Checked only with --llm-store postgres, a bad value passed on a laptop's SQLite and failed in CI."""
    usage_error(project, *args, ini=ini).stderr.fnmatch_lines([line])


def test_a_shard_in_the_ini_is_pointed_to_the_option(project):
    result = usage_error(project, ini="llm_shard = 1/3")
    result.stderr.fnmatch_lines(["ERROR: ini llm_shard: a shard belongs to one invocation, not to the project: "
                                 "pass --llm-shard I/N"])


def test_a_batched_spec_for_a_role_under_test_is_refused_naming_why(project):
    result = usage_error(project, "--llm-role", "candidate=openai:bot;batch=1")
    result.stderr.fnmatch_lines(["ERROR: --llm-role candidate=openai:bot;batch=1: a role under test is asked afresh "
                                 "by each run, so its calls never go by batch (;batch=)*"])


# -- http: body templates --------------------------------------------------------------------------------


@pytest.mark.parametrize(("template", "line"), [
    (None, "*body template tutor/body.j2: no such template in the prompt directories*"),
    ('{"q": {{ last.content }}, "user": {{ student_id }}}',
     "*body template tutor/body.j2: unknown variable(s) student_id; a body template sees messages (*); turns (*"),
    ('{"q": "{{ last.content }}"}', "*body template tutor/body.j2: template tutor/body.j2 did not render JSON*"),
    # Was an INTERNALERROR (exit 3): json.dumps met jinja2's StrictUndefined.
    ('{"q": {{ last.nosuch }}}', "*body template tutor/body.j2: 'dict object' has no attribute 'nosuch'*"),
], ids=["missing", "unknown-variable", "not-json", "missing-attribute"])
def test_an_http_body_template_is_checked_at_start_up_before_any_call(project, template, line):
    (project.path / "prompts" / "tutor").mkdir(parents=True)
    if template is not None:
        (project.path / "prompts" / "tutor" / "body.j2").write_text(template)
    with FakeOpenAI() as server:
        spec = f"http:{server.origin}/chat;body=tutor/body.j2"
        result = usage_error(project, "--llm-role", f"candidate={spec}", "-o", "llm_prompts=prompts")
        assert server.requests == []
    result.stderr.fnmatch_lines([f"ERROR: --llm-role candidate={spec}: {line[1:]}"])


@pytest.mark.parametrize(("environment", "ini", "line"), [
    ({"OPENAI_BASE_URL": "localhost:8080/v1"}, "",
     "ERROR: OPENAI_BASE_URL='localhost:8080/v1': is not an http:// or https:// address: write http://localhost:8080/v1"),
    ({}, "llm_gemini_base_url = 127.0.0.1:9/v1",
     "ERROR: ini llm_gemini_base_url='127.0.0.1:9/v1': is not an http:// or https:// address*"),
], ids=["environment", "ini"])
def test_a_base_url_without_its_scheme_is_refused_at_start_up(project, monkeypatch, environment, ini, line):
    """Before: every call failed as `APIConnectionError: Connection error.`, found once the run paid (a user trial)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    usage_error(project, ini=ini).stderr.fnmatch_lines([line])
