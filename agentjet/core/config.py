"""Typed configuration: `ServerSettings` for one swarm server, `TrainConfig` for its training.

`ServerSettings` reads `AGENTJET_*` env vars and CLI flags; `TrainConfig` comes from a YAML
file (`--config`) or `PUT /swarm/config`. Unknown keys are errors, never silently ignored.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agentjet.core.errors import ConfigError

__all__ = [
    "CollectConfig",
    "GrpoConfig",
    "LoraConfig",
    "LossName",
    "OptimConfig",
    "RewardConfig",
    "ServerSettings",
    "TrackerName",
    "TrackersConfig",
    "TrainConfig",
    "changed_fields",
    "describe_validation_error",
    "load_train_config",
]

LossName = Literal["ppo_clip"]  # the keys of trainer.LOSSES (a test keeps them equal)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # "kl_coef: inf" is no setting


class GrpoConfig(_Section):
    group_size: int = Field(4, ge=2, description="episodes per task that form one GRPO group")
    clip_eps: float = Field(0.2, gt=0, description="PPO-clip bound on the importance ratio")
    kl_coef: float = Field(0.0, ge=0, description="weight of the KL penalty to the reference policy")
    scale_rewards: bool = Field(True, description="divide advantages by the group's reward std")
    std_floor: float = Field(1e-6, gt=0, description="added to the group std before dividing")
    loss: LossName = Field("ppo_clip", description="policy loss per token (trainer.LOSSES)")
    tis: Literal["auto", "on", "off"] = Field(
        "auto",
        description="truncated importance sampling for sampler/trainer logprob mismatch; auto = on when the "
        "sampler is not the trainer's own forward (vLLM, another dtype)",
    )
    tis_cap: float = Field(2.0, gt=1, description="truncation cap C of the TIS weight min(pi_old / pi_sampler, C)")


class LoraConfig(_Section):
    enabled: bool = Field(True, description="train a LoRA adapter; false = full fine-tune")
    rank: int = Field(16, ge=1, le=1024, description="LoRA rank r")
    alpha: float = Field(32.0, gt=0, description="LoRA scaling alpha")
    dropout: float = Field(0.0, ge=0, lt=1, description="LoRA dropout")
    target_modules: tuple[str, ...] = Field(
        ("q_proj", "k_proj", "v_proj", "o_proj"), min_length=1, description="module names to adapt"
    )
    layers: int | float | None = Field(
        None,
        gt=0,
        description="adapt only the top N transformer layers, or a share of them (0.5: the top half of "
        "any model's; null: every layer): the backward pass stops below them, so an update costs less",
    )

    @field_validator("layers")
    @classmethod
    def _layers_count_or_share(cls, layers: int | float | None) -> int | float | None:
        if not isinstance(layers, float) or layers < 1:
            return layers
        if not layers.is_integer():
            raise ValueError(f"lora.layers is {layers}: give a count of layers (1, 2, ...) or a share below 1 (0.5)")
        return int(layers)  # 15.0 from YAML or JSON is the count 15


_MICRO_BATCH_TOKENS_AUTO = {"cpu": 512, "cuda": 4096}


class OptimConfig(_Section):
    lr: float = Field(1e-5, gt=0, le=1, description="AdamW learning rate")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    grad_clip: float = Field(1.0, gt=0, description="max global grad norm")
    micro_batch_tokens: Annotated[int, Field(ge=64)] | Literal["auto"] = Field(
        "auto", description="token budget of one micro-batch (bounds memory); auto: 512 on a CPU, 4096 on CUDA"
    )
    share_prefix: bool = Field(
        True, description="run a prompt prefix shared by several samples (a GRPO group) once per update"
    )
    share_prefix_min_tokens: int = Field(
        32, ge=1, description="shortest shared prefix worth its own forward pass under share_prefix"
    )
    gradient_checkpointing: bool = Field(
        False, description="recompute activations in the backward pass: less memory for long sequences, ~30% slower"
    )

    def tokens_per_micro_batch(self, device: str) -> int:
        """`micro_batch_tokens` on `device`; auto is 512 on a CPU, where the activations bound memory, and 4096 on
        CUDA, where 512 leaves a small model's update launch-bound (an H200 took 35.7 s for ~80k tokens of a
        SmolLM2-sized model at 512, 3.4 s at 4096; a 7B at 4096 peaked at 60 GiB; docs/gpus.md)."""
        if self.micro_batch_tokens != "auto":
            return self.micro_batch_tokens
        return _MICRO_BATCH_TOKENS_AUTO["cuda" if device.startswith("cuda") else "cpu"]


class CollectConfig(_Section):
    strategy: Literal["episodes", "tasks", "informative_tasks", "any_client", "all_clients"] = Field(
        "tasks", description="when rolling turns into draining (DESIGN §4, C1-C5)"
    )
    episodes: int = Field(16, ge=1, description="C1: finished episodes per update")
    tasks: int = Field(4, ge=1, description="C2/C3: task groups per update")
    hold: bool = Field(
        False, description="no update starts while true (finished episodes wait in the pool): hold the policy still"
    )


class RewardConfig(_Section):
    min: float = Field(-1e6, description="smallest reward `end` accepts (a lower one is a 422)")
    max: float = Field(1e6, description="largest reward `end` accepts (a higher one is a 422)")

    @model_validator(mode="after")
    def _check_range(self) -> RewardConfig:
        if not (math.isfinite(self.min) and math.isfinite(self.max) and self.min < self.max):
            raise ValueError(f"reward.min={self.min} and reward.max={self.max} must be finite with min < max")
        return self

    def check(self, reward: float) -> str | None:
        """Why `reward` is refused (not finite, or out of range), else None."""
        if not math.isfinite(reward):
            return f"reward must be a finite number, got {reward!r}"
        if not self.min <= reward <= self.max:
            return (
                f"reward {reward!r} is outside the accepted range [{self.min:g}, {self.max:g}] "
                "(TrainConfig reward.min/reward.max)"
            )
        return None


TrackerName = Literal["tensorboard", "wandb", "mlflow"]  # the keys of trackers.TRACKERS (a test keeps them equal)


class TrackersConfig(_Section):
    project: str = Field(
        "agentjet", min_length=1, max_length=128, description="the wandb project and the MLflow experiment"
    )
    run_name: str | None = Field(
        None, min_length=1, max_length=128, description="the run's name in wandb and MLflow; default: the state dir's"
    )
    wandb_mode: Literal["offline", "online"] = Field(
        "offline",
        description="offline: everything stays in <state_dir>/wandb/ (upload later with `wandb sync`); online needs "
        "WANDB_API_KEY and a network",
    )
    mlflow_tracking_uri: str | None = Field(
        None,
        min_length=1,
        description="where MLflow stores the run; default sqlite:///<state_dir>/mlflow.db (a local store, no server)",
    )


class TrainConfig(_Section):
    """Everything that shapes a training step; every knob has a documented default."""

    merge: Literal["token", "text", "off"] = Field("token", description="timeline merging level")
    checkpoint_every: int = Field(1, ge=1, description="write a checkpoint every K steps")
    keep_adapters: int = Field(
        3, ge=1, description="adapters/step-N folders kept (the newest K, plus those of kept checkpoints)"
    )
    reward: RewardConfig = Field(RewardConfig(), description="the rewards `end` accepts")
    grpo: GrpoConfig = Field(GrpoConfig(), description="GRPO groups, advantages and the policy loss")
    lora: LoraConfig = Field(LoraConfig(), description="the LoRA adapter (fixed once the trainer is built)")
    optim: OptimConfig = Field(OptimConfig(), description="AdamW and micro-batching")
    collect: CollectConfig = Field(CollectConfig(), description="the collection strategy: when to update")
    report_to: tuple[TrackerName, ...] = Field(
        ("tensorboard",),
        description="experiment trackers that get each step's scalars besides metrics.jsonl (as in Hugging Face's "
        "Trainer); [] = metrics.jsonl only",
    )
    trackers: TrackersConfig = Field(TrackersConfig(), description="names and stores of the wandb and MLflow runs")

    @model_validator(mode="after")
    def _check_report_to(self) -> TrainConfig:
        repeated = sorted({name for name in self.report_to if self.report_to.count(name) > 1})
        if repeated:
            raise ValueError(f"report_to names {', '.join(repeated)} more than once: list each tracker once")
        return self

    @model_validator(mode="after")
    def _check_batch(self) -> TrainConfig:
        if self.collect.strategy == "episodes" and self.collect.episodes < self.grpo.group_size:
            raise ValueError(
                f"collect.episodes={self.collect.episodes} must be >= grpo.group_size="
                f"{self.grpo.group_size}: raise collect.episodes or lower group_size"
            )
        return self


def changed_fields(old: BaseModel, new: BaseModel, prefix: str = "") -> list[str]:
    """Dotted names of the leaf fields whose values differ (`lora.rank`), nested sections walked."""
    changed: list[str] = []
    for name in type(old).model_fields:
        before, after = getattr(old, name), getattr(new, name)
        if isinstance(before, BaseModel) and isinstance(after, BaseModel):
            changed += changed_fields(before, after, f"{prefix}{name}.")
        elif before != after:
            changed.append(f"{prefix}{name}")
    return changed


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem, each naming its field by dotted path: `grpo.group_size: ... (got 1)`."""
    lines = []
    for problem in exc.errors():
        if not problem["loc"]:  # a cross-field rule: its message names the fields and the fix
            lines.append(str(problem["msg"]).removeprefix("Value error, "))
            continue
        where = ".".join(str(part) for part in problem["loc"])
        got = "" if problem["type"] == "missing" else f" (got {problem['input']!r})"
        lines.append(f"{where}: {problem['msg']}{got}")
    return "; ".join(lines)


def load_train_config(path: Path) -> TrainConfig:
    """Read a YAML TrainConfig; every problem becomes one ConfigError naming the file and the field."""
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid config {path}: not valid YAML: {exc}") from exc
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"invalid config {path}: the top level must be a mapping, got {type(raw).__name__}")
    try:
        return TrainConfig.model_validate(raw or {})
    except ValidationError as exc:
        raise ConfigError(f"invalid config {path}: {describe_validation_error(exc)}") from exc


class ServerSettings(BaseSettings):
    """One swarm server. Env: AGENTJET_MODEL, AGENTJET_PORT, AGENTJET_TOKEN, ...

    The limits bound what one client can make the server do: bodies are refused past
    `max_request_bytes` before authentication, prompts are checked before they are tokenised,
    and the connection timeouts close slow or silent connections (`server/connections.py`).
    """

    model_config = SettingsConfigDict(env_prefix="AGENTJET_", extra="forbid")

    model: str = Field("smollm2-135m", description="registered model name or HF folder path")
    host: str = "127.0.0.1"
    port: int = Field(8710, ge=0, le=65535)
    uds: Path | None = Field(
        None, description="listen on this Unix socket instead of host:port (a container without network)"
    )
    state_dir: Path = Field(Path("state"), description="journal, token, secret, checkpoints")
    token: str | None = Field(None, description="admin token for /swarm/*; else token_file, else generated")
    token_file: Path | None = Field(None, description="file holding the admin token (first line)")
    ssl_certfile: Path | None = Field(None, description="TLS certificate (PEM); with ssl_keyfile serves https")
    ssl_keyfile: Path | None = Field(None, description="TLS private key (PEM)")
    api_docs: bool = Field(False, description="serve /docs and /openapi.json (no auth: local development only)")
    max_request_bytes: int = Field(4 * 1024 * 1024, ge=1024, description="largest request body accepted")
    max_messages: int = Field(1024, ge=1, description="messages per chat request")
    max_tools: int = Field(128, ge=0, description="tools per chat request")
    max_n: int = Field(16, ge=1, le=16, description="choices per chat request")
    max_metadata_bytes: int = Field(64 * 1024, ge=0, description="JSON size of an episode's end metadata")
    header_timeout_s: float = Field(10.0, gt=0, description="time to send a request's head")
    body_timeout_s: float = Field(60.0, gt=0, description="time to send a request's body, once its head is in")
    write_timeout_s: float = Field(60.0, gt=0, description="longest stall of a client not reading its reply")
    keep_alive_s: float = Field(
        65.0,
        gt=0,
        description="idle time before a keep-alive connection is closed: longer than clients' pools keep one "
        "(httpx and the openai SDK: 5 s), so the client closes first and never sends on a connection being closed",
    )
    max_connections: int = Field(1024, ge=1, description="open connections; more are refused with 503")
    end_wait_s: float = Field(30.0, ge=0, description="how long `end` waits for the episode's running calls")
    admission_timeout_s: float = Field(600.0, gt=0, description="longest wait of a call held during an update")
    config: Path | None = Field(None, description="TrainConfig YAML file")
    public_url: str | None = Field(
        None, description="base URL clients use; default: the URL the request came to (http://host:port)"
    )
    idle_timeout_s: float = Field(300.0, gt=0, description="reclaim an episode idle this long")
    episode_ttl_s: float = Field(86400.0, gt=0, description="hard expiry of an episode key")
    janitor_interval_s: float = Field(5.0, gt=0, description="how often idle episodes are checked")
    max_batch_size: int = Field(32, ge=1, description="sequences in the backend's running batch")
    backend: Literal["transformers", "vllm"] = Field("transformers", description="the inference backend")
    device: str = Field("auto", description="auto|cpu|cuda|cuda:N for the backend and the trainer (placement.py)")
    dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "auto",
        description="precision of both base-model copies; auto: bf16 on CUDA and on CPUs with native bf16, else fp32",
    )
    vllm_python: Path | None = Field(None, description="python of the vLLM venv; the server starts `vllm serve`")
    vllm_url: str | None = Field(None, description="attach to a running `vllm serve` at this loopback URL")
    vllm_args: tuple[str, ...] = Field((), description="extra arguments for the `vllm serve` we start")
    train_procs: int = Field(1, ge=1, le=64, description="training processes (torch.distributed ranks)")
    max_tokens_default: int = Field(512, ge=1, description="max_tokens when a request gives none")
