/* JPEG through libjpeg-turbo's own API rather than TurboJPEG's, for the one thing TurboJPEG 2.1
 * cannot do: decode only the part of the image the output reads. Columns outside it skip the IDCT,
 * upsampling and colour conversion (jpeg_crop_scanline); rows above and below it skip them too
 * (jpeg_skip_scanlines). Entropy decoding still covers the whole file, so a damaged or cut file
 * fails the same way whatever crop is asked of it. Settings are TurboJPEG's (accurate integer
 * IDCT, fancy upsampling, at most 500 progressive scans), so the pixels are the ones it gives. */
#include "jpeg.h"
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

struct td_jpeg {
  struct jpeg_decompress_struct d; /* first, so that a j_common_ptr is also a td_jpeg* */
  struct jpeg_error_mgr err;
  struct jpeg_progress_mgr progress;
  jmp_buf jump;
  int truncated; /* "Premature end of JPEG file" was warned */
  int damaged;   /* another warning, other than extraneous bytes between markers */
  char message[JMSG_LENGTH_MAX];
};

static void on_error(j_common_ptr c) {
  td_jpeg *j = (td_jpeg *)c;
  c->err->format_message(c, j->message);
  longjmp(j->jump, 1);
}

static void on_output(j_common_ptr c) { c->err->format_message(c, ((td_jpeg *)c)->message); }

/* Warnings leave a whole image behind, but a cut file or damaged entropy data is not one the job
 * should deliver. Extraneous bytes between markers are harmless (many cameras write them). */
static void on_message(j_common_ptr c, int level) {
  td_jpeg *j = (td_jpeg *)c;
  if (level >= 0) return;
  const int code = c->err->msg_code;
  if (code == JWRN_EXTRANEOUS_DATA) return;
  if (!j->truncated && !j->damaged) c->err->format_message(c, j->message);
  if (code == JWRN_JPEG_EOF)
    j->truncated = 1;
  else
    j->damaged = 1;
}

/* A file of endless tiny progressive scans is a known way to make decoding take forever. */
static void limit_scans(j_common_ptr c) {
  td_jpeg *j = (td_jpeg *)c;
  if (c->is_decompressor && j->d.input_scan_number > 500) {
    snprintf(j->message, sizeof j->message, "Progressive JPEG image has more than 500 scans");
    longjmp(j->jump, 1);
  }
}

static td_jpeg *make(void) {
  td_jpeg *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->d.err = jpeg_std_error(&j->err);
  j->err.error_exit = on_error;
  j->err.output_message = on_output;
  j->err.emit_message = on_message;
  j->progress.progress_monitor = limit_scans;
  if (setjmp(j->jump)) {
    free(j);
    return NULL;
  }
  jpeg_create_decompress(&j->d);
  return j;
}

void td_jpeg_free(td_jpeg *j) {
  if (!j) return;
  jpeg_destroy_decompress(&j->d);
  free(j);
}

static int grow(unsigned char **buffer, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  free(*buffer);
  *buffer = malloc(need);
  *cap = *buffer ? need : 0;
  return *buffer ? 0 : -1;
}

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

int td_jpeg_decode(td_jpeg **handle, const td_job *job, int eighths, td_jpeg_window window, void *ctx, unsigned char **pixels, size_t *cap,
                   td_jpeg_result *out) {
  if (!*handle && !(*handle = make())) {
    snprintf(out->message, sizeof out->message, "cannot allocate a JPEG decoder");
    return TD_E_NOMEM;
  }
  /* volatile: read after a longjmp back into this frame */
  td_jpeg *volatile j = *handle;
  JSAMPROW *volatile rows = NULL;
  volatile int status = TD_OK;
  j->truncated = j->damaged = 0;
  j->message[0] = 0;
  if (setjmp(j->jump)) {
    status = strstr(j->message, "Premature end") ? TD_E_TRUNCATED : TD_E_CORRUPT;
    goto done;
  }
  j->d.progress = &j->progress;
  jpeg_mem_src(&j->d, (const unsigned char *)(uintptr_t)job->src, (unsigned long)job->src_len);
  jpeg_read_header(&j->d, TRUE);
  const int cmyk = j->d.jpeg_color_space == JCS_CMYK || j->d.jpeg_color_space == JCS_YCCK;
  if (cmyk && job->channels == 1) {
    status = -1; /* CMYK to one channel: libavcodec's path converts that */
    goto done;
  }
  if (j->d.image_width == 0 || j->d.image_height == 0) {
    snprintf(j->message, sizeof j->message, "the JPEG declares an empty image");
    status = TD_E_CORRUPT;
    goto done;
  }
  if ((int64_t)j->d.image_width * j->d.image_height > job->max_pixels) {
    snprintf(j->message, sizeof j->message, "declared size over the pixel limit");
    status = TD_E_TOO_LARGE;
    goto done;
  }
  const int gray = !cmyk && (job->channels == 1 || j->d.jpeg_color_space == JCS_GRAYSCALE);
  /* JCS_EXT_RGB, as TurboJPEG asks for RGB: the colour converter dispatches Tandem's wasm SIMD for it */
  j->d.out_color_space = gray ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_EXT_RGB;
  j->d.dct_method = JDCT_ISLOW;
  j->d.do_fancy_upsampling = TRUE;
  j->d.scale_num = (unsigned)eighths;
  j->d.scale_denom = 8;
  jpeg_start_decompress(&j->d);
  const int frame_w = (int)j->d.output_width, frame_h = (int)j->d.output_height;
  /* Two pixels beyond what the output reads on each side: a cropped decode may smooth its own
   * edge columns' chroma as if they were the image's edge (libjpeg.txt), so those must not be read. */
  td_rect want = window(ctx, frame_w, frame_h);
  int x0 = clamp(want.x - 2, 0, frame_w - 1), x1 = clamp(want.x + want.w + 2, x0 + 1, frame_w);
  const int y0 = clamp(want.y - 2, 0, frame_h - 1), y1 = clamp(want.y + want.h + 2, y0 + 1, frame_h);
  if (x0 > 0 || x1 < frame_w) {
    JDIMENSION xoffset = (JDIMENSION)x0, width = (JDIMENSION)(x1 - x0);
    jpeg_crop_scanline(&j->d, &xoffset, &width); /* moves xoffset left to an iMCU boundary */
    x0 = (int)xoffset;
    x1 = x0 + (int)width;
  }
  const int bytes_per_pixel = gray ? 1 : cmyk ? 4 : 3;
  const int width = x1 - x0, height = y1 - y0;
  const size_t stride = (size_t)width * bytes_per_pixel;
  /* 16 bytes of slack: the resize's SIMD loads read up to 3 bytes past the last pixel. */
  if (grow(pixels, cap, stride * height + 16) || !(rows = malloc(sizeof(JSAMPROW) * height))) {
    snprintf(j->message, sizeof j->message, "cannot allocate the decoded image");
    status = TD_E_NOMEM;
    goto done;
  }
  for (int r = 0; r < height; r++) rows[r] = *pixels + stride * r;
  if (y0 > 0) jpeg_skip_scanlines(&j->d, (JDIMENSION)y0);
  while ((int)j->d.output_scanline < y1)
    jpeg_read_scanlines(&j->d, rows + (j->d.output_scanline - y0), (JDIMENSION)(y1 - (int)j->d.output_scanline));
  if (y1 < frame_h) jpeg_skip_scanlines(&j->d, (JDIMENSION)(frame_h - y1));
  jpeg_finish_decompress(&j->d);
  if (j->truncated || j->damaged) {
    status = j->truncated ? TD_E_TRUNCATED : TD_E_CORRUPT;
    goto done;
  }
  *out = (td_jpeg_result){
      .frame_w = frame_w, .frame_h = frame_h, .x = x0, .y = y0, .width = width, .height = height, .gray = gray, .cmyk = cmyk};
done:
  free(rows);
  if (status != TD_OK && status != -1) {
    snprintf(out->message, sizeof out->message, "%s", j->message);
    /* A decompressor stopped half-way through a damaged header keeps that state and fails every
     * later image (found by bench/soak.ts): start the next image with a new one. */
    td_jpeg_free(j);
    *handle = NULL;
  } else {
    jpeg_abort_decompress(&j->d); /* back to the start state, keeping its memory for the next image */
  }
  return status;
}
