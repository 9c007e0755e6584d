package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// mpVariant is a hostile multipart/form-data upload to a fresh /u
// endpoint: spec is the endpoint's (POST /v1/uploads), ctype the
// Content-Type for boundary b, body the body for b and marker m.
type mpVariant struct {
	label string
	want  Want
	spec  map[string]any
	ctype func(b string) string
	body  func(b, m string) string
	check func(context.Context, *Env, *wire.Answer) string
}

func formData(b string) string { return "multipart/form-data; boundary=" + b }

// filePart is one part named "file".
func filePart(b, filename, ctype, content string) string {
	return fmt.Sprintf("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n%s\r\n", b, filename, ctype, content)
}

func oneFile(filename, ctype string) func(b, m string) string {
	return func(b, m string) string { return filePart(b, filename, ctype, m) + "--" + b + "--\r\n" }
}

var mpVariants = []mpVariant{
	{label: "a well-formed upload", want: WantAccept, body: oneFile("x.txt", "text/plain")},
	{label: "no boundary parameter", want: WantReject, ctype: func(string) string { return "multipart/form-data" }, body: oneFile("x.txt", "text/plain")},
	{label: "empty boundary", want: WantReject, ctype: func(string) string { return "multipart/form-data; boundary=" }, body: oneFile("x.txt", "text/plain")},
	{label: "boundary of 200 characters", want: WantEither, ctype: func(string) string { return formData(strings.Repeat("b", 200)) },
		body: func(_, m string) string { return oneFile("x.txt", "text/plain")(strings.Repeat("b", 200), m) }},
	{label: "unbalanced quote in the boundary", want: WantReject, ctype: func(b string) string { return `multipart/form-data; boundary="` + b }, body: oneFile("x.txt", "text/plain")},
	{label: "two boundary parameters", want: WantReject, ctype: func(b string) string { return formData(b) + "; boundary=other" }, body: oneFile("x.txt", "text/plain")},
	{label: "no closing boundary", want: WantReject, body: func(b, m string) string { return filePart(b, "x.txt", "text/plain", m) }},
	{label: "no parts", want: WantReject, body: func(b, _ string) string { return "--" + b + "--\r\n" }},
	{label: "a part without Content-Disposition", want: WantReject, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Type: text/plain\r\n\r\n" + m + "\r\n--" + b + "--\r\n"
	}},
	{label: "only a field named other", want: WantReject, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\n" + m + "\r\n--" + b + "--\r\n"
	}},
	{label: "1,000 file parts on a single-file endpoint", want: WantReject, body: func(b, m string) string {
		return strings.Repeat(filePart(b, "x.txt", "text/plain", m), 1000) + "--" + b + "--\r\n"
	}},
	{label: "10,000 small fields, then the file", want: WantEither, body: func(b, m string) string {
		return strings.Repeat("--"+b+"\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n", 10000) + oneFile("x.txt", "text/plain")(b, m)
	}},
	{label: "a part header of 100 KiB", want: WantReject, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + strings.Repeat("n", 100<<10) + "\"\r\n\r\n" + m + "\r\n--" + b + "--\r\n"
	}},
	{label: "1,000 part headers", want: WantReject, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"\r\n" + strings.Join(manyHeaders(1000), "\r\n") + "\r\n\r\n" + m + "\r\n--" + b + "--\r\n"
	}},
	{label: "filename ../../etc/passwd", want: WantEither, body: oneFile("../../etc/passwd", "text/plain"), check: cleanStored},
	{label: "filename .mcpblob", want: WantEither, body: oneFile(".mcpblob", "text/plain"), check: cleanStored},
	{label: "filename with CR LF (RFC 8187)", want: WantEither, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''a%0D%0AX-Injected%3A%201.txt\r\nContent-Type: text/plain\r\n\r\n" + m + "\r\n--" + b + "--\r\n"
	}, check: cleanStored},
	{label: "filename with NUL", want: WantEither, body: oneFile("a\x00b.txt", "text/plain"), check: cleanStored},
	{label: "filename of 8 KiB", want: WantEither, body: oneFile(strings.Repeat("f", 8<<10)+".txt", "text/plain"), check: cleanStored},
	{label: "accept .pdf, x.pdf declared text/html", want: WantReject, spec: map[string]any{"accept": []string{".pdf"}},
		body: func(b, m string) string {
			return filePart(b, "x.pdf", "text/html", "<html><script>alert(1)</script>"+m) + "--" + b + "--\r\n"
		}},
	{label: "accept image/png, text content declared image/png", want: WantReject, spec: map[string]any{"accept": []string{"image/png"}}, body: oneFile("x.png", "image/png")},
	{label: "a nested multipart/mixed part", want: WantEither, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"\r\nContent-Type: multipart/mixed; boundary=inner\r\n\r\n--inner\r\nContent-Type: text/plain\r\n\r\n" + m + "\r\n--inner--\r\n\r\n--" + b + "--\r\n"
	}},
	{label: "Content-Transfer-Encoding: base64", want: WantEither, body: func(b, m string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" + m + "\r\n--" + b + "--\r\n"
	}},
	{label: "LF line endings", want: WantEither, body: func(b, m string) string {
		return strings.ReplaceAll(oneFile("x.txt", "text/plain")(b, m), "\r\n", "\n")
	}},
	{label: "a preamble of 1 MiB", want: WantEither, body: func(b, m string) string {
		return strings.Repeat("p", 1<<20) + "\r\n" + oneFile("x.txt", "text/plain")(b, m)
	}},
	{label: "the boundary inside the content", want: WantAccept, body: func(b, m string) string {
		return filePart(b, "x.txt", "text/plain", m+"--"+b+"x") + "--" + b + "--\r\n"
	}},
	{label: "not multipart (text/plain)", want: WantReject, ctype: func(string) string { return "text/plain" }, body: oneFile("x.txt", "text/plain")},
}

// multipartAbuse sends every variant, each to an endpoint minted for it.
func multipartAbuse(ctx context.Context, e *Env) []Batch {
	var cs []Case
	for _, v := range mpVariants {
		cs = append(cs, Case{Name: v.label, Want: v.want, Stores: true, Check: v.check, Send: func(ctx context.Context, e *Env) *wire.Answer {
			spec := v.spec
			if spec == nil {
				spec = map[string]any{}
			}
			tok := e.MintUpload(ctx, "alice", spec)
			b := fmt.Sprintf("hardB%d", next())
			ct := formData(b)
			if v.ctype != nil {
				ct = v.ctype(b)
			}
			req := e.Request(ctx, http.MethodPost, "/u/"+tok, "", []byte(v.body(b, e.sec.Marker())))
			req.Header.Set("Content-Type", ct)
			return e.sendHTTP(ctx, req)
		}})
	}
	return []Batch{{"multipart", U, cs}}
}

// cleanStored fails a success that stored a key with a '..' segment or
// outside uploads/, or a filename with control characters.
func cleanStored(_ context.Context, _ *Env, a *wire.Answer) string {
	var v any
	if a.Status/100 != 2 || json.Unmarshal(a.Body, &v) != nil {
		return ""
	}
	problem := ""
	wire.WalkJSON(v, func(m map[string]any) {
		if k, ok := m["key"].(string); ok && (strings.Contains("/"+k+"/", "/../") || !strings.HasPrefix(k, "uploads/")) {
			problem = fmt.Sprintf("stored under %q", k)
		}
		if f, ok := m["filename"].(string); ok && strings.ContainsAny(f, "\r\n\x00") {
			problem = fmt.Sprintf("stored the filename %q", wire.Clip(f, 60))
		}
	})
	return problem
}
