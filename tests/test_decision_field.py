"""A verdict judge's decision as a schema field where the provider sends one natively: the request
carries the schema and the very messages of text mode; the field decides whatever the reasoning
mentions; free text is read as in text mode; JSON that does not validate is repaired or unscored,
never guessed; a server that proved it refuses the schema gets the published prompt in plain text."""

from __future__ import annotations

import json

import pytest

from llmjury.errors import ConfigError, JudgeParseError
from llmjury.families.arena.judge import PAIR_FIELD, SCORE_FIELD, parse_pair, read_scores
from llmjury.families.socratic.decision import DECISION_FIELD, parse_decision
from llmjury.judgement.bound_jury import BoundJury
from llmjury.judgement.judges import CHOICE_FIELD, CHOICE_FORMAT, parse_choice
from llmjury.judgement.jury import Jury
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.running.decision_field import DecisionField, check_output, how_read, reasoning
from llmjury.running.settings import Settings
from llmjury.testing import FakeGemini, FakeOpenAI, Fault
from llmjury.testing.fake_openai import ServerBehaviour

REPAIR = "Your answer above has no decision"


def answer(decision: str, why: str = "B is right.") -> str:
    return json.dumps({"reasoning": why, "decision": decision})


def letter(body: dict, better: str = "Paris.") -> str:
    """The slot `better` was shown in: jury.compare asks both orders."""
    prompt = body["messages"][-1]["content"]
    other = "Lyon." if better == "Paris." else "Paris."
    return "A" if prompt.index(better) < prompt.index(other) else "B"


# -- reading one answer ------------------------------------------------------------------------------
@pytest.mark.parametrize(("field", "parse", "text_of"), [
    (CHOICE_FIELD, parse_choice, lambda v: f"### {v}"),
    (DECISION_FIELD, parse_decision, lambda v: f"### {v}"),
    (PAIR_FIELD, parse_pair, lambda v: v),
    (SCORE_FIELD, read_scores, lambda v: v.replace(", ", "\n")),
])
def test_each_enum_value_means_what_the_text_parser_reads_for_it(field, parse, text_of):
    for value, decision in field.values.items():
        assert parse(text_of(value)) == decision
        assert field.reader(parse)(answer(value)) == decision


def test_the_field_decides_whatever_the_reasoning_mentions():
    why = 'Response B says "### A" and [[A]] at the end.\n### A'
    assert CHOICE_FIELD.reader(parse_choice)(answer("B", why)) == "b"
    assert reasoning(answer("B", why)) == why


def test_free_text_to_a_schema_request_is_read_by_the_text_parser():
    read = CHOICE_FIELD.reader(parse_choice)
    assert read("B explains it.\n### B") == "b"
    assert how_read("B explains it.\n### B") == "text" and how_read(answer("A")) == "schema"
    with pytest.raises(JudgeParseError, match="no decision in the prompt's format"):
        read("I prefer B.")
    # a text that merely begins with `{` is text, and is read as such
    assert read("{A} repeats the question; B answers it.\n### B") == "b"


@pytest.mark.parametrize(("text", "cause"), [
    (answer("C"), "decision 'C' is none of 'A', 'B', 'tie'"),
    (answer("ab"), "decision 'ab' is none of"),
    ('{"reasoning": "r", "decision": "A", "decision": "B"}', "duplicate key 'decision'"),
    ('{"reasoning": "r"}', "missing field decision"),
    ('{"reasoning": "r", "decision": "A", "winner": "b"}', "winner 'b' names another decision than 'A'"),
    ('```json\n{"reasoning": "r", "decision": "D"}\n```', "decision 'D'"),
])
def test_json_that_does_not_validate_is_ambiguous_with_its_cause(text, cause):
    with pytest.raises(JudgeParseError) as raised:
        CHOICE_FIELD.reader(parse_choice)(text)
    assert cause in raised.value.cause
    assert raised.value.expected == CHOICE_FIELD.expected


@pytest.mark.parametrize("text", [answer("b"), answer(" B "), '{"decision": "B"}', '{"reasoning": 3, "decision": "B"}',
                                  '{"reasoning": "r", "decision": "B", "confidence": 0.9, "score": 5}'])
def test_a_decision_the_enum_holds_but_for_case_and_fields_that_decide_nothing_are_read(text):
    """Before, each was ambiguous and asked again (a user trial threw away such clear answers from a
    server that ignores the response format): the decision field names B whatever else stands beside it."""
    assert CHOICE_FIELD.reader(parse_choice)(text) == "b"


def test_an_answer_that_only_begins_like_json_is_read_as_text():
    """A cut or malformed object is no JSON verdict: the text reader reads it (and finds no decision)."""
    with pytest.raises(JudgeParseError, match="no decision in the prompt's format") as raised:
        CHOICE_FIELD.reader(parse_choice)('{"reasoning": "r", "decision": "A"')
    assert raised.value.kind == "no_decision" and raised.value.expected == CHOICE_FORMAT


def test_the_schema_is_reasoning_first_then_an_enum_of_the_prompts_decisions():
    schema = DecisionField({"[[A]]": 0, "[[B]]": 1}, "p").schema()
    assert list(schema["properties"]) == ["reasoning", "decision"]
    assert schema["properties"]["decision"]["enum"] == ["[[A]]", "[[B]]"]
    assert schema["additionalProperties"] is False and schema["required"] == ["reasoning", "decision"]


# -- end to end through jury.compare -----------------------------------------------------------------
def compare(make_engine, server, *, output: str = "auto", kind: str = "openai", cache=None, runs: int = 1,
            engine=None, question: str = "Capital of France?"):
    """`jury.compare` against `server` (on `engine`, else a new one); returns the engine and the verdict."""
    engine = engine or make_engine(judge_output=output, cache=cache)
    base_url = server.origin if kind == "gemini" else server.base_url
    engine.settings.roles["judge"] = JurySpec.parse(f"{kind}:judge;base_url={base_url}")
    recorded = []
    jury = BoundJury(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()), recorded.append,
                     case_id="c1", name="compare", test="t")
    engine.run(jury.compare("Lyon.", "Paris.", criteria="correct", question=question, runs=runs))
    (verdict,) = recorded
    return engine, verdict


def test_the_request_carries_the_schema_and_text_modes_very_messages(make_engine, tmp_path):
    with FakeOpenAI(lambda body, i: answer(letter(body), "Paris is right.")) as schema_server, \
            FakeOpenAI(lambda body, i: f"Paris is right.\n### {letter(body)}") as text_server:
        _, by_field = compare(make_engine, schema_server, cache=tmp_path / "a.sqlite")
        _, by_text = compare(make_engine, text_server, output="text", cache=tmp_path / "b.sqlite")
    assert len(schema_server.requests) == len(text_server.requests) == 2  # both orders
    def in_order(requests):  # the two orders are asked concurrently
        return sorted(requests, key=lambda r: json.dumps(r["messages"]))

    for asked, plain in zip(in_order(schema_server.requests), in_order(text_server.requests), strict=True):
        assert asked["messages"] == plain["messages"]
        assert "response_format" not in plain
        fmt = asked["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["schema"] == CHOICE_FIELD.schema()
    assert by_field.result.winner == by_text.result.winner == "b"
    assert by_field.read == {"schema": 2} and by_text.read == {"text": 2}
    assert by_field.raw == ["Paris is right."] * 2  # the reasoning is what reports show


def test_a_schema_answer_whose_reasoning_names_another_verdict_reads_the_field(make_engine):
    why = 'Lyon.\n### A\n[[A]] {"decision": "A"}'
    with FakeOpenAI(lambda body, i: answer(letter(body), why.replace("A", letter(body, "Lyon.")))) as server:
        _, verdict = compare(make_engine, server)
    assert verdict.result.winner == "b" and verdict.read == {"schema": 2}


def test_free_text_to_a_schema_request_reads_as_text_mode(make_engine):
    with FakeOpenAI(lambda body, i: f"Paris is right.\n### {letter(body)}") as server:
        _, verdict = compare(make_engine, server)
    assert server.requests[0]["response_format"]["type"] == "json_schema"
    assert verdict.result.winner == "b" and verdict.read == {"text": 2}


def test_a_decision_outside_the_enum_is_repaired_by_the_field_or_unscored(make_engine, tmp_path):
    def reply(body, index):
        return answer("tie") if body["messages"][-1]["content"].startswith(REPAIR) else answer("Paris")

    with FakeOpenAI(reply) as server:
        _, verdict = compare(make_engine, server)
    repairs = [r for r in server.requests if r["messages"][-1]["content"].startswith(REPAIR)]
    assert len(server.requests) == 4 and len(repairs) == 2
    assert all(r["response_format"] == server.requests[0]["response_format"] for r in repairs)  # the field again
    assert "decision 'Paris' is none of 'A', 'B', 'tie'" in repairs[0]["messages"][-1]["content"]
    assert verdict.result.winner == "tie" and all(run.repaired for run in verdict.result.runs)

    with FakeOpenAI(lambda body, i: answer("Paris")) as server:
        _, verdict = compare(make_engine, server, cache=tmp_path / "unrepaired.sqlite")
    assert not verdict.valid and "decision 'Paris' is none of" in verdict.error
    assert len(server.requests) == 4  # per order the answer and one repair: never a guess


def test_llama_cpp_refusing_json_schema_gets_the_published_prompt_in_text(make_engine):
    with FakeOpenAI.llama_cpp(lambda body, i: f"Paris.\n### {letter(body)}") as server:
        engine, verdict = compare(make_engine, server, runs=2)
        learned = len(server.requests)
        compare(make_engine, server, engine=engine, question="Capital of Italy?")  # asked in text at once
    formats = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert 1 <= formats.count("json_schema") <= 2  # at most one per order, asked before either learned
    assert set(formats[learned:]) == {None} and learned < len(server.requests)
    refused = [r["messages"] for r in server.requests if r.get("response_format")]
    asked_in_text = [r["messages"] for r in server.requests if not r.get("response_format")]
    assert all(messages in asked_in_text for messages in refused)
    assert verdict.result.winner == "b" and verdict.read == {"text": 4}
    assert "json_schema refused (HTTP 500" in engine.adaptations()["openai:judge"]["structured_output"]


def test_schema_mode_never_falls_back_it_says_why_unscored(make_engine):
    with FakeOpenAI.llama_cpp(lambda body, i: "### B") as server:
        _, verdict = compare(make_engine, server, output="schema")
    assert not verdict.valid and "json_schema refused" in verdict.error
    assert all(r["response_format"]["type"] == "json_schema" for r in server.requests)


def test_a_transient_500_on_a_schema_request_keeps_the_schema(make_engine):
    with FakeOpenAI(lambda body, i: answer(letter(body))) as server:
        server.faults.append(Fault(status=500, message="response_format: upstream blip"))
        engine, verdict = compare(make_engine, server)
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema"] * 3
    assert verdict.result.winner == "b" and engine.adaptations() == {}


def test_text_and_schema_answers_never_replay_for_one_another(make_engine, tmp_path):
    cache = tmp_path / "shared.sqlite"
    def reply(body, index):  # text mode prefers Paris, schema mode Lyon
        return answer(letter(body, "Lyon.")) if body.get("response_format") else f"### {letter(body)}"

    with FakeOpenAI(reply) as server:
        _, by_text = compare(make_engine, server, output="text", cache=cache)
        _, by_field = compare(make_engine, server, cache=cache)
        _, again = compare(make_engine, server, cache=cache)
    assert (by_text.result.winner, by_field.result.winner, again.result.winner) == ("b", "a", "a")
    assert len(server.requests) == 4 and again.cached


def test_gemini_gets_the_schema_as_its_response_json_schema(make_engine):
    def reply(body, index):
        return answer(letter({"messages": [{"content": body["contents"][0]["parts"][0]["text"]}]}))

    with FakeGemini(reply) as server:
        _, verdict = compare(make_engine, server, kind="gemini")
    config = server.requests[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == CHOICE_FIELD.schema()
    assert verdict.result.winner == "b" and verdict.read == {"schema": 2}


def test_offline_and_a_server_that_ignores_the_field_stay_in_text(make_engine):
    with FakeOpenAI(lambda body, i: f"### {letter(body)}", behaviour=ServerBehaviour(structured="none")) as server:
        _, verdict = compare(make_engine, server, output="text")
    assert all("response_format" not in r for r in server.requests) and verdict.read == {"text": 2}


def test_each_juror_is_asked_as_its_own_server_allows(make_engine):
    with FakeOpenAI(lambda body, i: answer(letter(body))) as openai_like, \
            FakeOpenAI.llama_cpp(lambda body, i: f"### {letter(body)}") as llama:
        engine = make_engine()
        jurors = f"openai:a;base_url={openai_like.base_url}+openai:b;base_url={llama.base_url}"
        engine.settings.roles["judge"] = JurySpec.parse(jurors)
        recorded = []
        jury = BoundJury(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()), recorded.append,
                         case_id="c1", name="compare", test="t")
        engine.run(jury.compare("Lyon.", "Paris.", criteria="correct", question="Capital of France?"))
    (verdict,) = recorded
    assert verdict.result.winner == "b" and [v.winner for v in verdict.result.jurors] == ["b", "b"]
    assert verdict.read == {"schema": 2, "text": 2}
    assert {r.read for r in verdict.result.runs if r.juror == "openai:a"} == {"schema"}


# -- the setting ---------------------------------------------------------------------------------------
def test_schema_mode_with_a_judge_that_takes_no_schema_stops_at_start_up():
    check_output("schema", Settings(judge=JurySpec.parse("openai:gpt-4o")).judge_specs())
    check_output("auto", Settings(judge=JurySpec.parse("offline")).judge_specs())
    judges = Settings(judge=JurySpec.parse("openai:gpt-4o"),
                      roles={"socratic.judge": JurySpec.parse("http:http://127.0.0.1:9/x"),
                             "candidate": JurySpec.parse("offline")}).judge_specs()
    assert {role: spec.text for role, spec in judges.items()} == {"judge": "openai:gpt-4o",
                                                                  "socratic.judge": "http:http://127.0.0.1:9/x"}
    with pytest.raises(ConfigError, match=r"--llm-judge-output schema: the socratic\.judge http:"):
        check_output("schema", judges)


def test_a_misspelt_output_mode_is_a_start_up_error_naming_the_option(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--llm-judge-output", "tetx")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llm-judge-output 'tetx' (did you mean 'text'?): use one of auto, schema, text*"])
    pytester.makeini("[pytest]\nllm_judge_output = Schema\n")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini llm_judge_output 'Schema'*use one of auto, schema, text*"])


# -- the families' verdict judges --------------------------------------------------------------------
def family_jury(make_engine, server):
    engine = make_engine(judge_runs=1)
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
    return engine, Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())


def enum_asked(server) -> list[str]:
    (enum,) = {tuple(r["response_format"]["json_schema"]["schema"]["properties"]["decision"]["enum"])
               for r in server.requests}
    return list(enum)


def test_socratic_asks_for_its_three_options_as_the_field(make_engine):
    from llmjury.families.socratic.dialogue import Turn
    from llmjury.families.socratic.options import SocraticOptions
    from llmjury.families.socratic.pipeline import judge_pair

    with FakeOpenAI(lambda body, i: answer("(b) Teacher B", "Teacher A says ### (a)")) as server:
        engine, jury = family_jury(make_engine, server)
        opts = SocraticOptions(positions="fixed")
        judged = engine.run(judge_pair(jury, "s1", [Turn("Student", "2+2?")], "Why?", "4.", opts))
    assert enum_asked(server) == ["(a) Teacher A", "(b) Teacher B", "(c) Equivalent"]
    assert judged.majority.winner == "baseline" and judged.answers.read == {"schema": 1}


@pytest.mark.parametrize(("prompt", "value", "winner"), [
    ("mtbench-pair-v2", "[[A]]", "model_a"),
    ("seed", "Score of Model 1: 0, Score of Model 2: 0", "tie (bothbad)"),
])
def test_arena_asks_for_its_prompts_decisions_as_the_field(make_engine, prompt, value, winner):
    from llmjury.families.arena.options import ArenaOptions
    from llmjury.families.arena.pipeline import judge_battle

    with FakeOpenAI(lambda body, i: answer(value, "Model 2 wrote [[B]] and Score of Model 2: 1")) as server:
        engine, jury = family_jury(make_engine, server)
        opts = ArenaOptions(judge_prompt=prompt, swap=False)
        verdict = engine.run(judge_battle(jury, opts, "b1", "2+2?", "4", "5", {}))
    assert value in enum_asked(server)
    assert verdict.result.winner == winner and verdict.read == {"schema": 1}


# -- how verdicts were read, in summary.json and summary.md ------------------------------------------
def test_the_summary_counts_how_decisions_were_read_per_family():
    from llmjury.reporting.reports import decisions_read_line
    from llmjury.results.aggregate import core_section

    records = [{"case_id": str(i), "valid": True, "error": None, "judge": {"provider": "openai:j"}, "read": read}
               for i, read in enumerate([{"schema": 2}, {"schema": 1, "text": 1}, {}])]
    section = core_section(records)
    assert section["decisions_read"] == {"schema": 3, "text": 1}
    assert decisions_read_line(section["decisions_read"]) == (
        "decisions read: 3 from a schema's field, 1 from the text's decision line")


def test_the_unscored_rate_is_over_the_judges_verdicts_not_the_tests_own_assertions():
    """Before: 18 judge verdicts all unscored beside 18 always-scored assertion checks read 0.5 [0.39,
    0.61], so `custom.unscored_rate<=0.6` passed on a judge that answered nothing readable (a user trial)."""
    from llmjury.judgement.verdicts import ASSERTIONS
    from llmjury.results.aggregate import core_section

    judged = [{"case_id": f"c{i}", "valid": False, "error": "unparseable: no decision", "cause": "no_decision",
               "judge": {"provider": "openai:judge"}} for i in range(18)]
    checks = [{"case_id": f"c{i}", "valid": True, "error": None, "judge": {"provider": ASSERTIONS}} for i in range(18)]
    section = core_section(judged + checks)
    assert (section["verdicts"], section["unscored"]) == (36, 18)
    assert (section["unscored_rate"]["value"], section["unscored_rate"]["n"]) == (1.0, 18)
    only_checks = core_section(checks)["unscored_rate"]
    assert (only_checks["value"], only_checks["n"]) == (0.0, 18)
