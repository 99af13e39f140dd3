// AgentJet chat: the episode inspector (common.js first).
"use strict";

const FORK_KEY = "agentjet-chat-fork";
const view = { before: null };

function say(text) { document.getElementById("inspector-status").textContent = text; }

async function getJson(url) {
  const response = await fetch(url);
  if (response.status === 401) { window.location.assign("/login"); throw new Error("log in first"); }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.detail || `HTTP ${response.status}`);
  return body;
}

function filters() {
  const params = new URLSearchParams();
  for (const id of ["kind", "status", "task_id", "min_reward", "max_reward", "policy_version"]) {
    const value = document.getElementById(id).value.trim();
    if (value !== "") params.set(id, value);
  }
  if (view.before !== null) params.set("before", String(view.before));
  return params;
}

async function listEpisodes(append) {
  const target = document.getElementById("target").value;
  if (!append) view.before = null;
  say("");
  try {
    const page = await getJson(`/api/episodes/${encodeURIComponent(target)}?${filters()}`);
    const body = document.querySelector("#episodes tbody");
    if (!append) body.replaceChildren();
    for (const e of page.episodes) {
      const row = el("tr");
      row.dataset.episode = e.episode_id;
      const cells = [e.seq, e.episode_id, e.task_id, e.kind, e.status,
        e.reward === null ? "-" : e.reward, e.calls, e.policy_versions.join(", ")];
      for (const value of cells) row.append(el("td", null, value));
      const open = el("button", "open", "Open");
      open.type = "button";
      open.addEventListener("click", () => openEpisode(target, e.episode_id));
      const cell = el("td");
      cell.append(open);
      row.append(cell);
      body.append(row);
    }
    view.before = page.next_before;
    document.getElementById("more").hidden = page.next_before === null;
    if (!append && !page.episodes.length) say("No episodes match.");
  } catch (error) {
    say(String(error.message || error));
  }
}

function tokenSpans(tokens, logprobs, mask) {
  const box = el("div", "tokens");
  const texts = tokenTexts(tokens);
  tokens.forEach((token, i) => {
    const span = el("span", "tok", texts[i]);
    const trained = mask ? mask[i] : true;
    span.classList.add(trained ? "trained" : "context");
    span.title = trained ? `${token}  logprob ${Number(logprobs[i]).toFixed(3)} (trained)` : `${token}  (context)`;
    span.dataset.logprob = String(logprobs[i]);
    box.append(span);
  });
  return box;
}

function forkAt(episode, call) {
  const messages = call.messages.map((m) => ({
    role: m.role === "developer" ? "system" : m.role === "tool" ? "user" : m.role,
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""),
  })).filter((m) => ["system", "user", "assistant"].includes(m.role));
  sessionStorage.setItem(FORK_KEY, JSON.stringify({ episode: episode.episode_id, turn: call.call_index + 1, messages }));
  window.location.assign("/");
}

async function openEpisode(target, episodeId) {
  say("");
  let episode;
  try {
    episode = await getJson(`/api/episodes/${encodeURIComponent(target)}/${encodeURIComponent(episodeId)}`);
  } catch (error) {
    say(String(error.message || error));
    return;
  }
  const section = document.getElementById("episode");
  section.hidden = false;
  section.dataset.episode = episode.episode_id;
  document.getElementById("episode-title").textContent =
    `${episode.episode_id} · ${episode.task_id} · ${episode.kind} · ${episode.status} · reward ${episode.reward ?? "-"}`;
  const calls = document.getElementById("calls");
  calls.replaceChildren();
  for (const call of episode.calls) {
    const box = el("article", "call");
    box.dataset.call = String(call.call_index);
    const head = el("h3", null,
      `Turn ${call.call_index + 1}${call.choice_index ? ` (choice ${call.choice_index})` : ""} · policy v${call.policy_version} · ` +
      `${call.prompt_ids.length} prompt + ${call.completion_ids.length} completion tokens · finish ${call.finish_reason}`);
    const fork = el("button", "fork", `Fork at turn ${call.call_index + 1}`);
    fork.type = "button";
    fork.addEventListener("click", () => forkAt(episode, call));
    head.append(" ", fork);
    box.append(head);
    for (const m of call.messages) {
      box.append(el("div", `turn ${m.role === "user" || m.role === "assistant" ? m.role : "other"}`,
        `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`));
    }
    const reply = el("div", "turn assistant completion");
    reply.append(el("span", "choice-label", "completion (sampled):"));
    if (call.forced_text) reply.append(el("span", "forced", call.forced_text));  // tool_choice's opening: prompt, not sampled
    reply.append(el("span", "text", call.completion_text));
    box.append(reply);
    calls.append(box);
  }
  const samples = document.getElementById("samples");
  samples.replaceChildren();
  const merge = episode.merge;
  if (!merge) {
    samples.append(el("p", "hint", `Not trained: a ${episode.status} ${episode.kind} episode has no samples.`));
    return;
  }
  samples.append(el("p", null, `${merge.calls} calls -> ${merge.samples} samples (merge: ${merge.match})`));
  merge.sample_tokens.forEach((sample, i) => {
    const start = merge.sample_starts[i];
    const box = el("article", "sample");
    box.dataset.sample = String(i);
    box.append(el("h4", null,
      `Sample ${i + 1}: from turn ${start.call_index + 1}, ${start.calls} calls, ${start.trainable_tokens} trained tokens` +
      (start.reason ? ` · new sample because: ${start.reason} (${start.shared_tokens} tokens shared)` : "")));
    box.append(tokenSpans(sample.tokens, sample.logprobs, sample.loss_mask));
    samples.append(box);
  });
}

async function startInspector() {
  let info;
  try {
    info = await getJson("/api/session");
  } catch (error) {
    return;
  }
  const select = document.getElementById("target");
  for (const target of info.targets) {
    const option = el("option", null, target.name);
    option.value = target.name;
    select.append(option);
  }
  document.getElementById("filters").addEventListener("submit", (event) => { event.preventDefault(); listEpisodes(false); });
  document.getElementById("more").addEventListener("click", () => listEpisodes(true));
  listEpisodes(false);
}

startInspector();
