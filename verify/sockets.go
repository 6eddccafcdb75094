package verify

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The socket family checks. The filter allows socket() for AF_INET,
// AF_INET6 and AF_NETLINK's NETLINK_ROUTE, refuses AF_UNIX with EPERM (see
// unixSocketRefused), every other family with EAFNOSUPPORT and every other
// netlink protocol with EPROTONOSUPPORT: the answers of a kernel without
// them. The refusal probes tell the filter from such a kernel by a flag bit
// the kernel rejects with EINVAL before it looks at the family: so even
// without a filter they create no socket and load no module, and the
// filter's answer is the only way to get EAFNOSUPPORT.

// invalidSocketFlag is a bit of the type argument that is neither a type
// nor SOCK_CLOEXEC or SOCK_NONBLOCK.
const invalidSocketFlag = 1 << 30

// familyNames are the kernel's names of the address families, by number.
var familyNames = [...]string{
	unix.AF_UNSPEC: "AF_UNSPEC", unix.AF_UNIX: "AF_UNIX", unix.AF_INET: "AF_INET", unix.AF_AX25: "AF_AX25",
	unix.AF_IPX: "AF_IPX", unix.AF_APPLETALK: "AF_APPLETALK", unix.AF_NETROM: "AF_NETROM", unix.AF_BRIDGE: "AF_BRIDGE",
	unix.AF_ATMPVC: "AF_ATMPVC", unix.AF_X25: "AF_X25", unix.AF_INET6: "AF_INET6", unix.AF_ROSE: "AF_ROSE",
	unix.AF_DECnet: "AF_DECnet", unix.AF_NETBEUI: "AF_NETBEUI", unix.AF_SECURITY: "AF_SECURITY", unix.AF_KEY: "AF_KEY",
	unix.AF_NETLINK: "AF_NETLINK", unix.AF_PACKET: "AF_PACKET", unix.AF_ASH: "AF_ASH", unix.AF_ECONET: "AF_ECONET",
	unix.AF_ATMSVC: "AF_ATMSVC", unix.AF_RDS: "AF_RDS", unix.AF_SNA: "AF_SNA", unix.AF_IRDA: "AF_IRDA",
	unix.AF_PPPOX: "AF_PPPOX", unix.AF_WANPIPE: "AF_WANPIPE", unix.AF_LLC: "AF_LLC", unix.AF_IB: "AF_IB",
	unix.AF_MPLS: "AF_MPLS", unix.AF_CAN: "AF_CAN", unix.AF_TIPC: "AF_TIPC", unix.AF_BLUETOOTH: "AF_BLUETOOTH",
	unix.AF_IUCV: "AF_IUCV", unix.AF_RXRPC: "AF_RXRPC", unix.AF_ISDN: "AF_ISDN", unix.AF_PHONET: "AF_PHONET",
	unix.AF_IEEE802154: "AF_IEEE802154", unix.AF_CAIF: "AF_CAIF", unix.AF_ALG: "AF_ALG", unix.AF_NFC: "AF_NFC",
	unix.AF_VSOCK: "AF_VSOCK", unix.AF_KCM: "AF_KCM", unix.AF_QIPCRTR: "AF_QIPCRTR", unix.AF_SMC: "AF_SMC",
	unix.AF_XDP: "AF_XDP", unix.AF_MCTP: "AF_MCTP",
}

// familyName names a family; AF_MAX and above are families a later kernel
// may add.
func familyName(f int) string {
	if f < len(familyNames) && familyNames[f] != "" {
		return familyNames[f]
	}
	return fmt.Sprintf("family %d", f)
}

// socketErr calls socket(2) and closes what it made at once.
func socketErr(family, typ, proto int) error {
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// socketpairErr calls socketpair(2) and closes what it made at once.
func socketpairErr(family, typ int) error {
	fds, err := unix.Socketpair(family, typ|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	return err
}

// refusedWith demands want from every call and, when some did not get it,
// names the first few with what they got instead.
func refusedWith(want unix.Errno, calls []string, errs []error) error {
	var wrong []string
	for i, err := range errs {
		switch {
		case err == nil:
			wrong = append(wrong, calls[i]+" succeeded")
		case !errors.Is(err, want):
			wrong = append(wrong, fmt.Sprintf("%s: %v", calls[i], err))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	shown := wrong[:min(len(wrong), 4)]
	more := ""
	if len(wrong) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(wrong)-len(shown))
	}
	return fmt.Errorf("%d of %d calls reached the kernel, not the filter's %s: %s%s (invalid argument is the kernel's answer to the probe's flag bit)",
		len(wrong), len(calls), unix.ErrnoName(want), strings.Join(shown, ", "), more)
}

// socketFamiliesRefused: socket() of every address family the sandbox does
// not need, and socketpair() of every family but AF_UNIX, are refused by
// the filter. AF_VSOCK is in no network namespace (it reaches the
// hypervisor and other VMs); the others are kernel surfaces no session
// needs. AF_MAX stands for the families later kernels add; AF_INET's
// SOCK_PACKET is the old alias of an AF_PACKET socket.
func socketFamiliesRefused(*facts) (string, error) {
	var calls []string
	var errs []error
	sockets, pairs := 0, 0
	for f := 0; f <= unix.AF_MAX; f++ {
		switch f {
		case unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK:
		default:
			calls = append(calls, "socket("+familyName(f)+")")
			errs = append(errs, socketErr(f, unix.SOCK_STREAM|invalidSocketFlag, 0))
			sockets++
		}
	}
	calls = append(calls, "socket(AF_INET, SOCK_PACKET)")
	errs = append(errs, socketErr(unix.AF_INET, unix.SOCK_PACKET|invalidSocketFlag, 0))
	for f := 0; f <= unix.AF_MAX; f++ {
		if f != unix.AF_UNIX {
			calls = append(calls, "socketpair("+familyName(f)+")")
			errs = append(errs, socketpairErr(f, unix.SOCK_STREAM|invalidSocketFlag))
			pairs++
		}
	}
	if err := refusedWith(unix.EAFNOSUPPORT, calls, errs); err != nil {
		return "", err
	}
	return fmt.Sprintf("socket() of %d families (AF_VSOCK, AF_PACKET, AF_ALG, AF_XDP, … up to %s), AF_INET's SOCK_PACKET and socketpair() of %d families refused with EAFNOSUPPORT",
		sockets, familyName(unix.AF_MAX), pairs), nil
}

// netlinkProtocolsRefused: every netlink protocol but NETLINK_ROUTE is
// refused by the filter: audit and the process connector are not
// namespaced, uevents describe the host's devices, and netfilter, xfrm and
// generic netlink are large kernel surfaces.
func netlinkProtocolsRefused(*facts) (string, error) {
	var calls []string
	var errs []error
	for p := 0; p < 32; p++ { // the kernel's MAX_LINKS
		if p != unix.NETLINK_ROUTE {
			calls = append(calls, fmt.Sprintf("socket(AF_NETLINK, %d)", p))
			errs = append(errs, socketErr(unix.AF_NETLINK, unix.SOCK_RAW|invalidSocketFlag, p))
		}
	}
	if err := refusedWith(unix.EPROTONOSUPPORT, calls, errs); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d netlink protocols but NETLINK_ROUTE (audit, uevents, netfilter, xfrm, generic, …) refused with EPROTONOSUPPORT", len(calls)), nil
}

// socketFamiliesAllowed: the families the sandbox needs can be created:
// inet and inet6 (the network), netlink's NETLINK_ROUTE (getaddrinfo,
// getifaddrs, ip) and unix socket pairs. A kernel without IPv6 (no
// /proc/sys/net/ipv6) is said so, not failed.
func socketFamiliesAllowed(*facts) (string, error) {
	type try struct {
		call string
		err  error
	}
	tries := []try{
		{"socket(AF_INET, SOCK_STREAM)", socketErr(unix.AF_INET, unix.SOCK_STREAM, 0)},
		{"socket(AF_INET, SOCK_DGRAM)", socketErr(unix.AF_INET, unix.SOCK_DGRAM, 0)},
		{"socket(AF_NETLINK, NETLINK_ROUTE)", socketErr(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)},
		{"socketpair(AF_UNIX, SOCK_STREAM)", socketpairErr(unix.AF_UNIX, unix.SOCK_STREAM)},
		{"socketpair(AF_UNIX, SOCK_DGRAM)", socketpairErr(unix.AF_UNIX, unix.SOCK_DGRAM)},
	}
	note := ""
	if _, err := os.Stat("/proc/sys/net/ipv6"); err == nil {
		tries = append(tries,
			try{"socket(AF_INET6, SOCK_STREAM)", socketErr(unix.AF_INET6, unix.SOCK_STREAM, 0)},
			try{"socket(AF_INET6, SOCK_DGRAM)", socketErr(unix.AF_INET6, unix.SOCK_DGRAM, 0)})
	} else {
		note = "; the kernel has no IPv6 (no /proc/sys/net/ipv6), AF_INET6 not tried"
	}
	var calls []string
	for _, t := range tries {
		if t.err != nil {
			return "", fmt.Errorf("%s failed: %w: programs that need it break", t.call, t.err)
		}
		calls = append(calls, t.call)
	}
	return strings.Join(calls, ", ") + " work" + note, nil
}
