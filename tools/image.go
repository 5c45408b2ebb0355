package tools

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig of GIF images (ImageInfo)
	_ "image/jpeg"
	_ "image/png"
	"io"
	"strings"
)

// MaxToolImageBytes bounds one image a tool gives the model (decoded
// bytes, 10 MiB): DeepSeek takes inline images within a 48 MiB request
// body, and every later request of the session carries the image again,
// so a larger one is refused with the reason rather than sent.
const MaxToolImageBytes = 10 << 20

// The image types the model endpoints take (DeepSeek's vision guide:
// JPEG, PNG, GIF and WebP, told apart by their content).
const (
	MimePNG  = "image/png"
	MimeJPEG = "image/jpeg"
	MimeGIF  = "image/gif"
	MimeWebP = "image/webp"
)

// SniffImage returns the type of the image whose first bytes are head
// (at least 12 for WebP), from its signature: MimePNG, MimeJPEG, MimeGIF
// or MimeWebP; "" when head starts none of them.
func SniffImage(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return MimePNG
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return MimeJPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return MimeGIF
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return MimeWebP
	}
	return ""
}

// ImageInfo reads the size in pixels of image content c from the start
// of its data; ok is false when c is not an image or its header does not
// say (a type other than the four, a cut or damaged file).
func ImageInfo(c Content) (width, height int, ok bool) {
	if c.Type != ContentImage || c.Data == "" {
		return 0, 0, false
	}
	// The data is decoded only as far as the header goes (a JPEG's frame
	// header may follow its metadata: at most 256 KiB are read); the
	// model history asks for this on every request.
	br := bufio.NewReaderSize(io.LimitReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(c.Data)), 256<<10), 4096)
	head, _ := br.Peek(30)
	if SniffImage(head) == MimeWebP {
		return webpSize(head)
	}
	cfg, _, err := image.DecodeConfig(br)
	if err != nil {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// webpSize reads a WebP header's canvas size: VP8X (extended), VP8L
// (lossless) or VP8 (lossy) as the first chunk.
func webpSize(b []byte) (int, int, bool) {
	if len(b) < 30 {
		return 0, 0, false
	}
	switch string(b[12:16]) {
	case "VP8X":
		w := 1 + (int(b[24]) | int(b[25])<<8 | int(b[26])<<16)
		h := 1 + (int(b[27]) | int(b[28])<<8 | int(b[29])<<16)
		return w, h, true
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, false
		}
		v := binary.LittleEndian.Uint32(b[21:25])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, true
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff), true
	}
	return 0, 0, false
}

// ImageNote is a one-line text form of image content c for a reader that
// cannot see it, with why: "[image: 640×480 PNG, 31 KiB — why]" (the
// size in pixels when its header says, the decoded size in KiB, or bytes
// under 1 KiB).
func ImageNote(c Content, why string) string {
	kind := strings.ToUpper(strings.TrimPrefix(orUnknown(c.MimeType), "image/"))
	if w, h, ok := ImageInfo(c); ok {
		kind = fmt.Sprintf("%d×%d %s", w, h, kind)
	}
	n := base64Len(c.Data)
	size := fmt.Sprintf("%d bytes", n)
	if n >= 1024 {
		size = fmt.Sprintf("%d KiB", (n+512)/1024)
	}
	if why != "" {
		return "[image: " + kind + ", " + size + " — " + why + "]"
	}
	return "[image: " + kind + ", " + size + "]"
}
