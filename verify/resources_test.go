package verify

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestJudgeResourceLimits(t *testing.T) {
	capped := unix.Rlimit{Cur: 28000, Max: 28000}
	unlimited := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	for _, tc := range []struct {
		uid, adj int
		nproc    unix.Rlimit
		want     string
		err      string
	}{
		{1000, 1000, capped, "oom_score_adj 1000; at most 28000 processes and threads (RLIMIT_NPROC)", ""},
		{0, 1000, unlimited, "oom_score_adj 1000; as root, no RLIMIT_NPROC counts the processes (the launcher reserved its threads)", ""},
		{1000, 0, capped, "", "oom_score_adj is 0, not 1000: the OOM killer may choose the launcher before the sandbox"},
		{1000, 1000, unlimited, "", "RLIMIT_NPROC has no hard limit: a fork flood could take every process the launcher may start"},
	} {
		got, err := judgeResourceLimits(tc.uid, tc.adj, tc.nproc)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("uid %d, adj %d, %+v: error %v, want %q", tc.uid, tc.adj, tc.nproc, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("uid %d, adj %d, %+v: %q, %v; want %q", tc.uid, tc.adj, tc.nproc, got, err, tc.want)
		}
	}
}
