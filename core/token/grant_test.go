package token

import (
	"strings"
	"testing"
	"time"
)

func TestMintUploadAndDownload(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	kr := NewRandomKeyring().WithClock(func() time.Time { return now })
	up, err := kr.MintUpload("http://h:1/", Upload{Principal: "p", MaxSize: 10, Accept: []string{"image/*"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(up.URL, "http://h:1/u/") || up.Method != "POST" || len(up.UploadID) != 32 ||
		!up.Expires.Equal(now.Add(DefaultUploadTTL)) {
		t.Fatalf("upload = %+v", up)
	}
	c, err := kr.Verify(strings.TrimPrefix(up.URL, "http://h:1/u/"), PurposeUpload)
	if err != nil {
		t.Fatal(err)
	}
	if c.Nonce != up.UploadID || c.MaxSize != 10 || c.Principal != "p" || c.Object != "" {
		t.Fatalf("claims = %+v", c)
	}
	for in, want := range map[string]string{"a.png": "a.png", "../x/../b.txt": "b.txt", `C:\dir\c.pdf`: "c.pdf", "": "file", "..": "file"} {
		if got := UploadObjectKey(c, in); got != "uploads/"+up.UploadID+"/"+want {
			t.Errorf("UploadObjectKey(%q) = %q", in, got)
		}
	}
	if _, err := kr.MintUpload("x", Upload{}); err == nil {
		t.Fatal("MintUpload without maxSize succeeded")
	}

	d, err := kr.MintDownload("http://h:1", DownloadGrant{Key: "a/b", Filename: "n.txt", SingleUse: true, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c, err = kr.Verify(d.Token, PurposeDownload)
	if err != nil || c.Object != "a/b" || c.Filename != "n.txt" || !c.SingleUse || !c.Expires.Equal(now.Add(time.Minute)) {
		t.Fatalf("download claims = %+v, %v", c, err)
	}
	if d.URL != "http://h:1/d/"+d.Token {
		t.Fatalf("url = %q", d.URL)
	}
}
