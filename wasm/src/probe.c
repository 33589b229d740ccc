#include "probe.h"
#include "tandem_decode.h"
#include <string.h>

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned le16(const uint8_t *p) { return (unsigned)p[1] << 8 | p[0]; }
static uint32_t be32(const uint8_t *p) { return (uint32_t)be16(p) << 16 | be16(p + 2); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)le16(p + 2) << 16 | le16(p); }

/* Orientation tag (0x0112) of IFD0 in a TIFF block; every read is bounds-checked. */
static int exif_orientation(const uint8_t *t, int n) {
  if (n < 8) return 1;
  int little = t[0] == 'I' && t[1] == 'I';
  if (!little && !(t[0] == 'M' && t[1] == 'M')) return 1;
  uint32_t ifd = little ? le32(t + 4) : be32(t + 4);
  if (ifd > (uint32_t)n - 2) return 1;
  unsigned count = little ? le16(t + ifd) : be16(t + ifd);
  for (unsigned i = 0; i < count; i++) {
    uint32_t e = ifd + 2 + 12 * i;
    if (e + 12 > (uint32_t)n) break;
    unsigned tag = little ? le16(t + e) : be16(t + e);
    if (tag == 0x0112) {
      unsigned v = little ? le16(t + e + 8) : be16(t + e + 8);
      return v >= 1 && v <= 8 ? (int)v : 1;
    }
  }
  return 1;
}

static void probe_jpeg(const uint8_t *p, int n, td_probe *out) {
  int i = 2;
  while (i + 4 <= n) {
    if (p[i] != 0xFF) return; /* not a marker: leave the verdict to the decoder */
    int m = p[i + 1];
    if (m == 0xFF) {
      i++;
      continue;
    }
    if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
      i += 2;
      continue;
    }
    if (m == 0xD9) return;
    int len = (int)be16(p + i + 2);
    if (len < 2) return;
    if (i + 2 + len > n) {
      out->truncated = 1;
      return;
    }
    const uint8_t *seg = p + i + 4;
    int seglen = len - 2;
    int is_sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
    if (is_sof && seglen >= 5) {
      out->height = (int)be16(seg + 1);
      out->width = (int)be16(seg + 3);
    }
    if (m == 0xE1 && seglen >= 14 && memcmp(seg, "Exif\0\0", 6) == 0) out->orientation = exif_orientation(seg + 6, seglen - 6);
    if (m == 0xDA) {
      /* Entropy-coded data cannot contain FF D9 (0xFF is stuffed), so the end marker after the
       * first scan tells a complete file from a cut one, progressive files included. */
      for (int j = i + 2 + len; j + 1 < n; j++)
        if (p[j] == 0xFF && p[j + 1] == 0xD9) return;
      out->truncated = 1;
      return;
    }
    i += 2 + len;
  }
  out->truncated = 1;
}

static void probe_webp(const uint8_t *p, int n, td_probe *out) {
  if (le32(p + 4) > (uint32_t)n - 8) out->truncated = 1;
  if (n < 30) {
    out->truncated = 1;
    return;
  }
  if (memcmp(p + 12, "VP8X", 4) == 0) {
    out->width = (int)(p[24] | p[25] << 8 | p[26] << 16) + 1;
    out->height = (int)(p[27] | p[28] << 8 | p[29] << 16) + 1;
  } else if (memcmp(p + 12, "VP8L", 4) == 0 && p[20] == 0x2F) {
    uint32_t bits = le32(p + 21);
    out->width = (int)(bits & 0x3FFF) + 1;
    out->height = (int)((bits >> 14) & 0x3FFF) + 1;
  } else if (memcmp(p + 12, "VP8 ", 4) == 0 && p[23] == 0x9D && p[24] == 0x01 && p[25] == 0x2A) {
    out->width = (int)(le16(p + 26) & 0x3FFF);
    out->height = (int)(le16(p + 28) & 0x3FFF);
  }
}

void td_probe_image(const uint8_t *p, int n, td_probe *out) {
  memset(out, 0, sizeof *out);
  out->orientation = 1;
  if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) {
    out->format = TD_FORMAT_JPEG;
    probe_jpeg(p, n, out);
  } else if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
    out->format = TD_FORMAT_PNG;
    if (n < 24) {
      out->truncated = 1;
      return;
    }
    out->width = (int)be32(p + 16);
    out->height = (int)be32(p + 20);
    if (out->width < 0 || out->height < 0) out->width = out->height = 0x7FFFFFFF;
    if (n < 12 || memcmp(p + n - 8, "IEND", 4) != 0) out->truncated = 1;
  } else if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) {
    out->format = TD_FORMAT_WEBP;
    probe_webp(p, n, out);
  } else if (n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0)) {
    out->format = TD_FORMAT_GIF;
    if (n < 10) {
      out->truncated = 1;
      return;
    }
    out->width = (int)le16(p + 6);
    out->height = (int)le16(p + 8);
  } else if (n >= 2 && p[0] == 'B' && p[1] == 'M') {
    out->format = TD_FORMAT_BMP;
    if (n < 26) {
      out->truncated = 1;
      return;
    }
    int32_t w = (int32_t)le32(p + 18), h = (int32_t)le32(p + 22);
    out->width = w < 0 ? 0x7FFFFFFF : w;
    out->height = h == INT32_MIN ? 0x7FFFFFFF : (h < 0 ? -h : h);
    if (le32(p + 2) > (uint32_t)n) out->truncated = 1;
  }
}
