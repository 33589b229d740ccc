/* Header probing: format, declared size, EXIF orientation and truncation, read from the bytes
 * without decoding, so that limits are checked before any pixel buffer is allocated. */
#ifndef TANDEM_PROBE_H
#define TANDEM_PROBE_H
#include <stdint.h>

typedef struct td_probe {
  int format;        /* td_format, 0 when unknown */
  int width, height; /* declared size, 0 when the header does not say */
  int orientation;   /* EXIF orientation 1..8 (1 when absent) */
  int truncated;     /* 1 when the data visibly ends before the image does */
} td_probe;

void td_probe_image(const uint8_t *data, int len, td_probe *out);
#endif
