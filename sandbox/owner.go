package sandbox

import (
	"strconv"
	"sync/atomic"
)

// ownerSeq numbers the tokens NewOwner hands out.
var ownerSeq atomic.Uint64

// NewOwner returns a token no other call in this process returns, for
// Command.Owner and KillAdopted: one per toolbash Manager, so that one
// Manager's exit sweep leaves the commands of the others alone (Linux;
// elsewhere the token is carried and unused).
func NewOwner() string { return "m" + strconv.FormatUint(ownerSeq.Add(1), 10) }
