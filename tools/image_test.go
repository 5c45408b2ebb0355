package tools

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strconv"
	"testing"
)

// TestImageInfo: the four types are told by their first bytes and their
// size in pixels read from the header (WebP's three chunk kinds too);
// ImageNote says both, and the decoded size.
func TestImageInfo(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	enc := map[string]func(*bytes.Buffer){
		MimePNG:  func(b *bytes.Buffer) { _ = png.Encode(b, img) },
		MimeJPEG: func(b *bytes.Buffer) { _ = jpeg.Encode(b, img, nil) },
		MimeGIF:  func(b *bytes.Buffer) { _ = gif.Encode(b, img, nil) },
	}
	for mime, f := range enc {
		var b bytes.Buffer
		f(&b)
		if got := SniffImage(b.Bytes()); got != mime {
			t.Errorf("SniffImage of a %s: %q", mime, got)
		}
		c := Image(base64.StdEncoding.EncodeToString(b.Bytes()), mime)
		if w, h, ok := ImageInfo(c); !ok || w != 640 || h != 480 {
			t.Errorf("%s: %d×%d %v", mime, w, h, ok)
		}
	}
	riff := func(chunk string, body []byte) []byte {
		b := append([]byte("RIFF\x00\x00\x00\x00WEBP"+chunk+"\x00\x00\x00\x00"), body...)
		return append(b, make([]byte, 16)...)
	}
	webps := map[string][]byte{
		// VP8X: flags, 3 reserved bytes, width-1 and height-1 in 24 bits.
		"VP8X": riff("VP8X", []byte{0, 0, 0, 0, 0x7f, 0x02, 0, 0xdf, 0x01, 0}),
		// VP8L: signature 0x2f, then 14-bit width-1 and height-1.
		"VP8L": riff("VP8L", []byte{0x2f, 0x7f, 0xc2, 0x77, 0x00}),
		// VP8: a key frame's 3 bytes, the start code, 14-bit sizes.
		"VP8 ": riff("VP8 ", []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01}),
	}
	for kind, b := range webps {
		if SniffImage(b) != MimeWebP {
			t.Errorf("%s: not sniffed as WebP", kind)
		}
		if w, h, ok := ImageInfo(Image(base64.StdEncoding.EncodeToString(b), MimeWebP)); !ok || w != 640 || h != 480 {
			t.Errorf("WebP %s: %d×%d %v", kind, w, h, ok)
		}
	}
	if SniffImage([]byte("hello world!")) != "" || SniffImage(nil) != "" {
		t.Error("text sniffed as an image")
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	c := Image(base64.StdEncoding.EncodeToString(b.Bytes()), MimePNG)
	kib := (b.Len() + 512) / 1024
	if got, want := ImageNote(c, "model takes no images"), "[image: 640×480 PNG, "+strconv.Itoa(kib)+" KiB — model takes no images]"; got != want {
		t.Errorf("ImageNote = %q, want %q", got, want)
	}
	if got := ImageNote(Image("AAAA", "image/heic"), ""); got != "[image: HEIC, 3 bytes]" {
		t.Errorf("ImageNote of an unknown image = %q", got)
	}
}
