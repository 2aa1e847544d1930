// optrules web app: plain JavaScript, no external assets.
"use strict";

const $ = (id) => document.getElementById(id);
let table = null;        // the chosen table's info
let current = null;      // the run shown
let source = null;       // its EventSource
let points = [];         // its progress points

function message(text, ok = false) {
  $("message").textContent = text || "";
  $("message").className = ok ? "ok" : "";
}

async function api(path, options = {}) {
  const response = await fetch(path, options);
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) throw new Error((body && body.error) || `${response.status} ${response.statusText}`);
  return body;
}

function fmt(x, digits = 6) {
  return x === null || x === undefined || Number.isNaN(x) ? "-" : Number(x).toFixed(digits);
}

// -- data --------------------------------------------------------------------------------------------
function showTable(info) {
  table = info;
  const missing = Object.keys(info.missing);
  $("table-info").textContent = `${info.name}: ${info.n_rows} rows, ${info.columns.length} columns` +
    (missing.length ? ` (missing values in ${missing.slice(0, 20).join(", ")}${missing.length > 20 ? `, and ${missing.length - 20} more columns` : ""})` : "");
  const target = $("target");
  target.innerHTML = "";
  if (!info.target) {  // no column named like a target: the user chooses (none is taken for granted)
    const choose = document.createElement("option");
    choose.value = "";
    choose.textContent = "choose the target column";
    target.appendChild(choose);
  }
  for (const column of info.columns) {
    const option = document.createElement("option");
    option.value = option.textContent = column;
    target.appendChild(option);
  }
  target.value = info.target ?? "";
  target.disabled = false;
  const sensitive = $("sensitive");
  sensitive.innerHTML = '<option value="">(choose)</option>';
  for (const column of info.columns) {
    const option = document.createElement("option");
    option.value = option.textContent = column;
    sensitive.appendChild(option);
  }
  $("start").disabled = false;
  const shown = info.columns.slice(0, info.preview_columns ?? info.columns.length);
  let html = "<table><thead><tr>" + shown.map((c) => `<th>${escapeHtml(c)}</th>`).join("") +
    (shown.length < info.columns.length ? `<th>(${info.columns.length - shown.length} more columns)</th>` : "") + "</tr></thead><tbody>";
  for (const row of info.preview) {
    html += "<tr>" + row.map((v) => `<td>${v === null ? "<em>missing</em>" : escapeHtml(String(v))}</td>`).join("") + "</tr>";
  }
  $("preview").innerHTML = html + "</tbody></table>";
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

$("file").addEventListener("change", async () => {
  const file = $("file").files[0];
  if (!file) return;
  $("dataset").value = "";
  message("uploading " + file.name + " ...", true);
  const form = new FormData();
  form.append("file", file);
  try {
    showTable(await api("/api/uploads", { method: "POST", body: form }));
    message("");
  } catch (error) {
    table = null;
    $("start").disabled = true;
    $("target").disabled = true;
    $("preview").innerHTML = "";
    $("table-info").textContent = "";
    message(error.message);
  }
});

$("dataset").addEventListener("change", async () => {
  const key = $("dataset").value;
  if (!key) return;
  $("file").value = "";
  try { showTable(await api("/api/tables/" + encodeURIComponent(key))); message(""); }
  catch (error) { message(error.message); }
});

// -- model families: the form's fields for each come from the server's registry -------------------------
let families = [];  // [{name, title, parameters: [{name, label, kind, default, min, max, choices}]}]

function familyField(parameter) {
  const label = document.createElement("label");
  const text = document.createElement("span");
  let input;
  if (parameter.kind === "choice") {
    input = document.createElement("select");
    for (const [value, shown] of parameter.choices) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = shown.replaceAll("_", " ");
      input.appendChild(option);
    }
    input.value = parameter.default ?? "";
  } else {
    input = document.createElement("input");
    if (parameter.kind === "flag") {
      input.type = "checkbox";
      input.checked = Boolean(parameter.default);
      label.className = "check";
    } else if (parameter.kind === "class") {
      input.type = "text";
      input.placeholder = "default: the second class";
    } else if (parameter.kind === "names") {
      input.type = "text";
      input.placeholder = "e.g. sex=Male, race (comma-separated)";
    } else {
      input.type = "number";
      input.step = parameter.kind === "integer" ? "1" : "any";
      input.value = parameter.default ?? "";
      if (parameter.default === null) input.placeholder = "no limit";
      if (parameter.min !== null) input.min = parameter.min;
      if (parameter.max !== null) input.max = parameter.max;
    }
  }
  input.id = parameter.name;
  if (parameter.kind === "flag") { label.append(input, text); } else { label.append(text, input); }
  label.dataset.fields = "{}";
  return label;
}

function buildFamilies(list) {
  families = list;
  const fields = $("family-fields");
  for (const family of list) {
    const option = document.createElement("option");
    option.value = family.name;
    option.textContent = family.title;
    $("model").appendChild(option);
    for (const parameter of family.parameters) {
      // a setting two families share (lambda, the class a model describes) is one field, with each
      // family's label, default and range
      const label = $(parameter.name) ? $(parameter.name).closest("label") : fields.appendChild(familyField(parameter));
      const shared = JSON.parse(label.dataset.fields);
      shared[family.name] = { label: parameter.label, default: parameter.default, min: parameter.min, max: parameter.max };
      label.dataset.fields = JSON.stringify(shared);
    }
  }
  showFamilyFields();
}

function chosenFamily() {
  return families.find((family) => family.name === $("model").value);
}

let shownFamily = null;

function showFamilyFields() {
  const model = $("model").value;
  for (const label of $("family-fields").children) {
    const shared = JSON.parse(label.dataset.fields);
    label.classList.toggle("hidden", !(model in shared));
    if (!(model in shared)) continue;
    const field = shared[model];
    const input = label.querySelector("input, select");
    label.querySelector("span").textContent = field.label + " ";
    if (input.type !== "number") continue;
    // a value typed stays; a default left alone becomes this family's (lambda: 0.01, falling lists 0.001)
    const before = shared[shownFamily];
    if (before && String(input.value) === String(before.default ?? "")) input.value = field.default ?? "";
    for (const end of ["min", "max"]) {
      if (field[end] === null) input.removeAttribute(end); else input[end] = field[end];
    }
  }
  shownFamily = model;
  showSensitive();
}
$("model").addEventListener("change", showFamilyFields);

// the sensitive column: asked for when the family's fairness constraint is chosen
function fairnessChosen() {
  const family = chosenFamily();
  return Boolean(family && family.parameters.some((p) => p.name === "fairness") && $("fairness") && $("fairness").value);
}
function showSensitive() { $("sensitive-label").classList.toggle("hidden", !fairnessChosen()); }
document.addEventListener("change", (event) => { if (event.target.id === "fairness") showSensitive(); });

// -- runs --------------------------------------------------------------------------------------------
function parameters() {
  const params = {};
  const family = chosenFamily();
  const own = family ? family.parameters.map((parameter) => parameter.name) : [];
  for (const id of ["time_limit", "max_memory", "max_card", "thresholds", "negations", "missing_as_category", ...own]) {
    params[id] = $(id).type === "checkbox" ? $(id).checked : $(id).value;
  }
  return params;
}

$("start").addEventListener("click", async () => {
  if (!table) return;
  if (!$("target").value) {
    message("choose the target column (the class to predict) first");
    return;
  }
  if (fairnessChosen() && !$("sensitive").value) {
    message("choose the sensitive column (the two groups the fairness constraint compares) first");
    return;
  }
  try {
    const run = await api("/api/runs", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ table: table.key, target: $("target").value, model: $("model").value, params: parameters(),
                             sensitive: fairnessChosen() ? $("sensitive").value : "" }),
    });
    message(`run #${run.id} queued`, true);
    await refreshRuns();
    watch(run.id);
  } catch (error) {
    message(error.message);
  }
});

async function refreshRuns() {
  const runs = await api("/api/runs");
  const body = $("runs").querySelector("tbody");
  body.innerHTML = "";
  for (const run of runs) {
    const row = document.createElement("tr");
    row.dataset.id = run.id;
    if (current === run.id) row.className = "selected";
    row.innerHTML = `<td>${run.id}</td><td>${escapeHtml(run.source)}</td><td>${escapeHtml(run.target)}</td>` +
      `<td>${run.kind === "rashomon" ? `Rashomon set of #${run.parent}` : run.kind === "frontier" ? `trade-off curve of #${run.parent}` : run.model}</td><td class="run-status">${run.status}</td><td></td>`;
    if (run.status === "queued" || run.status === "running") {
      const button = document.createElement("button");
      button.className = "small secondary";
      button.textContent = "cancel";
      button.addEventListener("click", (event) => { event.stopPropagation(); cancel(run.id); });
      row.lastChild.appendChild(button);
    }
    row.addEventListener("click", () => watch(run.id));
    body.appendChild(row);
  }
}

async function cancel(id) {
  try { await api(`/api/runs/${id}/cancel`, { method: "POST" }); await refreshRuns(); }
  catch (error) { message(error.message); }
}
$("cancel").addEventListener("click", () => current && cancel(current));

async function watch(id) {
  if (source) source.close();
  current = id;
  points = [];
  $("run").classList.remove("hidden");
  $("result").classList.add("hidden");
  $("rashomon-result").classList.add("hidden");
  $("frontier-result").classList.add("hidden");
  $("run-title").textContent = `Run #${id}`;
  draw();
  const detail = await api(`/api/runs/${id}`);
  points = detail.points.slice();
  showStatus(detail);
  showPoint(points[points.length - 1]);
  draw();
  if (["done", "failed", "cancelled"].includes(detail.status)) { showResult(detail); return; }
  let seen = points.length;
  source = new EventSource(`/api/runs/${id}/events`);
  source.addEventListener("progress", (event) => {
    if (seen > 0) { seen -= 1; return; }  // already drawn from the detail
    const point = JSON.parse(event.data);
    points.push(point);
    showPoint(point);
    draw();
  });
  source.addEventListener("status", (event) => { showStatus(JSON.parse(event.data)); refreshRuns(); });
  source.addEventListener("end", async () => {
    source.close();
    source = null;
    const final = await api(`/api/runs/${id}`);
    points = final.points.slice();
    draw();
    showStatus(final);
    showResult(final);
    refreshRuns();
  });
  source.onerror = () => { /* the browser reconnects by itself; the end event closes it */ };
  refreshRuns();
}

function showStatus(run) {
  const element = $("run-status");
  element.textContent = run.status + (run.message ? ": " + run.message : "");
  element.className = "status " + run.status;
  // an enumeration has no bound to trace; a curve's fits each have their own
  $("progress").classList.toggle("hidden", run.kind === "rashomon" || run.kind === "frontier");
  $("run-title").textContent = run.kind === "rashomon" ? `Run #${run.id}: near-optimal lists of run #${run.parent}`
    : run.kind === "frontier" ? `Run #${run.id}: the trade-off curve of run #${run.parent}` : `Run #${run.id}`;
  $("cancel").classList.toggle("hidden", !(run.status === "queued" || run.status === "running"));
}

function showPoint(point) {
  if (!point) return;
  $("s-objective").textContent = fmt(point.objective);
  $("s-lower").textContent = fmt(point.lower_bound);
  $("s-gap").textContent = fmt(Math.max(0, point.objective - point.lower_bound));
  $("s-queue").textContent = point.queue.toLocaleString();
  $("s-remaining").textContent = point.log10_remaining !== null ? fmt(point.log10_remaining, 2)
    : (point.queue === 0 ? "nothing left" : "-");
  $("s-time").textContent = fmt(point.time, 2);
}

function showResult(run) {
  if (!run.result) return;
  if (run.kind === "rashomon") { showRashomon(run); return; }
  if (run.kind === "frontier") { showFrontier(run); return; }
  $("result").classList.remove("hidden");
  $("model-text").textContent = run.result.text;
  $("certificate-text").textContent = run.result.certificate_text;
  $("accuracy").textContent = `training accuracy ${fmt(run.result.training_accuracy, 4)}, ${run.result.n_rules} rules`;
  $("download").href = `/api/runs/${run.id}/model.json`;
  $("download").setAttribute("download", `optrules-run-${run.id}.json`);
  offerRashomon(run);
  $("frontier-form").classList.toggle("hidden", !(run.sensitive && run.status === "done"));
  $("frontier-form").dataset.run = run.id;
}

// -- the trade-off curve of a fit under a fairness constraint --------------------------------------------
$("f-start").addEventListener("click", async () => {
  const parent = $("frontier-form").dataset.run;
  const params = { bounds: $("f-bounds").value, time_limit: $("f-time").value, max_memory: $("max_memory").value };
  try {
    const run = await api(`/api/runs/${parent}/frontier`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ params }),
    });
    message(`run #${run.id} queued: the certified optimum under each bound of run #${parent}'s constraint`, true);
    await refreshRuns();
    watch(run.id);
  } catch (error) { message(error.message); }
});

function showFrontier(run) {
  const r = run.result;
  $("frontier-result").classList.remove("hidden");
  $("f-title").textContent = `The trade-off curve: ${r.metric.replaceAll("_", " ")}`;
  $("f-points").innerHTML = "<thead><tr><th>bound</th><th>status</th><th>objective</th><th>lower bound</th>" +
    "<th>gap achieved</th><th>training accuracy</th><th>rules</th><th>searched</th></tr></thead><tbody>" +
    r.points.map((p) => "<tr>" + cell(p.max_unfairness, true) + cell(p.status) + cell(fmt(p.objective), true) +
      cell(fmt(p.lower_bound), true) + cell(fmt(p.unfairness, 4), true) + cell(fmt(p.training_accuracy, 4), true) +
      cell(p.rules, true) + cell(p.searched ? "yes" : "no (a looser optimum meets it)") + "</tr>").join("") + "</tbody>";
  $("f-lists").textContent = r.points.map((p) => `at most ${p.max_unfairness}:\n${p.text}`).join("\n\n");
  drawFrontier(r.points);
}

function drawFrontier(rows) {
  const svg = $("f-chart");
  const W = 640, H = 260, L = 60, R = 12, T = 12, B = 36;
  const xs = rows.map((p) => p.unfairness);
  const ys = rows.flatMap((p) => [p.objective, 1 - p.training_accuracy]).filter(Number.isFinite);
  let xMin = Math.min(...xs), xMax = Math.max(...xs), yMin = Math.min(...ys), yMax = Math.max(...ys);
  const pad = (lo, hi) => (hi - lo < 1e-9 ? [lo - 0.01, hi + 0.01] : [lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)]);
  [xMin, xMax] = pad(xMin, xMax);
  [yMin, yMax] = pad(yMin, yMax);
  const x = (v) => L + (W - L - R) * ((v - xMin) / (xMax - xMin));
  const y = (v) => T + (H - T - B) * (1 - (v - yMin) / (yMax - yMin));
  let html = `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#ccc"/>`;
  for (let k = 0; k <= 4; k++) {
    const v = yMin + (yMax - yMin) * k / 4, u = xMin + (xMax - xMin) * k / 4;
    html += `<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#555">${v.toFixed(3)}</text>` +
      `<text x="${x(u)}" y="${H - B + 16}" text-anchor="middle" font-size="11" fill="#555">${u.toFixed(3)}</text>`;
  }
  const line = (values, color, dash) => `<path d="${rows.map((p, i) => `${i ? "L" : "M"}${x(p.unfairness)},${y(values[i])}`).join(" ")}" ` +
    `fill="none" stroke="${color}" stroke-width="2"${dash ? ' stroke-dasharray="5 3"' : ""}/>` +
    rows.map((p, i) => `<circle cx="${x(p.unfairness)}" cy="${y(values[i])}" r="3.5" fill="${color}"><title>bound ${p.max_unfairness}: ` +
      `gap ${fmt(p.unfairness, 4)}, ${fmt(values[i], 4)}</title></circle>`).join("");
  html += line(rows.map((p) => p.objective), "#1d3557", false) + line(rows.map((p) => 1 - p.training_accuracy), "#e07a1f", true);
  html += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle" font-size="12" fill="#333">gap between the groups of each bound's optimum</text>`;
  svg.innerHTML = html;
}

// -- the Rashomon set of a finished rule list ------------------------------------------------------------
async function offerRashomon(run) {
  const form = $("rashomon-form");
  const fitted = families.find((family) => family.name === run.model);
  form.classList.toggle("hidden", !(fitted && fitted.rashomon && run.status === "done"));
  if (form.classList.contains("hidden")) return;
  form.dataset.run = run.id;
  const group = $("r-group");
  group.innerHTML = '<option value="">(none)</option>';
  try {
    const info = await api("/api/tables/" + encodeURIComponent(run.table));
    for (const column of info.columns.filter((c) => c !== run.target)) {
      const option = document.createElement("option");
      option.value = option.textContent = column;
      group.appendChild(option);
    }
  } catch (error) { /* the table is gone: no group choice */ }
}

$("r-start").addEventListener("click", async () => {
  const parent = $("rashomon-form").dataset.run;
  const params = { epsilon_percent: $("r-epsilon").value, group: $("r-group").value,
                   time_limit: $("time_limit").value, max_memory: $("max_memory").value };
  try {
    const run = await api(`/api/runs/${parent}/rashomon`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ params }),
    });
    message(`run #${run.id} queued: every list within ${params.epsilon_percent}% of run #${parent}'s optimum`, true);
    await refreshRuns();
    watch(run.id);
  } catch (error) { message(error.message); }
});

function cell(text, number = false) {
  return `<td${number ? ' class="number"' : ""}>${escapeHtml(String(text))}</td>`;
}

function showRashomon(run) {
  const r = run.result;
  $("rashomon-result").classList.remove("hidden");
  const state = r.complete ? "certified complete: every list within epsilon is counted"
    : `not complete (${r.status}): every list of objective below ${fmt(r.complete_below, 9)} is counted`;
  $("r-summary").textContent = `${r.size.toLocaleString()} rule lists with objective <= R* + epsilon = ` +
    `${fmt(r.optimum, 9)} + ${fmt(r.epsilon, 9)}; ${state}.` +
    (r.mined_all_rules ? "" : " Over the mined antecedents (rules rarer than the mining floor are not considered).");
  drawHistogram(r);
  const sample = r.sampled ? ` (a uniform sample of ${r.analysed.toLocaleString()} members)` : "";
  $("r-multiplicity").textContent = `Predictive multiplicity on the training rows${sample}: ambiguity ` +
    `${(100 * r.multiplicity.ambiguity).toFixed(1)}% (rows some member predicts differently from the optimal list), ` +
    `discrepancy ${(100 * r.multiplicity.discrepancy).toFixed(1)}% (most rows one member changes).` +
    (r.analysis ? ` Not exact: ${r.analysis}.` : "");
  $("r-members").textContent = r.members.map((m) => m.text + (m.orderings > 1
    ? `\n(and ${m.orderings - 1} other ordering${m.orderings > 2 ? "s" : ""} of these rules${r.sampled ? " in the sample" : ""})` : "")).join("\n\n");
  $("r-features").innerHTML = "<thead><tr><th>feature</th><th>members" + sample + "</th><th>share</th><th>in the optimal list</th></tr></thead><tbody>" +
    r.features.map((f) => "<tr>" + cell(f.feature) + cell(f.members.toLocaleString(), true) +
      cell((100 * f.share).toFixed(1) + "%", true) + cell(f.in_optimal_list ? "yes" : "") + "</tr>").join("") + "</tbody>";
  $("r-rates-block").classList.toggle("hidden", !r.rates);
  if (r.rates) {
    $("r-rates-title").textContent = `Rates by ${r.group} over the members${sample}`;
    const bar = (row) => {
      if (row.min === null || row.max === null) return "<td>-</td>";
      const at = (v) => `${(100 * v).toFixed(1)}%`;
      return `<td><div class="range" title="min ${fmt(row.min, 3)}, optimal ${fmt(row.optimal, 3)}, max ${fmt(row.max, 3)}">` +
        `<div class="span" style="left:${at(row.min)};width:${at(row.max - row.min)}"></div>` +
        (row.optimal === null ? "" : `<div class="dot" style="left:${at(row.optimal)}"></div>`) + "</div></td>";
    };
    $("r-rates").innerHTML = "<thead><tr><th>group</th><th>rate</th><th>rows</th><th>min</th><th>optimal list</th><th>max</th><th>range (0 to 1)</th></tr></thead><tbody>" +
      r.rates.map((row) => "<tr>" + cell(row.group ?? "(missing)") + cell(row.rate.replaceAll("_", " ")) + cell(row.rows.toLocaleString(), true) +
        cell(fmt(row.min, 3), true) + cell(fmt(row.optimal, 3), true) + cell(fmt(row.max, 3), true) + bar(row) + "</tr>").join("") + "</tbody>";
  }
}

function drawHistogram(r) {
  const svg = $("r-histogram");
  const W = 640, H = 220, L = 60, R = 30, T = 12, B = 36;
  const edges = r.histogram.edges, counts = r.histogram.counts;
  const xMin = edges[0], xMax = edges[edges.length - 1], top = Math.max(1, ...counts);
  const x = (v) => L + (W - L - R) * ((v - xMin) / Math.max(xMax - xMin, 1e-12));
  const y = (c) => T + (H - T - B) * (1 - c / top);
  let html = `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#ccc"/>`;
  counts.forEach((c, i) => {
    if (c > 0) html += `<rect x="${x(edges[i])}" y="${y(c)}" width="${Math.max(1, x(edges[i + 1]) - x(edges[i]) - 1)}" height="${y(0) - y(c)}" fill="#457b9d"><title>${c.toLocaleString()} members, objective ${fmt(edges[i], 6)} to ${fmt(edges[i + 1], 6)}</title></rect>`;
  });
  for (let k = 0; k <= 4; k++) {
    const c = top * k / 4, v = xMin + (xMax - xMin) * k / 4;
    html += `<text x="${L - 6}" y="${y(c) + 4}" text-anchor="end" font-size="11" fill="#555">${Math.round(c).toLocaleString()}</text>` +
      `<text x="${x(v)}" y="${H - B + 16}" text-anchor="middle" font-size="11" fill="#555">${v.toFixed(4)}</text>`;
  }
  html += `<line x1="${x(r.optimum)}" x2="${x(r.optimum)}" y1="${T}" y2="${H - B}" stroke="#1d3557" stroke-dasharray="4 3"/>`;
  if (!r.complete && r.complete_below !== null && r.complete_below < xMax) {
    html += `<line x1="${x(r.complete_below)}" x2="${x(r.complete_below)}" y1="${T}" y2="${H - B}" stroke="#c1121f" stroke-dasharray="2 2"><title>complete below ${fmt(r.complete_below, 9)}</title></line>`;
  }
  html += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle" font-size="12" fill="#333">objective (members per bin; dashed: R*)</text>`;
  svg.innerHTML = html;
}

// -- the chart: best objective and lower bound against time (the paper's Figure 14) ------------------
function draw() {
  const svg = $("chart");
  const W = 640, H = 260, L = 60, R = 12, T = 12, B = 36;
  const finite = points.filter((p) => Number.isFinite(p.objective) && Number.isFinite(p.lower_bound));
  let html = `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#ccc"/>`;
  if (finite.length === 0) {
    svg.innerHTML = html + `<text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#888">waiting for the search ...</text>`;
    return;
  }
  const tMax = Math.max(...finite.map((p) => p.time), 1e-3);
  const values = finite.flatMap((p) => [p.objective, Math.max(p.lower_bound, 0)]);
  let yMin = Math.min(...values), yMax = Math.max(...values);
  if (yMax - yMin < 1e-9) { yMin -= 0.01; yMax += 0.01; }
  const x = (t) => L + (W - L - R) * (t / tMax);
  const y = (v) => T + (H - T - B) * (1 - (v - yMin) / (yMax - yMin));
  const step = (key) => finite.map((p, i) => {
    const v = key === "lower_bound" ? Math.max(p[key], 0) : p[key];
    const prev = i === 0 ? v : (key === "lower_bound" ? Math.max(finite[i - 1][key], 0) : finite[i - 1][key]);
    return (i === 0 ? `M${x(p.time)},${y(v)}` : `L${x(p.time)},${y(prev)} L${x(p.time)},${y(v)}`);
  }).join(" ");
  for (let k = 0; k <= 4; k++) {
    const v = yMin + (yMax - yMin) * k / 4;
    html += `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>` +
      `<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#555">${v.toFixed(3)}</text>`;
    const t = tMax * k / 4;
    html += `<text x="${x(t)}" y="${H - B + 16}" text-anchor="middle" font-size="11" fill="#555">${t.toFixed(t < 10 ? 2 : 0)}</text>`;
  }
  html += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle" font-size="12" fill="#333">time (s)</text>`;
  html += `<path d="${step("objective")}" fill="none" stroke="#1d3557" stroke-width="2.5"/>`;
  html += `<path d="${step("lower_bound")}" fill="none" stroke="#e07a1f" stroke-width="2.5"/>`;
  svg.innerHTML = html;
}

// -- start -------------------------------------------------------------------------------------------
async function showLimits() {
  const limits = await api("/api/limits");
  $("time_limit").max = limits.time_limit.max;
  $("time_limit").value = limits.time_limit.default;
  $("max_memory").value = limits.max_memory_mb.default;
  $("max_memory").max = limits.max_memory_mb.max;
  $("limits").textContent = `Each run stops at its time limit (default ${limits.time_limit.default} s) and keeps its ` +
    `search within its memory limit (default ${limits.max_memory_mb.default} MB), returning the best model found ` +
    `with its certified gap. Uploads: at most ${limits.max_upload_mb} MB each.`;
}

(async function init() {
  draw();
  try {
    buildFamilies(await api("/api/families"));
    await showLimits();
    for (const dataset of await api("/api/datasets")) {
      const option = document.createElement("option");
      option.value = dataset.key;
      option.textContent = `${dataset.name}: ${dataset.description}`;
      $("dataset").appendChild(option);
    }
    await refreshRuns();
  } catch (error) { message(error.message); }
  setInterval(refreshRuns, 3000);
})();
