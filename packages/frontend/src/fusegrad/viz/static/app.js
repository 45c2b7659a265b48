"use strict";
// The VIZ page: lists groups (schedules, kernels), draws one stage's graph as laid out by the
// server (fusegrad.viz.data), lists the rules that fired with links to their source lines.
const NW = 150, NH = 34, GX = 170, GY = 60;
const state = { groups: [], g: -1, s: -1, side: "output", page: 0, pages: 1 };
const $ = (id) => document.getElementById(id);
const svgEl = (tag, attrs) => {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
};
async function get(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(await r.text());
  return r.json();
}
function renderList(filter) {
  const box = $("groups");
  box.textContent = "";
  state.groups.forEach((g, gi) => {
    if (filter && !g.name.toLowerCase().includes(filter.toLowerCase())) return;
    const div = document.createElement("div");
    div.className = "group";
    const name = document.createElement("div");
    name.className = "group-name " + g.kind + (gi === state.g ? " active" : "");
    name.textContent = g.name + " (" + g.stages.length + ")";
    name.dataset.g = gi;
    name.onclick = () => select(gi, 0);
    div.appendChild(name);
    if (gi === state.g) g.stages.forEach((s, si) => {
      const st = document.createElement("div");
      st.className = "stage" + (si === state.s ? " active" : "");
      st.dataset.s = si;
      st.innerHTML = "";
      st.appendChild(document.createTextNode(s.name + " "));
      const n = document.createElement("span");
      n.className = "n";
      n.textContent = s.steps + " rules, " + s.ms + " ms";
      st.appendChild(n);
      st.onclick = () => select(gi, si);
      div.appendChild(st);
    });
    box.appendChild(div);
  });
}
async function select(g, s, page) {
  state.g = g; state.s = s; state.page = page || 0;
  $("timeline").hidden = true; $("graph-wrap").hidden = false;
  renderList($("search").value);
  const stage = await get(`/api/stage?g=${g}&s=${s}`);
  $("title").textContent = `${stage.group} / ${stage.name} (${stage.kind}), ${stage.n_steps} rules fired`;
  const rules = $("rules");
  rules.textContent = "";
  stage.steps.forEach((st, i) => {
    const d = document.createElement("div");
    d.className = "rule";
    d.dataset.i = i;
    d.appendChild(document.createTextNode(`${i}: ${st.before} \u2192 ${st.after} by `));
    if (st.source) {
      const a = document.createElement("a");
      const cut = st.source.lastIndexOf(":");
      a.href = `/source?path=${encodeURIComponent(st.source.slice(0, cut))}&line=${st.source.slice(cut + 1)}`;
      a.target = "_blank";
      a.textContent = st.rule;
      d.appendChild(a);
    } else d.appendChild(document.createTextNode(st.rule));
    d.onmouseenter = () => highlight(st.after_id);
    rules.appendChild(d);
  });
  if (stage.n_steps > stage.steps.length) rules.appendChild(document.createTextNode(`... ${stage.n_steps - stage.steps.length} more`));
  $("source").textContent = stage.info.source || "(no generated source for this group)";
  $("linear").textContent = stage.info.linear || "";
  await drawGraph();
}
function highlight(id) {
  document.querySelectorAll(".node.sel").forEach((n) => n.classList.remove("sel"));
  const n = document.querySelector(`.node[data-id="${id}"]`);
  if (n) n.classList.add("sel");
}
async function drawGraph() {
  const t0 = performance.now();
  const gr = await get(`/api/graph?g=${state.g}&s=${state.s}&side=${state.side}&page=${state.page}`);
  state.pages = gr.pages;
  const svg = $("graph");
  svg.textContent = "";
  let minx = 0, maxx = 0, maxy = 0;
  for (const n of gr.nodes) { minx = Math.min(minx, n.x); maxx = Math.max(maxx, n.x); maxy = Math.max(maxy, n.y); }
  const W = (maxx - minx + 1) * GX + 40, H = (maxy + 1) * GY + 40;
  svg.setAttribute("width", W); svg.setAttribute("height", H);
  const pos = new Map();
  for (const n of gr.nodes) pos.set(n.id, [(n.x - minx) * GX + 20, n.y * GY + 20]);
  const edges = svgEl("g", {});
  for (const [u, s] of gr.edges) {
    const [x1, y1] = pos.get(u), [x2, y2] = pos.get(s);
    edges.appendChild(svgEl("path", { class: "edge", d: `M${x1 + NW / 2},${y1 + NH} L${x2 + NW / 2},${y2}` }));
  }
  svg.appendChild(edges);
  const frag = document.createDocumentFragment();
  for (const n of gr.nodes) {
    const [x, y] = pos.get(n.id);
    const g = svgEl("g", { class: "node" + (n.new ? " new" : ""), transform: `translate(${x},${y})`, "data-id": n.id, "data-op": n.op });
    g.appendChild(svgEl("rect", { width: NW, height: NH, rx: 4 }));
    const t1 = svgEl("text", { x: 4, y: 13 }); t1.textContent = n.op + (n.hidden ? ` (+${n.hidden})` : "");
    const t2 = svgEl("text", { x: 4, y: 27 }); t2.textContent = (n.dtype + " " + n.arg).slice(0, 26);
    const tip = svgEl("title", {}); tip.textContent = `${n.op} ${n.dtype} ${n.arg}` + (n.rule != null ? `\nmade by rule #${n.rule}` : "");
    g.append(t1, t2, tip);
    frag.appendChild(g);
  }
  svg.appendChild(frag);
  $("title").dataset.drawn = gr.nodes.length;
  $("title").dataset.total = gr.total;
  $("title").dataset.ms = (performance.now() - t0).toFixed(1);
  $("title").textContent += ` | ${state.side}: ${gr.total} nodes, ${gr.changed} new vs the other side, page ${gr.page + 1}/${gr.pages}`;
}
async function showTimeline() {
  const ev = (await get("/api/profile")).filter((e) => e.ph === "X");
  $("graph-wrap").hidden = true; $("timeline").hidden = false;
  const svg = $("timeline-svg"); svg.textContent = "";
  if (!ev.length) { const t = svgEl("text", { x: 10, y: 20 }); t.textContent = "no profile events (run with PROFILE=1)"; svg.appendChild(t); svg.setAttribute("width", 400); svg.setAttribute("height", 40); return; }
  const t0 = Math.min(...ev.map((e) => e.ts)), t1 = Math.max(...ev.map((e) => e.ts + e.dur));
  const lanes = [...new Set(ev.map((e) => e.pid + " " + e.tid))].sort();
  const W = 1200, scale = (W - 200) / Math.max(1, t1 - t0);
  svg.setAttribute("width", W); svg.setAttribute("height", lanes.length * 24 + 20);
  lanes.forEach((l, i) => { const t = svgEl("text", { x: 2, y: i * 24 + 16 }); t.textContent = l; svg.appendChild(t); });
  for (const e of ev) {
    const r = svgEl("rect", { class: "span" + (e.cat === "host" || e.cat === "slice" ? " " + e.cat : ""), x: 200 + (e.ts - t0) * scale, y: lanes.indexOf(e.pid + " " + e.tid) * 24 + 4, width: Math.max(1, e.dur * scale), height: 16 });
    const tip = svgEl("title", {}); tip.textContent = `${e.name}${e.cat === "slice" ? ` slice ${e.args.slice}/${e.args.slices}` : ""} ${e.dur.toFixed(1)} us`; r.appendChild(tip);
    svg.appendChild(r);
  }
}
function step(d) {
  if (state.g < 0) return;
  const n = state.groups[state.g].stages.length;
  const s = state.s + d;
  if (s >= 0 && s < n) select(state.g, s);
}
$("prev").onclick = () => step(-1);
$("next").onclick = () => step(1);
$("page-prev").onclick = () => { if (state.page > 0) { state.page--; drawGraph(); } };
$("page-next").onclick = () => { if (state.page + 1 < state.pages) { state.page++; drawGraph(); } };
$("side-select").onchange = (e) => { state.side = e.target.value; state.page = 0; drawGraph(); };
$("search").oninput = (e) => renderList(e.target.value);
$("timeline-btn").onclick = showTimeline;
document.addEventListener("keydown", (e) => { if (e.target.tagName === "INPUT") return; if (e.key === "ArrowRight") step(1); if (e.key === "ArrowLeft") step(-1); });
(async () => {
  state.groups = await get("/api/groups");
  renderList("");
  document.body.dataset.ready = "1";
})();
