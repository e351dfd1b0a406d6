#!/usr/bin/env node
// Sums up V8 CPU profiles (`node --cpu-prof`, or a benchmark run with SWITCHYARD_CPU_PROF=<dir>):
// for each profile, the busy time by package (node_modules/<pkg>, the project's own code, node
// internals, GC) and the functions with the most self time.
//   node tools/cpu-profile.js <dir or .cpuprofile>... [--top N] [--from-s S --to-s S] [--callers FN [--depth N]]
//                             [--inclusive] [--timeline]
// --from-s/--to-s keep only the samples of that window (seconds from the profile's start), so the
// load phase of a benchmark is read without its start-up; --timeline prints the busy milliseconds of
// each second, to find that window. --inclusive ranks functions by the time spent in them and in
// what they called (each sample counted once per function on its stack; node's internals left
// out): which parts of the code the self times add up to.
'use strict';
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  args.splice(i, 2);
  return v;
};
const top = opt('--top', 25);
const fromS = opt('--from-s', 0);
const toS = opt('--to-s', Infinity);
// --depth N: how many frames of each caller chain --callers shows (3 unless told).
const depth = opt('--depth', 3);
// --callers <function name>: where that function's self time comes from (the nearest frames
// outside node's internals that led to it), e.g. `--callers writev` for who writes to sockets.
const callersAt = args.indexOf('--callers');
const callersOf = callersAt >= 0 ? args.splice(callersAt, 2)[1] : undefined;
const flag = (name) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const inclusive = flag('--inclusive');
const timeline = flag('--timeline');
if (!args.length) {
  console.error('usage: node tools/cpu-profile.js <dir or .cpuprofile>... [--top N] [--from-s S --to-s S]');
  process.exit(2);
}

function profiles(path) {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path)
    .flatMap((f) => profiles(join(path, f)))
    .filter((f) => f.endsWith('.cpuprofile'));
}

const root = process.cwd();
function place(url) {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  return 'switchyard';
}

/** Each node's parent in a profile's call tree, by id. */
function parentsOf(p) {
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return parent;
}

function summarise(file) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  /** Busy milliseconds in each second of the profile (--timeline). */
  const perSecond = [];
  let t = p.startTime;
  let total = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const s = (t - p.startTime) / 1e6;
    const dt = p.timeDeltas[i] / 1000;
    const node = byId.get(p.samples[i]);
    const name = node.callFrame.functionName;
    const busy = name !== '(idle)' && name !== '(program)';
    if (busy) perSecond[Math.floor(s)] = (perSecond[Math.floor(s)] ?? 0) + dt;
    if (s < fromS || s > toS) continue;
    if (!busy) {
      idle += dt;
      continue;
    }
    total += dt;
    self.set(node.id, (self.get(node.id) ?? 0) + dt);
  }
  if (timeline) {
    console.log(`\n${relative(root, file)}: busy ms in each second`);
    console.log(Array.from(perSecond, (ms, sec) => `${sec}s ${Math.round(ms ?? 0)}`).join('  '));
    return;
  }
  if (callersOf) {
    const parent = parentsOf(p);
    const frame = (n) => {
      const { functionName, url, lineNumber } = n.callFrame;
      return `${functionName || '(anonymous)'} ${url ? `${relative(root, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : ''}`;
    };
    const via = new Map();
    let sum = 0;
    for (const [id, ms] of self) {
      if (byId.get(id).callFrame.functionName !== callersOf) continue;
      sum += ms;
      const chain = [];
      for (let up = parent.get(id); up !== undefined && chain.length < depth; up = parent.get(up)) {
        const n = byId.get(up);
        if (n.callFrame.url && !n.callFrame.url.startsWith('node:')) chain.push(frame(n));
      }
      const key = chain.join(' < ') || '(no caller outside node)';
      via.set(key, (via.get(key) ?? 0) + ms);
    }
    console.log(
      `\n${relative(root, file)}: ${callersOf} ${sum.toFixed(0)} ms of ${total.toFixed(0)} ms busy, by caller:`,
    );
    for (const [k, ms] of [...via].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`  ${ms.toFixed(0).padStart(7)} ms  ${k}`);
    return;
  }
  if (inclusive) {
    const parent = parentsOf(p);
    const within = new Map();
    for (const [id, ms] of self) {
      const seen = new Set();
      for (let up = id; up !== undefined; up = parent.get(up)) {
        const { functionName, url, lineNumber } = byId.get(up).callFrame;
        // Node's own plumbing (timers, streams, the microtask loop) would head every list.
        if (functionName === '(root)' || functionName === 'runMicrotasks' || url.startsWith('node:'))
          continue;
        const where = url ? `${relative(root, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
        const key = `${functionName || '(anonymous)'} ${where}`;
        if (seen.has(key)) continue; // a recursive frame counts once
        seen.add(key);
        within.set(key, (within.get(key) ?? 0) + ms);
      }
    }
    console.log(`\n${relative(root, file)}: busy ${total.toFixed(0)} ms; by function, with what it called:`);
    for (const [k, ms] of [...within].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`  ${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
    return;
  }
  const pkgs = new Map();
  const fns = new Map();
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const pkg = functionName === '(garbage collector)' ? 'GC' : place(url);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + ms);
    const where = url ? `${relative(root, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`;
    fns.set(key, (fns.get(key) ?? 0) + ms);
  }
  const rows = (m) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, ms]) =>
          `  ${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`,
      )
      .join('\n');
  console.log(`\n${relative(root, file)}: busy ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms`);
  console.log(`by package:\n${rows(pkgs)}\nby function (self time):\n${rows(fns)}`);
}

for (const a of args) for (const f of profiles(a)) summarise(f);
