// hopper's console: a list of queues and topics, a page per queue (counts, attributes,
// charts of the server's history, dead-letter relations, a message browser) and actions
// (send, delete one message, purge, redrive and cancel), a page per topic (its
// subscriptions, a publish form), all through /dashboard/api.
// With --auth sigv4 it signs in once (access key + secret -> a session token, kept in
// this tab's sessionStorage) and sends the token with every request.
// Every value is put in the page as text (textContent), never as markup.
"use strict";

const API = "/dashboard/api";
const REFRESH_MS = 2000;
const TOKEN = "hopper-console-token";
const $ = (id) => document.getElementById(id);

let current = null; // the queue page's {account, name, fifo}, or null on the list
let currentTopic = null; // the topic page's {arn, fifo}, or null

function text(tag, value, className) {
  const node = document.createElement(tag);
  node.textContent = value === null || value === undefined ? "" : String(value);
  if (className) node.className = className;
  return node;
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}

function status(message, error) {
  $("status").textContent = message;
  $("status").className = error ? "status error" : "status";
}

class NotSignedIn extends Error {}

async function api(method, path, body) {
  // The console's own header: without it hopper refuses every action (console/answers.py).
  const headers = { "x-hopper-console": "1" };
  const token = sessionStorage.getItem(TOKEN);
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(API + path, {
    method, headers, cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch (_) { data = { error: `HTTP ${response.status}` }; }
  if (response.status === 401 && path !== "/session") {
    showLogin();
    throw new NotSignedIn(data.error);
  }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function queuePath(queue) {
  return `/queues/${encodeURIComponent(queue.account)}/${encodeURIComponent(queue.name)}`;
}

// --- signing in ------------------------------------------------------------------------

function showLogin() {
  sessionStorage.removeItem(TOKEN);
  for (const id of ["list", "queue", "topic"]) $(id).hidden = true;
  $("login").hidden = false;
  $("who").textContent = "";
  $("sign-out").hidden = true;
  status("sign in to see your queues");
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch(`${API}/session`, {
    method: "POST", headers: { "content-type": "application/json", "x-hopper-console": "1" },
    body: JSON.stringify({ access_key: $("access-key").value, secret_key: $("secret-key").value }),
  });
  const data = await response.json();
  if (!response.ok) {
    $("login-error").textContent = data.error;
    $("login-error").hidden = false;
    return;
  }
  sessionStorage.setItem(TOKEN, data.token);
  $("secret-key").value = "";
  $("login-error").hidden = true;
  $("login").hidden = true;
  start();
});

$("sign-out").addEventListener("click", () => { showLogin(); location.hash = ""; });

// --- the list --------------------------------------------------------------------------

function deadLetterCell(queue) {
  const cell = document.createElement("td");
  if (queue.dead_letter_target !== null) {
    cell.appendChild(text("span", `→ ${queue.dead_letter_target} `));
    cell.appendChild(text("span", `${queue.dead_letter_depth ?? "?"} dead`, "dlq"));
    cell.appendChild(text("span", ` after ${queue.max_receive_count} receives`, "note"));
  }
  if (queue.dead_letter_sources.length > 0) {
    if (cell.childNodes.length) cell.appendChild(document.createElement("br"));
    cell.appendChild(text("span", `dead-letter queue of ${queue.dead_letter_sources.join(", ")}`, "note"));
  }
  return cell;
}

function row(queue) {
  const tr = document.createElement("tr");
  tr.dataset.queue = queue.name;
  const name = document.createElement("td");
  name.className = "name";
  const link = text("a", queue.name);
  link.href = `#/queue${queuePath(queue).slice("/queues".length)}`;
  name.appendChild(link);
  tr.appendChild(name);
  tr.appendChild(text("td", queue.visible, "n visible"));
  tr.appendChild(text("td", queue.in_flight, "n in-flight"));
  tr.appendChild(text("td", queue.delayed, "n delayed"));
  tr.appendChild(text("td", age(queue.oldest_visible_age), "n age"));
  tr.appendChild(deadLetterCell(queue));
  return tr;
}

function topicRow(topic) {
  const tr = document.createElement("tr");
  tr.dataset.topic = topic.arn;
  const name = document.createElement("td");
  name.className = "name";
  const link = text("a", topic.name);
  link.href = `#/topic/${encodeURIComponent(topic.arn)}`;
  name.appendChild(link);
  tr.appendChild(name);
  tr.appendChild(text("td", topic.fifo ? "FIFO" : "standard", "type"));
  tr.appendChild(text("td", topic.subscriptions.length, "n subscription-count"));
  return tr;
}

async function refreshList() {
  const [data, topics] = await Promise.all([api("GET", "/queues"), api("GET", "/topics")]);
  $("queues").querySelector("tbody").replaceChildren(...data.queues.map(row));
  $("empty").hidden = data.queues.length > 0;
  $("topics").querySelector("tbody").replaceChildren(...topics.topics.map(topicRow));
  $("topics-empty").hidden = topics.topics.length > 0;
  status(`${data.queues.length} queues, ${topics.topics.length} topics · updated ${new Date().toLocaleTimeString()}`);
}

// --- a queue's page --------------------------------------------------------------------

// `series` are point members; the title says the last depth, or a count's total.
function chart(points, series) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  const width = Math.max(points.length - 1, 1);
  svg.setAttribute("viewBox", `0 0 ${width} 100`);
  svg.setAttribute("preserveAspectRatio", "none");
  const top = Math.max(1, ...points.flatMap((p) => series.map((s) => p[s] ?? 0)));
  const summary = [];
  for (const name of series) {
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("class", name);
    const coordinates = [];
    points.forEach((p, i) => {
      if (p[name] !== null && p[name] !== undefined) {
        coordinates.push(`${i},${(98 - (p[name] / top) * 95).toFixed(1)}`);
      }
    });
    line.setAttribute("points", coordinates.join(" "));
    svg.appendChild(line);
    if (name === "depth") {
      const last = [...points].reverse().find((p) => p[name] !== null && p[name] !== undefined);
      summary.push(`depth now ${last ? last.depth : "–"}`);
    } else {
      summary.push(`${name} ${points.reduce((sum, p) => sum + p[name], 0)} in the last hour`);
    }
  }
  const title = document.createElementNS(ns, "title");
  title.textContent = `${summary.join(", ")}; highest shown ${top}`;
  svg.appendChild(title);
  return svg;
}

function relations(queue) {
  const node = $("relations");
  node.replaceChildren();
  if (queue.dead_letter_target !== null) {
    node.appendChild(text("span", `Dead letters go to ${queue.dead_letter_target} after ${queue.max_receive_count} receives; `));
    node.appendChild(text("span", `${queue.dead_letter_depth ?? "?"} wait there.`, "dlq"));
  }
  if (queue.dead_letter_sources.length > 0) {
    node.appendChild(text("span", ` Dead-letter queue of ${queue.dead_letter_sources.join(", ")}.`));
  }
}

// The queue's retry policy and dispatch target (hopper extensions), and the button
// that pauses or resumes its dispatch.
function delivery(queue) {
  const parts = [];
  const policy = queue.retry_policy;
  if (policy !== null) {
    parts.push(`Retries back off from ${policy.base} s to ${policy.maximum} s (${policy.jitter} jitter).`);
  }
  const target = queue.dispatch;
  if (target !== null) {
    parts.push(`Dispatched to ${target.url} (${target.payload}, batches of ${target.batch_size}, ` +
      `${target.max_concurrency} at once, ${target.timeout} s timeout)${target.paused ? ": paused" : ""}.`);
  }
  $("delivery-text").textContent = parts.join(" ");
  const toggle = $("dispatch-toggle");
  toggle.hidden = target === null;
  if (target !== null) {
    toggle.textContent = target.paused ? "resume dispatch" : "pause dispatch";
    toggle.dataset.action = target.paused ? "resume" : "pause";
  }
}

function taskRow(task) {
  const tr = document.createElement("tr");
  tr.dataset.task = task.id;
  tr.appendChild(text("td", task.id.slice(0, 8), "id"));
  tr.appendChild(text("td", task.status + (task.failure_reason ? ` (${task.failure_reason})` : ""), "task-status"));
  tr.appendChild(text("td", task.destination ?? "sources"));
  tr.appendChild(text("td", `${task.moved} of ${task.to_move}`, "progress"));
  const cell = document.createElement("td");
  if (task.status === "RUNNING") {
    const button = text("button", "cancel", "cancel-task");
    button.type = "button";
    button.addEventListener("click", () => act(async () => {
      await api("POST", `${queuePath(current)}/redrive/${encodeURIComponent(task.id)}/cancel`);
      $("redrive-result").textContent = "cancelling…";
    }, "redrive-result"));
    cell.appendChild(button);
  }
  tr.appendChild(cell);
  return tr;
}

async function refreshQueue() {
  const data = await api("GET", queuePath(current));
  const queue = data.queue;
  current.fifo = queue.fifo;
  $("queue-name").textContent = queue.name;
  $("queue-account").textContent = `account ${queue.account}${queue.fifo ? " · FIFO" : ""}`;
  $("count-visible").textContent = queue.visible;
  $("count-in-flight").textContent = queue.in_flight;
  $("count-delayed").textContent = queue.delayed;
  $("count-age").textContent = age(queue.oldest_age);
  relations(queue);
  delivery(queue);
  for (const node of document.querySelectorAll(".fifo-only")) node.hidden = !queue.fifo;
  $("attributes").querySelector("tbody").replaceChildren(
    ...Object.entries(data.attributes).map(([name, value]) => {
      const tr = document.createElement("tr");
      tr.appendChild(text("td", name));
      tr.appendChild(text("td", value));
      return tr;
    }),
  );
  const points = data.history.points;
  $("chart-depth").replaceChildren(chart(points, ["depth"]));
  $("chart-flow").replaceChildren(chart(points, ["sent", "received", "deleted"]));
  $("redrive").hidden = queue.dead_letter_sources.length === 0;
  $("tasks").querySelector("tbody").replaceChildren(...data.tasks.map(taskRow));
  $("purge-name").textContent = queue.name;
  status(`${queue.name} · updated ${new Date().toLocaleTimeString()}`);
}

function attributeSummary(attributes) {
  return Object.entries(attributes)
    .map(([name, a]) => `${name} (${a.DataType}) = ${a.StringValue ?? a.BinaryValue}`)
    .join("\n");
}

function messageRow(message) {
  const tr = document.createElement("tr");
  tr.dataset.message = message.id;
  tr.dataset.state = message.state;
  tr.appendChild(text("td", message.id, "id"));
  const state = text("td", message.state.replace("_", " "), `state state-${message.state}`);
  if (message.dead) state.appendChild(text("span", ` dead (from ${message.dead_letter_source})`, "dead"));
  if (message.last_error) state.appendChild(text("div", message.last_error, "note last-error"));
  tr.appendChild(state);
  tr.appendChild(text("td", age(message.age), "n"));
  tr.appendChild(text("td", message.receive_count, "n receives"));
  tr.appendChild(text("td", message.token, "n token"));
  tr.appendChild(text("td", message.group_id ?? ""));
  tr.appendChild(text("td", attributeSummary(message.attributes), "body attributes"));
  tr.appendChild(text("td", message.body, "body"));
  const cell = document.createElement("td");
  const button = text("button", "delete", "delete-message danger");
  button.type = "button";
  button.addEventListener("click", () => {
    if (button.dataset.armed !== "true") {
      button.dataset.armed = "true";
      button.textContent = "really delete?";
      return;
    }
    act(async () => {
      await api("DELETE", `${queuePath(current)}/messages/${encodeURIComponent(message.id)}`);
      $("messages-count").textContent = `deleted ${message.id}`;
    }, "messages-count");
  });
  cell.appendChild(button);
  tr.appendChild(cell);
  return tr;
}

async function refreshMessages() {
  const data = await api("GET", `${queuePath(current)}/messages`);
  const filter = $("message-filter").value;
  const shown = data.messages.filter((m) =>
    filter === "all" || (filter === "dead" ? m.dead : m.state === filter));
  $("messages").querySelector("tbody").replaceChildren(...shown.map(messageRow));
  $("messages").dataset.count = String(shown.length);
  $("messages").dataset.loaded = String(Date.now());
}

// --- a topic's page --------------------------------------------------------------------

function subscriptionRow(sub) {
  const tr = document.createElement("tr");
  tr.dataset.subscription = sub.arn;
  tr.appendChild(text("td", sub.protocol, "protocol"));
  tr.appendChild(text("td", sub.endpoint, "endpoint"));
  tr.appendChild(text("td", sub.raw ? "raw" : "enveloped", "raw"));
  tr.appendChild(text("td", sub.filter_policy ?? "none", "body filter-policy"));
  tr.appendChild(text("td", sub.confirmed ? "confirmed" : "pending confirmation", "confirmation"));
  return tr;
}

async function refreshTopic() {
  const data = await api("GET", "/topics");
  const topic = data.topics.find((t) => t.arn === currentTopic.arn);
  // Another account's topic is not listed: it answers as one that does not exist.
  if (topic === undefined) throw new Error("Topic does not exist");
  currentTopic.fifo = topic.fifo;
  $("topic-name").textContent = topic.name;
  $("topic-about").textContent = `account ${topic.account} · ${topic.region}${topic.fifo ? " · FIFO" : ""}`;
  $("topic-arn").textContent = topic.arn;
  $("subscriptions").querySelector("tbody").replaceChildren(...topic.subscriptions.map(subscriptionRow));
  $("subscriptions-empty").hidden = topic.subscriptions.length > 0;
  $("publish-fifo").hidden = !topic.fifo;
  status(`${topic.name} · updated ${new Date().toLocaleTimeString()}`);
}

$("publish-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const body = { topic_arn: currentTopic.arn, message: $("publish-message").value,
    subject: $("publish-subject").value };
  if (currentTopic.fifo) {
    body.group_id = $("publish-group").value;
    body.deduplication_id = $("publish-dedup").value;
  }
  act(async () => {
    const published = await api("POST", "/topics/publish", body);
    $("publish-result").textContent = `published ${published.message_id}`;
  }, "publish-result");
});

// An action, then a fresh look at everything it may have changed; its error shown
// next to it.
async function act(action, resultId) {
  try {
    await action();
  } catch (error) {
    if (error instanceof NotSignedIn) return;
    $(resultId).textContent = error.message;
    $(resultId).className = "note error";
    return;
  }
  $(resultId).className = "note";
  await refresh(true);
}

function addAttributeRow() {
  const row = document.createElement("div");
  row.className = "attribute";
  for (const [cls, placeholder] of [["attribute-name", "name"], ["attribute-value", "value"]]) {
    const input = document.createElement("input");
    input.className = cls;
    input.placeholder = placeholder;
    row.appendChild(input);
    if (cls === "attribute-name") {
      const type = document.createElement("select");
      type.className = "attribute-type";
      for (const t of ["String", "Number", "Binary"]) type.appendChild(text("option", t));
      row.appendChild(type);
    }
  }
  $("send-attributes").appendChild(row);
}

$("add-attribute").addEventListener("click", addAttributeRow);

$("send-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const attributes = {};
  for (const row of $("send-attributes").querySelectorAll(".attribute")) {
    const name = row.querySelector(".attribute-name").value;
    if (!name) continue;
    const type = row.querySelector(".attribute-type").value;
    const value = row.querySelector(".attribute-value").value;
    attributes[name] = type === "Binary"
      ? { DataType: type, BinaryValue: btoa(value) }
      : { DataType: type, StringValue: value };
  }
  const body = { body: $("send-body").value, attributes };
  if (current.fifo) {
    body.group_id = $("send-group").value;
    body.deduplication_id = $("send-dedup").value;
  }
  act(async () => {
    const sent = await api("POST", `${queuePath(current)}/messages`, body);
    $("send-result").textContent = sent.duplicate
      ? `a duplicate of ${sent.message_id}: nothing new was sent`
      : `sent ${sent.message_id}`;
  }, "send-result");
});

$("dispatch-toggle").addEventListener("click", () => act(async () => {
  const action = $("dispatch-toggle").dataset.action;
  await api("POST", `${queuePath(current)}/dispatch/${action}`);
  $("dispatch-result").textContent = action === "pause" ? "paused" : "resumed";
}, "dispatch-result"));
$("purge").addEventListener("click", () => { $("purge-confirm").hidden = false; });
$("purge-no").addEventListener("click", () => { $("purge-confirm").hidden = true; });
$("purge-yes").addEventListener("click", () => {
  $("purge-confirm").hidden = true;
  act(async () => {
    await api("POST", `${queuePath(current)}/purge`);
    $("purge-result").textContent = `purged ${current.name}`;
  }, "purge-result");
});

$("redrive-start").addEventListener("click", () => {
  const named = document.querySelector('input[name="redrive-to"]:checked').value === "named";
  const body = { destination: named ? $("redrive-destination").value : null };
  if ($("redrive-rate").value) body.max_per_second = $("redrive-rate").value;
  act(async () => {
    const started = await api("POST", `${queuePath(current)}/redrive`, body);
    $("redrive-result").textContent = `started task ${started.task.id.slice(0, 8)}`;
  }, "redrive-result");
});

$("message-filter").addEventListener("change", () => refreshMessages().catch(() => {}));
$("messages-refresh").addEventListener("click", () => refreshMessages().catch(() => {}));

// --- routing and the refresh loop ------------------------------------------------------

function route() {
  if (!$("login").hidden) return null; // signed out: nothing shows until signed in
  const match = location.hash.match(/^#\/queue\/([^/]+)\/([^/]+)$/);
  current = match ? { account: decodeURIComponent(match[1]), name: decodeURIComponent(match[2]) } : null;
  const topic = location.hash.match(/^#\/topic\/([^/]+)$/);
  currentTopic = topic ? { arn: decodeURIComponent(topic[1]) } : null;
  $("list").hidden = current !== null || currentTopic !== null;
  $("queue").hidden = current === null;
  $("topic").hidden = currentTopic === null;
  if (currentTopic) {
    for (const id of ["topic-name", "topic-about", "topic-arn", "publish-result"]) $(id).textContent = "";
    $("subscriptions").querySelector("tbody").replaceChildren();
  }
  if (current) {
    for (const id of ["send-result", "purge-result", "redrive-result", "messages-count"]) $(id).textContent = "";
    $("purge-confirm").hidden = true;
    $("messages").querySelector("tbody").replaceChildren();
  }
  return refresh(true);
}

async function refresh(withMessages) {
  if (!$("login").hidden) return;
  try {
    if (currentTopic !== null) await refreshTopic();
    else if (current === null) await refreshList();
    else await Promise.all([refreshQueue(), withMessages ? refreshMessages() : null]);
    document.body.dataset.loaded = "true";
  } catch (error) {
    if (error instanceof NotSignedIn) return;
    // fetch itself fails (TypeError) when the server cannot be reached.
    status(error instanceof TypeError ? `cannot reach hopper: ${error.message}` : error.message, true);
  }
}

async function start() {
  const response = await fetch(`${API}/session`, {
    cache: "no-store",
    headers: sessionStorage.getItem(TOKEN) ? { authorization: `Bearer ${sessionStorage.getItem(TOKEN)}` } : {},
  });
  if (response.status === 401) { showLogin(); return; }
  const who = await response.json();
  if (who.auth === "sigv4") {
    $("who").textContent = `account ${who.account}`;
    $("sign-out").hidden = false;
  }
  await route();
}

window.addEventListener("hashchange", route);
setInterval(() => refresh(false), REFRESH_MS);
start();
