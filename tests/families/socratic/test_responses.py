"""Pre-collected replies (seed 000's endpoint responses file, or rows) judged without generating anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmjury.errors import DatasetError
from llmjury.families.socratic.datasets.responses import parse_context, response_cases
from llmjury.families.socratic.pipeline import judge_responses
from llmjury.families.socratic.report import aggregate, files, markdown
from llmjury.testing import FakeOpenAI, FakeServer


class Tutor(FakeServer):
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        return 200, {"reply": "a tutor reply nobody should have asked for"}


def seed_file(tmp_path: Path, results: list[dict]) -> Path:
    path = tmp_path / "endpoint_responses_20250623_161358.json"
    path.write_text(json.dumps({"summary": {"total_subsets_processed": len(results)}, "results": results}))
    return path


def subsets_dir(tmp_path: Path, ids: list[str]) -> Path:
    folder = tmp_path / "subsets"
    folder.mkdir()
    for sid in ids:
        messages = [{"role": "user", "message": "Why is quicksort slow sometimes?"},
                    {"role": "assistant", "message": "What happens with a sorted input?"},
                    {"role": "user", "message": f"It picks bad pivots? ({sid})"}]
        (folder / f"subset_{sid}.json").write_text(json.dumps({"subset_id": sid, "messages": messages}))
    return folder


def test_seed_000_file_joined_with_its_subsets_and_failed_items_counted(tmp_path):
    path = seed_file(tmp_path, [
        {"subset_id": "s1", "responses": {"chat": "What would a bad pivot do?", "simple-chat": "Use random pivots."},
         "success": True},
        {"subset_id": "s2", "responses": {"chat": None, "simple-chat": "x"}, "success": False, "error": "timeout"},
        {"subset_id": "s3", "responses": {"chat": "", "simple-chat": "y"}, "success": True},
        {"subset_id": "s1", "responses": {"chat": "again", "simple-chat": "again"}, "success": True},
    ])
    cases, report = response_cases(path, ours_name="chat", baseline_name="simple-chat",
                                   subsets_dir=subsets_dir(tmp_path, ["s1", "s2", "s3"]))
    assert [c.id for c in cases] == ["endpoint_responses_20250623_161358-s1"]
    assert cases[0].history[-1] == ("Student", "It picks bad pivots? (s1)") and cases[0].ours.startswith("What would")
    assert report.kept == 1 and report.dropped == {"items the collection marked unsuccessful": 1,
                                                   "items with an empty reply": 1, "repeated ids (first kept)": 1}
    assert cases[0].marks() == ["socratic", "responses", "endpoint_responses_20250623_161358"]


def test_seed_file_without_dialogues_names_the_item_and_the_option(tmp_path):
    path = seed_file(tmp_path, [{"subset_id": "s1", "responses": {"chat": "a", "simple-chat": "b"}}])
    with pytest.raises(DatasetError, match=r"\[item 0\]: no dialogue for 's1'.*socratic.subsets_dir"):
        response_cases(path, ours_name="chat", baseline_name="simple-chat")


def test_names_not_in_the_file_say_which_option_to_set(tmp_path):
    path = seed_file(tmp_path, [{"subset_id": "s1", "responses": {"chat": "a", "simple-chat": "b"}}])
    with pytest.raises(DatasetError, match=r"holds \['chat', 'simple-chat'\], not 'ours' and 'baseline'.*ours_name"):
        response_cases(path)


def test_jsonl_and_csv_rows(tmp_path):
    rows = tmp_path / "mine.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "context": "Student: Why?\nTeacher: Why not?\nStudent: Because.", "candidate": "Hm?",
         "baseline": "Yes."},
        {"id": "b", "context": [{"role": "user", "content": "Help"}], "candidate": "How?", "baseline": "Sure."},
    ]))
    cases, _ = response_cases(rows, name="pilot")
    assert [c.id for c in cases] == ["pilot-a", "pilot-b"]
    assert cases[0].history == [("Student", "Why?"), ("Teacher", "Why not?"), ("Student", "Because.")]
    table = tmp_path / "mine.csv"
    table.write_text('id,context,candidate,baseline\nq1,"[Student]: 2+2?\n[Teacher]: Count.\n[Student]: 5",Sure?,4\n')
    cases, report = response_cases(table)
    assert cases[0].history[-1] == ("Student", "5") and (cases[0].ours, cases[0].baseline) == ("Sure?", "4")
    assert report.dataset == "mine"


def test_rows_without_the_reply_fields_are_named(tmp_path):
    rows = tmp_path / "mine.jsonl"
    rows.write_text(json.dumps({"id": "a", "context": "Student: hi", "answer": "x"}))
    with pytest.raises(DatasetError, match=r"mine\.jsonl \[item 0\]: expected 'candidate' and 'baseline'"):
        response_cases(rows)


def test_context_lines_accept_brackets_roles_and_continuations():
    assert parse_context("[Student]: a\nmore\nTutor: b\nassistant: c") == [
        ("Student", "a\nmore"), ("Teacher", "b"), ("Teacher", "c")]


def test_collected_replies_are_judged_without_asking_a_tutor(make_jury, tmp_path):
    path = seed_file(tmp_path, [
        {"subset_id": f"s{i}", "responses": {"chat": "Consider a sorted input: what would the pivot be?",
                                            "simple-chat": "The answer is that pivots matter."}} for i in range(4)])
    cases, _ = response_cases(path, ours_name="chat", baseline_name="simple-chat",
                              subsets_dir=subsets_dir(tmp_path, [f"s{i}" for i in range(4)]))
    with Tutor() as tutor:
        jury = make_jury(roles={"candidate": f"http:{tutor.origin}/chat", "baseline": f"http:{tutor.origin}/chat"},
                         options={"socratic.ours_name": "chat", "socratic.baseline_name": "simple-chat"})
        verdicts = [jury.engine.run(judge_responses(c, jury)).verdict for c in cases]
        assert tutor.requests == []
    assert all(v.valid and v.kind == "pairwise" and v.result.source == "responses" for v in verdicts)
    section = aggregate(verdicts)
    assert section.win_rate is None and section.responses.win_rate.n == 4
    assert section.responses.dataset == "endpoint_responses_20250623_161358"
    written = files(section, verdicts)
    robust = json.loads(written["socratic_endpoint_responses_20250623_161358_robust_evaluation.json"])
    assert set(robust["summary"]["final_verdict_distribution"]) <= {"chat", "simple-chat", "tie"}
    assert robust["summary"]["total_subsets"] == 4 and len(robust["aggregated_results"]) == 4
    assert "socratic_endpoint_responses_20250623_161358_run_3.json" in written
    # The configured names label the wins table, not "ours" and "baseline".
    text = markdown(section)
    assert "| chat |" in text and "| simple-chat |" in text and "| ours |" not in text and "| baseline |" not in text


def test_items_repeating_a_dialogue_and_its_replies_are_judged_and_counted_once(tmp_path):
    replies = {"chat": "What would a bad pivot do?", "simple-chat": "Use random pivots."}
    same = [{"role": "user", "message": "Why is quicksort slow?"}, {"role": "assistant", "message": "When?"},
            {"role": "user", "message": "On sorted input."}]
    path = seed_file(tmp_path, [{"subset_id": "s1", "responses": replies, "messages": same},
                                {"subset_id": "s2", "responses": replies, "messages": same},
                                {"subset_id": "s3", "responses": {**replies, "chat": "Which pivot?"}, "messages": same},
                                {"subset_id": "s4", "responses": replies, "messages": same}])
    cases, report = response_cases(path, ours_name="chat", baseline_name="simple-chat")
    assert [(c.subset_id, c.same_as) for c in cases] == [("s1", ["s2", "s4"]), ("s3", [])]
    assert report.dropped == {"items repeating an earlier item's dialogue and replies (judged once)": 2}


def test_the_seeds_evaluation_file_carries_its_own_dialogues(tmp_path):
    path = tmp_path / "judge_evaluations_20250623_170000.json"
    path.write_text(json.dumps({"summary": {}, "evaluations": [
        {"subset_id": "s1", "success": True, "dialogue_history": "[Student]: Why?\n[Teacher]: Hm?\n[Student]: So?",
         "teacher_responses": {"chat": "What do you think?", "simple-chat": "Because."}, "verdict": "chat"}]}))
    cases, _ = response_cases(path, ours_name="chat", baseline_name="simple-chat")
    assert cases[0].history[-1] == ("Student", "So?") and cases[0].baseline == "Because."


def test_a_subset_file_without_its_id_is_found_by_name_as_the_seed_does(tmp_path):
    folder = tmp_path / "subsets"
    folder.mkdir()
    (folder / "subset_s9.json").write_text(json.dumps({"messages": [{"role": "user", "message": "Stuck."}]}))
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"subset_id": "s9", "dialogue": "", "candidate": "Where?", "baseline": "Here."}))
    cases, _ = response_cases(rows, subsets_dir=folder)
    assert cases[0].history == [("Student", "Stuck.")]


def test_subsets_of_the_same_text_are_judged_once_and_counted_once(make_jury):
    from llmjury.families.socratic.cases import ResponsePairCase

    history = [("student", "Why is quicksort slow on sorted input?"), ("teacher", "Which pivot does it pick?"),
               ("student", "The first one?")]
    same = [ResponsePairCase(id=f"sim-{sid}", dataset="simulated-twice", subset_id=sid, history=history,
                             ours="What happens to the two halves then?", baseline="The pivot is the minimum.")
            for sid in ("a", "b", "c")]
    other = ResponsePairCase(id="sim-d", dataset="simulated-twice", subset_id="d", history=history[:1],
                             ours="What do you think?", baseline="Because of the pivot.")
    jury = make_jury(options={"socratic.ours_name": "chat", "socratic.baseline_name": "simple-chat"})
    verdicts = [jury.engine.run(judge_responses(c, jury)).verdict for c in [*same, other]]
    assert len({v.attributes["text_key"] for v in verdicts}) == 2
    part = aggregate(verdicts).responses
    assert part.win_rate.n == 2 and sum(part.final_verdicts.values()) == 2
    assert part.identical == {"sim-a": ["sim-b", "sim-c"]}
    assert "Counted once: 2 subsets repeat another's dialogue and replies word for word (sim-a = sim-b, sim-c)" \
        in markdown(aggregate(verdicts))


@pytest.mark.parametrize("mode", ["alternate", "random", "fixed"])
def test_subsets_of_the_same_text_are_paid_once_in_every_position_mode(make_jury, tmp_path, mode):
    from llmjury.families.socratic.cases import ResponsePairCase

    history = [("student", "Why is quicksort slow on sorted input?"), ("teacher", "Which pivot does it pick?"),
               ("student", "The first one?")]
    same = [ResponsePairCase(id=f"sim-{sid}", dataset="simulated-twice", subset_id=sid, history=history,
                             ours="What happens to the two halves then?", baseline="The pivot is the minimum.")
            for sid in ("a", "b", "c", "e", "f")]
    other = ResponsePairCase(id="sim-d", dataset="simulated-twice", subset_id="d", history=history[:1],
                             ours="What do you think?", baseline="Because of the pivot.")
    paid = []
    for run, judged in enumerate(([same[0], other], [*same, other])):
        with FakeOpenAI(lambda body, i: "### (a) Teacher A") as server:
            jury = make_jury(roles={"judge": f"openai:judge;base_url={server.base_url}"},
                             options={"socratic.positions": mode}, cache=tmp_path / f"cache-{run}.sqlite")
            verdicts = [jury.engine.run(judge_responses(c, jury)).verdict for c in judged]
            paid.append(len(server.requests))
    assert paid[0] > 0 and paid[1] == paid[0]  # the four repeats cost nothing more
    part = aggregate(verdicts).responses
    assert part.win_rate.n == 2 and part.identical == {"sim-a": ["sim-b", "sim-c", "sim-e", "sim-f"]}
