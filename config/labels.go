package config

import (
	"slices"
	"strings"
	"unicode"
)

// Bounds of [node] labels: the server keeps them for every node it lists.
const (
	maxLabels     = 32
	maxLabelBytes = 128
)

func checkLabels(ps *problemList, labels map[string]string) {
	if len(labels) > maxLabels {
		ps.add("node.labels", "has %d labels; the limit is %d", len(labels), maxLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := labels[k]
		switch {
		case k == "" || strings.ContainsFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
			ps.add("node.labels", "label name %q must be non-empty, without spaces or control characters", k)
		case len(k) > maxLabelBytes || len(v) > maxLabelBytes:
			ps.add("node.labels", "label %q: names and values are at most %d bytes", k, maxLabelBytes)
		case strings.ContainsFunc(v, unicode.IsControl):
			ps.add("node.labels", "label %q: the value contains a control character", k)
		case Redact(v) != v:
			ps.add("node.labels", "label %q: the value looks like a key; labels are shown to everyone on the server", k)
		}
	}
}
