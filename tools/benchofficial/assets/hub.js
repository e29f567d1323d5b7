// The benchmark's VCP main server: VCPToolBox's own WebSocketServer.js when
// BENCH_TOOLBOX names a checkout (with a stand-in plugin manager that only
// records registrations), else a minimal server with the same node-facing
// behaviour. Both nodes connect to this one process. A loopback HTTP API lets
// the measuring program list the connected nodes and time calls:
//   GET  /servers  -> [{serverId, serverName, tools: [names]}]
//   POST /run      {server, tool, args, count, inflight, gapMs, expectFileBytes, expectText}
//               -> {latMs: [...], wallMs, errors, firstError}
// latMs has every call's time, errors how many failed or answered wrongly.
'use strict';
const http = require('http');
const path = require('path');

const key = process.env.BENCH_KEY;
const toolbox = process.env.BENCH_TOOLBOX || '';
const registered = new Map(); // serverId -> tool names

const pluginManager = {
    registerDistributedTools(serverId, tools) { registered.set(serverId, tools.map(t => t.name)); },
    unregisterAllDistributedTools(serverId) { registered.delete(serverId); },
    updateDistributedStaticPlaceholders() {},
    getPlugin() { return undefined; },
    getServiceModule() { return null; },
    handleApprovalResponse() { return false; },
};

function miniServer() {
    // Only what a distributed node sees of VCPToolBox: the path with the key,
    // connection_ack, register_tools, execute_tool and tool_result.
    const WebSocket = require('ws');
    const servers = new Map();
    const pending = new Map();
    let next = 0;
    return {
        initialize(httpServer, config) {
            const wss = new WebSocket.Server({ noServer: true });
            httpServer.on('upgrade', (req, socket, head) => {
                const m = /^\/vcp-distributed-server\/VCP_Key=(.+)$/.exec(req.url);
                if (!m || m[1] !== config.vcpKey) { socket.destroy(); return; }
                wss.handleUpgrade(req, socket, head, ws => {
                    const serverId = `dist-${++next}`;
                    servers.set(serverId, { ws, serverName: serverId });
                    ws.send(JSON.stringify({ type: 'connection_ack', data: { serverId } }));
                    ws.on('message', raw => {
                        const msg = JSON.parse(raw);
                        const d = msg.data || {};
                        if (msg.type === 'register_tools') {
                            if (d.serverName) servers.get(serverId).serverName = d.serverName;
                            pluginManager.registerDistributedTools(serverId, d.tools.filter(t => t.name !== 'internal_request_file'));
                        } else if (msg.type === 'report_ip' && d.serverName) {
                            servers.get(serverId).serverName = d.serverName;
                        } else if (msg.type === 'tool_result') {
                            const p = pending.get(d.requestId);
                            if (!p) return;
                            pending.delete(d.requestId);
                            if (d.status === 'success') p.resolve(d.result); else p.reject(new Error(d.error || 'failed'));
                        }
                    });
                    ws.on('close', () => { servers.delete(serverId); registered.delete(serverId); });
                });
            });
        },
        setPluginManager() {},
        getDistributedServerSnapshot() {
            return [...servers].map(([serverId, s]) => ({ serverId, serverName: s.serverName, connected: s.ws.readyState === WebSocket.OPEN }));
        },
        executeDistributedTool(name, toolName, toolArgs, timeout) {
            const entry = [...servers].find(([id, s]) => id === name || s.serverName === name);
            if (!entry) return Promise.reject(new Error(`no server ${name}`));
            const requestId = `r${++next}`;
            return new Promise((resolve, reject) => {
                const t = setTimeout(() => { pending.delete(requestId); reject(new Error('timed out')); }, timeout);
                pending.set(requestId, { resolve: v => { clearTimeout(t); resolve(v); }, reject: e => { clearTimeout(t); reject(e); } });
                entry[1].ws.send(JSON.stringify({ type: 'execute_tool', data: { requestId, toolName, toolArgs } }));
            });
        },
    };
}

const wss = toolbox ? require(path.join(toolbox, 'WebSocketServer.js')) : miniServer();

function check(result, req) {
    if (req.expectFileBytes) {
        const data = result && result.fileData;
        if (typeof data !== 'string' || Buffer.byteLength(data, 'base64') !== req.expectFileBytes) {
            throw new Error(`file result of ${data ? Buffer.byteLength(data, 'base64') : 'no'} bytes, want ${req.expectFileBytes}`);
        }
    }
    if (req.expectText && !JSON.stringify(result).includes(req.expectText)) {
        throw new Error(`result ${JSON.stringify(result).slice(0, 200)} lacks ${req.expectText}`);
    }
}

async function run(req) {
    const latMs = [];
    let errors = 0, firstError = '', started = 0;
    const one = async () => {
        // Every answer counts in the timing, a wrong one too (it cost the
        // node the same work); wrong answers are counted apart.
        const t0 = process.hrtime.bigint();
        let result, failed;
        try {
            result = await wss.executeDistributedTool(req.server, req.tool, req.args, 120000);
        } catch (e) {
            failed = e;
        }
        latMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
        try {
            if (failed) throw failed;
            check(result, req);
        } catch (e) {
            errors++;
            if (!firstError) firstError = e.message;
        }
    };
    const t0 = process.hrtime.bigint();
    const worker = async () => {
        while (started < req.count) {
            started++;
            await one();
            if (req.gapMs) await new Promise(r => setTimeout(r, req.gapMs));
        }
    };
    await Promise.all(Array.from({ length: Math.max(1, req.inflight) }, worker));
    return { latMs, wallMs: Number(process.hrtime.bigint() - t0) / 1e6, errors, firstError };
}

const httpServer = http.createServer();
wss.initialize(httpServer, { vcpKey: key, debugMode: false });
wss.setPluginManager(pluginManager);

const api = http.createServer((req, res) => {
    const reply = (code, body) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    if (req.method === 'GET' && req.url === '/servers') {
        return reply(200, wss.getDistributedServerSnapshot().filter(s => s.connected !== false).map(s => ({
            serverId: s.serverId, serverName: s.serverName, tools: registered.get(s.serverId) || [],
        })));
    }
    if (req.method === 'POST' && req.url === '/run') {
        let body = '';
        req.on('data', c => { body += c; });
        req.on('end', () => run(JSON.parse(body)).then(r => reply(200, r), e => reply(500, { error: e.message })));
        return;
    }
    reply(404, { error: 'no such path' });
});

httpServer.listen(0, '127.0.0.1', () => {
    api.listen(0, '127.0.0.1', () => {
        // The measuring program reads this one line.
        console.log(JSON.stringify({ hubPort: httpServer.address().port, apiPort: api.address().port, toolbox: !!toolbox }));
    });
});
