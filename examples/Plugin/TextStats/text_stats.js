// TextStats: a synchronous VCP plugin in plain Node.js (no packages).
// Reads one JSON object of string arguments on stdin, writes one JSON answer
// on stdout. Diagnostics go to stderr.
'use strict';

function count(text) {
  const words = text.match(/[\p{L}\p{N}'’-]+/gu) || [];
  const sentences = text.split(/[.!?。！？]+/u).filter((s) => s.trim() !== '');
  return {
    characters: [...text].length,
    words: words.length,
    lines: text === '' ? 0 : text.split(/\r?\n/).length,
    sentences: sentences.length,
  };
}

function topWords(text, limit) {
  const freq = new Map();
  for (const w of (text.toLowerCase().match(/[\p{L}\p{N}'’-]+/gu) || [])) {
    freq.set(w, (freq.get(w) || 0) + 1);
  }
  return [...freq.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([word, n]) => ({ word, count: n }));
}

function run(args) {
  const text = typeof args.text === 'string' ? args.text : '';
  const command = args.command || 'Count';
  console.error(`TextStats: command ${command}, ${text.length} characters`);
  if (command === 'Count') {
    const c = count(text);
    return `${c.characters} characters, ${c.words} words, ${c.lines} lines, ${c.sentences} sentences`;
  }
  if (command === 'TopWords') {
    const limit = Number.parseInt(args.limit || '5', 10);
    if (!(limit > 0 && limit <= 100)) throw new Error('limit must be a whole number from 1 to 100');
    const top = topWords(text, limit);
    return {
      content: [{ type: 'text', text: top.map((t) => `${t.word}: ${t.count}`).join('\n') || '(no words)' }],
      details: { top },
    };
  }
  throw new Error(`unknown command "${command}": use Count or TopWords`);
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  let answer;
  try {
    const args = input.trim() === '' ? {} : JSON.parse(input);
    answer = { status: 'success', result: run(args) };
  } catch (err) {
    answer = { status: 'error', error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(answer));
});
