package testscripts

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// dnsLog ADDR FILE is a DNS server on UDP ADDR that appends every name it
// is asked for to FILE and answers that it does not exist: the red-team
// container's resolver, so a case can tell whether a name left the sandbox.
func dnsLog(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dns-log ADDR FILE")
		return 2
	}
	conn, err := net.ListenPacket("udp", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dns-log:", err)
		return 1
	}
	buf := make([]byte, 512)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dns-log:", err)
			return 1
		}
		if n < 12 {
			continue
		}
		if f, err := os.OpenFile(args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintln(f, queryName(buf[12:n]))
			f.Close()
		}
		answer := append([]byte{}, buf[:n]...)
		answer[2] |= 0x80              // a response
		answer[3] = answer[3]&0xf0 | 3 // NXDOMAIN
		conn.WriteTo(answer, from)
	}
}

// queryName reads the first question's name of a DNS message body.
func queryName(b []byte) string {
	var labels []string
	for len(b) > 0 && b[0] != 0 && int(b[0]) < len(b) {
		labels = append(labels, string(b[1:1+b[0]]))
		b = b[1+b[0]:]
	}
	return strings.Join(labels, ".")
}
