// Command fakeclaude stands in for the real Claude Code in installer
// scripts: an ELF for this machine that answers --version like Claude Code
// and otherwise says whether it runs inside a claude-sandbox.
package main

import (
	"fmt"
	"os"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println("2.1.999 (Claude Code)")
		return
	}
	where := "outside"
	if _, err := os.Stat(layout.InsideMarker); err == nil {
		where = "inside"
	}
	fmt.Println("fakeclaude", where, os.Args[1:])
}
