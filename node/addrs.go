package node

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// ifaceAddrs is what filterAddrs needs to know about one network interface.
type ifaceAddrs struct {
	Name  string
	Flags net.Flags
	Addrs []net.Addr
}

// localIPs lists this machine's unicast addresses for report_ip. It reads
// only the local interface table and never contacts any outside service.
// Loopback addresses are left out on purpose: the server routes file
// requests by client IP, and every request from 127.0.0.1 would then come to
// this node (protocol.md §2.2.2).
func localIPs() ([]string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	seen := make([]ifaceAddrs, 0, len(ifaces))
	var errs []error
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			errs = append(errs, fmt.Errorf("reading addresses of interface %s: %w", ifc.Name, err))
			continue
		}
		seen = append(seen, ifaceAddrs{Name: ifc.Name, Flags: ifc.Flags, Addrs: addrs})
	}
	ips := filterAddrs(seen)
	// One unreadable interface is not worth failing for when others answered.
	if len(ips) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ips, nil
}

// filterAddrs keeps the addresses worth reporting: from interfaces that are
// up and not loopback, IPv4 and global IPv6 unicast only (no loopback,
// link-local, multicast or unspecified). The result is deduplicated and in
// a stable order, IPv4 first, each family sorted numerically; it is never nil
// so it encodes as [] rather than null.
func filterAddrs(ifaces []ifaceAddrs) []string {
	var kept []netip.Addr
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		for _, a := range ifc.Addrs {
			ip, ok := addrIP(a)
			if !ok || !ip.IsGlobalUnicast() {
				// IsGlobalUnicast is false for loopback, link-local,
				// multicast, unspecified and the IPv4 broadcast address.
				continue
			}
			kept = append(kept, ip)
		}
	}
	// Compare orders IPv4 before IPv6, then by value.
	slices.SortFunc(kept, netip.Addr.Compare)
	kept = slices.Compact(kept)
	out := make([]string, 0, len(kept))
	for _, ip := range kept {
		out = append(out, ip.String())
	}
	return out
}

// addrIP extracts the IP of an interface address, with IPv4-mapped IPv6
// addresses turned back into IPv4 and any zone dropped.
func addrIP(a net.Addr) (netip.Addr, bool) {
	var raw net.IP
	switch v := a.(type) {
	case *net.IPNet:
		raw = v.IP
	case *net.IPAddr:
		raw = v.IP
	default:
		return netip.Addr{}, false
	}
	ip, ok := netip.AddrFromSlice(raw)
	if !ok {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}
