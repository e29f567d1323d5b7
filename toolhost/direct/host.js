'use strict';
// vcpnode's Node.js host for one VCP "direct" plugin (service or
// hybridservice). vcpnode starts one of these per plugin, in the plugin's
// folder with the plugin's environment, and talks to it in newline-delimited
// JSON over fd 3 (a socket pair), or on Windows, which passes no fd 3, over a
// loopback connection to VCPNODE_DIRECT_CHANNEL opened with the one-time
// VCPNODE_DIRECT_TOKEN: plugins print to stdout and stderr freely, so those
// only go to vcpnode's log.
//
// vcpnode → host: {t:"load",script,type,config,name} once, then {t:"init"};
//   {t:"call",id,args,ctx}; {t:"cancel",id,reason}; {t:"shutdown"}.
// host → vcpnode: {t:"imported",exports} or {t:"failed",error,stage};
//   {t:"ready"}; {t:"result",id,value} or {t:"result",id,error};
//   {t:"log",level,msg}; {t:"bye"} after shutdown.

const net = require('net');
const { pathToFileURL } = require('url');

function openChannel() {
  const addr = process.env.VCPNODE_DIRECT_CHANNEL;
  const token = process.env.VCPNODE_DIRECT_TOKEN;
  // Neither the plugin nor what it starts needs them.
  delete process.env.VCPNODE_DIRECT_CHANNEL;
  delete process.env.VCPNODE_DIRECT_TOKEN;
  if (!addr) return new net.Socket({ fd: 3, readable: true, writable: true });
  const i = addr.lastIndexOf(':');
  const s = net.connect({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) });
  s.write(token + '\n'); // queued until connected
  return s;
}

const chan = openChannel();
let plugin = null; // the module's export object
let pluginName = '';
const calls = new Map(); // id → AbortController
let shuttingDown = false;

function send(msg) {
  let line;
  try {
    line = JSON.stringify(msg);
  } catch (e) {
    if (msg.t !== 'result') return;
    line = JSON.stringify({ t: 'result', id: msg.id, error: 'the result cannot be sent as JSON: ' + errText(e) });
  }
  chan.write(line + '\n');
}

function log(level, text) {
  send({ t: 'log', level, msg: String(text).slice(0, 4096) });
}

function errText(e) {
  if (e instanceof Error) return e.message || e.name || String(e);
  if (typeof e === 'string') return e;
  try {
    const s = JSON.stringify(e);
    if (s !== undefined) return s;
  } catch (_) { /* fall through */ }
  return String(e);
}

// The module's functions are called on the object that holds them, so
// classes exported as instances keep their `this`.
function pick(ns) {
  const hasFns = (o) => o && (typeof o === 'object' || typeof o === 'function') &&
    (typeof o.processToolCall === 'function' || typeof o.initialize === 'function' ||
      typeof o.shutdown === 'function' || typeof o.registerRoutes === 'function');
  // CommonJS: default is module.exports. ESM: named exports, or an object
  // exported as default.
  if (hasFns(ns.default)) return ns.default;
  return ns;
}

async function load(msg) {
  pluginName = msg.name;
  let ns;
  try {
    ns = await import(pathToFileURL(msg.script).href);
  } catch (e) {
    send({ t: 'failed', stage: 'load', error: errText(e), code: e && e.code });
    return;
  }
  plugin = pick(ns);
  const exports = ['initialize', 'processToolCall', 'shutdown', 'registerRoutes', 'registerApiRoutes']
    .filter((k) => typeof plugin[k] === 'function');
  send({ t: 'imported', exports });
  pendingConfig = msg.config || {};
}

let pendingConfig = {};

async function init() {
  if (typeof plugin.initialize === 'function') {
    const dependencies = {
      vcpLogFunctions: {
        pushVcpLog: (data) => log('info', 'pushVcpLog: ' + errText(data)),
        pushVcpInfo: (data) => log('info', 'pushVcpInfo: ' + errText(data)),
      },
    };
    try {
      await plugin.initialize(pendingConfig, dependencies);
    } catch (e) {
      send({ t: 'failed', stage: 'initialize', error: errText(e) });
      return;
    }
  }
  send({ t: 'ready' });
}

function abortError(reason) {
  const names = { timeout: 'TimeoutError', cancelled: 'AbortError', shutdown: 'AbortError' };
  const texts = {
    timeout: 'the call timed out',
    cancelled: 'the call was cancelled by the server',
    shutdown: 'the plugin is shutting down',
  };
  const e = new Error(texts[reason] || 'the call was aborted');
  e.name = names[reason] || 'AbortError';
  return e;
}

async function call(msg) {
  const ac = new AbortController();
  calls.set(msg.id, ac);
  const context = { pluginName, signal: ac.signal, requestIp: undefined, sourceNode: 'vcpnode' };
  if (msg.ctx !== undefined && msg.ctx !== null) context._vcpContext = msg.ctx;
  try {
    const value = await plugin.processToolCall(msg.args || {}, context);
    send({ t: 'result', id: msg.id, value: value === undefined ? null : value });
  } catch (e) {
    send({ t: 'result', id: msg.id, error: errText(e) });
  } finally {
    calls.delete(msg.id);
  }
}

async function shutdown() {
  shuttingDown = true;
  for (const ac of calls.values()) ac.abort(abortError('shutdown'));
  if (plugin && typeof plugin.shutdown === 'function') {
    try {
      await plugin.shutdown();
    } catch (e) {
      log('warn', 'shutdown() failed: ' + errText(e));
    }
  }
  chan.end(JSON.stringify({ t: 'bye' }) + '\n', () => process.exit(0));
}

function handle(msg) {
  switch (msg.t) {
    case 'load': return load(msg);
    case 'init': return init();
    case 'call': return call(msg);
    case 'cancel': {
      const ac = calls.get(msg.id);
      if (ac) ac.abort(abortError(msg.reason));
      return undefined;
    }
    case 'shutdown': return shutdown();
    default:
      log('warn', 'unknown message ' + JSON.stringify(msg.t));
      return undefined;
  }
}

let buf = '';
chan.setEncoding('utf8');
chan.on('data', (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (!line) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      log('warn', 'bad message from vcpnode: ' + errText(e));
      continue;
    }
    Promise.resolve(handle(msg)).catch((e) => log('error', 'host: ' + errText(e)));
  }
});
// vcpnode went away: nothing can be answered any more.
chan.on('end', () => { if (!shuttingDown) process.exit(0); });
chan.on('error', () => process.exit(0));

process.on('unhandledRejection', (e) => {
  log('warn', 'unhandled promise rejection in the plugin: ' + errText(e));
});
process.on('uncaughtException', (e) => {
  log('error', 'uncaught exception in the plugin: ' + errText(e));
  // The module's state is unknown now: let vcpnode restart it.
  setImmediate(() => process.exit(70));
});
