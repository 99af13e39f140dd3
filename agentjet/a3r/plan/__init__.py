"""The campaign plan: markdown with YAML front matter -> a validated `CampaignPlan`, its search params, pool spec,
and the LLM planner.

campaign_plan.py  The campaign plan: markdown with YAML front matter -> a validated, frozen `CampaignPlan`.
examples.py       The example plans shipped with the package (example_plans/): found by name.
front_matter.py   Markdown with YAML front matter -> (data, body), keeping the YAML nodes to point errors at lines.
messages.py       Pydantic validation errors -> one plain sentence each, in the words of a plan's author.
plan_checks.py    Plan checks that ask the rest of AgentJet: is the model there, does the task family take these params.
params.py         Search-space params: what each name means, its spec, and how a sampled value lands in a trial.
planner.py        The campaign planner: prose -> a plan's front matter, and results -> the next stage's plan.
pool_spec.py      Which servers a campaign trains on: `local:N` processes it starts, and/or remote URLs.
"""
