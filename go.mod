module github.com/claude-sandbox/claude-sandbox

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f
	golang.org/x/sys v0.50.0
)

require golang.org/x/tools v0.26.0 // indirect
