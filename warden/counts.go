package warden

import (
	"sync/atomic"
	"time"
)

// What the warden's calls were, counted for the benchmarks
// (launcher/workloads_bench_test.go): by kind, by where the call landed as
// the warden's look found it, and by answer. The counts are atomic adds on
// a fixed table, cheap enough to keep in the product.

// landing is where a call landed.
type landing int

const (
	landUnlooked  landing = iota // not looked at: the lock is off, or a socket's call
	landLocked                   // a file system of the sandbox's own that its Landlock domain grants
	landPrivate                  // another file system of the sandbox's own
	landWorkspace                // the workspace's file system
	landShared                   // another file system the outside sees
	landings
)

var landingNames = [landings]string{"unlooked", "locked", "private", "workspace", "shared"}

// answerKind is how a call was answered.
type answerKind int

const (
	wentOn  answerKind = iota // SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel carried it out
	carried                   // the warden carried it out, and it succeeded
	failed                    // the warden refused it, or carried it out and it failed
	answerKinds
)

var answerNames = [answerKinds]string{"went-on", "carried", "failed"}

var opNames = [...]string{opOpen: "open", opMkdir: "mkdir", opMknod: "mknod", opSymlink: "symlink", opLink: "link",
	opRename: "rename", opTruncate: "truncate", opBind: "bind", opConnect: "connect", opSendto: "sendto",
	opSendmsg: "sendmsg", opSendmmsg: "sendmmsg", opUmask: "umask"}

var counts [len(opNames)][landings][answerKinds]atomic.Int64

func count(o op, l landing, a answerKind) { counts[o][l][a].Add(1) }

// Breakdown is every warden's calls in this process since it started, as
// "KIND LANDING ANSWER" (open locked went-on) and how many; kinds never
// made are left out.
func Breakdown() map[string]int64 {
	out := map[string]int64{}
	for o := range counts {
		for l := range counts[o] {
			for a := range counts[o][l] {
				if n := counts[o][l][a].Load(); n > 0 {
					out[opNames[o]+" "+landingNames[l]+" "+answerNames[a]] = n
				}
			}
		}
	}
	return out
}

// Totals are what every warden of this process answered since it started:
// how many calls, and the time from receiving each to answering it (for an
// answer with a descriptor, until the task took it). The benchmarks report
// them.
func Totals() (calls int64, busy time.Duration) {
	return totalCalls.Load(), time.Duration(totalBusy.Load())
}

var totalCalls, totalBusy atomic.Int64
