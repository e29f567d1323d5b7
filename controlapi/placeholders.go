package controlapi

import "time"

// PlaceholderStatus is one placeholder for `vcpnode placeholders`.
type PlaceholderStatus struct {
	Key       string     `json:"key"` // "{{Name}}"
	Value     string     `json:"value"`
	HasValue  bool       `json:"hasValue"`
	Source    string     `json:"source"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
	LastError string     `json:"lastError,omitempty"`
	ErrorAt   *time.Time `json:"errorAt,omitempty"`
}

// PlaceholderSourceStatus is one source's schedule and run counts.
type PlaceholderSourceStatus struct {
	Name           string     `json:"name"`
	Placeholders   []string   `json:"placeholders"`
	Runs           int        `json:"runs"`
	SkippedBusy    int        `json:"skippedBusy"`    // fires while a run was still going
	SkippedTooSoon int        `json:"skippedTooSoon"` // fires within min_interval of the last start
	Running        bool       `json:"running"`
	LastDurationMs int64      `json:"lastDurationMs"`
	LastError      string     `json:"lastError,omitempty"`
	NextRun        *time.Time `json:"nextRun,omitempty"`
}

// PlaceholdersResponse lists the placeholders (GET /v1/placeholders).
type PlaceholdersResponse struct {
	// Now is the daemon's clock, so that ages are computed against it.
	Now          time.Time           `json:"now"`
	Placeholders []PlaceholderStatus `json:"placeholders"`
	// Sources are the running sources; empty in a one-shot evaluation.
	Sources []PlaceholderSourceStatus `json:"sources,omitempty"`
}
