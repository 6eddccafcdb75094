// Command fakeclaude stands in for the real Claude Code in installer
// scripts: an ELF for this machine that answers --version like Claude Code.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println("2.1.999 (Claude Code)")
		return
	}
	fmt.Println("fakeclaude", os.Args[1:])
}
