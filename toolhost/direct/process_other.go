//go:build !unix

package direct

import (
	"errors"
	"os"
)

func socketPair() (ours, theirs *os.File, err error) {
	return nil, nil, errors.New("hosting Node.js plugins needs a Unix system")
}
