// Starts the official node the way its host application (VCPChat) does:
// VCPDistributedServer.js is a class; its settings come from config.env
// (Main_Server_URL, VCP_Key, ServerName, DebugMode; DIST_SERVER_PORT is read
// by the class itself). This file sits beside copies of the checkout's
// VCPDistributedServer.js and Plugin.js, so the Plugin folder next to it is
// the benchmark's, and node_modules is the checkout's.
'use strict';
const fs = require('fs');
const path = require('path');
const dotenv = require('dotenv');

const env = dotenv.parse(fs.readFileSync(path.join(__dirname, 'config.env')));
const DistributedServer = require('./VCPDistributedServer.js');
const server = new DistributedServer({
    mainServerUrl: env.Main_Server_URL,
    vcpKey: env.VCP_Key,
    serverName: env.ServerName,
    debugMode: String(env.DebugMode || '').toLowerCase() === 'true',
});
server.initialize().catch(e => { console.error(e); process.exit(1); });
process.on('SIGTERM', () => { server.stop().then(() => process.exit(0)); });
