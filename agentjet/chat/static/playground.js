// AgentJet chat: the playground page's script (and the login page's one line of it); common.js first.
"use strict";

const state = { csrf: null, targets: [], histories: new Map(), busy: false, fork: null };

function sampling() {
  const number = (id) => Number(document.getElementById(id).value);
  const seed = document.getElementById("seed").value;
  const body = {
    temperature: number("temperature"), top_p: number("top_p"),
    max_tokens: number("max_tokens"), n: number("n"),
  };
  if (seed !== "") body.seed = Number(seed);
  return body;
}

function column(name) {
  return document.querySelector(`.column[data-target="${CSS.escape(name)}"]`);
}

function buildColumns() {
  const columns = document.getElementById("columns");
  columns.replaceChildren();
  for (const target of state.targets) {
    const box = document.getElementById(`use-${target.name}`);
    if (!box || !box.checked) continue;
    const section = el("section", "column");
    section.dataset.target = target.name;
    const title = el("h2", null, target.name + " ");
    title.append(el("span", "url", target.url));
    section.append(title, el("div", "turns"));
    columns.append(section);
    const history = state.histories.get(target.name) || (state.fork ? state.fork.messages : []);
    for (const turn of history) {
      addTurn(section, turn.role, turn.content);
    }
  }
}

function addTurn(section, role, text) {
  const turn = el("div", `turn ${role}`);
  turn.dataset.role = role;
  if (text !== undefined) turn.textContent = text;
  section.querySelector(".turns").append(turn);
  return turn;
}

function renderTokens(reply, tokens, show) {
  const body = reply.querySelector(".text");
  if (!show) return;
  body.replaceChildren();
  const texts = tokenTexts(tokens.map((t) => t.token));
  for (const [i, entry] of tokens.entries()) {
    const span = el("span", "tok", texts[i]);
    span.title = `${entry.token}  logprob ${entry.logprob.toFixed(3)}`;
    span.dataset.logprob = String(entry.logprob);
    span.style.backgroundColor = colour(entry.logprob);
    body.append(span);
  }
}

function replyBox(section, choice, n) {
  let turn = section.querySelector(`.turn.assistant.pending[data-choice="${choice}"]`);
  if (!turn) {
    turn = addTurn(section, "assistant");
    turn.classList.add("pending");
    turn.dataset.choice = String(choice);
    if (n > 1) turn.append(el("span", "choice-label", `choice ${choice}`));
    turn.append(el("span", "text"));
  }
  return turn;
}

// `text` null: reply to the conversation as it stands (a forked episode's turn).
async function send(text) {
  const chosen = state.targets.filter((t) => document.getElementById(`use-${t.name}`).checked).map((t) => t.name);
  if (!chosen.length || state.busy) return;
  state.busy = true;
  const status = document.getElementById("status");
  status.textContent = "sampling...";
  const system = document.getElementById("system").value.trim();
  const options = sampling();
  for (const name of chosen) {
    const history = state.histories.get(name) || (state.fork ? state.fork.messages.slice() : []);
    state.histories.set(name, history);
    if (text === null) continue;
    history.push({ role: "user", content: text });
    addTurn(column(name), "user", text);
  }
  // Each target continues its own conversation; the request carries one of them per target,
  // so targets whose histories differ are sent one request each.
  const groups = new Map();
  for (const name of chosen) {
    const key = JSON.stringify(state.histories.get(name));
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(name);
  }
  try {
    await Promise.all([...groups.entries()].map(([key, names]) => {
      const messages = (system ? [{ role: "system", content: system }] : []).concat(JSON.parse(key));
      return stream({ ...options, targets: names, messages }, options.n);
    }));
    status.textContent = "";
  } catch (error) {
    status.textContent = String(error);
  } finally {
    state.busy = false;
  }
}

async function stream(body, n) {
  await postEvents("/api/chat", body, state.csrf, (event) => handle(event, n));
}

function handle(event, n) {
  if (event.type === "all_done") return;
  const section = column(event.target);
  if (!section) return;
  if (event.type === "error") {
    addTurn(section, "error", event.message);
    return;
  }
  const reply = replyBox(section, event.choice, n);
  const text = reply.querySelector(".text");
  if (event.type === "token") {
    reply.streamed = (reply.streamed || "") + event.text;
    text.append(document.createTextNode(event.text));
  } else if (event.type === "logprobs") {
    reply.tokens = event.tokens;
    renderTokens(reply, event.tokens, document.getElementById("show_logprobs").checked);
  } else if (event.type === "done") {
    reply.classList.remove("pending");
    reply.dataset.finish = event.finish_reason;
    reply.append(el("span", "finish", `finish: ${event.finish_reason}`));
    if (event.choice === 0) {
      state.histories.get(event.target).push({ role: "assistant", content: reply.streamed || "" });
    }
  }
}

async function startPlayground() {
  const response = await fetch("/api/session");
  if (response.status === 401) { window.location.assign("/login"); return; }
  const info = await response.json();
  state.csrf = info.csrf;
  state.targets = info.targets;
  const box = document.getElementById("targets");
  info.targets.forEach((target, index) => {
    const label = el("label");
    const input = el("input");
    input.type = "checkbox";
    input.id = `use-${target.name}`;
    input.checked = index < 2;
    input.addEventListener("change", buildColumns);
    label.append(input, document.createTextNode(` ${target.name} `));
    box.append(label);
  });
  const fork = sessionStorage.getItem("agentjet-chat-fork");
  if (fork) {
    sessionStorage.removeItem("agentjet-chat-fork");
    state.fork = JSON.parse(fork);
    const note = document.getElementById("fork-note");
    note.textContent = `Forked from episode ${state.fork.episode} at turn ${state.fork.turn}: its conversation up to ` +
      "that turn is below; reply to it with the checked policies, then go on.";
    note.hidden = false;
    const replay = document.getElementById("replay");
    replay.hidden = false;
    replay.addEventListener("click", () => { replay.hidden = true; send(null); });
  }
  buildColumns();
  const message = document.getElementById("message");
  document.getElementById("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (!text) return;
    message.value = "";
    send(text);
  });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      document.getElementById("composer").requestSubmit();
    }
  });
  document.getElementById("reset").addEventListener("click", () => {
    state.histories.clear();
    state.fork = null;
    document.getElementById("fork-note").hidden = true;
    document.getElementById("replay").hidden = true;
    buildColumns();
  });
  document.getElementById("show_logprobs").addEventListener("change", (event) => {
    for (const reply of document.querySelectorAll(".turn.assistant")) {
      if (!reply.tokens) continue;
      if (event.target.checked) renderTokens(reply, reply.tokens, true);
      else reply.querySelector(".text").textContent = reply.streamed || "";
    }
  });
  document.getElementById("logout").addEventListener("click", async () => {
    await fetch("/logout", { method: "POST", headers: { "X-CSRF-Token": state.csrf } });
    window.location.assign("/login");
  });
}

if (document.body.classList.contains("playground")) {
  startPlayground();
} else if (new URLSearchParams(window.location.search).has("failed")) {
  document.getElementById("failed").hidden = false;
}
