package mcp

import (
	"errors"
	"strconv"
	"testing"
)

// collectPages follows the cursor to the last page, stops at maxListed
// entries and says the server had more, and passes an error on.
func TestCollectPages(t *testing.T) {
	pages := func(n, per int) func(string) ([]int, string, error) {
		return func(cursor string) ([]int, string, error) {
			i := 0
			if cursor != "" {
				i, _ = strconv.Atoi(cursor)
			}
			items := make([]int, per)
			for k := range items {
				items[k] = i*per + k
			}
			if i+1 == n {
				return items, "", nil
			}
			return items, strconv.Itoa(i + 1), nil
		}
	}
	all, more, err := collectPages(pages(3, 2))
	if err != nil || more || len(all) != 6 || all[5] != 5 {
		t.Errorf("three pages of two = %v, more %v, %v", all, more, err)
	}
	all, more, err = collectPages(pages(maxPages*10, maxListed/4))
	if err != nil || !more || len(all) != maxListed {
		t.Errorf("an endless list = %d entries, more %v, %v; want %d and more", len(all), more, err, maxListed)
	}
	boom := errors.New("boom")
	_, _, err = collectPages(func(string) ([]int, string, error) { return nil, "", boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}
