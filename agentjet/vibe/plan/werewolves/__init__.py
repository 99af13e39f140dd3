"""The werewolves part of the deterministic planner: who trains, on which models, and the game's settings.

roles.py        Which roles a sentence trains, names as opponents, leaves out or calls scripted, and the cues of
                separate or shared models (`read_roles`).
role_cues.py    The words around a role that say it does not train: left out, "only" another, wanted to lose, scripted.
described.py    Roles said by what they do ("the role that checks identities at night": the seer), read as their names.
model_cues.py   The words that say how roles go on models: separate or shared, per side or per role, a role's own.
side_cues.py    The words that say more than one side trains: "both sides", "everyone", "train them both", a
                training verb said beside roles of both sides; or that a side does not ("nobody on the wolf side").
talk_cues.py    The words that turn the day's talk on or off ("no discussion", "mute") or ask for it ("bluff").
penalty_cues.py The words that set how the reward treats an invalid answer ("a per-episode penalty", "penalty
                weight 5", "no penalty").
villagers.py    Which roles "villagers" means: the whole village side, or the three plain villagers.
groups.py       The groups of roles a sentence puts on models ("the seer and the witch share one, the wolves
                another"): `read_groups`.
plan.py         `plan_werewolves`: trained roles, the policies that play them, talk and round cap, each choice the
                sentence did not state said as an assumption.
"""
