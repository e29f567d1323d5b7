package proctreetest

import "github.com/vcpnode/vcpnode/toolhost/proctree"

// procfs: /proc tells whether a process that kill(pid, 0) still finds has
// ended, through the rule proctree itself uses.
const procfs = true

var procEnded = proctree.Ended
