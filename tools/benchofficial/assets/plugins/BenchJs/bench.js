// bench.py in Node.js: reads its JSON arguments to the end of stdin, parses
// them and answers.
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const args = JSON.parse(input || '{}');
  console.log(JSON.stringify({ status: 'success', result: 'pong', args: Object.keys(args).length }));
});
