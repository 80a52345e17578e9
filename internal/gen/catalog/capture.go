package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// respValue is a decoded RESP2 reply: enough of the protocol to read
// COMMAND INFO, COMMAND DOCS and INFO.
type respValue struct {
	kind byte // '+', '-', ':', '$', '*'
	str  string
	num  int64
	arr  []respValue
	null bool
}

func readValue(r *bufio.Reader) (respValue, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return respValue{}, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return respValue{}, errors.New("empty RESP line")
	}
	v := respValue{kind: line[0]}
	body := line[1:]
	switch v.kind {
	case '+', '-':
		v.str = body
	case ':':
		v.num, err = strconv.ParseInt(body, 10, 64)
	case '$':
		n, perr := strconv.Atoi(body)
		if perr != nil {
			return v, perr
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		b := make([]byte, n+2)
		if _, err = io.ReadFull(r, b); err != nil {
			return v, err
		}
		v.str = string(b[:n])
	case '*':
		n, perr := strconv.Atoi(body)
		if perr != nil {
			return v, perr
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		v.arr = make([]respValue, n)
		for i := range v.arr {
			if v.arr[i], err = readValue(r); err != nil {
				return v, err
			}
		}
	default:
		return v, fmt.Errorf("unexpected RESP2 type %q", v.kind)
	}
	return v, err
}

type respConn struct {
	c net.Conn
	r *bufio.Reader
}

func (c *respConn) do(args ...string) (respValue, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return respValue{}, err
	}
	if _, err := io.WriteString(c.c, b.String()); err != nil {
		return respValue{}, err
	}
	v, err := readValue(c.r)
	if err == nil && v.kind == '-' {
		err = fmt.Errorf("%s: %s", strings.Join(args, " "), v.str)
	}
	return v, err
}

// flatMap reads a RESP2 map reply (a flat array of key, value pairs).
func flatMap(v respValue) map[string]respValue {
	m := make(map[string]respValue, len(v.arr)/2)
	for i := 0; i+1 < len(v.arr); i += 2 {
		m[v.arr[i].str] = v.arr[i+1]
	}
	return m
}

func strs(v respValue) []string {
	out := make([]string, 0, len(v.arr))
	for _, e := range v.arr {
		out = append(out, e.str)
	}
	return out
}

// captureLive replaces the live part of s with COMMAND INFO and COMMAND DOCS
// read from the server at addr. Entries imported from JSON specifications
// for commands the server does not know are kept.
func captureLive(s *snapshot, addr string) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	c := &respConn{c: nc, r: bufio.NewReader(nc)}

	info, err := c.do("INFO", "server")
	if err != nil {
		return err
	}
	version := ""
	for _, line := range strings.Split(info.str, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			version = v
		}
	}
	if version == "" {
		return errors.New("INFO server: no redis_version")
	}
	cmds, err := c.do("COMMAND", "INFO")
	if err != nil {
		return err
	}
	docs, err := c.do("COMMAND", "DOCS")
	if err != nil {
		return err
	}
	docMap := map[string]map[string]respValue{}
	for name, d := range flatMap(docs) {
		dm := flatMap(d)
		docMap[name] = dm
		if subs, ok := dm["subcommands"]; ok {
			for sub, sd := range flatMap(subs) {
				docMap[sub] = flatMap(sd)
			}
		}
	}

	source := "redis-server " + version + " COMMAND INFO + COMMAND DOCS"
	live := map[string]bool{}
	var add func(v respValue) error
	add = func(v respValue) error {
		if len(v.arr) < 10 {
			return fmt.Errorf("COMMAND INFO entry with %d fields", len(v.arr))
		}
		name, sub := splitName(v.arr[0].str)
		d := docMap[v.arr[0].str]
		if d == nil {
			return fmt.Errorf("%s: no COMMAND DOCS entry", v.arr[0].str)
		}
		acl := []string{}
		for _, a := range strs(v.arr[6]) {
			acl = append(acl, strings.TrimPrefix(a, "@"))
		}
		sc := &specCommand{
			Name:     name,
			Sub:      sub,
			Group:    d["group"].str,
			Summary:  d["summary"].str,
			Since:    d["since"].str,
			Origin:   "redis",
			Source:   source,
			Arity:    int(v.arr[1].num),
			Flags:    sortByOrder(strs(v.arr[2]), flagOrder),
			FirstKey: int(v.arr[3].num),
			LastKey:  int(v.arr[4].num),
			KeyStep:  int(v.arr[5].num),
			ACL:      sortByOrder(acl, aclOrder),
		}
		live[sc.fullName()] = true
		s.put(sc, true)
		for _, subv := range v.arr[9].arr {
			if err := add(subv); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range cmds.arr {
		if err := add(v); err != nil {
			return err
		}
	}
	// Drop entries of an earlier live capture that this server no longer lists.
	kept := s.Commands[:0]
	for _, c := range s.Commands {
		if strings.HasPrefix(c.Source, "redis-server ") && !live[c.fullName()] {
			continue
		}
		kept = append(kept, c)
	}
	s.Commands = kept
	s.addSource(source + " from a live server")
	return nil
}

// put adds c, replacing an entry of the same name only when replace is set.
func (s *snapshot) put(c *specCommand, replace bool) bool {
	for i, old := range s.Commands {
		if old.Name == c.Name && old.Sub == c.Sub {
			if replace {
				s.Commands[i] = c
			}
			return replace
		}
	}
	s.Commands = append(s.Commands, c)
	return true
}

func (s *snapshot) addSource(line string) {
	for _, l := range s.Sources {
		if l == line {
			return
		}
	}
	s.Sources = append(s.Sources, line)
}
