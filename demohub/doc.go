// Package demohub is an in-process VCP main server, scriptable: the server
// side of the distributed-node WebSocket, as VCPToolBox's WebSocketServer.js
// serves it. `vcpnode demo` runs the node against it; the node's integration
// tests, benchmarks and test programs use it too (internal/fakehub adds
// what only tests need).
//
// It listens on 127.0.0.1 only. It behaves like the real server where the node
// can tell the difference: the key travels raw in the path, a wrong key or path
// closes the socket before any HTTP response, connection_ack comes first,
// frames that do not decode are recorded and ignored, frames over the read
// limit close the connection with 1009, and pings are answered while reading.
package demohub
