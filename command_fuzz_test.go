package respire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
)

// FuzzDispatch: what Do works out before it sends a raw command (its
// dispatch kind, a blocking command's block time, a cursor continuation,
// the keys' slot) never panics for any name given to NewCommand (a
// subcommand, an argument written into the name, an unknown command) and
// any arguments; a block time it cannot read is an ErrInvalidArgument.
func FuzzDispatch(f *testing.F) {
	for _, c := range catalog.All() {
		f.Add(c.FullName(), []byte("k\x000\x00v"))
	}
	for _, s := range [][2]string{
		{"XREAD BLOCK", "-1\x00STREAMS\x00k\x000"},
		{"XREADGROUP", "GROUP\x00g\x00BLOCK\x00BLOCK\x00x"},
		{"BLPOP", "k\x00NaN"}, {"BLPOP", "k\x001e400"}, {"BZMPOP", ""},
		{"WAIT", "1\x0099999999999999999999"}, {"CLIENT", "UNBLOCK\x00x"},
		{"client kill", "ID\x001"}, {"EVAL return", "1\x00k"}, {"SSCAN", "k\x000000"},
		{"module.cmd", "a\x00b"}, {" ", ""},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		cmd := NewCommand(name)
		if cmd.FullName() == "" {
			return // Do refuses it before anything else
		}
		var args []string
		if len(data) > 0 {
			for a := range bytes.SplitSeq(data, []byte{0}) {
				args = append(args, string(a))
			}
		}
		frame := appendCommand(nil, cmd, args)
		words := argWords(cmd, frame, nil)
		d := dispatchOf(cmd, words)
		if d.blocking {
			bt, err := blockTimeOf(d.name, d.serverArgs(cmd, words))
			if err != nil && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("%s %q: block time error %v is not ErrInvalidArgument", d.name, args, err)
			}
			if bt.d < 0 {
				t.Fatalf("%s %q: negative block time %v", d.name, args, bt.d)
			}
		}
		all := frameArgs(frame, nil)
		_ = cursorContinuation(d.desc, all)
		slot, _ := keySlot(d.desc, all)
		if slot < -1 || slot >= route.Slots {
			t.Fatalf("%s %q: slot %d", d.name, args, slot)
		}
		visitKeys(d.desc, all, func(k []byte) {
			if !bytes.Contains(frame, k) {
				t.Fatalf("%s %q: key %q is not in the frame", d.name, args, k)
			}
		})
	})
}
