package placeholders

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fixedSource answers at once with a fixed outcome.
type fixedSource struct {
	name string
	keys []string
	out  Output
	err  error
}

func (f fixedSource) Name() string                        { return f.name }
func (f fixedSource) Placeholders() []string              { return f.keys }
func (f fixedSource) Run(context.Context) (Output, error) { return f.out, f.err }

func TestRefreshOnce(t *testing.T) {
	store := NewStore()
	jobs := []Job{
		{Source: fixedSource{name: "values", keys: []string{"Owner"}, out: Output{Text: "Alice", Verbatim: true}}},
		{Source: fixedSource{name: "broken", keys: []string{"Broken"}, err: errors.New("exit 1")}},
		{Source: fixedSource{name: "quiet", keys: []string{"Quiet"}}},
		{Source: fixedSource{name: "thief", keys: []string{"{{Owner}}"}, out: Output{Text: "Mallory"}}},
		{Source: fixedSource{name: "every", keys: []string{"Every"}, out: Output{Text: "e"}}, Schedule: mustEvery(t, time.Hour)},
	}
	err := RefreshOnce(context.Background(), store, discardLogger(), jobs)
	var ce *ClaimError
	if !errors.As(err, &ce) || ce.Holder != "values" || ce.Claimant != "thief" {
		t.Fatalf("err = %v, want the claim conflict", err)
	}
	var got []string
	for _, e := range store.Entries() {
		got = append(got, e.Key+"="+e.Value+"|"+e.LastError)
	}
	want := "{{Broken}}=|exit 1 {{Every}}=e| {{Owner}}=Alice| {{Quiet}}=|the source printed nothing"
	if strings.Join(got, " ") != want {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
}
