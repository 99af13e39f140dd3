// AgentJet chat: the research assistant's page (common.js first). Tool output is text, never markup.
"use strict";

const talk = { csrf: null };

function entry(className, text) {
  const node = el("div", `turn ${className}`, text);
  document.getElementById("transcript").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

async function post(url, body) {
  let log = null;
  try {
    await postEvents(url, body, talk.csrf, (event) => {
      if (event.type === "say") entry("assistant", event.text);
      else if (event.type === "block") entry("assistant block", event.text);
      else if (event.type === "confirm") ask(event);
      else if (event.type === "figure") {
        const box = entry("assistant figure", event.caption);
        const img = el("img");
        img.alt = event.caption;
        img.src = `/api/assistant/figure?path=${encodeURIComponent(event.path)}`;
        box.append(document.createElement("br"), img);
      }
      else if (event.type === "line") {
        if (!log) log = entry("assistant block progress", "");
        log.append(document.createTextNode(event.text + "\n"));
        log.scrollIntoView({ block: "end" });
      }
    });
  } catch (error) {
    entry("error", String(error.message || error));
  }
}

function ask(event) {
  const box = entry("assistant confirm", event.question + " ");
  box.dataset.action = event.action_id;
  for (const [label, approve] of [["Yes, do it", true], ["No", false]]) {
    const button = el("button", approve ? "yes" : "no", label);
    button.type = "button";
    button.addEventListener("click", () => {
      for (const b of box.querySelectorAll("button")) b.disabled = true;
      entry("user", label);
      post("/api/assistant/confirm", { action_id: event.action_id, approve });
    });
    box.append(button);
  }
}

async function startAssistant() {
  const response = await fetch("/api/session");
  if (response.status === 401) { window.location.assign("/login"); return; }
  talk.csrf = (await response.json()).csrf;
  const question = document.getElementById("question");
  document.getElementById("ask").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) return;
    question.value = "";
    entry("user", text);
    post("/api/assistant", { message: text });
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      document.getElementById("ask").requestSubmit();
    }
  });
}

startAssistant();
