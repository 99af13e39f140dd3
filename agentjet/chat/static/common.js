// AgentJet chat: what both pages share. Text from a model or a server only ever goes in with textContent.
"use strict";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// Byte-level BPE (GPT-2, SmolLM2, Llama 3, Qwen) writes each byte as one printable character;
// this is that table reversed, so tokens show as the text they stand for.
const BYTE_OF_CHAR = (() => {
  const table = new Map();
  const printable = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (printable.includes(b)) table.set(String.fromCodePoint(b), b);
    else table.set(String.fromCodePoint(256 + extra++), b);
  }
  return table;
})();

// Tokens -> the text each adds. A character split over several tokens shows on the token that
// completes it. Tokens that are not byte-level (SentencePiece's "▁" for a space) pass through.
function tokenTexts(tokens) {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  return tokens.map((token) => {
    const chars = [...token];
    if (!chars.every((c) => BYTE_OF_CHAR.has(c))) return token.replace(/▁/g, " ");
    return decoder.decode(new Uint8Array(chars.map((c) => BYTE_OF_CHAR.get(c))), { stream: true });
  });
}

// Probability -> a background from red (unlikely) to green (likely).
function colour(logprob) {
  const p = Math.exp(Math.max(logprob, -20));
  return `hsla(${Math.round(120 * p)}, 75%, 55%, 0.35)`;
}

// POST `body` as JSON with the CSRF token; call `onEvent` with each event of the SSE reply as it comes.
// A refusal throws an Error with the status and the server's reason.
async function postEvents(url, body, csrf, onEvent) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    const detail = await response.json().catch(() => ({}));
    throw new Error(`refused (${response.status}): ${JSON.stringify(detail.detail || detail)}`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (line.startsWith("data: ")) onEvent(JSON.parse(line.slice(6)));
    }
  }
}
