/* JPEG decoding of only the region an output reads (jpeg.c). */
#ifndef TANDEM_JPEG_H
#define TANDEM_JPEG_H
#include <stddef.h>
#include "tandem_decode.h"

typedef struct td_jpeg td_jpeg;

typedef struct td_rect {
  int x, y, w, h;
} td_rect;

/* Given the decoded frame's size (at the chosen scale, stored orientation), the pixels of it the
 * output will read. */
typedef td_rect (*td_jpeg_window)(void *ctx, int frame_w, int frame_h);

typedef struct td_jpeg_result {
  int frame_w, frame_h;    /* the whole decoded frame */
  int x, y, width, height; /* the part decoded into the pixel buffer, packed rows */
  int gray, cmyk;          /* 1 or 4 bytes per pixel (CMYK as Adobe stores it); else RGB */
  char message[96];        /* why it failed */
} td_jpeg_result;

/* Decodes the JPEG of `job` at eighths/8 of its size, only the rows and columns `window` asks for
 * (plus the iMCU alignment and two pixels of margin), into *pixels (grown as needed). `handle` is
 * the thread's decompressor, made on first use and replaced after a failure. Returns TD_OK, a
 * td_status with out->message, or -1 when this decoder does not take the image (CMYK to gray). */
int td_jpeg_decode(td_jpeg **handle, const td_job *job, int eighths, td_jpeg_window window, void *ctx, unsigned char **pixels, size_t *cap,
                   td_jpeg_result *out);
void td_jpeg_free(td_jpeg *j);
#endif
