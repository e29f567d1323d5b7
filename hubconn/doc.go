// Package hubconn is the liveness core of every WebSocket the node keeps to
// the VCP server: the node session (/vcp-distributed-server/) and the
// observer channels (/VCPlog/, /vcpinfo/). It dials with a handshake
// timeout and tells the server's refusals apart (an empty handshake, an
// HTTP answer); it holds the read deadline at ping_interval + pong_timeout
// from the last sign of life (a frame, a chunk of one, a pong or a ping) and
// nothing stretches it; it classifies read errors and closes, with the key
// redacted from every error; and it holds the reconnect loops' schedule and
// connection limiter.
//
// It knows nothing of messages (wsproto) or of what a connection is for
// (node). With demohub, the server side of the wire, it is the only
// package that imports gorilla/websocket.
package hubconn
