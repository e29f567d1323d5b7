#!/usr/bin/env node
// Runs the real VCPToolBox parser (modules/vcpLoop/toolCallParser.js of a
// VCPToolBox checkout) over the textproto corpus and writes what it finds,
// strict and fuzzy, next to each reply as NAME.server.json. The Go tests of
// toolhost/textproto compare their calls with these files.
//
//   node scripts/vcp-parser-oracle.js /path/to/VCPToolBox toolhost/textproto/testdata/corpus
'use strict';
const fs = require('fs');
const path = require('path');

const [root, corpus] = process.argv.slice(2);
if (!root || !corpus) {
  console.error('usage: vcp-parser-oracle.js VCPToolBox-dir corpus-dir');
  process.exit(2);
}
const parser = require(path.resolve(root, 'modules/vcpLoop/toolCallParser.js'));
const matcher = require(path.resolve(root, 'modules/vcpLoop/toolMarkerFuzzyMatcher.js'));

function run(text, fuzzy) {
  matcher.configure({ enabled: fuzzy });
  return parser.parse(text).map((c) => ({
    name: c.name,
    // Keys sorted: the Go side compares maps.
    args: Object.fromEntries(Object.keys(c.args).sort().map((k) => [k, c.args[k]])),
    archery: c.archery,
    archeryNoReply: c.archeryNoReply,
    markHistory: c.markHistory,
    river: c.river,
    vref: c.vref,
  }));
}

for (const name of fs.readdirSync(corpus).sort()) {
  if (!name.endsWith('.txt')) continue;
  const text = fs.readFileSync(path.join(corpus, name), 'utf8');
  const out = { strict: run(text, false), fuzzy: run(text, true) };
  const dest = path.join(corpus, name.replace(/\.txt$/, '.server.json'));
  fs.writeFileSync(dest, JSON.stringify(out, null, 2) + '\n');
  console.log(`${dest}: ${out.strict.length} strict, ${out.fuzzy.length} fuzzy`);
}

// With a third argument N, also writes corpus/../random.server.json: N
// replies made of marker fragments, each with the server's calls, for a
// differential test of the Go parser against the real one.
const n = Number(process.argv[4] || 0);
if (n > 0) {
  const tokens = [
    '<<<[TOOL_REQUEST]>>>', '<<<[END_TOOL_REQUEST]>>>', '<<[TOOL_REQUEST]>>', '<<<<[end_tool_request]>>>>',
    '「始」', '「末」', '{始}', '{末}', '「始}', '{末」', '「始ESCAPE」', '「末ESCAPE」', '{始escape}', '{末Escape」',
    '<<<[TOOL_REQUEST_ESCAPE]>>>', '<<<[END_TOOL_REQUEST_ESCAPE]>>>', '「始 x」', '「末 y}',
    'tool_name:', 'tool_name:「始」T「末」', 'a:', 'b:', 'x-y:', '中文:', 'valet:「始」V「末」', 'maid:', 'archery:', 'ink:', 'river:', 'vref:',
    '__proto__:', ',', ' ', '\n', '\r\n', '\t', '\u3000', '\u00a0', '\ufeff', '\u0085',
    '<think>', '</think>', '<thinking a="1">', '</ thinking >', '<thinker>', 'no_reply', 'true', 'mark_history',
    'word', 'Tool', '始', '末', '「', '」', '{', '}', '<', '>', ':', '😀',
  ];
  // A small deterministic generator (mulberry32), so the file is reproducible.
  let seed = Number(process.env.SEED || 20261123); // SEED=n makes another set
  const rand = () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const starts = ['<<<[TOOL_REQUEST]>>>', '<<<[TOOL_REQUEST]>>>', '<<[TOOL_REQUEST]>>', '<<<<<[tool_request]>>>', '<<<[TOOL_REQUEST]>'];
  const ends = ['<<<[END_TOOL_REQUEST]>>>', '<<<[END_TOOL_REQUEST]>>>', '<<<<[end_tool_request]>>>>', '<<[END_TOOL_REQUEST]>>', ''];
  const keys = ['tool_name', 'tool_name', 'a', 'b', 'x-y', '中文', 'valet', 'maid', 'archery', 'ink', 'river', 'vref', '__proto__', ' key '];
  const vstarts = ['「始」', '「始」', '{始}', '「始}', '{始」', '「始ESCAPE」', '{始escape}', '「始 note」', '「始', ''];
  const vends = ['「末」', '「末」', '{末}', '{末」', '「末ESCAPE」', '{末Escape」', '「末 x}', ''];
  const block = () => {
    let b = pick(starts) + pick(['\n', ' ', '']);
    if (rand() < 0.7) b += 'tool_name:' + (rand() < 0.6 ? '「始」T「末」' : pick(vstarts) + 'T' + pick(vends)) + pick([',', '\n', '']);
    const nf = Math.floor(rand() * 5);
    for (let f = 0; f < nf; f++) {
      let v = '';
      const nv = Math.floor(rand() * 3);
      for (let j = 0; j < nv; j++) v += pick(tokens);
      b += pick(keys) + pick([':', ' : ', ':', '']) + pick(vstarts) + pick(['T', 'no_reply', ' v ', 'true', 'mark_history', v]) + pick(vends) + pick([',\n', '\n', ', ', '']);
    }
    return b + pick(ends);
  };
  const cases = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(rand() * 6);
    let text = '';
    for (let j = 0; j < len; j++) text += rand() < 0.6 ? block() : pick(tokens);
    cases.push({ text, strict: run(text, false), fuzzy: run(text, true) });
  }
  const dest = path.join(corpus, '..', 'random.server.json');
  fs.writeFileSync(dest, JSON.stringify(cases) + '\n');
  console.log(`${dest}: ${n} replies`);
}
