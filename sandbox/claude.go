package sandbox

// ClaudeCommand is the real binary at path with the caller's arguments:
// --chrome dropped and --no-chrome first, except for a lone --version (or
// -v), which Claude Code answers on its fast path only when it is the one
// argument, and `daemon`, which it takes as its subcommand only when first
// (behind --no-chrome, `daemon status` would be a prompt); neither starts
// a browser integration to keep out.
func ClaudeCommand(path string, args []string) []string {
	if VersionOnly(args) {
		return []string{path, args[0]}
	}
	if len(args) > 0 && args[0] == "daemon" {
		return append([]string{path}, args...)
	}
	return append([]string{path, "--no-chrome"}, ClaudeArgs(args)...)
}

// VersionOnly reports whether args ask Claude Code for its version alone.
func VersionOnly(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-v")
}

// ClaudeArgs drops --chrome; the launcher always adds --no-chrome.
func ClaudeArgs(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--chrome" || a == "--no-chrome" {
			continue
		}
		out = append(out, a)
	}
	return out
}
