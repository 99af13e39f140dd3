"""Campaign plans: the examples parse, errors name the line and the key, params land in TrainConfig."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from agentjet.a3r.errors import CampaignError, PlanError
from agentjet.a3r.plan.campaign_plan import (
    CampaignPlan,
    apply_params,
    grid_search_space,
    load_plan,
    needs_restart,
    parse_duration,
    parse_plan,
    parse_pool,
    render_plan,
    search_space_distributions,
    trial_setup,
)
from agentjet.a3r.plan.examples import EXAMPLES_DIR
from agentjet.a3r.plan.params import PARAMS, TARGET_PRESETS, lookup_param
from agentjet.core import AgentJetError, TrainConfig

CAMPAIGNS = EXAMPLES_DIR  # the shipped example plans
EXAMPLES = sorted(p for p in CAMPAIGNS.glob("*.md") if p.name != "README.md")


def _plan(front: str, body: str = "") -> str:
    return f"---\n{front.strip()}\n---\n{body}"


MINIMAL = "name: demo\ntask: {family: arithmetic}"
SPACE = MINIMAL + "\nsearch_space:\n  "  # the next line is file line 5


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_parses_round_trips_and_samples_valid_configs(path: Path) -> None:
    plan = load_plan(path)
    assert plan.name == path.stem
    assert plan.body.strip(), "an example plan states its research questions in prose"
    assert parse_plan(render_plan(plan)) == plan
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(5):
        params = study.ask(search_space_distributions(plan)).params
        assert set(params) == set(plan.search_space)
        setup = trial_setup(plan, params)
        assert isinstance(setup.config, TrainConfig)
        assert setup.config.grpo.group_size == params.get("group_size", plan.train.grpo.group_size)


def test_examples_are_the_three_the_docs_promise() -> None:
    assert {p.stem for p in EXAMPLES} >= {"lr-x-rank", "quick-tiny", "synthetic"}
    big, quick, synthetic = (load_plan(CAMPAIGNS / f"{n}.md") for n in ("lr-x-rank", "quick-tiny", "synthetic"))
    assert (big.model, big.task.family, big.pool.local) == ("smollm2-135m", "arithmetic", 2)
    assert set(big.search_space) == {"lr", "lora_rank"} and big.search_space["lr"].log
    assert quick.model == "tiny" and quick.pool.local == 2
    assert 2 <= (quick.budget.trials or 0) <= 4 and quick.budget.steps_per_trial <= 2
    assert synthetic.task.family == "synthetic" and synthetic.pool.local == 4


def test_defaults_of_a_minimal_plan() -> None:
    plan = parse_plan(_plan(MINIMAL))
    assert plan.model == "tiny" and plan.stage == 1
    assert (plan.objective.metric, plan.objective.direction) == ("eval_reward", "maximize")
    assert (plan.sampler.name, plan.pruner.name, plan.storage) == ("tpe", "median", "sqlite")
    assert (plan.budget.trials, plan.budget.wall_clock_s, plan.budget.steps_per_trial) == (20, None, 10)
    assert (plan.pool.local, plan.pool.servers, plan.seeds.base, plan.seeds.confirm) == (1, (), 0, 3)
    assert plan.train == TrainConfig() and plan.search_space == {} and plan.body == ""
    assert plan.sampler_seed == 0


def test_yaml_reads_exponent_floats_and_shorthands() -> None:
    text = _plan(
        MINIMAL
        + "\nsearch_space:\n  lr: {low: 1e-5, high: 3e-4, log: true}\n  lora_rank: [4, 8]"
        + "\nsampler: random\npruner: none\nbudget: {wall_clock: 1h30m, trials: null}",
        "\n# Why\nBecause.\n",
    )
    plan = parse_plan(text)
    assert plan.search_space["lr"].low == 1e-5 and isinstance(plan.search_space["lr"].low, float)
    assert plan.search_space["lora_rank"].choices == (4, 8)
    assert (plan.sampler.name, plan.pruner.name) == ("random", "none")
    assert plan.budget.wall_clock_s == 5400 and plan.budget.trials is None
    assert plan.body == "# Why\nBecause.\n"


BAD_PLANS: list[tuple[str, str, int, str | None, str]] = [
    ("bad yaml", "name: x\ntask: {family: arithmetic\nbudget: 3", 4, None, "invalid YAML"),
    ("unknown top key", MINIMAL + "\nbudjet: {trials: 2}", 4, "budjet", "did you mean 'budget'"),
    ("unknown nested key", MINIMAL + "\nbudget:\n  trials: 2\n  steps: 3", 6, "budget.steps", "steps_per_trial"),
    ("unknown train key", MINIMAL + "\ntrain:\n  grpo:\n    groupsize: 3", 6, "train.grpo.groupsize", "group_size"),
    ("unknown param", SPACE + "lrate: {low: 1, high: 2}", 5, "search_space.lrate", "lora_rank"),
    ("high below low", SPACE + "lr:\n    low: 1e-3\n    high: 1e-4", 7, "search_space.lr.high", "greater than low"),
    (
        "log from zero",
        SPACE + "kl: {low: 0, high: 0.1, log: true}",
        5,
        "search_space.kl.low",
        "log range needs low > 0",
    ),
    ("lr above one", SPACE + "lr: {low: 1e-3, high: 2}", 5, "search_space.lr.high", "less than or equal to 1"),
    ("fractional rank", SPACE + "lora_rank: {low: 2, high: 8.5}", 5, "search_space.lora_rank.high", "whole numbers"),
    (
        "group of one",
        SPACE + "group_size: [1, 2, 4]",
        5,
        "search_space.group_size.choices.0",
        "greater than or equal to 2",
    ),
    ("bad strategy", SPACE + "strategy: [tasks, bogus]", 5, "search_space.strategy.choices.1", "informative_tasks"),
    ("bool as range", SPACE + "scale_rewards: {low: 0, high: 1}", 5, "search_space.scale_rewards.low", "choices"),
    ("range and choices", SPACE + "lr: {low: 0.1, high: 0.2, choices: [0.1]}", 5, "search_space.lr", "not both"),
    ("no task", "name: x\nmodel: tiny", 1, "task", "family: NAME"),
    ("unknown family", "name: x\nmodel: tiny\ntask:\n  family: nope", 5, "task.family", "arithmetic"),
    ("two task sources", "name: x\ntask: {family: word, client: c.py}", 3, "task", "exactly one"),
    ("duplicate key", MINIMAL + "\nname: y", 4, None, "'name' appears twice"),
    ("front matter a list", "- a", 2, None, "must be a mapping"),
    ("pool not local:N", MINIMAL + "\npool: local:x", 4, "pool", "local:N"),
    ("pool url", MINIMAL + "\npool: [local:1, ftp://x]", 4, "pool.servers.0.url", "http://host:port"),
    ("bare duration", MINIMAL + "\nbudget: {wall_clock: 2}", 4, "budget.wall_clock", "unit"),
    ("endless", MINIMAL + "\nbudget: {trials: null}", 4, "budget", "endless"),
    (
        "grid without step",
        MINIMAL + "\nsampler: grid\nsearch_space:\n  lr: {low: 1e-4, high: 1e-3}",
        6,
        "search_space.lr",
        "grid sampler",
    ),
    ("alias twice", SPACE + "lr: [0.1]\n  learning_rate: [0.2]", 6, "search_space.learning_rate", "both set optim.lr"),
    ("bad storage", MINIMAL + "\nstorage: mongo", 4, "storage", "postgresql://"),
    (
        "models on remote servers",
        SPACE + "model: [tiny, smollm2-135m]\npool: [local:1, http://gpu-a:8710]",
        5,
        "search_space.model",
        "cannot switch models",
    ),
    ("body key", MINIMAL + "\nbody: hi", 4, "body", "prose after the front matter"),
    ("bad name", "name: '../x'\ntask: {family: word}", 2, "name", "pattern"),
    ("bad metric", MINIMAL + "\nobjective:\n  metric: loss", 5, "objective.metric", "eval_reward"),
    ("unknown model", MINIMAL + "\nmodel: gpt-7", 4, "model", "unknown model 'gpt-7'"),
    ("unknown model choice", SPACE + "model: [tiny, qwen-9b]", 5, "search_space.model.choices.1", "'qwen-9b'"),
    ("bad task param", "name: x\ntask: {family: arithmetic, params: {difficulty: 9}}", 3, "task.params", "got 9"),
    ("unknown task param", "name: x\ntask: {family: word, params: {level: 2}}", 3, "task.params", "accepted:"),
    ("bad task choice", SPACE + "task.difficulty: [1, 7]", 5, "search_space.task.difficulty", "7: task 'arithmetic'"),
    ("bad task range end", SPACE + "task.max_tokens: {low: 0, high: 8}", 5, "search_space.task.max_tokens", ">= 1"),
    (
        "a task param searched bare",
        SPACE + "temperature: [0.5, 1.0]",
        5,
        "search_space.temperature",
        "search it as task.temperature",
    ),
]


@pytest.mark.parametrize(("front", "line", "key", "words"), [c[1:] for c in BAD_PLANS], ids=[c[0] for c in BAD_PLANS])
def test_bad_plans_name_the_file_line_and_key(front: str, line: int, key: str | None, words: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(_plan(front), path="plans/p.md")
    error = caught.value
    assert (error.line, error.key) == (line, key)
    assert str(error).startswith(f"plans/p.md:{line}: ")
    assert words in str(error)
    assert isinstance(error, CampaignError) and isinstance(error, AgentJetError) and isinstance(error, ValueError)


def test_every_problem_is_listed_with_its_own_line() -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(_plan(MINIMAL + "\nbudget: {trials: 0}\nseeds:\n  confirm: -1"), path="p.md")
    message = str(caught.value)
    assert message.startswith("p.md:4: budget.trials:")
    assert "\np.md:6: seeds.confirm:" in message


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("# only prose\n\nTry some learning rates.\n", 1, "AGENTJET_CAMPAIGN_LLM"),
        ("---\nname: x\n", 1, "never closed"),
        ("\n\n---\nname: [\n---\n", 5, "invalid YAML"),
    ],
)
def test_front_matter_problems(text: str, line: int, words: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(text)
    assert caught.value.line == line and words in str(caught.value)


def test_load_plan_names_the_file_and_takes_the_name_from_it(tmp_path: Path) -> None:
    path = tmp_path / "my plan.md"
    path.write_text(_plan("task: {family: word}\nbudget:\n  trialz: 3"))
    with pytest.raises(PlanError, match=r"my plan\.md:4: budget\.trialz: unknown key") as caught:
        load_plan(path)
    assert caught.value.path == path
    path.write_text(_plan("task: {family: word}"))
    assert load_plan(path).name == "my-plan"
    with pytest.raises(PlanError, match="cannot read"):
        load_plan(tmp_path / "missing.md")


def test_workspace_and_client_paths_resolve_against_the_plan_folder(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "client.py").write_text("TASK = None\n")
    (tmp_path / "plan.md").write_text(_plan("task:\n  workspace: ws\n  params: {level: 2}"))
    plan = load_plan(tmp_path / "plan.md")
    assert plan.task.workspace == (tmp_path / "ws").resolve() and plan.task.params == {"level": 2}
    (tmp_path / "other.md").write_text(_plan("task:\n  client: nowhere.py"))
    with pytest.raises(PlanError, match=r"other\.md:3: task\.client: .*nowhere\.py does not exist"):
        load_plan(tmp_path / "other.md")


@pytest.mark.parametrize(
    ("name", "value", "path", "expected"),
    [
        ("lr", 3e-4, ("optim", "lr"), 3e-4),
        ("learning_rate", 3e-4, ("optim", "lr"), 3e-4),
        ("weight_decay", 0.01, ("optim", "weight_decay"), 0.01),
        ("grad_clip", 0.5, ("optim", "grad_clip"), 0.5),
        ("lora_rank", 32, ("lora", "rank"), 32),
        ("lora_alpha", 8.0, ("lora", "alpha"), 8.0),
        ("lora_dropout", 0.1, ("lora", "dropout"), 0.1),
        ("lora_targets", "all", ("lora", "target_modules"), TARGET_PRESETS["all"]),
        ("lora_targets", "q_proj, v_proj", ("lora", "target_modules"), ("q_proj", "v_proj")),
        ("full_finetune", True, ("lora", "enabled"), False),
        ("group_size", 8, ("grpo", "group_size"), 8),
        ("clip_eps", 0.3, ("grpo", "clip_eps"), 0.3),
        ("kl", 0.05, ("grpo", "kl_coef"), 0.05),
        ("kl_coef", 0.05, ("grpo", "kl_coef"), 0.05),
        ("scale_rewards", False, ("grpo", "scale_rewards"), False),
        ("strategy", "informative_tasks", ("collect", "strategy"), "informative_tasks"),
        ("tasks_per_step", 3, ("collect", "tasks"), 3),
        ("episodes_per_step", 32, ("collect", "episodes"), 32),
        ("merge", "text", ("merge",), "text"),
    ],
)
def test_apply_params_maps_each_param_onto_its_field(
    name: str, value: Any, path: tuple[str, ...], expected: Any
) -> None:
    base = TrainConfig.model_validate({"optim": {"weight_decay": 0.2}, "checkpoint_every": 7})
    config = apply_params(base, {name: value})
    got: Any = config
    for part in path:
        got = getattr(got, part)
    assert got == expected
    untouched = apply_params(base, {})
    assert untouched == base
    if path != ("optim", "weight_decay"):
        assert config.optim.weight_decay == 0.2 and config.checkpoint_every == 7  # the base is kept


def test_every_param_in_the_table_is_covered_and_targets_a_real_field() -> None:
    for d in PARAMS.values():
        if d.target == "server.model":
            continue
        node: Any = TrainConfig()
        for part in d.target.split("."):
            assert hasattr(node, part), d.target
            node = getattr(node, part)


def test_apply_params_refuses_unknown_names_bad_values_and_conflicts() -> None:
    with pytest.raises(PlanError, match="unknown param 'lrate'"):
        apply_params(TrainConfig(), {"lrate": 0.1})
    with pytest.raises(PlanError, match=r"lora_rank=0 \(lora.rank\)"):
        apply_params(TrainConfig(), {"lora_rank": 0})
    with pytest.raises(PlanError, match="both set optim.lr"):
        apply_params(TrainConfig(), {"lr": 0.1, "learning_rate": 0.2})
    with pytest.raises(PlanError, match="collect.episodes=2 must be >= grpo.group_size=4"):
        apply_params(TrainConfig(), {"strategy": "episodes", "episodes_per_step": 2})


def test_model_and_task_params_go_to_the_trial_not_the_config() -> None:
    plan = parse_plan(_plan("name: x\ntask: {family: arithmetic, params: {difficulty: 1, shots: 1}}\nmodel: tiny"))
    setup = trial_setup(plan, {"model": "smollm2-135m", "task.difficulty": 3, "lr": 1e-3})
    assert setup.model == "smollm2-135m"
    assert setup.task_params == {"difficulty": 3, "shots": 1}
    assert setup.config.optim.lr == 1e-3 and setup.restart
    assert trial_setup(plan, {"lr": 1e-3}).model == "tiny"
    assert apply_params(TrainConfig(), {"model": "x", "task.difficulty": 2}) == TrainConfig()


def test_needs_restart_only_for_the_model_and_the_adapter_shape() -> None:
    assert not needs_restart({"lr": 1e-4, "group_size": 4, "kl": 0.1, "strategy": "tasks", "task.difficulty": 2})
    for name in ("model", "lora_rank", "lora_alpha", "lora_dropout", "lora_targets", "full_finetune", "rank"):
        assert needs_restart({name: 1}), name
    assert lookup_param("task.anything").restart is False


def test_distributions_and_grid() -> None:
    plan = parse_plan(
        _plan(
            SPACE + "lr: {low: 1e-5, high: 1e-3, log: true}\n  lora_rank: [4, 8]"
            "\n  group_size: {low: 2, high: 8, step: 2}\n  kl: {low: 0.0, high: 0.2, step: 0.1}"
            "\n  task.difficulty: {low: 1, high: 3}\n  model: [tiny, smollm2-135m]\n  clip_eps: {low: 1, high: 2}"
        )
    )
    dists = search_space_distributions(plan)
    assert dists["lr"] == FloatDistribution(1e-5, 1e-3, log=True)
    assert dists["lora_rank"] == CategoricalDistribution((4, 8))
    assert dists["group_size"] == IntDistribution(2, 8, step=2)
    assert dists["kl"] == FloatDistribution(0.0, 0.2, step=0.1)
    assert dists["task.difficulty"] == IntDistribution(1, 3)
    assert dists["model"] == CategoricalDistribution(("tiny", "smollm2-135m"))
    assert dists["clip_eps"] == FloatDistribution(1.0, 2.0)  # a float param stays float with whole bounds
    gridded = {k: v for k, v in plan.search_space.items() if k not in ("lr", "clip_eps")}
    no_float = plan.model_copy(update={"search_space": gridded})
    grid = grid_search_space(no_float)
    assert grid["group_size"] == [2, 4, 6, 8] and grid["kl"] == [0.0, 0.1, 0.2] and grid["task.difficulty"] == [1, 2, 3]
    with pytest.raises(PlanError, match="grid sampler needs choices"):
        grid_search_space(plan)
    study = optuna.create_study(sampler=optuna.samplers.GridSampler(grid, seed=0))
    study.optimize(lambda t: t.suggest_int("group_size", 2, 8, step=2), n_trials=3)
    assert len(study.trials) == 3


@pytest.mark.parametrize(
    ("text", "seconds"), [("90m", 5400), ("2h", 7200), ("3d", 259200), ("1h30m", 5400), ("45s", 45), ("1.5h", 5400)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "2", "2 hours", "h", "0m", "-1h", "3x"])
def test_parse_duration_refuses_unclear_values(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_parse_pool_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (parse_pool("local:4").local, parse_pool("local:4").servers) == (4, ())
    both = parse_pool("http://a:8710/, https://b.example:9000")
    assert [s.url for s in both.servers] == ["http://a:8710", "https://b.example:9000"] and both.local == 0
    mixed = parse_pool(["local:1", {"url": "http://gpu:8710", "token_env": "GPU_TOKEN"}])
    assert mixed.size == 2 and mixed.servers[0].token_env == "GPU_TOKEN"
    monkeypatch.setenv("GPU_TOKEN", "secret")
    assert mixed.servers[0].token() == "secret"
    assert both.servers[0].token() is None  # AGENTJET_TOKEN is cleared by the suite's autouse fixture
    assert mixed.to_plan_value() == ["local:1", {"url": "http://gpu:8710", "token_env": "GPU_TOKEN"}]
    assert parse_pool(mixed.to_plan_value()) == mixed


@pytest.mark.parametrize(
    ("spec", "words"),
    [("local:0", "empty"), ("local:two", "whole number"), ("gpu-a", "not a server URL"), ("", "empty")],
)
def test_parse_pool_refusals(spec: str, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        parse_pool(spec)


def test_plan_is_frozen() -> None:
    plan = parse_plan(_plan(MINIMAL))
    with pytest.raises(ValueError):
        plan.model = "other"  # type: ignore[misc]
    assert isinstance(plan, CampaignPlan)


def test_readme_documents_every_key_and_param() -> None:
    readme = (Path(__file__).resolve().parents[2] / "campaigns" / "README.md").read_text()
    for name, field in CampaignPlan.model_fields.items():
        if name in ("body", "train", "search_space", "pool", "task", "model", "name", "stage", "storage"):
            assert name == "body" or f"| `{name}" in readme, name
            continue
        section = field.annotation
        assert isinstance(section, type)
        for sub in section.model_fields:
            assert f"| `{name}.{sub}` |" in readme, f"{name}.{sub}"
    for sub in ("family", "workspace", "client", "params"):
        assert f"| `task.{sub}` |" in readme
    for d in PARAMS.values():
        assert f"`{d.name}`" in readme, d.name
    for example in EXAMPLES:
        assert f"`{example.name}`" in readme, example.name


def test_shorthands_an_unseen_plan_may_use(tmp_path: Path) -> None:
    plan = parse_plan(
        _plan(
            "name: s\ntask: countdown\nobjective: accuracy\npool: 3\nsampler: TPE\npruner: None\n"
            "search_space:\n  lr: {type: float, low: 1e-4, high: 1e-2, log: true}\n"
            "  task.temperature: {type: float, low: 0, high: 1}\n  lora_rank: {type: categorical, choices: [4, 8]}"
        )
    )
    assert plan.task.family == "countdown" and plan.objective.metric == "eval_accuracy"
    assert plan.pool.local == 3 and (plan.sampler.name, plan.pruner.name) == ("tpe", "none")
    assert search_space_distributions(plan)["task.temperature"] == FloatDistribution(0.0, 1.0)
    assert parse_plan(render_plan(plan)) == plan
    assert parse_plan(_plan("name: s\ntask: my_client.py")).task.client == Path("my_client.py")
    nulls = parse_plan(_plan("name: s\ntask: word\nsampler: null\npruner: null"))
    assert (nulls.sampler.name, nulls.pruner.name) == ("tpe", "none")
    assert parse_plan(_plan("name: s\ntask: ws/dir\nobjective: {direction: min}")).task.workspace == Path("ws/dir")
    cases = [
        ("name: s\ntask: word\nmodel: [tiny, smollm2-135m]", "model", "in search_space"),
        ("name: s\ntask: word\nsearch_space:\n  lr: {type: int, low: 1, high: 2}", "search_space.lr.type", "float"),
        (
            "name: s\ntask: word\nsearch_space:\n  lr: {type: categorical, low: 0.1, high: 0.2}",
            "search_space.lr",
            "choices",
        ),
        ("name: s\ntask: chess", "task.family", "workspace: DIR"),
    ]
    for front, key, words in cases:
        with pytest.raises(PlanError) as caught:
            parse_plan(_plan(front))
        assert caught.value.key == key and words in str(caught.value), front


def test_a_remote_pool_serves_its_own_model_so_the_name_is_not_checked() -> None:
    plan = parse_plan(_plan(MINIMAL + "\nmodel: llama-70b-on-the-cluster\npool: [http://gpu-a:8710]"))
    assert plan.model == "llama-70b-on-the-cluster"


def test_good_task_params_and_choices_pass() -> None:
    plan = parse_plan(_plan(SPACE + "task.difficulty: [1, 5]\n  task.temperature: {low: 0.5, high: 1.0}"))
    assert set(plan.search_space) == {"task.difficulty", "task.temperature"}
