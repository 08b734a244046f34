"""Annotators keep the names the file gives: a person is one annotator across contexts, whatever
position their ratings take in each context's lists, and the human ceiling is computed per person."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from llmjury.datasets.dialogue_items import rated_items
from llmjury.errors import DatasetError
from llmjury.families.geval.ceiling import annotator_verdicts
from llmjury.families.geval.datasets import to_criteria
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.report import aggregate

# Per context: who rated, in list order, and each response's ratings in that order. "sam" rates
# every context; "kim" sits first in one context and last in another.
CONTEXTS = [
    (["sam", "ann", "kim"], [[5, 4, 1], [3, 3, 5], [1, 2, 2], [4, 5, 3]]),
    (["kim", "sam", "lee"], [[2, 5, 4], [4, 2, 2], [1, 1, 1], [5, 3, 4]]),
    (["ann", "lee", "sam"], [[2, 1, 2], [4, 4, 5], [3, 2, 3], [5, 5, 4]]),
]


def usr_file(tmp_path, contexts=CONTEXTS):
    data = [{"context": f"hi\nhello {c}\n", "fact": "", "annotators": names,
             "responses": [{"response": f"reply {r} in {c}", "model": f"bot{r}", "Overall": ratings}
                           for r, ratings in enumerate(rows)]}
            for c, (names, rows) in enumerate(contexts)]
    path = tmp_path / "pc_usr.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_ratings_are_keyed_by_the_names_the_file_gives_not_by_position(tmp_path):
    items = rated_items(usr_file(tmp_path), "pc")
    assert items[0].ratings["Overall"] == {"sam": 5.0, "ann": 4.0, "kim": 1.0}
    assert items[4].ratings["Overall"] == {"kim": 2.0, "sam": 5.0, "lee": 4.0}  # kim first here


def test_the_human_ceiling_is_the_mean_over_people_of_each_ones_correlation(tmp_path):
    path = usr_file(tmp_path)
    items = [to_criteria(item, path, GEvalOptions()) for item in rated_items(path, "pc")]
    verdicts = annotator_verdicts(items, "overall")
    assert {v.judge.provider for v in verdicts} == {f"human:annotator-{n}" for n in ("sam", "ann", "kim", "lee")}
    ceiling = aggregate(verdicts).human_ceiling["pc/response/overall"]
    expected = []
    for person in ("sam", "ann", "kim", "lee"):
        own, others = [], []
        for names, rows in CONTEXTS:
            if person in names:
                for ratings in rows:
                    own.append(ratings[names.index(person)])
                    rest = [x for n, x in zip(names, ratings, strict=True) if n != person]
                    others.append(sum(rest) / len(rest))
        expected.append(stats.pearsonr(own, others)[0])
    assert ceiling.annotators == 4 and ceiling.items == 12
    assert ceiling.pooled is not None and ceiling.pooled.pearson == pytest.approx(sum(expected) / 4)


def test_a_rating_list_that_does_not_match_the_named_annotators_is_refused(tmp_path):
    bad = [(["sam", "ann"], [[5, 4, 1]])]
    with pytest.raises(DatasetError, match=r"pc_usr\.json \[item 0\]: rating 'Overall' lists 3 values for 2 "
                                           r"annotators \['sam', 'ann'\]"):
        rated_items(usr_file(tmp_path, bad), "pc")
    twice = [(["sam", "sam", "kim"], [[5, 4, 1]])]
    with pytest.raises(DatasetError, match=r"annotators \['sam', 'sam', 'kim'\] name a person twice"):
        rated_items(usr_file(tmp_path, twice), "pc")
