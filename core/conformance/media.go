package conformance

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// fixturePNG is a 1×1 red PNG.
func fixturePNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("bug: conformance: png encode: " + err.Error())
	}
	return b.Bytes()
}

// fixtureWAV is 0.1 s of 8 kHz 8-bit mono silence.
func fixtureWAV() []byte {
	const rate, n = 8000, 800
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	b.Write(le.AppendUint32(nil, 36+n))
	b.WriteString("WAVEfmt ")
	b.Write(le.AppendUint32(nil, 16))
	b.Write(le.AppendUint16(nil, 1)) // PCM
	b.Write(le.AppendUint16(nil, 1)) // mono
	b.Write(le.AppendUint32(nil, rate))
	b.Write(le.AppendUint32(nil, rate)) // byte rate
	b.Write(le.AppendUint16(nil, 1))    // block align
	b.Write(le.AppendUint16(nil, 8))    // bits per sample
	b.WriteString("data")
	b.Write(le.AppendUint32(nil, n))
	b.Write(bytes.Repeat([]byte{128}, n))
	return b.Bytes()
}
