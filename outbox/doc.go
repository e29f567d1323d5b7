// Package outbox keeps asynchronous plugins' callbacks on disk until the
// main server has provably read them, so that a callback arriving while the
// node is disconnected, just before it restarts, or written into a
// connection that then goes silent, still reaches the server.
//
// One file per message under <state_dir>/outbox, <seq>-<plugin>-<task>.json
// with a zero-padded sequence number, so that the directory listing is the
// sending order, also across restarts. The protocol has no acknowledgement,
// so a written callback is kept until a pong answers a ping written after
// it: TCP and WebSocket keep order, so the server read the callback before
// that ping. A new connection sends the unconfirmed ones again, in order,
// before the rest. Delivery is therefore at least once: the server
// overwrites VCPAsyncResults/<plugin>-<task>.json with the same content, so
// a second copy is harmless.
//
// The outbox holds the state directory's lock (one daemon per state
// directory). It knows files and plugin names, not connections: the session
// hands Drain a function that writes one message.
package outbox
