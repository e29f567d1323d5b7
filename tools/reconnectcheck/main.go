// Command reconnectcheck measures how fast a node registers again after the
// server comes back: the time from the fake hub listening again on its port
// to the node's register_tools arriving on the new connection.
//
// The node runs in this process with its production reconnect schedule; the
// fake hub is stopped (listener closed, connections sent a close frame,
// dials refused by the OS) and resumed on the same loopback port. Scenarios:
// back-to-back restarts one second apart, short outages (0.2–5 s) repeated,
// and a few long ones (10–60 s).
//
//	go run ./tools/reconnectcheck            # about 5 minutes
//	go run ./tools/reconnectcheck -quick     # about 1 minute, no long outages
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/wsproto"
)

const measureKey = "reconnectcheck-key_0123456789"

type scenario struct {
	name    string
	outages []time.Duration // one sample per outage
}

func scenarios(quick bool) []scenario {
	repeat := func(n int, ds ...time.Duration) []time.Duration {
		var out []time.Duration
		for range n {
			out = append(out, ds...)
		}
		return out
	}
	ms := time.Millisecond
	s := []scenario{
		{"restarts 1 s apart", repeat(30, 0)},
		{"outages 0.2-5 s", repeat(10, 200*ms, 500*ms, time.Second, 2*time.Second, 3*time.Second, 5*time.Second)},
		{"outages 10-60 s", []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 45 * time.Second, 60 * time.Second}},
	}
	if quick {
		s[0].outages = repeat(10, 0)
		s[1].outages = repeat(3, 200*ms, time.Second, 3*time.Second)
		s = s[:2]
	}
	return s
}

func main() {
	quick := flag.Bool("quick", false, "fewer samples and no long outages")
	upTime := flag.Duration("up", time.Second, "how long the server stays up after listening again")
	flag.Parse()
	if err := run(*quick, *upTime); err != nil {
		fmt.Fprintln(os.Stderr, "reconnectcheck:", err)
		os.Exit(1)
	}
}

func run(quick bool, upTime time.Duration) error {
	registered := make(chan time.Time, 16)
	hub, err := demohub.Start(demohub.Options{Key: measureKey, NoHistory: true, OnFrame: func(f demohub.Frame) {
		if f.Dir == demohub.FromNode && f.Msg != nil && f.Msg.MessageType() == wsproto.TypeRegisterTools {
			select {
			case registered <- f.At:
			default:
			}
		}
	}})
	if err != nil {
		return err
	}
	defer hub.Close()

	cfg := config.Default()
	cfg.Hub.URL = hub.BaseURL()
	cfg.Hub.Key = measureKey
	cfg.Hub.Name = "reconnectcheck"
	n, err := node.New(cfg, zerolog.Nop(), node.WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.1"}, nil }))
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { stop(); <-done }()

	if _, err := waitRegistered(registered, time.Time{}); err != nil {
		return err
	}
	var all []time.Duration
	for _, sc := range scenarios(quick) {
		var lat []time.Duration
		for i, outage := range sc.outages {
			stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			hub.Stop(stopCtx)
			cancel()
			drain(registered)
			// The outage itself is the scenario, not a synchronisation.
			time.Sleep(outage)
			if err := hub.Resume(); err != nil {
				return err
			}
			listening := time.Now()
			at, err := waitRegistered(registered, listening)
			if err != nil {
				return fmt.Errorf("%s, sample %d (outage %v): %w", sc.name, i+1, outage, err)
			}
			lat = append(lat, at.Sub(listening))
			time.Sleep(time.Until(listening.Add(upTime)))
		}
		report(sc.name, lat)
		all = append(all, lat...)
	}
	report("all", all)
	return nil
}

func drain(ch chan time.Time) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// waitRegistered returns when the first register_tools at or after since arrived.
func waitRegistered(ch chan time.Time, since time.Time) (time.Time, error) {
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case at := <-ch:
			if !at.Before(since) {
				return at, nil
			}
		case <-deadline:
			return time.Time{}, errors.New("no register_tools within 2 minutes")
		}
	}
}

func report(name string, lat []time.Duration) {
	s := slices.Clone(lat)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	fmt.Printf("%-20s n=%3d  median %7v  p90 %7v  p99 %7v  max %7v\n", name, len(s),
		q(0.5).Round(time.Millisecond), q(0.9).Round(time.Millisecond), q(0.99).Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}
