// hopper's dashboard: polls /dashboard/queues, keeps each queue's recent depths in
// memory for its chart, and peeks at dead-letter queues through /dashboard/peek.
// Every value is put in the page as text (textContent), never as markup.
"use strict";

const REFRESH_MS = 2000;
const HISTORY = 90; // samples per chart: three minutes at the refresh rate
const history = new Map(); // "account/name" -> [depth, ...]

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

function chart(depths) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "chart");
  svg.setAttribute("viewBox", `0 0 ${HISTORY - 1} 32`);
  svg.setAttribute("preserveAspectRatio", "none");
  const top = Math.max(1, ...depths);
  const offset = HISTORY - depths.length;
  const points = depths.map((d, i) => `${offset + i},${(31 - (d / top) * 30).toFixed(1)}`);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", points.join(" "));
  svg.appendChild(line);
  const title = document.createElementNS(ns, "title");
  title.textContent = `depth now ${depths[depths.length - 1]}, highest shown ${top}`;
  svg.appendChild(title);
  return svg;
}

function remember(queue) {
  const id = `${queue.account}/${queue.name}`;
  const depths = history.get(id) || [];
  depths.push(queue.depth);
  if (depths.length > HISTORY) depths.shift();
  history.set(id, depths);
  return depths;
}

function deadLetterCell(queue) {
  const cell = document.createElement("td");
  if (queue.dead_letter_target !== null) {
    cell.appendChild(text("span", `→ ${queue.dead_letter_target} `));
    cell.appendChild(text("span", `${queue.dead_letter_depth ?? "?"} dead`, "dlq"));
    cell.appendChild(text("span", ` after ${queue.max_receive_count} receives`, "note"));
  }
  if (queue.dead_letter_sources.length > 0) {
    if (cell.childNodes.length) cell.appendChild(document.createElement("br"));
    cell.appendChild(text("span", `dead-letter queue of ${queue.dead_letter_sources.join(", ")} `, "note"));
    const button = text("button", "peek");
    button.type = "button";
    button.className = "peek";
    button.addEventListener("click", () => peek(queue));
    cell.appendChild(button);
  }
  return cell;
}

function row(queue) {
  const tr = document.createElement("tr");
  tr.dataset.queue = queue.name;
  tr.appendChild(text("td", queue.name, "name"));
  tr.appendChild(text("td", queue.visible, "n visible"));
  tr.appendChild(text("td", queue.in_flight, "n in-flight"));
  tr.appendChild(text("td", queue.delayed, "n delayed"));
  tr.appendChild(text("td", age(queue.oldest_visible_age), "n age"));
  tr.appendChild(deadLetterCell(queue));
  const chartCell = document.createElement("td");
  chartCell.appendChild(chart(remember(queue)));
  tr.appendChild(chartCell);
  return tr;
}

async function refresh() {
  const status = document.getElementById("status");
  try {
    const response = await fetch("/dashboard/queues", { cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    const body = document.querySelector("#queues tbody");
    body.replaceChildren(...data.queues.map(row));
    document.getElementById("empty").hidden = data.queues.length > 0;
    status.textContent = `${data.queues.length} queues · updated ${new Date().toLocaleTimeString()}`;
    status.className = "status";
    document.body.dataset.loaded = "true";
  } catch (error) {
    status.textContent = `cannot reach hopper: ${error.message}`;
    status.className = "status error";
  }
}

async function peek(queue) {
  const query = new URLSearchParams({ account: queue.account, queue: queue.name, limit: "20" });
  const response = await fetch(`/dashboard/peek?${query}`, { cache: "no-store" });
  const data = await response.json();
  if (!response.ok) {
    const status = document.getElementById("status");
    status.textContent = `peek at ${queue.name}: ${data.error}`;
    status.className = "status error";
    return;
  }
  const body = document.querySelector("#peek-messages tbody");
  body.replaceChildren(
    ...(data.messages || []).map((m) => {
      const tr = document.createElement("tr");
      tr.appendChild(text("td", m.id));
      tr.appendChild(text("td", m.dead_letter_source ?? ""));
      tr.appendChild(text("td", new Date(m.sent_at * 1000).toLocaleString()));
      tr.appendChild(text("td", m.receive_count, "n"));
      tr.appendChild(text("td", m.body, "body"));
      return tr;
    }),
  );
  document.getElementById("peek-queue").textContent = queue.name;
  const section = document.getElementById("peek");
  section.hidden = false;
  section.dataset.count = String((data.messages || []).length);
}

document.getElementById("peek-close").addEventListener("click", () => {
  document.getElementById("peek").hidden = true;
});
refresh();
setInterval(refresh, REFRESH_MS);
