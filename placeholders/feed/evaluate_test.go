package feed

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/placeholders"
)

// idleSource claims keys and never runs to the end of a test.
type idleSource struct{ keys []string }

func (s idleSource) Name() string           { return "test source" }
func (s idleSource) Placeholders() []string { return s.keys }
func (s idleSource) Run(ctx context.Context) (placeholders.Output, error) {
	<-ctx.Done()
	return placeholders.Output{}, ctx.Err()
}

func TestPlaceholderConfigConflictWithSource(t *testing.T) {
	// A source claiming a key the config already feeds is left out with a
	// warning naming both; the rest still runs.
	cfg := config.Default()
	cfg.Hub.Key = testKey
	cfg.Placeholders.Values = map[string]string{"Dyn": "fixed"}
	jobs := func(config.Config, zerolog.Logger) ([]placeholders.Job, []string, error) {
		return []placeholders.Job{{Source: idleSource{keys: []string{"Dyn"}}}}, nil, nil
	}
	resp, warnings, err := Evaluate(context.Background(), cfg, nil, zerolog.Nop(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "value Dyn") || !strings.Contains(warnings[0], "test source") {
		t.Fatalf("warnings = %q", warnings)
	}
	if len(resp.Placeholders) != 1 || resp.Placeholders[0].Value != "fixed" {
		t.Fatalf("placeholders = %+v", resp.Placeholders)
	}
}
