package exhaust

import (
	"bufio"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestReadEvent: a priming event (an id and an empty data line) is skipped;
// the first event with data is returned.
func TestReadEvent(t *testing.T) {
	stream := "id: 1-1\nretry: 1000\ndata: \n\nid: 1-2\nevent: message\ndata: {\"id\":1,\"method\":\"elicitation/create\"}\n\nid: 1-3\ndata: {}\n\n"
	ev, err := readEvent(bufio.NewReader(strings.NewReader(stream)))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(eventData(ev)); got != `{"id":1,"method":"elicitation/create"}` {
		t.Errorf("first event with data: %q", got)
	}
}

func TestQuantile(t *testing.T) {
	var l Latencies
	for i := 100; i >= 1; i-- {
		l.Samples = append(l.Samples, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		if got := l.Quantile(q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if (Latencies{}).Quantile(0.99) != 0 {
		t.Error("no samples: want 0")
	}
}

// TestBigCaps: valid JSON of about the size asked, no string near the
// 64 KiB a parameter string may have, the bulk where it was asked for.
func TestBigCaps(t *testing.T) {
	for _, inElicitation := range []bool{false, true} {
		b := bigCaps(capSize, inElicitation)
		var v map[string]map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if len(b) < capSize || len(b) > capSize+2000 {
			t.Errorf("size %d, want about %d", len(b), capSize)
		}
		_, inE := v["elicitation"]
		if inE != inElicitation || len(v) != 1 {
			t.Errorf("inElicitation %v: members %v", inElicitation, reflect.ValueOf(v).MapKeys())
		}
	}
}

// TestFlags: every limit has its flag.
func TestFlags(t *testing.T) {
	if got, want := len(Scaled.Flags()), 2*reflect.TypeFor[Limits]().NumField(); got != want {
		t.Errorf("%d flag arguments for %d limits", got, want/2)
	}
}
