package toolhost

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// truncatedParts decodes a truncated result into its parts.
func truncatedParts(t *testing.T, raw json.RawMessage) []map[string]any {
	t.Helper()
	var r struct{ Content []map[string]any }
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not a content result: %v\n%s", err, raw)
	}
	return r.Content
}

// A text result above the cap keeps its head, cut on a character
// boundary, and ends with a note; an image that does not fit is dropped
// whole, one that fits is kept whole; fields beside the content parts go
// first; a result of another shape gives the head of its JSON as text;
// with oversize "error" it is an error naming the sizes.
func TestEncodeResultOversize(t *testing.T) {
	text := strings.Repeat("日本語 text ", 2000) // 3-byte characters to cut between
	raw, err := encodeResult("ReadFile", text, 4096, OversizeTruncate)
	if err != nil || len(raw) > 4096 {
		t.Fatalf("truncate: %d bytes, %v", len(raw), err)
	}
	parts := truncatedParts(t, raw)
	if len(parts) != 2 {
		t.Fatalf("parts: %v", parts)
	}
	head := parts[0]["text"].(string)
	if !utf8.ValidString(head) || !strings.HasPrefix(text, head) || len(head) < 2500 {
		t.Errorf("head of %d bytes is not a clean prefix", len(head))
	}
	note := parts[1]["text"].(string)
	if !strings.Contains(note, "[result of ReadFile truncated: ") || !strings.Contains(note, "left out") ||
		!strings.Contains(note, "startLine and endLine") || !strings.Contains(note, "max_result_bytes (4096)") {
		t.Errorf("note: %s", note)
	}

	image := ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: "data:image/png;base64," + strings.Repeat("A", 3000)}}
	small := ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: "data:image/png;base64,AAAA"}}
	v := ContentResult{Content: []ContentPart{{Type: "text", Text: "caption"}, image, small, {Type: "text", Text: strings.Repeat("z", 3000)}}}
	raw, err = encodeResult("Shot", v, 2048, OversizeTruncate)
	if err != nil || len(raw) > 2048 {
		t.Fatalf("parts: %d bytes, %v", len(raw), err)
	}
	parts = truncatedParts(t, raw)
	var types []string
	for _, p := range parts {
		types = append(types, p["type"].(string))
		if p["type"] == "image_url" && p["image_url"].(map[string]any)["url"] != small.ImageURL.URL {
			t.Errorf("an image was cut: %v", p)
		}
	}
	if strings.Join(types, ",") != "text,image_url,text,text" || !strings.Contains(parts[3]["text"].(string), "1 part(s) dropped whole") {
		t.Errorf("parts: %v", parts)
	}

	if _, err := encodeResult("T", text, 4096, OversizeError); err == nil || !strings.Contains(err.Error(), "exceeds max_result_bytes (4096)") {
		t.Errorf("error mode: %v", err)
	}
	// A result of another shape: the head of its JSON, as text.
	obj := map[string]string{"data": text}
	raw, err = encodeResult("T", obj, 4096, OversizeTruncate)
	if err != nil || len(raw) > 4096 {
		t.Fatalf("object: %d bytes, %v", len(raw), err)
	}
	parts = truncatedParts(t, raw)
	whole, _ := marshalJSON(obj)
	if len(parts) != 2 || !strings.HasPrefix(string(whole), parts[0]["text"].(string)) ||
		len(parts[0]["text"].(string)) < 2500 || !strings.Contains(parts[1]["text"].(string), "the result's JSON given as text") {
		t.Errorf("object: %v", parts)
	}
	// Content parts with other fields: the fields go first, the text is cut.
	withDetails := map[string]any{"content": []ContentPart{{Type: "text", Text: text}}, "details": map[string]int{"n": 1}}
	raw, err = encodeResult("T", withDetails, 4096, OversizeTruncate)
	if err != nil || len(raw) > 4096 || strings.Contains(string(raw), `"details":`) {
		t.Fatalf("content with details: %s, %v", raw, err)
	}
	parts = truncatedParts(t, raw)
	if len(parts) != 2 || !strings.HasPrefix(text, parts[0]["text"].(string)) ||
		!strings.Contains(parts[1]["text"].(string), `its other fields ("details") dropped`) {
		t.Errorf("content with details: %v", parts)
	}
	if _, err := encodeResult("T", obj, 4096, OversizeError); err == nil {
		t.Error("error mode truncated an object result")
	}
}

// FuzzTruncateResult: whatever the text and the cap, a truncated result is
// valid JSON within the cap, and its head is a prefix of the text that ends
// on a character boundary (never half a UTF-8 sequence).
func FuzzTruncateResult(f *testing.F) {
	f.Add("日本語 text", "\"quoted\"\n\t\\", 900)
	f.Add(strings.Repeat("é", 700), "\u2028\x01<>&", 1000)
	f.Add("ascii", string([]byte{0xff, 0xe6, 0x97}), 850)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		limit = 800 + abs(limit)%4000
		text := strings.Repeat(a+b, 1+(2*limit)/max(1, len(a+b)))
		raw, err := encodeResult("T", text, limit, OversizeTruncate)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if len(raw) > limit || !json.Valid(raw) {
			t.Fatalf("%d bytes over %d, or invalid", len(raw), limit)
		}
		var r struct{ Content []ContentPart }
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
			t.Fatalf("%v %s", err, raw)
		}
		if len(r.Content) == 2 {
			head := r.Content[0].Text
			clean := string([]rune(text)) // each invalid byte is one U+FFFD, as encoding/json writes it
			if !strings.HasPrefix(clean, head) || !utf8.ValidString(head) {
				t.Fatalf("head %q is not a clean prefix", head)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
