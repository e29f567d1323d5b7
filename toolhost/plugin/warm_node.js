'use strict';
// Preloaded by "node --require=THIS SCRIPT ARGS..." started in the plugin's
// folder with its environment, sandbox and process tree, and with
// VCPNODE_WARM_NODE=1 added to its environment. It first removes what a
// script could see of it (its --require in process.execArgv, its entries in
// require.cache and the resolution cache, the variable); in the main thread
// it then reports that it is ready with one byte on fd 1, which the node
// reads before the call, and waits for one byte on fd 0 (both written and
// read directly: process.stdout and process.stdin are not made): "g" lets
// Node go on and load SCRIPT as the main module exactly as a fresh
// "node SCRIPT ARGS..." does; end of input exits quietly. Worker threads run
// preloads too: there the variable is gone, so it only removes its traces.
{
  const fs = require('fs');
  const own = process.execArgv.indexOf('--require=' + __filename);
  if (own >= 0) {
    process.execArgv.splice(own, 1);
  }
  delete require.cache[__filename];
  const resolved = module.constructor._pathCache;
  if (resolved) {
    for (const key of Object.keys(resolved)) {
      if (resolved[key] === __filename) {
        delete resolved[key];
      }
    }
  }
  if (process.env.VCPNODE_WARM_NODE !== undefined) {
    delete process.env.VCPNODE_WARM_NODE;
    fs.writeSync(1, 'r');
    const go = Buffer.alloc(1);
    let n = 0;
    try {
      n = fs.readSync(0, go, 0, 1, null);
    } catch {
      n = 0;
    }
    if (n !== 1 || go[0] !== 0x67) {
      process.exit(0);
    }
  }
}
