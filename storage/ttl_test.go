package storage

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseTTL(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string // a phrase of the error, "" for none
	}{
		{"1", time.Second, ""},
		{"3600", time.Hour, ""},
		{" 60 ", time.Minute, ""},
		{"315360000", MaxTTL, ""},
		{"0", 0, "below 1"},
		{"-5", 0, "below 1"},
		{"315360001", 0, "above the maximum 315360000"},
		{"99999999999999999999999", 0, "above the maximum"},
		{"1.5", 0, "whole number"},
		{"1e3", 0, "whole number"},
		{"abc", 0, "whole number"},
		{"", 0, "whole number"},
		{"0x10", 0, "whole number"},
	} {
		got, err := ParseTTL(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !errors.Is(err, ErrInvalidTTL) || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "ttlSeconds")):
			t.Errorf("ParseTTL(%q) = %v, %v; want an error naming ttlSeconds with %q", tt.in, got, err, tt.err)
		}
	}
}

func TestCheckTTLNumber(t *testing.T) {
	for _, tt := range []struct {
		in  float64
		err string
	}{
		{60, ""}, {0, "below 1"}, {-1, "below 1"}, {0.5, "below 1"}, {1.5, "whole number"},
		{1e30, "above the maximum"}, {float64(MaxTTLSeconds) + 1, "above the maximum"},
	} {
		_, err := CheckTTLNumber(tt.in)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("CheckTTLNumber(%g) = %v, want %q", tt.in, err, tt.err)
		}
	}
}

func TestCapTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		ttl     time.Duration
		expires time.Time
		want    time.Duration
	}{
		{time.Hour, time.Time{}, time.Hour},
		{time.Hour, now.Add(time.Minute), time.Minute},
		{time.Minute, now.Add(time.Hour), time.Minute},
		{time.Hour, now.Add(100 * time.Millisecond), time.Second},
		{time.Hour, now.Add(-time.Minute), time.Second},
	} {
		if got := CapTTL(tt.ttl, tt.expires, now); got != tt.want {
			t.Errorf("CapTTL(%v, %v) = %v, want %v", tt.ttl, tt.expires, got, tt.want)
		}
	}
}
