package toolconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// approvalRulesDoc is the content of the rules file
// (config.ApprovalRulesFile).
type approvalRulesDoc struct {
	Rules toolhost.ApprovalRules `json:"rules"`
}

// LoadApprovalRules reads path; a missing file is no rules. A file that
// is not a valid rules document is an error naming the file: it is never
// replaced by one that would lose its rules.
func LoadApprovalRules(path string) (toolhost.ApprovalRules, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("approval rules: %w", err)
	}
	var doc approvalRulesDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(&doc)
	if err == nil && dec.More() {
		err = errors.New("data after the rules document")
	}
	if err != nil {
		return nil, fmt.Errorf("approval rules %s: %w (the file is kept as it is: fix it, or move it away to start without rules)", path, err)
	}
	if err := doc.Rules.Check(); err != nil {
		return nil, fmt.Errorf("approval rules %s: %w (the file is kept as it is: fix it, or move it away to start without rules)", path, err)
	}
	return doc.Rules, nil
}

// SaveApprovalRules writes rs to path atomically (0600).
func SaveApprovalRules(path string, rs toolhost.ApprovalRules) error {
	if rs == nil {
		rs = toolhost.ApprovalRules{}
	}
	data, err := json.MarshalIndent(approvalRulesDoc{Rules: rs}, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteStateFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("approval rules: %w", err)
	}
	return nil
}

// DescribeApprovalRules lists rules one a line, for `config show`:
// "allow Echo", "deny FileOps/delete: not on this machine".
func DescribeApprovalRules(rs toolhost.ApprovalRules) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		l := r.Verdict + " " + r.ID()
		if r.Reason != "" {
			l += ": " + r.Reason
		}
		out = append(out, l)
	}
	return out
}
