package blobdecode

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// refAnswer is what encoding/json and encoding/base64 make of an answer:
// the oracle of the tests and fuzz targets.
type refAnswer struct {
	Method *string          `json:"method"`
	ID     *json.RawMessage `json:"id"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Blob     *string `json:"blob"`
			Text     *string `json:"text"`
		} `json:"contents"`
	} `json:"result"`
}

// refContent decodes the first content of one answer the reference way;
// ok is false when the reference finds no content to stream.
func refContent(msg []byte) (out []byte, h Header, ok bool) {
	var a refAnswer
	if json.Unmarshal(msg, &a) != nil || a.Result == nil || len(a.Result.Contents) == 0 {
		return nil, h, false
	}
	c := a.Result.Contents[0]
	h = Header{URI: c.URI, MimeType: c.MimeType}
	switch {
	case c.Blob != nil && c.Text == nil:
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		h.Kind = Blob
		return b, h, err == nil
	case c.Text != nil && c.Blob == nil:
		h.Kind = Text
		return []byte(*c.Text), h, true
	}
	return nil, h, false
}

// refEvents splits an SSE body into the data of its dispatched events of
// type message, as the SSE specification does (the whole body in memory).
func refEvents(body string) []string {
	var (
		events []string
		data   strings.Builder
		has    bool
		typ    string
	)
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	lines := strings.Split(body, "\n")
	lines = lines[:len(lines)-1] // the last piece is not a whole line
	for _, line := range lines {
		if line == "" {
			if has && (typ == "" || typ == "message") {
				events = append(events, strings.TrimSuffix(data.String(), "\n"))
			}
			data.Reset()
			has, typ = false, ""
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case name == "data":
			data.WriteString(value + "\n")
			has = true
		case name == "event" && !has: // judged at the first data line
			typ = value
		}
	}
	return events
}

// refSSE is the reference content of an SSE body: that of the first
// event that is neither empty nor a message with a method.
func refSSE(body string) (out []byte, h Header, ok bool) {
	for _, ev := range refEvents(body) {
		if strings.Trim(ev, " \t\r\n") == "" {
			continue
		}
		var a refAnswer
		if json.Unmarshal([]byte(ev), &a) != nil {
			return nil, h, false
		}
		if a.Method != nil {
			continue
		}
		return refContent([]byte(ev))
	}
	return nil, h, false
}

// sseEvent frames msg as one SSE message event.
func sseEvent(msg string) string { return "event: message\ndata: " + msg + "\n\n" }

// b64 is the standard base64 of s.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// answer is a resources/read answer with id 1 and one content whose
// members are given as JSON text.
func answer(content string) string {
	return `{"jsonrpc":"2.0","id":1,"result":{"contents":[{` + content + `}]}}`
}
