package retry

import "testing"

func TestErrorsString(t *testing.T) {
	tests := []struct {
		e    Errors
		want string
	}{
		{0, "Default"},
		{None, "None"},
		{ConnectionLoss, "ConnectionLoss"},
		{ConnectionLoss | Loading, "ConnectionLoss|Loading"},
		{DefaultErrors, "ConnectionLoss|Loading|TryAgain|MasterDown|ReadOnly"},
		{None | ReadOnly, "ReadOnly|None"},
		{1<<5 | TryAgain, "TryAgain|0x20"},
		{1 << 6, "0x40"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("Errors(%#x).String(): got %q, want %q", uint8(tt.e), got, tt.want)
		}
	}
}

func TestFailureSelected(t *testing.T) {
	all := Errors(0xff)
	tests := []struct {
		f    Failure
		bit  Errors
		name string
	}{
		{Unselectable, 0, "Unselectable"},
		{Fatal, 0, "Fatal"},
		{LostConnection, ConnectionLoss, "LostConnection"},
		{LoadingReply, Loading, "LoadingReply"},
		{TryAgainReply, TryAgain, "TryAgainReply"},
		{MasterDownReply, MasterDown, "MasterDownReply"},
		{ReadOnlyReply, ReadOnly, "ReadOnlyReply"},
		{7, 0, "Failure(7)"},
		{255, 0, "Failure(255)"},
	}
	for _, tt := range tests {
		if got, want := tt.f.Selected(all), tt.bit != 0; got != want {
			t.Errorf("%v.Selected(all): got %v, want %v", tt.f, got, want)
		}
		if got := tt.f.Selected(all &^ tt.bit); got {
			t.Errorf("%v.Selected(all without own bit): got true, want false", tt.f)
		}
		if got := tt.f.Selected(0); got {
			t.Errorf("%v.Selected(0): got true, want false", tt.f)
		}
		if got := tt.f.Selected(None); got {
			t.Errorf("%v.Selected(None): got true, want false", tt.f)
		}
		if got := tt.f.String(); got != tt.name {
			t.Errorf("String(): got %q, want %q", got, tt.name)
		}
	}
}

func TestClassifyCode(t *testing.T) {
	tests := []struct {
		code string
		want Failure
	}{
		{"LOADING", LoadingReply},
		{"TRYAGAIN", TryAgainReply},
		{"MASTERDOWN", MasterDownReply},
		{"READONLY", ReadOnlyReply},
		{"NOAUTH", Fatal},
		{"WRONGPASS", Fatal},
		{"NOPERM", Fatal},
		{"loading", Unselectable},
		{"Loading", Unselectable},
		{"LOADINGX", Unselectable},
		{"LOADING Redis is loading the dataset in memory", Unselectable},
		{" LOADING", Unselectable},
		{"BUSY", Unselectable},
		{"CLUSTERDOWN", Unselectable},
		{"ERR", Unselectable},
		{"NOSCRIPT", Unselectable},
		{"MOVED", Unselectable},
		{"ASK", Unselectable},
		{"noauth", Unselectable},
		{"", Unselectable},
	}
	for _, tt := range tests {
		if got := ClassifyCode(tt.code); got != tt.want {
			t.Errorf("ClassifyCode(%q): got %v, want %v", tt.code, got, tt.want)
		}
	}
}
