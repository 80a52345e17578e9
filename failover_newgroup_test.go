package respire

// NewFailoverGroup's input: bad options and members refused before any
// dial, copied options, and the member failures that fail the group.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestFailoverNewGroupRejectsBadInputBeforeDialing(t *testing.T) {
	var dials atomic.Int64
	dialer := func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no dial expected")
	}
	m := func(addrs ...string) FailoverMember {
		return FailoverMember{Options: Options{Endpoints: addrs, Dialer: dialer}}
	}
	two := []FailoverMember{m("a.test:1"), m("b.test:1")}
	tests := []struct {
		name    string
		members []FailoverMember
		opts    FailoverGroupOptions
		field   string
	}{
		{"NoMembers", nil, FailoverGroupOptions{}, "members"},
		{"EmptyMembers", []FailoverMember{}, FailoverGroupOptions{}, "members"},
		{"DuplicateAddress", []FailoverMember{m("a.test:1"), m("a.test:1")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateAddressAnyCase", []FailoverMember{m("A.Test:1"), m("a.test:1")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateAddressPortWithZeros", []FailoverMember{m("a.test:6379"), m("a.test:06379")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateIPv6AddressWritten", []FailoverMember{m("[::1]:1"), m("[0:0::0:1]:1")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateClusterSeed", []FailoverMember{m("a.test:1"),
			{Options: Options{Endpoints: []string{"c.test:1", "a.test:1"}, Cluster: &ClusterOptions{}, Dialer: dialer}}},
			FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateSentinel", []FailoverMember{
			{Options: Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{"s.test:1"}}, Dialer: dialer}},
			{Options: Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{"S.test:1"}}, Dialer: dialer}}},
			FailoverGroupOptions{}, "members[1].Options"},
		{"MemberWithoutEndpoint", []FailoverMember{m()}, FailoverGroupOptions{}, "members[0].Options.Endpoints"},
		{"InvalidMemberOption", []FailoverMember{m("a.test:1"),
			{Options: Options{Endpoints: []string{"b.test:1"}, DialTimeout: -1}}},
			FailoverGroupOptions{}, "members[1].Options.DialTimeout"},
		{"MemberProcessHookReturnsNil", []FailoverMember{m("a.test:1"), {Options: Options{Endpoints: []string{"b.test:1"},
			Hooks: []Hook{nilReturningHook{"ProcessHook"}}, Dialer: dialer}}}, FailoverGroupOptions{}, "members[1].Options.Hooks[0]"},
		{"MemberBatchHookReturnsNil", []FailoverMember{m("a.test:1"), {Options: Options{Endpoints: []string{"b.test:1"},
			Hooks: []Hook{nilReturningHook{}, nilReturningHook{"ProcessBatchHook"}}, Dialer: dialer}}}, FailoverGroupOptions{}, "members[1].Options.Hooks[1]"},
		{"MemberMeterProviderPanics", []FailoverMember{m("a.test:1"), {Options: Options{Endpoints: []string{"b.test:1"},
			Metrics: MetricsCommands, MeterProvider: creationPanicProvider{}, Dialer: dialer}}},
			FailoverGroupOptions{}, "members[1].Options.MeterProvider"},
		{"InvalidMemberRetryPolicy", []FailoverMember{{Options: Options{Endpoints: []string{"b.test:1"},
			RetryPolicy: &RetryPolicy{Jitter: 2}}}}, FailoverGroupOptions{}, "members[0].Options.RetryPolicy.Jitter"},
		{"NegativeThreshold", two, FailoverGroupOptions{FailureThreshold: -1}, "FailoverGroupOptions.FailureThreshold"},
		{"ThresholdTooLarge", two, FailoverGroupOptions{FailureThreshold: 101}, "FailoverGroupOptions.FailureThreshold"},
		{"ProbeIntervalTooShort", two, FailoverGroupOptions{ProbeInterval: 5 * milli}, "FailoverGroupOptions.ProbeInterval"},
		{"NegativeProbeInterval", two, FailoverGroupOptions{ProbeInterval: -time.Second}, "FailoverGroupOptions.ProbeInterval"},
		{"ProbeTimeoutOverInterval", two, FailoverGroupOptions{ProbeInterval: 100 * milli, ProbeTimeout: 101 * milli}, "FailoverGroupOptions.ProbeTimeout"},
		{"NegativeProbeTimeout", two, FailoverGroupOptions{ProbeTimeout: -1}, "FailoverGroupOptions.ProbeTimeout"},
		{"NegativeCircuitOpenDuration", two, FailoverGroupOptions{CircuitOpenDuration: -1}, "FailoverGroupOptions.CircuitOpenDuration"},
		{"NegativeFailbackGrace", two, FailoverGroupOptions{FailbackGrace: -2}, "FailoverGroupOptions.FailbackGrace"},
		{"GroupRetryPolicy", two, FailoverGroupOptions{RetryPolicy: &RetryPolicy{MaxAttempts: 101}}, "FailoverGroupOptions.RetryPolicy.MaxAttempts"},
		{"UnknownMetricGroup", two, FailoverGroupOptions{Metrics: 1 << 7}, "FailoverGroupOptions.Metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewFailoverGroup(context.Background(), tt.members, tt.opts)
			if g != nil {
				_ = g.Close()
				t.Fatal("got a group for invalid input")
			}
			var ce *ConfigError
			if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.field {
				t.Errorf("field %q, want %q (%v)", ce.Field, tt.field, err)
			}
			if MayHaveExecuted(err) {
				t.Error("MayHaveExecuted = true for a configuration error")
			}
			if n := dials.Load(); n != 0 {
				t.Errorf("%d dials before validation failed", n)
			}
		})
	}
}

// A client's metric group in the group's options is refused with a
// reason that says which group applies, not as an unknown group.
func TestFailoverNewGroupRefusesClientMetricGroupsNamingTheGroupsOwn(t *testing.T) {
	for _, mg := range []MetricGroups{MetricsCommands, MetricsConnections, MetricsResiliency | MetricsCommands} {
		_, err := NewFailoverGroup(context.Background(), []FailoverMember{{Options: Options{Endpoints: []string{"a.test:1"}}}},
			FailoverGroupOptions{Metrics: mg})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "FailoverGroupOptions.Metrics" ||
			strings.Contains(ce.Reason, "unknown") || !strings.Contains(ce.Reason, "MetricsResiliency") {
			t.Errorf("Metrics %b: err = %v; want a ConfigError saying only MetricsResiliency applies", mg, err)
		}
	}
}

func TestFailoverNewGroupCopiesMemberOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		g := fakeGroup(t, members, bubbleOpts(), newFakeProbes(2).probe)
		members[0].Options.Endpoints[0] = "changed.test:1"
		if got := g.Members()[0].Addr; got != "member0.test:6379" {
			t.Errorf("member 0 is %q after the caller changed its slice", got)
		}
	})
}

// A member that could not connect at start is connected later by its
// probe, from the group's copy of its Options: the caller changing its
// Hooks slice or its ClientCache afterwards changes nothing.
func TestFailoverLateMemberConnectIgnoresCallersLaterChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		if err := srv[0].RefuseDials(1); err != nil {
			t.Fatal(err)
		}
		members[0].Options.Hooks = []Hook{swallowHook{}}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), nil) // real PING probes
		members[0].Options.Hooks[0] = nil             // would make Connect fail validation
		c.at(150 * milli)                             // the probe at 100 ms connects member 0
		if st := g.Members(); !st[0].Healthy || st[0].Client == nil {
			t.Fatalf("member 0 %+v: want it connected by its probe with the options it was given", st[0])
		}
	})
	// ClientCache needs CLIENT TRACKING, which the in-memory server lacks:
	// check the copy itself.
	o := Options{Endpoints: []string{"a.test:1"}, ClientCache: &CacheOptions{MaxEntries: 5}, Hooks: []Hook{swallowHook{}}}
	cp := copyOptions(o)
	o.ClientCache.MaxEntries = -1
	o.Hooks[0] = nil
	if cp.ClientCache.MaxEntries != 5 || cp.Hooks[0] == nil {
		t.Errorf("copy changed with the original: ClientCache %+v, Hooks %v", *cp.ClientCache, cp.Hooks)
	}
}

func TestFailoverNewGroupFailsWhenNoMemberConnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		for _, s := range srv {
			if err := s.RefuseDials(1); err != nil {
				t.Fatal(err)
			}
		}
		g, err := NewFailoverGroup(context.Background(), members, bubbleOpts())
		if g != nil {
			_ = g.Close()
			t.Fatal("got a group although no member connected")
		}
		if !errors.Is(err, ErrNoHealthyMember) || !errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("err = %v, want ErrNoHealthyMember and ErrConnectionLost", err)
		}
		for _, name := range []string{"member0.test:6379", "member1.test:6379"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, name)
			}
		}
	})
}

func TestFailoverNewGroupFailsWhenMemberRejectsHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[1].Engine().RequireAuth("secret")
		members[1].Options.Password = "wrong"
		g, err := NewFailoverGroup(context.Background(), members, bubbleOpts())
		if g != nil {
			_ = g.Close()
			t.Fatal("got a group with a member whose server rejects its password")
		}
		var se *ServerError
		if !errors.As(err, &se) || !se.IsAuth() {
			t.Fatalf("err = %v, want the server's authentication rejection", err)
		}
		if !strings.Contains(err.Error(), "failover member 1 (member1.test:6379)") {
			t.Errorf("error %q does not name the member", err)
		}
		synctest.Wait()
		if n := srv[0].Sessions(); n != 0 {
			t.Errorf("member 0's server has %d sessions: its client was not closed", n)
		}
	})
}

// A member whose server's TLS certificate does not verify (an unknown
// authority, another name) will not heal by itself either: the group fails
// at once, naming the member, instead of starting it as unreachable.
func TestFailoverNewGroupFailsWhenMemberCertificateDoesNotVerify(t *testing.T) {
	tc := newTestCert(t, "127.0.0.1")
	addr := tlsListener(t, tc.cert)
	for name, cfg := range map[string]*tls.Config{
		"UnknownAuthority": {MinVersion: tls.VersionTLS12},
		"OtherName":        {RootCAs: tc.pool, ServerName: "other.test", MinVersion: tls.VersionTLS12},
	} {
		t.Run(name, func(t *testing.T) {
			members, _ := memMembers(t, 0, 1)
			members[1].Options = Options{Endpoints: []string{addr}, TLS: cfg}
			g, err := NewFailoverGroup(context.Background(), members, FailoverGroupOptions{})
			if g != nil {
				_ = g.Close()
				t.Fatal("got a group with a member whose certificate does not verify")
			}
			var cv *tls.CertificateVerificationError
			if !errors.As(err, &cv) || !strings.Contains(err.Error(), "failover member 1 ("+addr+")") {
				t.Fatalf("err = %v, want the member's certificate verification failure, naming it", err)
			}
		})
	}
}
