package global

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(m.Run())
}

func TestAny(t *testing.T) {}
