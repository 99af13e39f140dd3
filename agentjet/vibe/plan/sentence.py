"""Read a task sentence: which built-in families it names and the parameters it states.

Pure and deterministic: the same sentence always gives the same `Reading`. The planner turns a
reading into a spec; everything here is what the sentence *said*, never a default. Words close to
a known keyword are read as it ("werwolves", "arithmatic"); number words are read as digits
("five numbers"); roles come from `roles.py`, numeric difficulty cues from `numbers.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentjet.vibe.plan.corrections import corrected
from agentjet.vibe.plan.numbers import Cue, read_cues, read_grade, with_digits
from agentjet.vibe.plan.policy_model import asks_for_small, model_name_said, size_said
from agentjet.vibe.plan.spelling import spelled
from agentjet.vibe.plan.train_words import (
    EvalCount,
    TrainSetting,
    blanked,
    read_epochs,
    read_eval_count,
    read_minutes,
    read_steps,
    read_steps_note,
    read_train_settings,
)
from agentjet.vibe.plan.werewolves.described import named_roles
from agentjet.vibe.plan.werewolves.roles import ROLE_ALIASES, RoleReading, read_roles
from agentjet.vibe.plan.werewolves.talk_cues import NO_TALK, TALK, TALK_BEHAVIOUR

__all__ = [
    "GAME_OF_24", "REPLIES_TO_EVERY", "REPLY_VERB", "ROLE_ALIASES", "SAYS_A_PHRASE", "SAYS_A_WORD", "SIMPLEST_TASK",
    "Reading", "read_sentence",
]  # fmt: skip

# "a bot that says hello", "make it say yes, 5 steps": one word said, closing its clause (not "say it", "say more")
SAYS_A_WORD = (
    r"\b(?:say|says|saying|(?:always|only|just)\s+(?:repl(?:y|ies)|answers?|responds?)(?:\s+with)?|"
    r"(?:repl(?:y|ies)|answers?|responds?)\s+(?:always|only|just)\s+with|"  # "respond only with ok"
    r"(?:repl(?:y|ies)|answers?|responds?)\s+(?:to\s+)?(?:everything|anything|(?:every|each|all|any)\s+[a-z]+)\s+with)\s+"
    r"(?!(?:it|something|anything|nothing|everything|more|less|so|that|this|them|me|much|"
    r"what|the|a|an|and|or)\b)(?P<said>[a-z]+)(?:\s+(?:every time|each time|always|to everything|to anything|"
    r"when asked|when prompted|when spoken to|no matter what|in every (?:reply|answer|response)|back|too|again|"
    r"out loud|aloud|in [a-z]+(?:ish|ese|ian|ch|an)|plz|pls|please|thanks|thx))?"
    r"(?:\s+(?:in|within|for|under)\s+(?:\d+|an?|half an?|one|two|three|five|ten)\s*(?:minutes?|mins?|hours?|hrs?|"
    r"seconds?|secs?|steps?|m|h)\b)?\s*(?:[.!?,;:\u2013\u2014]|-\s|$|and also\b)"  # "say banana and also play ..."
)
_NOT_SAID = (  # words that make "say ..." no phrase to learn ("say what it thinks", "say it again")
    r"(?:it|its|something|anything|nothing|everything|more|less|fewer|so|that|this|them|me|much|what|who|which|how|"
    r"why|where|the|a|an|and|or|to|when|if|in|on|for|with|their|his|her|my|your|our|back|again|out|aloud|loud|no|"
    r"not|only|just|correctly|properly|right|exactly|clearly|once|twice|better|well|at|by|as|then|now|each|every|"
    r"always|answers?|words?|things?|stuff|sentences?|lines?)"
)
_REPLY_WORDS = r"(?:reply|replies|replying|answer|answers|answering|respond|responds|responding)"
# "reply", "answer every prompt", "respond to all messages only": a verb of answering, before what is answered
REPLY_VERB = rf"{_REPLY_WORDS}(?:\s+to)?(?:\s+(?:every|each|all|any)(?:\s+[a-z]+)?)?(?: only| just| always)?"
# "reply hi to every message": the word said, then what it answers (the word family; `to_every` is the word)
REPLIES_TO_EVERY = (
    rf"\b{_REPLY_WORDS}\s+(?!{_NOT_SAID}\b)(?P<to_every>[a-z]+)\s+to\s+(?:every|each|all|any)\s+(?:\w+\s+)?"
    r"(?:messages?|prompts?|questions?|inputs?|greetings?|requests?|users?|chats?)\b"
)
# "make it say thank you very much", 'reply with "good morning"', "reply 'hello world'": a phrase of 2-4 words said,
# closing its clause (a bare "reply" takes a quoted phrase only: "answer trivia questions" says nothing)
SAYS_A_PHRASE = (
    rf"\b(?:say|says|saying|repeat|repeats|repeat after me\s*[:,-]?|{REPLY_VERB} with|(?P<bare_reply>{REPLY_VERB}))\s+"
    r"(?:just |only |exactly |always )?"
    r"(?:[\"'\u2018\u201c](?P<quoted_phrase>[a-z]+(?: [a-z]+){1,3})[\"'\u2019\u201d]|"
    rf"(?(bare_reply)(?!)|(?P<phrase>(?!{_NOT_SAID}\b)[a-z]+(?: (?!(?!much\b|so\b){_NOT_SAID}\b)[a-z]+){{1,3}})))"
    r"(?:\s+to\s+(?:me|us|them|you|users?|people|everyone|everybody))?"  # "say 'good night' to me"
    r"(?:\s+(?:every time|each time|whenever)\b[^.;!?,]*)?"  # "... every time I greet it"
    r"(?:\s+(?:for|in)\s+\d+\s+(?:steps?|minutes?|mins?|hours?))?\s*(?:[.!,;:]|$)"  # "..., for 3 steps"
)
# "the simplest task", "whatever task is easiest": the word family, whose level words are no difficulty
SIMPLEST_TASK = (
    r"\b(?:the\s+)?(?:simplest|easiest|smallest|most trivial|trivial)\s+(?:possible\s+)?"
    r"(?:training\s+|pipeline\s+|rl\s+)?"
    r"(?:task|thing|job|run|check|test)\b|\bwhatever task is (?:easiest|simplest)\b|"
    r"\b(?:smallest|fastest|quickest) thing possible\b"
)
# "the 24 game", "get 24 from four cards": countdown with its target fixed (the planner says it is not)
GAME_OF_24 = (
    r"\b(?:(?:24|twenty[- ]four)[- ]game|game of (?:24|twenty[- ]four)|make 24|"
    r"(?:get|reach|hit|form|making|getting) 24 (?:from|with|using|out of)|"
    r"(?:the|a|solve|solves|solving|play|plays|playing|crack|cracking) (?:24|twenty[- ]four)[- ]puzzles?)\b"
)  # "solve 24 puzzles": the game's puzzles (a count of puzzles names a task: "solve 24 arithmetic puzzles")
# Family keywords, in priority order: the first family that matches wins (a calculator agent
# solving word problems is tool use; a countdown puzzle is not plain arithmetic).
_FAMILY_PATTERNS: dict[str, tuple[str, ...]] = {
    "werewolves": (
        r"\bwere[- ]?wol(?:f|ves|fs)\b",
        r"\bww\b",
        r"\bwol(?:f|ves|fs)\b",
        r"\bmafia\b|\btown of salem\b",
        r"\bsocial[- ]deduction\b",
        r"\bhidden[- ]role\b",
        r"\b(?:seers?|villagers?|townsfolk)\b",
        r"\b(?:every|each|all(?:\s+the)?)\s+roles?\b.*\b(?:models?|polic(?:y|ies))\b|"
        r"\bvillage\s+(?:side|team|roles?|players?)\b|\b(?:all|both)\s+(?:the\s+)?(?:teams|sides)\b",
        r"\btrain(?:s|ing)?\s+(?:all\s+(?:of\s+)?)?the\s+village\b|\ball\s+(?:9|nine)\s+players\b",
        r"\b(?:witch|hunter|doctor|detective|village|town)\b.*"
        r"\b(?:game|play|playing|vote|votes|night|lynch|win|wins|winning)\b|"
        r"\b(?:win|wins|winning|play|plays|playing)\s+as\s+(?:the\s+)?(?:witch|hunter|doctor|detective|village|town)\b",
    ),
    "tool_use": (
        r"\btools?\b(?!\s*(?:shed|box|kit|belt|bench)s?\b)(?!\s+for\s+(?:my|our|your|the)\b)",
        r"\bcashiers?\b|\bring(?:s|ing)?\s+up\b",
        r"\btool[-_ ]?(?:use|using|calling|calls?)\b|\bto{1,4}l{1,3}[sz]\b",
        r"\bcalculators?\b",
        r"\blook[- ]?ups?\b",
        r"\blook(?:s|ing|ed)? (?:\w+ )?up\b",
        r"\blook (?:things|facts|it|them|prices?) up\b",
        r"\b(?:take|takes|taking|keep|keeps|keeping) notes?\b",
        r"\bnote[- ]?taking\b",
        r"\bfunction[- ]?call",
        r"\bcall(?:s|ing)?\s+(?:\w+\s+)?functions?\b",
        r"\btotal(?:s|ing|ling|led)?\s+(?:\w+\s+)?receipts?\b|\breceipt[- ]total",
        r"\bapi calls?\b",
        r"\b(?:call(?:s|ing)?|use|uses|using|check(?:s|ing)?|quer(?:y|ies|ying))\s+(?:\w+\s+){0,2}apis?\b",
        r"\b(?:check|checks|checking|compare|compares|comparing)\s+prices\b|\bnotes?\s+(?:down\s+)?(?:the\s+)?prices\b",
        r"\b(?:sums?|summing|totals?|totall?ing|adds? up|adding up)\s+(?:up\s+)?(?:the|a|my|their)\s+bills?\b",
        r"\bto{1,4}ls?[- ]?(?:use|using|calling)\b",  # "toool use": too short a keyword for the speller
        r"\b(?:check|checks|checking|find|finds|finding|get|gets|getting|look(?:s|ing)?\s+up)\s+(?:the\s+)?prices?\s+of\b",
        r"\bbrows(?:e|es|ing)\s+the\s+web\b|\bweb[- ]brows",
        r"\bshoppers?\b",  # the family's own agent ("train the shopper agent")
        r"^(?!.*\b(?:math|maths|mathematics|arithmetic|(?:word|story) problems?)\b).*\bshopping\b",  # a topic of math
        r"\bsearch(?:es|ing)?\s+(?:the\s+web|online|the\s+internet|for\s+(?:\w+\s+)?prices?)\b",
        r"^(?!.*\b(?:math|maths|mathematics|arithmetic|(?:word|story) problems?)\b).*\bgrocer(?:y|ies)\b",
        r"\b(?:cart|basket|receipt) totals?\b",
    ),
    "countdown": (
        r"\bcount[- ]?down\b",
        r"\bnumbers? (?:game|round)\b",
        r"\b(?:make|reach|hit|get to)\s+\d+\s+(?:from|with|using|out of)\s+\d+(?:\s*,\s*\d+){2,}",  # a puzzle
        r"\b(?:use|using|with|combine|combining)\s+(?:the\s+)?numbers\s+\d+(?:\s*,\s*\d+){2,}(?:\s*,?\s*and\s+\d+)?\s+to\s+(?:make|reach|get|hit)\s+\d+",
        r"\b(?:reach|hit|make|hitting|reaching|making|get to) (?:the|a) target\b"
        r"(?!\s+(?:in|with|on)\s+(?:a|an|the)\s+(?:shooting|shooter|archery|darts|fps|video|first-person)\b)",
        r"\bcombin\w*\s+(?:\w+\s+)?numbers\s+to\s+(?:reach|make|get to|hit|form)\b",
        r"\btarget (?:numbers?|values?|totals?)\b",
        r"\btargets?\b.*\bnumbers\b|\bnumbers\b.*\btargets?\b",
        GAME_OF_24,
        r"\b(?:make|makes|making|reach|reaches|reaching|hit|form|get to) (?:\d+|a hundred|a thousand|(?:one|two|"
        r"three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)"
        r"[\w-]*(?: hundred)?) (?:from|with|using|out of) (?:\S+ )?(?:given |different |the )?numbers\b",
    ),
    "arithmetic": (
        r"\barithmetics?\b|\barith\b",
        r"\bmath(?:s|ematics|ematical)?\b",
        r"\bword problems?\b",
        r"\bstory problems?\b",
        r"\bhow many\b[^?]*\b(?:left|in total|altogether|remain|remaining|more|each|does \w+ have)\b",  # a problem
        r"\b(?:multi|two|three|one|several|many|\d+)[- ]step\s+(?:\w+\s+)?problems?\b|"
        r"\bproblems?\s+(?:that|which)\s+(?:take|takes|need|needs)\s+(?:several|many|multiple|a few|\d+)\s+steps\b",
        r"\bgsm(?:8k)?\b",
        r"\b(?:fractions?|decimals?|percentages?|algebra)\b",
        r"\b(?:grade|primary|elementary)[- ]school\b",
        r"\bcalculat(?:e|es|ing)\b",
        r"\bnumeracy\b",
        r"\b(?:addition|subtraction|multiplication|division|times tables?|equations?|sums?|calculations?)\b",
        r"\b(?:learn|learns|learning|teach|teaching|train|training|practi[cs]e|practi[cs]ing)\s+(?:\w+\s+){0,4}?to\s+"
        r"(?:add|subtract|multiply|divide)\b",
        r"\b(?:adds?|adding|multipl(?:y|ies|ying)|subtract(?:s|ing)?|divid(?:e|es|ing))\b[^.;!?]{0,40}?\b"
        r"(?:numbers?|integers?|digits?|fractions|decimals)\b",
        r"\b(?:at|on|in|with)\s+(?:adding|subtracting|multiplying|dividing)\b",  # "better at subtracting"
    ),
    "word": (
        rf"\b(?:say|says|saying|repeat|repeats|repeating|echo|echoes|echoing|output|outputs|outputting|print|prints|"
        rf"printing|{REPLY_VERB} with)\s+"
        r"(?:just |only |exactly |back )?"
        r"(?:the |a |one |1 |single |given |target |requested |asked[- ]for |asked |chosen |specified |named |"
        r"same )*word\b",
        r"^(?:the\s+)?word\s*[,:;-]|^(?:the\s+)?word\s+(?:training|rl|run)\b|"  # "word, 20 steps": the family's name
        r"\b(?:task|family)\s*[:=]?\s*[\"']?word\b",  # "task=word", "--task word"
        rf"\b(?:say|says|saying|output|print|{REPLY_VERB} with)\s+(?:just\s+|only\s+)?the\s+(?:number|digit)\s+"
        r"(?!of\b|that\b|it\b)(?:\d+|[a-z]+)\b",  # "say the number seven"
        r"\bfirst word\b",
        r"^(?:(?:please\s+)?(?:run|do|start|try)\s+)?(?:a\s+|the\s+)?smoke[- ]test\s*(?:$|[.!?,])|"  # "smoke test"
        r"\bsmoke[- ]test\s+(?:the\s+|my\s+)?(?:training|pipeline|setup|loop|rl)\b|\b(?:does|do|is)\s+(?:the\s+|my\s+)?"
        r"(?:training|rl|learning|pipeline)\s+(?:\w+\s+)?(?:work|works|working|learn|run)\b",
        r"\b(?:quick(?:est)?|fast(?:est)?)\s+(?:possible\s+)?(?:test|check)\s+(?:of|that|whether|if)\s+(?:the\s+)?"
        r"(?:rl|training|pipeline|learning)\s+(?:\w+\s+)?(?:works?|learns?|runs?)\b",
        r"\bsanity[- ](?:check(?:s|ing)?|tests?)\b|\b(?:fast(?:est)?|quick(?:est)?|tiny|small|little|mini)\s+"
        r"(?:possible\s+)?(?:test|check)\s+"
        r"(?:of|that|whether|if)\s+(?:the\s+)?(?:rl\s+)?(?:pipeline|trainer|training|setup|learning)\b|\b(?:pipeline|trainer)\s+(?:test|check)\b",
        r"\bword\s+(?:run|check|test)\b|\b(?:check|checks|test|verify|see|confirm|make sure)\s+(?:that\s+|if\s+|"
        r"whether\s+)?(?:the\s+|my\s+)?(?:training|pipeline|rl|learning|setup|everything)\s+(?:works|is working|runs|"
        r"happens|learns)\b",
        SIMPLEST_TASK,
        r"\bword\s+[\"'\u2018\u201c][a-z]+",
        r"\bsay(?:s|ing)?\s+(?:my|your|his|her|their|our)\s+name\b",
        rf"\b(?:say|says|saying|repeat|output|print|{REPLY_VERB}(?: with)?)\s+(?:just |only |exactly |always )?"
        r"(?:[\"'\u2018\u201c][a-z0-9][a-z0-9-]*[\"'\u2019\u201d]|[a-z]+,? and nothing else)",
        r"\b(?:one|single|1)[- ]word (?:answers?|repl(?:y|ies)|responses?|outputs?)\b",
        r"\b(?:answer|reply|respond)\w*\s+(?:with\s+)?(?:only|just|exactly)\s+(?:one|1|a single)\s+word\b",
        r"\b(?:answer|answers|answering|reply|replies|replying|respond|responds|responding)\s+(?:\w+\s+){0,3}?"
        r"(?:with|in)\s+"
        r"(?:exactly\s+|just\s+|only\s+)?(?:one|1|a single)\s+word\b",
        r"\bword (?:echo|repetition|game|task|family|thing)\b",
        r"\brepeat(?:s|ing)? after me\b",
        r"\brepeat(?:s|ing)?\s+(?:\w+\s+){0,3}?words?\b|\bsay[- ]the[- ]word\b|\blearn[- ]check\b",
        r"\b(?:always|only)\s+(?:answers?|says?|repl(?:y|ies)|respond(?:s)?)\s+(?:with\s+)?(?:yes|no|ok|okay|hello|hi)\b",
        r"\b(?:say|says|saying)\s+the\s+(?:magic|secret|special|code|given|right|asked)\s+word\b",
        r"\bgreet(?:s|ing)?\s+(?:\w+\s+){0,2}?with\s+[\"'\u2018\u201c]?[a-z]+",
        SAYS_A_WORD,
        SAYS_A_PHRASE,
        REPLIES_TO_EVERY,
    ),
}

_SAID = re.compile(
    r"\bthe word\s+[\"'\u2018\u201c]?([a-z-]+)|[\"'\u2018\u201c]([a-z-]+)[\"'\u2019\u201d]|"
    r"\b(?:say|says|repeat|repeats|output|print)\s+([a-z-]+)\s*(?:[.!,;:]|$)|"
    r"\brepeat after me\s*[:,-]?\s*[\"'\u2018\u201c]?([a-z-]+)|"  # "repeat after me: calculator"
    + REPLIES_TO_EVERY
)
_NOT_USED = re.compile(
    r"\b(?:don't|dont|do not|no|without|never|not)\s+(?:use\s+|using\s+|need\s+)?(?:the\s+|a\s+|any\s+)?"
    r"(?:calculators?|tools?|look-?ups?)\b"
)
_KEYS = re.compile(r"[\"'`](\w+)[\"'`](?=\s*:)")  # '{"steps": 9}': a key as a word ("steps: 9")
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]")  # "says hi 👋": no word of the request
_QUICK = re.compile(
    r"\b(?:quick(?:ly|est)?|short (?:[\w-]+ )?(?:run|training|test)|just to (?:check|test|see)|brief(?:ly)?|"
    r"smoke[- ]test|sanity[- ](?:check|test)|fast run|"
    r"fastest (?:possible )?(?:run|test|thing|way)|as fast as possible|"
    r"just a test|a test run|trial run|(?:tiny|little|mini|small) (?:test|check|trial)(?: run)?|(?:tiny|mini) run|"
    r"(?:check|test|verify|confirm|make sure|see)\s+(?:that\s+|if\s+|whether\s+)?(?:the\s+|my\s+)?(?:training|"
    r"pipeline|rl|learning|setup|everything)\s+(?:works|is working|runs))\b"  # a check that it runs: a short run
)
_LEVEL = re.compile(
    r"\b(?:level|difficulty|lvl|tier|stage)[\s:=#-]*(\d+)(?:ish)?\b|"
    r"\b(?:countdown|arithmetic|arith|maths?|tool[_ -]?use|shopping)[\s_-]*d(\d)\b|"  # "arith d2", as a task's name
    r"(?<!class )(?<!grade )(?<!year )(?<!standard )\b(\d+)(?:st|nd|rd|th)? (?:difficulty )?level\b|"
    r"\b(?:level|difficulty)\b[^.;\d]{0,30}?\b(?:like|about|around|maybe|roughly)\s+(\d+)\b"  # "the level, maybe 3"
    r"(?!\s+(?!maybe|or|ish|perhaps)[a-z])"
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
_ORDINAL_LEVEL = re.compile(r"\b(first|second|third|fourth|fifth) (?:difficulty )?(?:level|difficulty|tier)\b")
_LEVEL_WORDS: tuple[tuple[str, str], ...] = (
    (
        "hardest",
        r"\b(?:hardest|very hard|very difficult|extremely hard|insanely hard|super hard|really hard|really difficult|"
        r"extremely difficult|expert|max(?:imum)? "
        r"difficulty|toughest|most difficult|brutal|(?:top|last|highest) (?:difficulty |level|tier))\b",
    ),  # fmt: skip
    (
        "medium",
        r"\b(?:medium|moderate(?:ly (?:hard|difficult|challenging|tough))?|intermediate|mid[- ]level|"
        r"(?:not|nothing) (?:too|so|very|overly) (?:hard|difficult|easy|simple)|"
        r"(?:don't|do not|never)\s+make\s+(?:it|them)\s+(?:too|so|very|overly)\s+(?:hard|difficult|tough)|"
        r"(?:slightly|a bit|a little|somewhat) (?:harder|tougher)|"
        r"(?:except|but not|other than|anything but|not|apart from|excluding|besides|above)\s+(?:the\s+)?"
        r"(?:easiest|simplest|easy|lowest|first)(?:\s+(?:ones?|level|difficulty|tier))?)\b",
    ),
    ("hard", r"\b(?:hard|harder|difficult|challenging|tough|tougher|advanced|tricky|trickier)\b"),
    ("easy", r"\b(?:easy|easier|easiest|simple(?!\s+(?:bots?|scripts?|heuristics?|rules?|players?))|simpler|basic|"
             r"beginner|trivial|lowest (?:level|difficulty)|starter)\b"),
)
# "harder to detect", "easy to beat": the word describes how a player is to others, not the puzzle's level
_EASY = re.compile(dict(_LEVEL_WORDS)["easy"])  # "make the game of 24 easier for my model": not its 4 numbers
_COUNTS = ("count", "listed")  # cues that say how many numbers a puzzle gives
_NOT_A_LEVEL_AFTER = (  # "hard to detect", "a hard drive", "a medium-sized model", "easy on the CPU": no level
    r"(?!\s+(?:to|for)\s+(?!solve|answer|compute|calculate|crack|work)\w+)"
    r"(?![- ](?:sized?|drives?|ware|disks?)\b|\s+(?:on|setup|set-up|config\w*|models?|llms?|gpus?|cpus?|machines?)\b)"
)
_QUOTED = re.compile("(?<![a-z])[\"'\u2018\u201c][^\"'\u2019\u201d]{1,40}[\"'\u2019\u201d](?![a-z])")  # 'easy': a word

@dataclass(frozen=True)
class Reading:
    """What a sentence states, word for word (None/empty when it does not say)."""

    text: str  # lowercased, whitespace collapsed, typos of known keywords corrected, number words as digits
    families: tuple[str, ...]  # matched families, best first
    size: str | None  # "7B", "0.5B", "135M"
    model_name: str | None  # "qwen", "llama", "smollm", ...
    small: bool  # "a small model"
    steps: int | None
    minutes: float | None
    quick: bool  # "a quick run", "a smoke test"
    level: int | None  # "level 3", "difficulty 2", "the second level" (99: "the top level")
    level_word: str | None  # "easy", "medium", "hard", "hardest"
    level_phrase: str | None  # the words that gave `level_word`, as written ("harder", "the top level")
    cues: tuple[Cue, ...]  # numeric difficulty cues: "6 numbers", "3-digit", "up to 100", "5x5"
    roles: RoleReading  # werewolves roles trained and opposed, separate/shared models
    discussion: bool | None
    talk_cue: str | None  # "bluff": asked-for behaviour that only happens in the day's talk (discussion unsaid)
    steps_note: str | None  # which count was taken from a range or from several ("10-15 steps": 15)
    epochs: int | None = None  # "3 epochs": no pass over a dataset in vibe, read as steps by the planner
    settings: tuple[TrainSetting, ...] = ()  # "a learning rate of 1e-4", "groups of 16": over the recipe
    eval_count: EvalCount | None = None  # "evaluate on 32 games": held-out items a round
    grade: tuple[int, str] | None = None  # a school grade and its words: (5, "5th grade"), (3, "class 3")
    corrections: tuple[str, ...] = ()  # "the seer, no wait, the witch": what was corrected (or a role read by what
    # it does), said as assumptions
    written: str = ""  # `text` with number words as written: "say 'seven'" names the word seven, not 7

    @property
    def role_words(self) -> tuple[str, ...]:
        """The trained role words as written, in order ("detective", "village")."""
        return tuple(dict.fromkeys(m.word for m in self.roles.trained))

    @property
    def requested_model(self) -> str | None:
        """What model the sentence asked for, in its words ("qwen 7B", "7B", "a small model")."""
        parts = [p for p in (self.model_name, self.size) if p]
        if parts:
            return " ".join(parts)
        return "a small model" if self.small else None

    @property
    def understood(self) -> list[str]:
        """The facts found, for a refusal message."""
        facts = [f"model {self.requested_model}"] if self.requested_model else []
        facts += [f"{self.steps} steps"] if self.steps else []
        facts += [f"{self.minutes:g} minutes"] if self.minutes else []
        facts += [f"difficulty {self.level or self.level_word}"] if self.level or self.level_word else []
        facts += [f"roles {', '.join(self.role_words)}"] if self.role_words else []
        return facts


def read_sentence(sentence: str) -> Reading:
    """The facts a sentence states; pure."""
    words = spelled(" ".join(_KEYS.sub(r"\1", _EMOJI.sub(" ", sentence.lower())).replace("**", "").split()))
    fixed = corrected(with_digits(words))  # "level 4, no wait, level 2": the later words are read
    text, described = named_roles(fixed.text)  # "the role that checks identities at night": the seer
    keywords = _NOT_USED.sub(" ", words)  # "don't use the calculator": no tool asked for
    matched = tuple(f for f, pats in _FAMILY_PATTERNS.items() if any(re.search(p, keywords) for p in pats))
    families = _said_word_first(matched, words)
    settings, held = read_train_settings(text), read_eval_count(text)
    said = words if not (fixed.notes or described) else None  # corrected: the words as written are not what is read
    cues = read_cues(blanked(text, [s.span for s in settings] + ([held.span] if held else [])), said=said)
    days = [c for c in cues if c.kind == "rounds" and re.search(r"\b(?:days?|nights?)\b", c.words)]  # "at most 3 days"
    if families[:1] == ("werewolves",):  # game days: a round cap, no time limit
        spans = [(at, at + len(c.words)) for c in days if (at := text.find(c.words)) >= 0]
        minutes = read_minutes(blanked(text, spans))
    else:  # a time limit, no round cap
        minutes = read_minutes(text)
        cues = tuple(c for c in cues if c not in days or read_minutes(c.words) is None)
    unquoted = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)  # "say the word 'easy'": no level word
    phrase = next(
        ((word, m.group(0)) for word, pat in _LEVEL_WORDS if (m := re.search(pat + _NOT_A_LEVEL_AFTER, unquoted))), None
    )
    game = re.search(GAME_OF_24, text) if families[:1] == ("countdown",) else None
    if game and not (phrase or _level(text) or _EASY.search(unquoted) or any(c.kind in _COUNTS for c in cues)):
        cues += (Cue("count", 4, f"{game.group(0)}: its 4 numbers"),)  # the game of 24 deals four numbers
    return Reading(
        text=text,
        families=families,
        size=size_said(text),
        model_name=model_name_said(_SAID.sub(" ", text)),  # "say the word llama" names no model
        small=asks_for_small(text),
        steps=read_steps(text),
        steps_note=read_steps_note(text),
        minutes=minutes,
        quick=bool(_QUICK.search(text)),
        level=_level(text),
        level_word=phrase[0] if phrase else None,
        level_phrase=phrase[1] if phrase else None,
        cues=cues,
        settings=settings,
        eval_count=held,
        grade=read_grade(text),
        corrections=fixed.notes + described,
        written=corrected(words).text,
        roles=read_roles(text),
        discussion=False if NO_TALK.search(text) else True if TALK.search(text) else None,
        talk_cue=talk.group(0) if (talk := TALK_BEHAVIOUR.search(text)) else None,
        epochs=read_epochs(text),
    )


def _said_word_first(families: tuple[str, ...], words: str) -> tuple[str, ...]:
    """The word family first when the word to be said is another family's keyword ('say the word "werewolf"',
    "make it say countdown"): the word is what to say, not the task."""
    said = _SAID.search(words)
    word = said and next((w for w in said.groups() if w), None)
    if "word" not in families or said is None or word is None:
        return families
    if any(re.search(p, word) for family, pats in _FAMILY_PATTERNS.items() if family != "word" for p in pats):
        rest = words[: said.start()] + words[said.end() :]  # the families that match without the word to say
        others = (f for f in families if f != "word" and any(re.search(p, rest) for p in _FAMILY_PATTERNS[f]))
        return ("word", *others)
    return families


def _level(text: str) -> int | None:
    match = _LEVEL.search(text)
    if match:
        return int(next(group for group in match.groups() if group))
    ordinal = _ORDINAL_LEVEL.search(text)
    return _ORDINALS[ordinal.group(1)] if ordinal else None
