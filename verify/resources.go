package verify

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// resourceLimits: the kernel's OOM killer takes a process of the sandbox
// before the launcher, and (unless the kernel exempts the user) the
// sandbox's processes are capped short of every limit the launcher shares,
// so neither a memory hog nor a fork flood inside can take down the
// launcher and its proxies.
func resourceLimits(*facts) (string, error) {
	adj, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(adj)))
	if err != nil {
		return "", fmt.Errorf("/proc/self/oom_score_adj %q does not parse", strings.TrimSpace(string(adj)))
	}
	var nproc unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &nproc); err != nil {
		return "", fmt.Errorf("getrlimit(RLIMIT_NPROC): %w", err)
	}
	return judgeResourceLimits(os.Getuid(), n, nproc)
}

func judgeResourceLimits(uid, oomScoreAdj int, nproc unix.Rlimit) (string, error) {
	if oomScoreAdj != sandbox.OOMScoreAdj {
		return "", fmt.Errorf("oom_score_adj is %d, not %d: the OOM killer may choose the launcher before the sandbox", oomScoreAdj, sandbox.OOMScoreAdj)
	}
	adj := fmt.Sprintf("oom_score_adj %d", oomScoreAdj)
	switch {
	case uid == 0:
		return adj + "; as root, no RLIMIT_NPROC counts the processes (the launcher reserved its threads)", nil
	case nproc.Max == unix.RLIM_INFINITY:
		return "", fmt.Errorf("RLIMIT_NPROC has no hard limit: a fork flood could take every process the launcher may start")
	}
	return fmt.Sprintf("%s; at most %d processes and threads (RLIMIT_NPROC)", adj, nproc.Max), nil
}
