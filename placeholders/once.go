package placeholders

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// RefreshOnce runs every job's source once, concurrently, and writes the
// outcomes to store, with the same claims, mapping and error handling as a
// Refresher; schedules are ignored. It is the one-shot evaluation behind
// `vcpnode placeholders --config`. The error reports jobs left out (see
// Refresher.Update); a failed run is recorded in the store, not returned.
func RefreshOnce(ctx context.Context, store *Store, log zerolog.Logger, jobs []Job) error {
	wanted, claims, errs := planJobs(jobs)
	store.SetClaims(claims)
	var wg sync.WaitGroup
	for _, w := range wanted {
		wg.Go(func() {
			applyOutcome(store, log, w.job.Source, w.keys, runJob(ctx, realClock{}, w.job))
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// applyOutcome writes one run's outcome to the store: values on success
// (an empty output keeps the previous ones), the error otherwise. keys are
// src's placeholders, normalised.
func applyOutcome(store *Store, log zerolog.Logger, src Source, keys []string, res runResult) {
	name := src.Name()
	log = log.With().Str(logSource, name).Logger()
	if res.err != nil {
		log.Warn().Err(res.err).Msg("placeholder source failed; previous values kept")
		for _, k := range keys {
			record(log, store.Fail(k, name, res.err))
		}
		return
	}
	if res.out.TimedOut {
		log.Info().Msg("placeholder source hit its time limit; using what it printed until then")
	}
	if res.out.Truncated {
		log.Warn().Msg("placeholder source printed more than its output limit; the value is cut")
	}
	if len(keys) == 0 {
		return // run for its side effects
	}
	values := mapValues(src.Placeholders(), keys, res.out)
	if len(values) == 0 {
		log.Debug().Msg("placeholder source printed nothing; previous values kept")
		for _, k := range keys {
			if e, ok := store.Entry(k); ok && !e.HasValue {
				record(log, store.Fail(k, name, errors.New("the source printed nothing")))
			}
		}
		return
	}
	for k, v := range values {
		record(log, store.Set(k, v, name))
	}
}

// mapValues gives each key its value; declared are the keys as the source
// writes them (MapOutput matches JSON keys against that spelling).
func mapValues(declared, keys []string, out Output) map[string]string {
	if !out.Verbatim {
		return MapOutput(declared, out.Text)
	}
	text := strings.TrimSpace(out.Text)
	if text == "" {
		return nil
	}
	values := make(map[string]string, len(keys))
	for _, k := range keys {
		values[k] = text
	}
	return values
}

func record(log zerolog.Logger, err error) {
	if err != nil {
		// Only a key taken over by another source gets here, which the
		// claims prevent; worth a line if it ever happens.
		log.Error().Err(err).Msg("cannot record a placeholder value")
	}
}
