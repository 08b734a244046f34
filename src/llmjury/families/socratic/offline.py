"""Offline stand-ins for the Socratic prompts. Each rule is simple enough to check by hand.

- student: picks one of the seed's six reply kinds, weighted by the persona (low motivation
  drifts off topic more, low self-efficacy asks for clarification and errs more, high goal
  commitment follows up and answers correctly more), about a word from the teacher's last turn.
- baseline teacher (plain prompt): explains the topic word directly, sometimes stating the
  answer outright, and ends with a question about half of the time.
- candidate teacher (our prompt): names what the student said and asks one guiding question.
- judge: scores each response on the four aspects (shares a word with the student's last
  turn; offers a hint such as "think"/"consider"/"what happens"; is a question without a
  direct answer; sentences of at most 25 words), prefers the higher total ("Equivalent" when
  equal), and answers at random one time in five, so runs can disagree as a real judge's do.
"""

from __future__ import annotations

import random
import re

from llmjury.chat import ChatRequest
from llmjury.providers.offline import OfflineAnswers

ANSWERS = OfflineAnswers()

STOP = {"about", "there", "their", "which", "would", "could", "should", "these", "those", "where", "while",
        "because", "other", "think", "teacher", "student", "really", "right", "something", "what's", "doesn't"}
HINTS = ("think", "consider", "what happens", "try", "imagine", "suppose", "notice")
DIRECT = ("the answer is", "simply", "the reason is")
KINDS = ("follow_up", "clarification", "new_question", "irrelevant", "correct", "wrong")
STUDENT_LINES = {
    "follow_up": "Okay, but why does {topic} matter so much here?",
    "clarification": "Sorry, I'm not sure what you mean by {topic}. Could you explain?",
    "new_question": "Does the same idea about {topic} also apply to other data structures?",
    "irrelevant": "Unrelated, but will this be on the midterm exam?",
    "correct": "I think it's because {topic} depends on the input, so the cost changes with it.",
    "wrong": "Is it just because {topic} is always slow on every input?",
}


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z][A-Za-z'-]{4,}", text.lower()) if w not in STOP]


def topic(text: str, rng: random.Random) -> str:
    found = words(text)
    return rng.choice(found[:8]) if found else "this idea"


def last(history: str, speaker: str) -> str:
    lines = [line for line in history.splitlines() if line.startswith(f"[{speaker}]: ")]
    return lines[-1].split(": ", 1)[1] if lines else ""


@ANSWERS.answer("socratic/student.j2")
def student(request: ChatRequest, rng: random.Random) -> str:
    prompt = request.messages[-1].content
    persona = prompt.split(". Based on", 1)[0].lower()
    weights = dict.fromkeys(KINDS, 2)
    weights["new_question"] = weights["irrelevant"] = 1
    if "low learning motivation" in persona:
        weights["irrelevant"] += 2
    if "low confidence" in persona:
        weights["clarification"] += 2
        weights["wrong"] += 1
    if "high dedication" in persona:
        weights["follow_up"] += 2
        weights["correct"] += 1
    kind = rng.choices(KINDS, weights=[weights[k] for k in KINDS])[0]
    return STUDENT_LINES[kind].format(topic=topic(last(prompt, "Teacher"), rng))


@ANSWERS.answer("socratic/teacher_baseline.j2")
def plain_teacher(request: ChatRequest, rng: random.Random) -> str:
    said = last(request.messages[-1].content, "Student")
    subject = topic(said, rng)
    reply = f"Good question. {subject.capitalize()} is the key point: it decides how the system behaves here."
    if rng.random() < 0.3:
        reply += f" The answer is that {subject} changes the cost in the worst case."
    if rng.random() < 0.5:
        reply += f" Can you see how {subject} affects the result?"
    return reply


@ANSWERS.answer("socratic/candidate_teacher.j2")
def socratic_tutor(request: ChatRequest, rng: random.Random) -> str:
    said = request.messages[-1].content
    subject = topic(said, rng)
    opener = rng.choice(["You mentioned {t}.", "Let's stay with {t} for a moment.",
                         "Good, you are thinking about {t}."])
    question = rng.choice(["What do you think happens to {t} when the input grows?",
                           "Consider a small example: how would {t} behave there?",
                           "Try to imagine the worst case for {t}: what would it look like?"])
    return f"{opener} {question}".format(t=subject)


def aspect_scores(response: str, student_turn: str) -> dict[str, int]:
    text = response.lower()
    sentences = [s for s in re.split(r"[.!?]+", response) if s.strip()]
    mean_length = sum(len(s.split()) for s in sentences) / max(len(sentences), 1)
    return {
        "Understanding": int(bool(set(words(response)) & set(words(student_turn)))),
        "Explanation": int(any(h in text for h in HINTS)),
        "Language": int(response.rstrip().endswith("?")) + int(not any(d in text for d in DIRECT)),
        "Readability": int(mean_length <= 25),
    }


_PAIR = re.compile(r"Dialogue History:\n(?P<history>.*)\n\nTeacher Responses to Evaluate:\n"
                   r"\[Teacher A\]: (?P<a>.*)\n\[Teacher B\]: (?P<b>.*)\n\nWhich is better\?", re.DOTALL)


def judge_answer(prompt: str, rng: random.Random, aspect: str | None) -> str:
    match = _PAIR.search(prompt)
    if match is None:
        return "I could not find two teacher responses to compare."
    student_turn = last(match["history"], "Student")
    a, b = aspect_scores(match["a"], student_turn), aspect_scores(match["b"], student_turn)
    names = [aspect] if aspect else list(a)
    lines = [f"{i}. {name}: Teacher A scores {a[name]}, Teacher B scores {b[name]}." for i, name in enumerate(names, 1)]
    total_a, total_b = sum(a[n] for n in names), sum(b[n] for n in names)
    decision = "a" if total_a > total_b else "b" if total_b > total_a else "c"
    if rng.random() < 0.2:
        decision = rng.choice("abc")
    label = {"a": "(a) Teacher A", "b": "(b) Teacher B", "c": "(c) Equivalent"}[decision]
    lines.append(f"Overall: Teacher A totals {total_a}, Teacher B totals {total_b}.")
    return "\n".join(lines) + f"\n### {label}"


@ANSWERS.answer("socratic/judge.j2")
def judge(request: ChatRequest, rng: random.Random) -> str:
    return judge_answer(request.messages[-1].content, rng, None)


@ANSWERS.answer("socratic/judge_aspect.j2")
def judge_aspect(request: ChatRequest, rng: random.Random) -> str:
    prompt = request.messages[-1].content
    aspect = re.search(r"• (\w+):", prompt)
    return judge_answer(prompt, rng, aspect.group(1) if aspect else None)
