package node

import (
	"net"
	"net/netip"
	"slices"
	"testing"
)

func ipNet(cidr string) net.Addr {
	ip, n, err := net.ParseCIDR(cidr)
	if err != nil {
		panic(err)
	}
	n.IP = ip
	return n
}

func ipAddr(s string) net.Addr { return &net.IPAddr{IP: net.ParseIP(s)} }

const up = net.FlagUp | net.FlagBroadcast | net.FlagMulticast

func TestFilterAddrs(t *testing.T) {
	tests := []struct {
		name   string
		ifaces []ifaceAddrs
		want   []string
	}{
		{"no interfaces", nil, []string{}},
		{"private IPv4 kept", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("192.168.1.20/24")}}}, []string{"192.168.1.20"}},
		{"public IPv4 kept", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("203.0.113.7/24")}}}, []string{"203.0.113.7"}},
		{"global IPv6 kept", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("2001:db8::5/64")}}}, []string{"2001:db8::5"}},
		{"unique-local IPv6 kept", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("fd12:3456::1/64")}}}, []string{"fd12:3456::1"}},
		{"IPAddr form kept", []ifaceAddrs{{"eth0", up, []net.Addr{ipAddr("10.0.0.2")}}}, []string{"10.0.0.2"}},
		{"IPv4-mapped IPv6 reported as IPv4", []ifaceAddrs{{"eth0", up, []net.Addr{ipAddr("::ffff:10.1.2.3")}}}, []string{"10.1.2.3"}},
		{"interface down", []ifaceAddrs{{"eth1", net.FlagBroadcast, []net.Addr{ipNet("192.168.9.9/24")}}}, []string{}},
		{"loopback interface", []ifaceAddrs{{"lo", net.FlagUp | net.FlagLoopback, []net.Addr{ipNet("127.0.0.1/8"), ipNet("10.9.9.9/32")}}}, []string{}},
		{"loopback address on a normal interface", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("127.0.0.2/8"), ipNet("::1/128")}}}, []string{}},
		{"IPv4 link-local", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("169.254.10.1/16")}}}, []string{}},
		{"IPv6 link-local", []ifaceAddrs{{"eth0", up, []net.Addr{ipNet("fe80::1/64"), ipAddr("fe80::abcd")}}}, []string{}},
		{"multicast", []ifaceAddrs{{"eth0", up, []net.Addr{ipAddr("224.0.0.251"), ipAddr("ff02::fb"), ipAddr("ff0e::1")}}}, []string{}},
		{"unspecified", []ifaceAddrs{{"eth0", up, []net.Addr{ipAddr("0.0.0.0"), ipAddr("::")}}}, []string{}},
		{"broadcast", []ifaceAddrs{{"eth0", up, []net.Addr{ipAddr("255.255.255.255")}}}, []string{}},
		{"non-IP address", []ifaceAddrs{{"eth0", up, []net.Addr{&net.UnixAddr{Name: "/x", Net: "unix"}, &net.IPAddr{}}}}, []string{}},
		{"duplicates across interfaces removed",
			[]ifaceAddrs{
				{"eth0", up, []net.Addr{ipNet("192.168.1.20/24")}},
				{"br0", up, []net.Addr{ipAddr("192.168.1.20"), ipAddr("::ffff:192.168.1.20")}},
			},
			[]string{"192.168.1.20"}},
		{"IPv4 first, each family sorted numerically",
			[]ifaceAddrs{
				{"eth0", up, []net.Addr{ipNet("2001:db8::10/64"), ipNet("192.168.1.20/24"), ipNet("fe80::1/64")}},
				{"wg0", net.FlagUp | net.FlagPointToPoint, []net.Addr{ipNet("2001:db8::9/128"), ipNet("10.0.0.2/32"), ipNet("9.9.9.9/32")}},
				{"lo", net.FlagUp | net.FlagLoopback, []net.Addr{ipNet("127.0.0.1/8")}},
			},
			[]string{"9.9.9.9", "10.0.0.2", "192.168.1.20", "2001:db8::9", "2001:db8::10"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := filterAddrs(tc.ifaces)
			if got == nil {
				t.Fatal("filterAddrs returned nil; it must encode as [] in report_ip")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("filterAddrs = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLocalIPsOnThisMachine reads the real interface table; whatever it
// holds, nothing unroutable may come out, and the order must be stable.
func TestLocalIPsOnThisMachine(t *testing.T) {
	ips, err := localIPs()
	if err != nil {
		t.Fatalf("localIPs: %v", err)
	}
	t.Logf("this machine reports %q", ips)
	var parsed []netip.Addr
	for _, s := range ips {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			t.Fatalf("localIPs returned %q, not an IP: %v", s, err)
		}
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || ip.Is4In6() || ip.Zone() != "" {
			t.Errorf("localIPs returned %s, which must not be reported", s)
		}
		parsed = append(parsed, ip)
	}
	if !slices.IsSortedFunc(parsed, netip.Addr.Compare) || len(slices.Compact(slices.Clone(parsed))) != len(parsed) {
		t.Errorf("localIPs = %q, want sorted (IPv4 first) and without duplicates", ips)
	}
	again, err := localIPs()
	if err != nil {
		t.Fatalf("localIPs, second call: %v", err)
	}
	if !slices.Equal(ips, again) {
		t.Errorf("localIPs changed between calls: %q then %q", ips, again)
	}
}
