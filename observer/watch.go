package observer

import (
	"context"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/events"
)

// Watch connects to the server's observer channels without a daemon
// (`vcpnode watch` when none runs) and calls each for every event passing
// f, until ctx ends or each fails. The channels are cfg's [observer]
// channels, enabled or not. Its device name is the node's name plus
// "-watch", so the server's replay cache keeps it apart from the daemon.
func Watch(ctx context.Context, cfg config.Config, log zerolog.Logger, getenv func(string) string, f controlapi.EventFilter, each func(controlapi.Event) error) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	key, err := cfg.Key(getenv)
	if err != nil {
		return err
	}
	if _, err := config.HubURL(cfg.Hub.URL, key); err != nil {
		return err
	}
	name := cfg.Hub.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	st := Settings{Base: cfg.Hub.URL, Key: key, Device: name + "-watch", Hub: cfg.Hub}
	evlog := events.New(cfg.Observer.Buffer)
	obs := New(log, evlog, func() Settings { return st }, DefaultTimings(), Options{})
	sub, _ := evlog.Subscribe(false, 0)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		obs.Run(ctx, cfg.Observer.Channels)
	}()
	defer func() { cancel(); <-done }()
	for {
		evs, dropped, err := sub.Next(ctx, nil)
		if err != nil {
			return nil // ctx ended: the watch is over
		}
		if dropped > 0 {
			if err := each(controlapi.Event{Kind: controlapi.EventDropped, Dropped: dropped, Time: time.Now()}); err != nil {
				return err
			}
		}
		for _, ev := range evs {
			if f.Match(ev) {
				if err := each(ev); err != nil {
					return err
				}
			}
		}
	}
}
