package placeholders

import "context"

// Fixed is a placeholder with a value written in the config.
type Fixed struct {
	Placeholder string // the key, braces optional
	Value       string
}

// Name implements Source.
func (f *Fixed) Name() string { return "value " + f.Placeholder }

// Placeholders implements Source.
func (f *Fixed) Placeholders() []string { return []string{f.Placeholder} }

// Run implements Source: the value as written, never read as JSON.
func (f *Fixed) Run(context.Context) (Output, error) {
	return Output{Text: f.Value, Verbatim: true}, nil
}
