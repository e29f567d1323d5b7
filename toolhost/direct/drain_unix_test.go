//go:build unix

package direct

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestMessagesReadToTheDrainDeadline: the results the host sent just
// before it exited reach their calls, though the message reader runs only
// once the drain deadline after the exit has passed.
func TestMessagesReadToTheDrainDeadline(t *testing.T) {
	ours, held, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close() // the host's end, a descendant's copy still open
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := &proc{log: zerolog.Nop(), conn: conn, pending: map[string]chan callReply{}, control: make(chan inMsg, 8)}
	replies := map[string]chan callReply{}
	var msgs strings.Builder
	for i := range 100 {
		id := "c" + strconv.Itoa(i)
		replies[id], _ = p.register(id)
		fmt.Fprintf(&msgs, `{"t":"result","id":%q,"value":"%0500d"}`+"\n", id, i)
	}
	if _, err := held.WriteString(msgs.String()); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	p.readers.Add(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.readMessages()
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("the reader did not end at the passed deadline")
	}
	got := 0
	for _, ch := range replies {
		select {
		case <-ch:
			got++
		default:
		}
	}
	if got != len(replies) {
		t.Errorf("%d of the %d results the host sent reached their calls", got, len(replies))
	}
}
