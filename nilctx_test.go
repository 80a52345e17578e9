package respire

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
)

// ctxType is the reflect.Type of context.Context.
var ctxType = reflect.TypeFor[context.Context]()

// callNilCtx calls method m, whose first parameter is a context.Context,
// with a nil context and plausible other arguments, and returns the error
// it reports: its error result, or the first error an iterator it returns
// yields. A panic fails the test.
func callNilCtx(t *testing.T, c *Client, name string, m reflect.Value) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s(nil ctx) panicked: %v", name, r)
			err = ErrInvalidArgument // reported once
		}
	}()
	mt := m.Type()
	in := make([]reflect.Value, mt.NumIn())
	in[0] = reflect.Zero(ctxType)
	for i := 1; i < mt.NumIn(); i++ {
		in[i] = plausibleArg(c, mt.In(i), mt.IsVariadic() && i == mt.NumIn()-1)
	}
	var out []reflect.Value
	if mt.IsVariadic() {
		out = m.CallSlice(in)
	} else {
		out = m.Call(in)
	}
	for _, o := range out {
		if o.Type() == reflect.TypeFor[error]() && !o.IsNil() {
			return o.Interface().(error)
		}
	}
	for _, o := range out {
		if o.Kind() == reflect.Func && o.Type().NumIn() == 1 && o.Type().In(0).Kind() == reflect.Func {
			// An iterator: run it, keeping the first error it yields.
			yt := o.Type().In(0)
			var got error
			yield := reflect.MakeFunc(yt, func(args []reflect.Value) []reflect.Value {
				for _, a := range args {
					if e, ok := a.Interface().(error); ok && e != nil && got == nil {
						got = e
					}
				}
				return []reflect.Value{reflect.ValueOf(false)}
			})
			o.Call([]reflect.Value{yield})
			return got
		}
	}
	return nil
}

// plausibleArg returns an argument of type t a method would accept: c
// for a client, a key for a string (or any), 1 for a number, a no-op for
// a function.
func plausibleArg(c *Client, t reflect.Type, variadic bool) reflect.Value {
	switch {
	case variadic || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		s := reflect.MakeSlice(t, 1, 1)
		s.Index(0).Set(plausibleArg(c, t.Elem(), false))
		return s
	case t == reflect.TypeFor[any]():
		return reflect.ValueOf("nilctx")
	case t == reflect.TypeFor[time.Duration]():
		return reflect.ValueOf(time.Second)
	case t == reflect.TypeFor[Command]():
		return reflect.ValueOf(catalog.String.GET())
	case t == reflect.TypeFor[*Client]():
		return reflect.ValueOf(c)
	}
	switch t.Kind() {
	case reflect.String:
		return reflect.ValueOf("nilctx").Convert(t)
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Float64:
		return reflect.ValueOf(1).Convert(t)
	case reflect.Func:
		return reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, t.NumOut())
			for i := range out {
				out[i] = reflect.Zero(t.Out(i))
			}
			return out
		})
	}
	return reflect.Zero(t)
}

// checkNilCtxMethods calls every exported method of recv that takes a
// context first with a nil context, and asserts that each fails with an
// error matching ErrInvalidArgument, without panicking. (The error names
// the context unless the other arguments were refused first.)
func checkNilCtxMethods(t *testing.T, c *Client, recv any) int {
	t.Helper()
	v := reflect.ValueOf(recv)
	n, nilNamed := 0, 0
	for i := range v.NumMethod() {
		m := v.Method(i)
		name := v.Type().String() + "." + v.Type().Method(i).Name
		if m.Type().NumIn() == 0 || m.Type().In(0) != ctxType {
			continue
		}
		n++
		if err := callNilCtx(t, c, name, m); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s(nil ctx) = %v, want an error matching ErrInvalidArgument", name, err)
		} else if named := strings.Contains(err.Error(), "nil context"); named {
			nilNamed++
		}
	}
	t.Logf("%s: %d methods, %d of them refused the nil context itself", v.Type(), n, nilNamed)
	return n
}

// TestNilContextIsInvalidArgument: every call that takes a context, given
// a nil one, fails with an error matching ErrInvalidArgument that names
// the context, and never panics (a nil context is bad input).
func TestNilContextIsInvalidArgument(t *testing.T) {
	var nilCtx context.Context
	c := newClient(t, Options{})
	ctx := testCtx(t)

	if n := checkNilCtxMethods(t, c, c); n < 100 {
		t.Errorf("checked %d Client methods, want every typed command (100 or more)", n)
	}
	sub, err := c.Subscribe(ctx, key(t, "ch"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	checkNilCtxMethods(t, c, sub)
	checkNilCtxMethods(t, c, NewScript("return 1", ScriptOptions{}))
	checkNilCtxMethods(t, c, NewFunction("lib", "fn", FunctionOptions{}))
	if err := c.Dedicated(ctx, func(conn *Conn) error {
		checkNilCtxMethods(t, c, conn)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(ctx, func(tx *Tx) error {
		checkNilCtxMethods(t, c, tx)
		return nil
	}, key(t, "w")); err != nil {
		t.Fatal(err)
	}
	b := c.NewBatch()
	get := b.Get(key(t, "b"))
	checkNilCtxMethods(t, c, b)
	// The refused batch lost nothing: it executes with a real context.
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute after a nil context: %v", err)
	}
	if _, err := get.Result(); !errors.Is(err, ErrNil) {
		t.Errorf("GET member after a refused nil context = %v, want ErrNil (it ran)", err)
	}

	_, err = Connect(nilCtx, Options{Endpoints: []string{standaloneAddr(t)}})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Connect(nil ctx) = %v, want ErrInvalidArgument", err)
	}
	_, err = NewFailoverGroup(nilCtx, []FailoverMember{{Options: Options{Endpoints: []string{standaloneAddr(t)}}}}, FailoverGroupOptions{})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewFailoverGroup(nil ctx) = %v, want ErrInvalidArgument", err)
	}
	g, err := NewFailoverGroup(ctx, []FailoverMember{{Options: Options{Endpoints: []string{standaloneAddr(t)}}}}, FailoverGroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	checkNilCtxMethods(t, c, g)
	_, err = Execute(nilCtx, g, ReadOnly, func(ctx context.Context, c *Client) (int, error) { return 0, nil })
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Execute(nil ctx) = %v, want ErrInvalidArgument", err)
	}
}
