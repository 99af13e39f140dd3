"""Requests that are no training: a picture, music or a video, text, software, another skill, a dataset, writing.

Pure. `no_training(text)` gives the reason a sentence (lowercased, number words as digits) asks for something no
built-in family trains, even where it names a family ("write a poem about werewolves", "create a countdown timer
app"), or None; the planner refuses with it before anything is planned.
"""

from __future__ import annotations

import re

__all__ = ["no_training", "plan_only"]

_TEXT_REQUEST = re.compile(  # "could you write me a poem": a question before it too, and a lead-in before that
    r"^(?:(?:before anything else|first(?: of all)?|quick question|hey|hi|hello|ok|okay|so)[,:!]?\s+)?"
    r"(?:(?:could|can|would|will)\s+you\s+)?(?:please\s+)?(?:write|compose|draw|paint|tell|explain|summari[sz]e|"
    r"translate|what|who|why|when|where|how (?:do|does|can|is|are))\b"
)
# a question about the game or the tool ("is the seer or the witch more important?", "how long does a run take?"),
# unless it asks for a skill ("is there a way to make the seer better?")
_QUESTION_ASKED = re.compile(r"^(?:how (?:long|much|many|fast|big|well)|is|are|does|do you|which)\b")
_SKILL = re.compile(
    r"\b(?:improve|improves|better|learns?|stronger|smarter|master|get good|good at|wins?\s+more|more often)\b|"
    r"\b(?:possible|a way)\s+to\s+(?:make|get|teach|help|improve)\b"  # "is it possible to make the village win ..."
)
_TRAINING_SAID = re.compile(r"\btrain(?:s|ed|ing)?\b")  # "does training even work? quick test": a run
# what a run costs is a question even when it names training ("how many steps does werewolves training take?",
# "how long would it take to train a 7B on countdown?"): one question, nothing after it
_COST_QUESTION = re.compile(r"^how (?:long|many|much)\b[^.;!?]*\b(?:takes?|costs?|needs?)\b[^.;!?]*\?\s*$")
# a question about training itself ("what's the quickest check that training works?") asks for a run, not text
_ABOUT_TRAINING = re.compile(  # not "I would rather not train anything yet"
    r"(?<!rather not )(?<!do not )(?<!n't )\b(?:train|teach|rl|pipeline)\b|"
    r"\btraining\s+(?:works?|is working|runs?|loop|setup)\b"
)


# The plan without a run: "don't train anything, just show me the plan", "dry run werewolves" (`--dry-run` does it)
_PLAN_ONLY = re.compile(
    r"\b(?:don't|dont|do not|no need to|without)\s+(?:actually\s+|really\s+)?(?:train(?:ing)?|run(?:ning)?|"
    r"start(?:ing)?|launch(?:ing)?)\s+(?:anything|it|a run|yet|now|for real)\b|"
    r"\b(?:just|only)\s+(?:show|print|tell|give|display|write out|dump)\s+(?:me\s+|us\s+)?(?:the\s+|your\s+|a\s+)?"
    r"(?:plan|spec|config(?:uration)?)\b|\b(?:plan|spec)\s+only\b|\bdry[- ]?run\b"
)


def plan_only(text: str) -> str | None:
    """Why `text` asks to see the plan and not to train ("don't train anything, just show me the plan"), or None."""
    if found := _PLAN_ONLY.search(text):
        return f"it asks for the plan without a run ('{found.group(0)}')"
    return None


def _is_text_request(text: str) -> bool:
    """Asks for text or a question answered ("write me a poem", "is the seer or the witch more important?"), not
    a run: no training or skill asked for."""
    compared = re.search(r"\b(?:stronger|better|weaker|harder|easier|smarter|more \w+)\s+than\b", text)
    skill = _SKILL.search(text) and not (compared and text.rstrip().endswith("?"))  # "is X stronger than Y?"
    question = _QUESTION_ASKED.search(text) and not skill and not _TRAINING_SAID.search(text)
    cost = _COST_QUESTION.search(text) and not skill
    return bool(cost) or (bool(_TEXT_REQUEST.search(text) or question) and not _ABOUT_TRAINING.search(text))


def no_training(text: str) -> str | None:
    """Why `text` asks for no training ("it asks for a picture ('draw a wolf'), ..."), or None.

    Most kinds count only where no training is asked for ("train a model to solve this countdown: ..." plans
    the run); an answer or a game with the user also gives way to a skill asked for ("improve the wolves so
    they can play against me")."""
    trained = bool(_TRAINING_ASKED.search(text))
    skilled = trained or bool(_BETTER.search(text))
    if harm := _HARMFUL.search(text):
        return f"it asks for something meant to harm people ('{harm.group(0)}'), which vibe does not train"
    if run := _A_RUN_THAT_EXISTS.search(text):
        return f"it asks about a run, not for a new one ('{run.group(0).strip()}'): {_RUN_HINTS[_verb(run)]}"
    if picture := _IMAGES.search(text):
        kind = next((kind for kind, words in _MEDIA if re.search(words, picture.group(0))), "a picture")
        return f"it asks for {kind} ('{picture.group(0)}'), not for training a model"
    if not skilled and (question := _SOLVE_THIS.search(text)):
        return f"it asks for an answer ('{question.group(0)}'), not for training a model to find such answers"
    if _is_text_request(text):
        asks = "a question" if _QUESTION.match(text) else "for text"
        about = _RUN_WORDS.search(text)  # "how do I resume run abc123?": the command that does it
        return f"it asks {asks}, not for training a model" + (f": {_RUN_HINTS[_verb(about)]}" if about else "")
    software = _SOFTWARE.search(text) or (None if trained else _CODE_LANGUAGE.search(text))
    if software and not (trained and _OWN_PROJECT.search(text[: software.start()])):  # "I'm building a bot ...":
        return f"it asks to build software ('{software.group(0)}'), not to train a model"  # what it is for
    if skill := _OTHER_SKILL.search(text):
        return f"it asks to train another skill ('{skill.group(0)}'), which no built-in family trains"
    if not trained and (thing := _PHYSICAL.search(text)):
        return f"it asks for a thing to make by hand ('{thing.group(0)}'), not for training a model"
    if not trained and (evaluation := _EVALUATION_ONLY.search(text)):
        return f"it asks to evaluate or run a model without training it ('{evaluation.group(0)}')"
    if not skilled and (game := _PLAY_WITH_ME.search(text)):
        return f"it asks to play a game with you ('{game.group(0)}'), not to train a model"
    if not trained and (data := _DATASET.search(text)):
        return f"it asks for a dataset ('{data.group(0)}'), not for training a model"
    if timed := _A_COUNTDOWN_IN_TIME.search(text):
        return f"it asks for a countdown in time ('{timed.group(0)}'), not the numbers game countdown"
    if not trained and (listed := _A_LIST.search(text)):
        return f"it asks for a list to be written ('{listed.group(0).strip()}'), not for training a model"
    if writing := _WRITING.search(text):
        verb = "to train writing" if trained else "for writing"
        tail = "which no built-in family trains" if trained else "not for training a model"
        return f"it asks {verb} ('{writing.group(0)}'), {tail}"
    return None


# A countdown in time, not the numbers game: "make a countdown to new year's eve", "count down from 10 to 1"
_A_COUNTDOWN_IN_TIME = re.compile(
    r"\bcount(?:ing|s)?[- ]?down\s+from\s+\d+\b|"
    r"\bcountdown\s+(?:to|until|till|for)\s+(?:the\s+|my\s+|our\s+)?(?:new year(?:'s)?(?:\s+eve)?|christmas|midnight|"
    r"launch|lift-?off|"
    r"(?:\w+\s+)?(?:wedding|birthday|party|holidays?|deadline|vacation|trip|exam|event|release))|"
    r"\b(?:rocket|launch|new year'?s?|christmas|wedding|event|party|birthday|holiday)\s+countdowns?\b"
)
# A list to write, with no training: "shopping list for a birthday party please"
_A_LIST = re.compile(
    r"^(?:(?:please\s+)?(?:make|write|give|create)\s+(?:me\s+)?)?(?:a|my)?\s*(?:shopping|grocery|packing|to-?do)\s+"
    r"list\s+for\s+(?!(?:each|every|the\s+agent|it\b))"
)
# Meant to harm people: refused even where a family is named ("train werewolves agents to harass real people");
# the game's own lies ("teach the wolves to deceive the villagers") are no harm
_HARMFUL = re.compile(
    r"\b(?:harass\w*|phishing|scam(?:s|mers?|ming)?|malware|ransomware|(?:send|write|generate|post)\w*\s+(?:\w+\s+)?"
    r"spam|spamm(?:ers?|ing)\b(?!\s+(?:filter|detect|classif))|dox(?:x)?(?:ing)?|"
    r"stalk(?:s|ing|er)?|bully(?:ing)?|hate speech|fraud\w*|(?:crack|steal|stealing|cracking)\s+(?:\w+\s+)?"
    r"(?:passwords?|credentials|accounts?|money)|cheat(?:s|ing)?\s+(?:at|on|in)\s+(?:\w+\s+){0,2}?(?:poker|casinos?|"
    r"exams?|tests?|homework|online games?)|(?:bombs?|explosives?|weapons?)\b(?=.*\b(?:make|build|how)\b)|"
    r"manipulate\s+real\s+people|real people\s+(?:into|to)\b)"
)
# A run that exists: resume, show, export or remove it ("resume my last werewolves run", "export the countdown model
# to gguf"): the sentence starts with what is done to it
_A_RUN_THAT_EXISTS = re.compile(
    r"^(?:(?:please|can you|could you|now)\s+)?(?:"
    r"(?P<resume>resume|continue|restart|re-?run|carry on(?: with)?|pick up)\b(?!\s+to\b)|"
    r"(?P<show>show|open|view|display|plot|print|summari[sz]e|give me|send me)\b(?=.*\b(?:reports?|curves?|results?|"
    r"metrics|logs?|outcomes?|charts?|graphs?|plots?|runs?)\b)|"
    r"(?P<export>export|upload|push|publish|share|convert|quantize|quantise|merge|deploy|serve)\b"
    r"(?=.*\b(?:models?|adapters?|loras?|weights|checkpoints?|runs?)\b)(?!.*\band\s+(?:then\s+)?(?:train|teach|rl)\b)|"
    r"(?P<remove>delete|remove|stop|cancel|kill|abort|list|clean up|wipe)\s+(?:all\s+)?(?:of\s+)?"
    r"(?:(?:my|the|this|that|current|last|previous|old|every|all|running)\s+)*(?:[\w-]+\s+){0,2}?"
    r"(?:runs?|training|jobs?|experiments?|checkpoints?|workspaces?)\b)"
)
_RUN_HINTS = {
    "resume": "`agentjet vibe --resume RUN_ID` goes on with a stopped run (its folder's name under --workdir)",
    "show": "each run's report.md, run.json and curves.png are in its folder under --workdir (default vibe-runs/)",
    "export": "`agentjet export STATE_DIR --out DIR [--merged] [--gguf]` writes a trained step out (docs/export.md); "
    "vibe uploads nothing",
    "remove": "Ctrl-C stops a run (`--resume` goes on with it later); a run is its folder under --workdir, removed by "
    "hand",
}
# A project of the user's own, told as the context of a training request ("I'm building a Discord bot that runs
# werewolf games ... could we RL-train it so the seer gets good?")
_OWN_PROJECT = re.compile(r"\b(?:i'm|i am|we're|we are|i've been|we've been|i have|we have)\s+(?:\w+\s+)?$")


_RUN_WORDS = re.compile(  # a question about a run: which hint answers it
    r"\b(?:(?P<resume>resume|continue|restart)|(?P<show>report|curves?|results?)|(?P<export>export|upload|gguf)|"
    r"(?P<remove>delete|remove|stop|cancel))\b"
)


def _verb(found: re.Match[str]) -> str:
    """Which of `_RUN_HINTS` a match of `_A_RUN_THAT_EXISTS` or `_RUN_WORDS` asks for (its named group)."""
    return next(name for name in _RUN_HINTS if found.group(name))


# A skill no family trains: writing ("write haiku about werewolves" names the game, but trains no play)
_WRITING = re.compile(
    r"\b(?:write|writes|writing|compose|composing|generate|generating|make|making|create|creating|print|printing)\s+"
    r"(?:\w+\s+){0,3}?(?:poems?|poetry|"
    r"haikus?|stories|story|essays?|songs?|lyrics|jokes?|articles?|novels?|limericks?|sonnets?|worksheets?|quizz(?:es)?|"
    r"lesson plans?|flashcards?|fan ?fic(?:tion)?s?|fiction|screenplays?)\b(?!\s+problems?)|"  # not "a story problem"
    r"\b(?:an?|the)\s+(?:essay|poem|article|blog post|haiku|limerick|song|short story)\s+(?:on|about)\b"  # no verb
)
# A dataset asked for, with no training: "generate a dataset of 1000 math word problems and save it as CSV"
_DATASET = re.compile(  # "generate 500 word problems as a CSV file": a few words between, none the model trained
    r"\bdownload(?:s|ing)?\b|"  # "download gsm8k and save it to disk": nothing to train
    r"\b(?:generate|create|make|build|produce|fetch|get)\s+(?:me\s+)?(?:an?\s+|the\s+)?"
    r"(?:(?!(?:model|agent|policy|bot|it)\b)[\w-]+\s+){0,5}?(?:dataset|data set|csv)\b|"
    r"^(?:(?:please|can you|could you)\s+)?(?:(?:give|send|show|write|generate|make|create)\s+me|"
    r"(?:generate|create|produce|write|make)(?:\s+me)?)\s+"  # "generate 100 countdown puzzles and save them"
    r"(?:\d+|some|a few|a list of|a set of|a batch of)\s+(?:[\w-]+\s+){0,3}?(?:problems|puzzles|questions|exercises|"
    r"examples)\b"
)
# Evaluation alone: "evaluate gpt-4 on arithmetic without training", "just benchmark the base model on countdown"
_EVALUATION_ONLY = re.compile(
    r"\b(?:evaluate|evaluating|eval|benchmark|benchmarking|measure|measuring|assess|assessing|score|scoring|test|"
    r"testing)\b.*\b(?:without|no)\s+(?:any\s+)?(?:training|fine-?tuning|updates?)\b|"
    r"\b(?:just|only)\s+(?:evaluate|eval|benchmark|measure|assess|score)\b|"
    r"^(?:(?:please|can you|could you)\s+)?(?:evaluate|eval|benchmark|assess|score|rate)\b(?!\s+how\b)"
    r"(?!.*\b(?:\d+\s+(?:training\s+)?steps|lr|learning rate|train\w*)\b)|"  # "evaluate on 128 items, ..., 50 steps"
    r"^(?:(?:please|can you|could you)\s+)?compare\b(?!.*\b(?:lrs?|learning rates?|ranks?|settings?|recipes?|"
    r"rewards?|hyper-?param\w*|configs?|steps|group sizes?|temperatures?)\b)|"  # "compare llama and qwen on ..."
    r"^(?:(?:please|can you|could you)\s+)?(?:test|check|measure|see|find out)\s+how\s+"
    r"(?:well|good|fast|often)\b|"
    r"\b(?:run|running|do|serve|serving)\s+inference\b"  # "run inference with a 7B on math problems"
)
# Something made by hand: "make a werewolf costume", "bake a countdown cake"
_PHYSICAL = re.compile(
    r"\b(?:make|making|build|building|sew|sewing|craft|crafting|bake|baking|knit|knitting|carve|print|pick|choose|buy|"
    r"find|design)\s+(?:me\s+)?"
    r"(?:an?\s+|the\s+|some\s+)?(?:[\w-]+\s+){0,2}?(?:costumes?|masks?|cakes?|cookies|toys?|dolls?|figurines?|"
    r"posters?|t-?shirts?|shirts?|board game|card deck|cards|props?|decorations?|pumpkins?)\b"
)
# A game to play with the user: "play werewolves with me", "let's play countdown"
_PLAY_WITH_ME = re.compile(  # the user as a player ("make the wolves play against me" trains the wolves: a note)
    r"^(?:(?:hey|hi|ok|okay|please)\W+)?(?:(?:let'?s|(?:can|could|shall|will|would)\s+(?:we|you)|wanna|do you want to|"
    r"i want to|i'd like to)\s+play\b|play\b[^.;!?]{0,40}?\b(?:with|against|vs|for)\s+me\b)"
)
# A question to answer: "solve this countdown: 25 50 75 100 3 6, target 952", "what is 17 x 23?"
_SOLVE_THIS = re.compile(
    r"\b(?:solve|answer|compute|calculate|work out|figure out)\s+(?:this|these|the following|that|it)\b|"
    r"^(?:(?:please|can you|could you)\s+)?(?:compute|calculate|work out|figure out|add up|total)\s+(?:the|my|this)\b|"
    r"^(?:what|how much)\s+(?:is|are|makes)\s+\d+\s*(?:[-+*/x]|plus|minus|times|divided)"
)
_QUESTION = re.compile(  # "what is countdown?", "could you tell me how long a run takes?"
    r"(?:(?:could|can|would|will)\s+you\s+)?(?:what|who|why|when|where|how|is|are|does|do you|which)\b"
)
_BETTER = re.compile(r"\b(?:improve|improves|better|learns?|stronger|smarter|master|get good)\b")  # skill asked for
_TRAINING_ASKED = re.compile(r"(?<!\bno )(?<!\bwithout )(?<!\bnot )(?<!n't )\b(?:train|teach|rl\b|fine-?tune)")
_OTHER_SKILL = re.compile(  # another skill no family trains: "explain the rules of werewolves", "classify receipts"
    r"\b(?:to|at)\s+(?:explain(?:ing)?|describ(?:e|ing)|summari[sz](?:e|ing)|translat(?:e|ing)|classify(?:ing)?|"
    r"categori[sz](?:e|ing)|label(?:ing|ling)?|recommend(?:ing)?)\b|"
    r"\b(?:classify|classifying|classification|categori[sz]e|categori[sz]ing|recommender|recommendations?|trivia)\b|"
    r"\bprov(?:e|es|ing)\s+(?:\w+\s+){0,2}?(?:theorems?|lemmas?)\b|\btheorem[- ]prov(?:ing|ers?)\b|"
    r"\btrad(?:e|es|ing)\s+(?:\w+\s+)?(?:stocks?|shares|crypto\w*|forex|currenc(?:y|ies)|options)\b|\bstock market\b|"
    r"\bformal proofs?\b"
)
# Not training at all: software to build ("create a countdown timer app" names the game, but asks for an app)
_CODE_LANGUAGE = re.compile(  # "create a werewolves game in javascript": software, whatever it is about
    r"\b(?:in|with|using)\s+(?:javascript|typescript|js|python|java|c\+\+|c#|rust|golang|html|css|unity|godot|"
    r"pygame|react|node(?:\.js)?|scratch|lua|kotlin|swift)\b"
)
_SOFTWARE = re.compile(
    r"\b(?:build|building|create|creating|make|making|write|writing|code|coding|develop|developing)\s+(?:me\s+)?"
    r"(?:an?\s+|the\s+|some\s+)?(?:[\w-]+\s+){0,3}?(?:app|apps|application|website|web ?site|web ?page|timer|script|"
    r"program|plugin|extension|spreadsheet|calculator app|(?:discord|slack|telegram|twitch|twitter|chat)\s+bots?)\b|"
    r"\bcountdown\s+(?:timers?|clocks?|widgets?)\b|"  # "a countdown timer for my kitchen": no numbers game
    r"\bword[- ]count(?:er|ing)?\b"  # "build a word count tool"
)
# What an `_IMAGES` match asks for, when it is no picture
_MEDIA = (("music", r"music|melod|soundtrack|audio"), ("a 3D model", r"3-?d|mesh|render"),
          ("a video", r"vid|anim|gif|movie|film|clip"))  # fmt: skip
# Not training at all: a picture ("generate images of wolves" names the game, but asks for an image)
_IMAGES = re.compile(
    r"\b(?:generates?|generating|creates?|creating|makes?|draws?|drawing|paints?|renders?|sketch(?:es)?|compose|"
    r"design(?:s|ing)?)\s+"
    r"(?:an?\s+|some\s+|the\s+|me\s+)?(?:[\w-]+\s+){0,2}?"  # "make a werewolves logo"
    r"(?:images?|pictures?|photos?|drawings?|illustrations?|artwork|logos?|icons?|diagrams?|charts?|sketch(?:es)?|"
    r"paintings?|portraits?|memes?|videos?|animations?|gifs?|movies?|films?|clips?|music|melod(?:y|ies)|"
    r"soundtracks?|audio|3-?d\s+(?:models?|scenes?|assets?|"
    r"meshe?s?|prints?|renders?)|meshe?s?|renders?)\b|"
    r"^(?:please\s+)?(?:draw|paint|sketch)\b(?!\s+\d)"
)
