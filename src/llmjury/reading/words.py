"""The words a judge decides with, in every language the readers know (English, Korean and Italian,
the users' languages, and the role, decision and comparison words of Spanish, German, French,
Japanese and Chinese), as regular-expression fragments the shape readers build their patterns from.

A prompt names its options in its own language ("(a) Teacher A", "(가) 선생님 A", "(a) Insegnante A");
a judge answers in that language, so each role word of an option's name is read in its translations
too, and so are the labels a decision line may carry ("Final decision:", "최종 결정:", "Decisione
finale:"), the words that correct an earlier decision, and the number words of a rating. A template
adds its own names and words with a declaration (`llmjury.reading.declaration`).
"""

from __future__ import annotations

import re

#: Markdown bold or emphasis around a decision or its value.
BOLD = r"[*_]{0,3}"
#: What may stand before a whole decision line: whitespace, a list bullet, bold.
LEAD = rf"^[ \t]*(?:[-*+•][ \t]+)?{BOLD}[ \t]*"

#: Role words in an option's name and their translations (matched case-insensitively).
ROLE_WORDS: dict[str, tuple[str, ...]] = {
    "teacher": ("teacher", "tutor", "선생님", "교사", "insegnante", "docente", "profesor", "profesora", "lehrer",
                "lehrerin", "lehrkraft", "enseignant", "enseignante", "professeur", "先生", "教師", "老师", "教师"),
    "response": ("response", "answer", "응답", "답변", "risposta", "respuesta", "antwort", "réponse", "回答", "回复",
                 "応答", "答え"),
    "assistant": ("assistant", "어시스턴트", "assistente", "asistente", "assistent", "アシスタント", "助手"),
    "model": ("model", "모델", "modello", "modelo", "modell", "modèle", "モデル", "模型"),
    "output": ("output", "출력", "salida", "ausgabe", "sortie", "出力", "输出"),
}
#: Words for "neither wins" and their translations.
TIE_WORDS: dict[str, tuple[str, ...]] = {
    "tie": ("tie", "draw", "무승부", "동점", "pareggio", "parità", "parita", "empate", "unentschieden", "gleichstand",
            "égalité", "egalite", "引き分け", "平局", "平手"),
    "equivalent": ("equivalent", "equal", "동등", "동일", "비슷함", "equivalente", "equivalenti", "uguale", "uguali",
                   "equivalentes", "gleichwertig", "équivalent", "équivalents", "équivalente", "同等", "相当"),
}

_FINAL = r"(?:final|overall|finale|definitiv[ao]|complessiv[ao]|최종|종합|endgültige?|gesamt|最終|最终)"
#: A word that names a decision ("decision", "verdict", "결정", "decisione"), in every language read.
DECISION_WORD = (r"(?:decision|verdict|answer|choice|option|judg(?:e)?ment|conclusion|winner|pick"
                 r"|결정|판정|판단|선택지?|결론|답|승자|옵션"
                 r"|decisione|verdetto|risposta|scelta|opzione|giudizio|conclusione|vincitore"
                 r"|decisión|veredicto|elección|ganador|entscheidung|urteil|wahl|gewinner|décision|choix|gagnant"
                 r"|判定|決定|决定|结论|結論|判断|判斷|裁定)")
_DECISION = DECISION_WORD
#: A decision line's optional label: "Final decision:", "My verdict", "최종 결정:", "La mia decisione finale:".
LABEL = (rf"(?:(?:my|our|the|la\s+mia|il\s+mio|la|il|나의|제)\s+)?(?:{_FINAL}\s*)?{_DECISION}(?:\s*{_FINAL})?"
         r"(?:\s*(?:is|è|e'|은|는|:))?\s*:?\s*")
#: The same label closed by a colon or a copula ("Final decision:", "My verdict is"), as a line needs
#: it to decide without the marker: "La risposta A sbaglia" opens with a decision word, but decides nothing.
#: "The answer is (a)" in a judge's analysis is about the task, so only a decision word proper takes a copula.
CLOSED_LABEL = (rf"(?:(?:my|our|the|la\s+mia|il\s+mio|la|il|나의|제)\s+)?(?:{_FINAL}\s*)?"
                rf"(?:{_DECISION}(?:\s*{_FINAL})?\s*[:：]"
                rf"|(?:decision|verdict|choice|결정|판정|decisione|verdetto|scelta)(?:\s*{_FINAL})?"
                r"(?:\s+(?:is|è)|\s*(?:은|는))\s*:?)\s*")

#: Words that correct an earlier decision ("Wait, on reflection ..."), in every language read.
CORRECTION = re.compile(
    r"\b(?:wait|actually|correction|on\s+(?:second\s+thought|reflection)|re-?consider\w*|i\s+was\s+wrong|mistake"
    r"|revis\w+|change\s+my|i\s+misread|upon\s+(?:further|closer)|let\s+me\s+re-?\w+|instead|corrected"
    r"|initial(?:ly)?|at\s+first|first\s+impression|draft|tentative(?:ly)?|preliminary|provisional(?:ly)?)\b"
    r"|정정|수정|다시\s*생각|다시\s*(?:보니|살펴보니|읽어\s*보니)|잠깐|잘못|재검토|번복|아니[,.]|처음에는|"
    r"\b(?:anzi|correggo|correzione|ripensandoci|a\s+pensarci\s+bene|in\s+realtà|mi\s+correggo|errore|rivedo"
    r"|rileggendo|aspetta|cambio|inizialmente|all'inizio|provvisori[ao])\b", re.IGNORECASE)

#: Number words read as a rating's value, where one word means one number.
NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10,
    "uno": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7, "otto": 8, "nove": 9, "dieci": 10,
    "영": 0, "하나": 1, "둘": 2, "셋": 3, "넷": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10,
    "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5,
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5,
}
#: A rating's unit words: "4 points", "4 punti", "4점".
UNIT = r"(?:points?|pts?\.?|punti|punto|puntos?|punkte?|점|点|分)"
#: "out of N" in every language read: "4/5", "4 out of 5", "4 su 5".
OUT_OF = r"(?:/|out\s+of|su|di|de|sur|von)"
#: A scale restated ("1-5", "out of 5", "5점 만점"): never a score, wherever it stands.
RESTATED_SCALE = re.compile(rf"\d+\s*[-–—~]\s*\d+|{OUT_OF}\s*\d+|\d+\s*점\s*만점", re.IGNORECASE)

#: Words that compare a winner named first with a loser named after it ("B is better than A").
COMPARATIVE = re.compile(
    r"(?:\b(?:is|are|was|seems|appears)\s+)?(?:clearly\s+|much\s+|slightly\s+|far\s+)?"
    r"(?:better|stronger|superior|preferable|preferred|more\s+\w+|wins)\s+(?:than|to|over)\b|\bover\b|>|"
    r"(?:\bè\s+|\be'\s+)?(?:migliore|meglio|preferibile|superiore)\s+(?:dell'|dello\b|della\b|del\b|di\b|"
    r"rispetto\s+a(?:lla|l|ll')?|a\b)|"
    r"\bsu\b|보다", re.IGNORECASE)


#: What says the option just named lost ("A is worse", "A loses", "l'Insegnante A è peggiore", "A가 더 못하다"):
#: on a decision line, it names the loser where the winner belongs.
LOSER = re.compile(
    r"(?:(?:is|was|seems|appears|remains)\s+(?:(?:clearly|much|slightly|far|definitely|actually|overall|the)\s+)*"
    r"(?:worse|weaker|worst|inferior|wrong|incorrect|less\s+\w+|loser)\b|loses\b|falls\s+short\b|fails\b"
    r"|(?:è|e')\s+(?:(?:chiaramente|decisamente|nettamente|la|il)\s+)*(?:peggiore|peggio|inferiore|sbagliat[ao]"
    r"|errat[ao])\b|perde\b|(?:가|이|는|은)\s*(?:더\s*|훨씬\s*)?(?:나쁘|못하|부족|열등|틀)"
    r"|es\s+(?:peor|inferior|incorrect[ao])\b|pierde\b|ist\s+(?:schlechter|unterlegen|falsch)\b|verliert\b"
    r"|est\s+(?:pire|moins\s+bonne?|inférieure?|incorrecte?)\b|perd\b|更差|较差|输|(?:の方が|が|は)\s*(?:より)?\s*(?:悪|劣|負))",
    re.IGNORECASE)
#: Words that take back what was said and lead to another decision ("Hmm, no, A.", "Scratch that: A.").
TAKE_BACK = (r"(?:\b(?:no|nope|wait|actually|rather|scratch\s+that|i\s+mean|make\s+(?:that|it)|correction|hmm+"
             r"|on\s+(?:second\s+thought|reflection)|anzi|aspetta|cioè|no,?\s+anzi)\b|아니|잠깐)")


def any_of(words: tuple[str, ...] | list[str]) -> str:
    """One alternation of `words`, longest first so a longer name wins over its prefix."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)) + ")"


def language_of(text: str) -> str:
    """The language an answer is written in, as far as a repair call needs it: Korean when it holds
    Hangul, Italian when Italian function words outnumber English ones, else English."""
    if re.search(r"[\uac00-\ud7a3]", text):
        return "ko"
    italian = len(re.findall(r"\b(?:il|la|che|è|della|sono|risposta|migliore|perché|non)\b", text, re.IGNORECASE))
    english = len(re.findall(r"\b(?:the|is|that|and|of|response|better|because|not)\b", text, re.IGNORECASE))
    return "it" if italian > english else "en"


def prompt_language(text: str) -> str:
    """The language a prompt template is written in, which its repair call asks in: Korean when its
    Hangul outnumbers its Latin letters (an English prompt may quote a Korean example), else as
    `language_of` tells an answer's."""
    if len(re.findall(r"[\uac00-\ud7a3]", text)) > len(re.findall(r"[A-Za-z]", text)):
        return "ko"
    return language_of(re.sub(r"[\uac00-\ud7a3]", "", text))
