/* One image: probe, decode (JPEG, CMYK included, with libjpeg-turbo at the smallest DCT scale M/8
 * that still covers the target; every other format, and CMYK JPEG to gray, with libavcodec), then
 * crop, resize, orient and convert straight into the caller's slot of a batch buffer. */
#include "image.h"
#include "crop.h"
#include "fail.h"
#include "jpeg.h"
#include "probe.h"
#include "yuv2rgb.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

int td_worker_init(td_worker *w) {
  memset(w, 0, sizeof *w);
  w->frame = av_frame_alloc();
  w->packet = av_packet_alloc();
  return w->frame && w->packet ? 0 : -1;
}

void td_worker_free(td_worker *w) {
  av_frame_free(&w->frame);
  av_packet_free(&w->packet);
  sws_freeContext(w->sws);
  free(w->scratch);
  td_jpeg_free(w->jpeg);
  free(w->pixels);
  td_resizer_free(&w->resizer);
  free(w->converted);
  memset(w, 0, sizeof *w);
}

static enum AVCodecID codec_for(int format) {
  switch (format) {
    case TD_FORMAT_JPEG: return AV_CODEC_ID_MJPEG;
    case TD_FORMAT_PNG: return AV_CODEC_ID_PNG;
    case TD_FORMAT_WEBP: return AV_CODEC_ID_WEBP;
    case TD_FORMAT_BMP: return AV_CODEC_ID_BMP;
    case TD_FORMAT_GIF: return AV_CODEC_ID_GIF;
    default: return AV_CODEC_ID_NONE;
  }
}

static int status_for(int av_error) {
  if (av_error == AVERROR(ERANGE) || td_size_refused()) return TD_E_TOO_LARGE;
  if (av_error == AVERROR(ENOMEM)) return TD_E_NOMEM;
  return TD_E_CORRUPT;
}

static int decode_frame(td_worker *w, td_job *job, int format, int lowres) {
  const AVCodec *codec = avcodec_find_decoder(codec_for(format));
  if (!codec) return td_fail(job, TD_E_UNKNOWN_FORMAT, 0, "no decoder for this format");
  AVCodecContext *ctx = avcodec_alloc_context3(codec);
  if (!ctx) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate a decoder");
  td_limit_decoder(ctx, job);
  ctx->lowres = lowres;
  ctx->err_recognition = AV_EF_CRCCHECK | AV_EF_EXPLODE;
  int r = avcodec_open2(ctx, codec, NULL);
  if (r >= 0) {
    w->packet->data = (uint8_t *)(uintptr_t)job->src;
    w->packet->size = job->src_len;
    r = avcodec_send_packet(ctx, w->packet);
    w->packet->data = NULL;
    w->packet->size = 0;
    if (r >= 0 || r == AVERROR(EAGAIN)) {
      r = avcodec_receive_frame(ctx, w->frame);
      if (r == AVERROR(EAGAIN) && avcodec_send_packet(ctx, NULL) >= 0) r = avcodec_receive_frame(ctx, w->frame);
    }
  }
  avcodec_free_context(&ctx);
  if (r < 0)
    return td_fail(job, status_for(r), r,
                   status_for(r) == TD_E_TOO_LARGE ? "decoded size over the pixel limit" : "decoder rejected the data");
  if (w->frame->width <= 0 || w->frame->height <= 0) return td_fail(job, TD_E_CORRUPT, 0, "decoder produced an empty frame");
  return TD_OK;
}

typedef struct rect {
  int x, y, w, h;
} rect;

/* The source region (oriented, in decoded-frame pixels) and where it lands in the target. */
static void plan_geometry(const td_job *job, int ow, int oh, double frame_scale, rect *src, rect *dst) {
  rect r = {0, 0, ow, oh};
  if (job->crop_w > 0) {
    r.x = (int)(job->crop_x * frame_scale);
    r.y = (int)(job->crop_y * frame_scale);
    r.w = (int)(job->crop_w * frame_scale + 0.5);
    r.h = (int)(job->crop_h * frame_scale + 0.5);
    if (r.w < 1) r.w = 1;
    if (r.h < 1) r.h = 1;
  }
  *dst = (rect){0, 0, job->dst_w, job->dst_h};
  if (job->fit == TD_FIT_COVER) {
    double s = fmax((double)job->dst_w / r.w, (double)job->dst_h / r.h);
    int cw = (int)(job->dst_w / s + 0.5), ch = (int)(job->dst_h / s + 0.5);
    if (cw > r.w) cw = r.w;
    if (ch > r.h) ch = r.h;
    r.x += (r.w - cw) / 2;
    r.y += (r.h - ch) / 2;
    r.w = cw;
    r.h = ch;
  } else if (job->fit == TD_FIT_CONTAIN) {
    double s = fmin((double)job->dst_w / r.w, (double)job->dst_h / r.h);
    int dw = (int)(r.w * s + 0.5), dh = (int)(r.h * s + 0.5);
    if (dw < 1) dw = 1;
    if (dh < 1) dh = 1;
    *dst = (rect){(job->dst_w - dw) / 2, (job->dst_h - dh) / 2, dw, dh};
  }
  if (r.w < 1) r.w = 1;
  if (r.h < 1) r.h = 1;
  *src = r;
}

/* Maps a rectangle in oriented coordinates back to the stored frame (EXIF orientations 1..8). */
static rect unorient(rect r, int o, int fw, int fh) {
  int x0 = r.x, x1 = r.x + r.w, y0 = r.y, y1 = r.y + r.h;
  switch (o) {
    case 2: return (rect){fw - x1, y0, r.w, r.h};
    case 3: return (rect){fw - x1, fh - y1, r.w, r.h};
    case 4: return (rect){x0, fh - y1, r.w, r.h};
    case 5: return (rect){y0, x0, r.h, r.w};
    case 6: return (rect){y0, fh - x1, r.h, r.w};
    case 7: return (rect){fw - y1, fh - x1, r.h, r.w};
    case 8: return (rect){fw - y1, x0, r.h, r.w};
    default: return r;
  }
}

/* The oriented source area a 'cover' fit without crop reads, in full-size source pixels, as
 * torchvision's Resize then CenterCrop take it: the scale that covers the target, the other side's
 * size truncated to whole pixels, then a centred crop whose offset rounds half to even (Python's
 * round). Pixels therefore land where a PyTorch pipeline puts them, not a fraction aside. */
static td_area torchvision_cover(const td_job *job, int width, int height) {
  double s = fmax((double)job->dst_w / width, (double)job->dst_h / height);
  int resized_w = (double)job->dst_w / width >= (double)job->dst_h / height ? job->dst_w : (int)(width * s);
  int resized_h = (double)job->dst_w / width >= (double)job->dst_h / height ? (int)(height * s) : job->dst_h;
  if (resized_w < job->dst_w) resized_w = job->dst_w;
  if (resized_h < job->dst_h) resized_h = job->dst_h;
  double sx = (double)width / resized_w, sy = (double)height / resized_h;
  double left = rint((resized_w - job->dst_w) / 2.0), top = rint((resized_h - job->dst_h) / 2.0);
  return (td_area){left * sx, top * sy, job->dst_w * sx, job->dst_h * sy};
}

/* An oriented area mapped back to the stored frame, as unorient does for whole-pixel rects. */
static td_area unorient_area(td_area a, int o, int fw, int fh) {
  double x1 = a.x + a.w, y1 = a.y + a.h;
  switch (o) {
    case 2: return (td_area){fw - x1, a.y, a.w, a.h};
    case 3: return (td_area){fw - x1, fh - y1, a.w, a.h};
    case 4: return (td_area){a.x, fh - y1, a.w, a.h};
    case 5: return (td_area){a.y, a.x, a.h, a.w};
    case 6: return (td_area){a.y, fh - x1, a.h, a.w};
    case 7: return (td_area){fw - y1, fh - x1, a.h, a.w};
    case 8: return (td_area){fw - y1, a.x, a.h, a.w};
    default: return a;
  }
}

/* Pointers to (x, y) in every plane, with x and y moved down to the format's chroma grid. */
static void offset_planes(const AVFrame *f, rect *r, uint8_t *planes[4]) {
  const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
  int ax = d->flags & AV_PIX_FMT_FLAG_BITSTREAM ? 8 : 1 << d->log2_chroma_w;
  int ay = 1 << d->log2_chroma_h;
  int x = r->x - r->x % ax, y = r->y - r->y % ay;
  r->w += r->x - x;
  r->h += r->y - y;
  r->x = x;
  r->y = y;
  for (int p = 0; p < 4; p++) planes[p] = f->data[p];
  int done[4] = {0};
  for (int c = 0; c < d->nb_components; c++) {
    int p = d->comp[c].plane;
    if (done[p]) continue;
    done[p] = 1;
    int chroma = c == 1 || c == 2;
    int sx = chroma ? d->log2_chroma_w : 0, sy = chroma ? d->log2_chroma_h : 0;
    int step = d->comp[c].step;
    int bytes_x = d->flags & AV_PIX_FMT_FLAG_BITSTREAM ? (x >> sx) * step / 8 : (x >> sx) * step;
    planes[p] = f->data[p] + (ptrdiff_t)(y >> sy) * f->linesize[p] + bytes_x;
  }
}

static int sws_flags_for(int filter) {
  switch (filter) {
    case TD_FILTER_BICUBIC: return SWS_BICUBIC;
    case TD_FILTER_AREA: return SWS_AREA;
    case TD_FILTER_NEAREST: return SWS_POINT;
    case TD_FILTER_LANCZOS: return SWS_LANCZOS;
    default: return SWS_BILINEAR;
  }
}

/* Copies an oriented view of `src` (iw x ih, frame orientation) into the dst rectangle. */
static void orient_copy(const uint8_t *src, int iw, int ih, int o, uint8_t *dst, int stride, rect d, int ch) {
  for (int v = 0; v < d.h; v++) {
    uint8_t *row = dst + (ptrdiff_t)(d.y + v) * stride + (ptrdiff_t)d.x * ch;
    for (int u = 0; u < d.w; u++) {
      int a, b;
      switch (o) {
        case 2:
          a = iw - 1 - u;
          b = v;
          break;
        case 3:
          a = iw - 1 - u;
          b = ih - 1 - v;
          break;
        case 4:
          a = u;
          b = ih - 1 - v;
          break;
        case 5:
          a = v;
          b = u;
          break;
        case 6:
          a = v;
          b = ih - 1 - u;
          break;
        case 7:
          a = iw - 1 - v;
          b = ih - 1 - u;
          break;
        case 8:
          a = iw - 1 - v;
          b = u;
          break;
        default:
          a = u;
          b = v;
          break;
      }
      memcpy(row + u * ch, src + ((ptrdiff_t)b * iw + a) * ch, (size_t)ch);
    }
  }
}

/* Mirrors the dst rectangle left to right, in place (RandomHorizontalFlip). */
static void mirror_rows(uint8_t *out, int stride, rect d, int ch) {
  for (int v = 0; v < d.h; v++) {
    uint8_t *left = out + (ptrdiff_t)(d.y + v) * stride + (ptrdiff_t)d.x * ch;
    uint8_t *right = left + (ptrdiff_t)(d.w - 1) * ch;
    for (; left < right; left += ch, right -= ch)
      for (int c = 0; c < ch; c++) {
        const uint8_t t = left[c];
        left[c] = right[c];
        right[c] = t;
      }
  }
}

void td_mirror_image(unsigned char *out, int w, int h, int ch) { mirror_rows(out, w * ch, (rect){0, 0, w, h}, ch); }

static int is_full_range_format(int format) {
  return format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P || format == AV_PIX_FMT_YUVJ440P ||
         format == AV_PIX_FMT_YUVJ411P;
}

/* The matrix a frame's YUV converts with: its tag, or BT.601 where untagged or where swscale has no
 * coefficients for it. */
static int frame_matrix(const AVFrame *f) {
  const int matrix = f->colorspace;
  return matrix < AVCOL_SPC_BT709 || matrix > AVCOL_SPC_BT2020_CL || matrix == AVCOL_SPC_YCGCO ? AVCOL_SPC_BT470BG : matrix;
}

static int frame_full_range(const AVFrame *f) { return f->color_range == AVCOL_RANGE_JPEG || is_full_range_format(f->format); }

/* YUV to RGB with the matrix and range the frame is tagged with, as the ffmpeg CLI's scale filter
 * takes them: an untagged matrix (or one swscale has no coefficients for) is BT.601, an untagged
 * range limited, except in the full-range yuvj formats. Gray output keeps the context's matrix
 * (luma is luma; a matrix change there would make swscale cascade a YUV conversion). Set only when
 * the context holds something else: a change rebuilds its tables. */
static void use_colour_tags(struct SwsContext *sws, const AVFrame *f, int gray_out) {
  const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
  if (!d || (d->flags & AV_PIX_FMT_FLAG_RGB) || d->nb_components < 3) return;
  const int full = frame_full_range(f);
  int *in_table, *out_table, in_full, out_full, brightness, contrast, saturation;
  if (sws_getColorspaceDetails(sws, &in_table, &in_full, &out_table, &out_full, &brightness, &contrast, &saturation) < 0) return;
  int want[4], keep[4];
  memcpy(want, gray_out ? in_table : sws_getCoefficients(frame_matrix(f)), sizeof want);
  memcpy(keep, out_table, sizeof keep);
  if (in_full == full && memcmp(in_table, want, sizeof want) == 0) return;
  sws_setColorspaceDetails(sws, want, full, keep, out_full, brightness, contrast, saturation);
}

static enum AVPixelFormat pixel_format_for(int channels) {
  return channels == 1 ? AV_PIX_FMT_GRAY8 : channels == 3 ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA;
}

/* One swscale call: the frame's rect `r` (moved down to its chroma grid) to out_w x out_h. */
static int sws_convert(td_worker *w, const AVFrame *f, rect r, int flags, enum AVPixelFormat out_fmt, int out_w, int out_h, uint8_t *target,
                       int target_stride) {
  uint8_t *planes[4];
  offset_planes(f, &r, planes);
  if (out_fmt == AV_PIX_FMT_RGB24 &&
      (f->format == AV_PIX_FMT_YUV420P || f->format == AV_PIX_FMT_YUVA420P || f->format == AV_PIX_FMT_YUV422P) && r.w == out_w &&
      r.h == out_h && !(r.h & 1)) {
    /* The converter swscale takes here (its tables for an unscaled yuv420p, yuva420p with the
     * alpha dropped, or yuv422p, of even height), in lanes without the tables: the same bytes
     * (yuv2rgb.c; td_yuv2rgb_check holds them equal), and an odd width's last column, which
     * swscale's leaves as it was. */
    td_yuv_coeffs k;
    td_yuv_coeffs_init(&k, sws_getCoefficients(frame_matrix(f)), frame_full_range(f));
    const int strides[3] = {f->linesize[0], f->linesize[1], f->linesize[2]};
    td_yuv_to_rgb24(&k, f->format != AV_PIX_FMT_YUV422P, (const uint8_t *const *)planes, strides, r.w, r.h, target, target_stride);
    return TD_OK;
  }
  w->sws = sws_getCachedContext(w->sws, r.w, r.h, f->format, out_w, out_h, out_fmt, flags, NULL, NULL, NULL);
  if (!w->sws) return TD_E_CORRUPT;
  use_colour_tags(w->sws, f, out_fmt == AV_PIX_FMT_GRAY8);
  /* sws_scale reads four plane pointers and four strides, whatever the format uses. */
  uint8_t *targets[4] = {target};
  int strides[4] = {target_stride};
  return sws_scale(w->sws, (const uint8_t *const *)planes, f->linesize, 0, r.h, targets, strides) > 0 ? TD_OK : TD_E_CORRUPT;
}

/* One axis of the frame that the resize of [start, start + span) to `out` samples reads: the
 * filter's reach (its support, the scale factor but at least 1) and three pixels more, so that no
 * pixel a chroma filter treats as an edge carries weight; from and to the chroma grid `grid`. An
 * odd-sized axis is taken whole: swscale converts odd sizes another way, and the pixels would not
 * be those of a whole-frame conversion. */
static void window_axis(int size, int grid, int start, int span, int out, int *lo, int *hi) {
  const int reach = (int)ceil(fmax((double)span / out, 1.0)) + 3;
  int a = start - reach, b = start + span + reach;
  if (size & 1 || a < 0) a = 0;
  if (size & 1 || b > size) b = size;
  a -= a % grid;
  b += (grid - b % grid) % grid;
  *lo = a;
  *hi = b < size ? b : size;
}

/* The bilinear road: the pixels around `src` converted at their own size (the conversion a
 * same-size decode makes, pixel for pixel), then resize.c's filter over `src` of them, the filter
 * JPEG images and the WebCodecs frame pass use. -1: left to the one swscale call (alpha kept, or a
 * downscale the resize does not take). */
static int convert_then_resize(td_worker *w, const td_job *job, const AVFrame *f, rect src, rect dst, uint8_t *target, int stride) {
  const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
  const int ch = job->channels, in_ch = ch == 1 ? 1 : 3;
  if (!d || (ch == 4 && (d->flags & AV_PIX_FMT_FLAG_ALPHA))) return -1;
  const int grid_x = d->flags & AV_PIX_FMT_FLAG_BITSTREAM ? 8 : 1 << d->log2_chroma_w, grid_y = 1 << d->log2_chroma_h;
  int x0, x1, y0, y1;
  window_axis(f->width, grid_x, src.x, src.w, dst.w, &x0, &x1);
  window_axis(f->height, grid_y, src.y, src.h, dst.h, &y0, &y1);
  const rect win = {x0, y0, x1 - x0, y1 - y0};
  if ((int64_t)win.w * win.h > job->max_pixels) return TD_E_TOO_LARGE;
  /* 16 bytes of slack: the resize's SIMD loads read up to 3 bytes past the last pixel. */
  const size_t need = (size_t)win.w * win.h * in_ch + 16;
  if (need > w->converted_cap) {
    free(w->converted);
    w->converted = malloc(need);
    w->converted_cap = w->converted ? need : 0;
    if (!w->converted) return TD_E_NOMEM;
  }
  int st =
      sws_convert(w, f, win, SWS_BILINEAR, in_ch == 1 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24, win.w, win.h, w->converted, win.w * in_ch);
  if (st != TD_OK) return st;
  const td_area area = {src.x - win.x, src.y - win.y, src.w, src.h};
  return td_resize(&w->resizer, w->converted, win.w * in_ch, win.w, win.h, in_ch, area, target, stride, dst.w, dst.h, ch) == 0 ? TD_OK : -1;
}

int td_scale_frame(td_worker *w, const td_job *job, const AVFrame *f, unsigned char *out) {
  int ch = job->channels;
  rect src, dst;
  plan_geometry(job, f->width, f->height, 1.0, &src, &dst);
  if (src.x + src.w > f->width || src.y + src.h > f->height) return TD_E_BAD_REQUEST;
  int stride = job->dst_w * ch;
  if (job->fit == TD_FIT_CONTAIN) memset(out, job->pad_value, (size_t)stride * job->dst_h);
  uint8_t *target = out + (ptrdiff_t)dst.y * stride + (ptrdiff_t)dst.x * ch;
  if (job->filter == TD_FILTER_BILINEAR && (dst.w != src.w || dst.h != src.h)) {
    int st = convert_then_resize(w, job, f, src, dst, target, stride);
    if (st >= 0) return st;
  }
  return sws_convert(w, f, src, sws_flags_for(job->filter), pixel_format_for(ch), dst.w, dst.h, target, stride);
}

/* The factor the source (or its crop) is scaled by to reach the target; 1 when reduced decoding
 * is off or the format has no DCT-domain scaling. */
static double needed_scale(const td_job *job, const td_probe *pr) {
  if (!job->allow_reduced || pr->format != TD_FORMAT_JPEG || pr->width <= 0 || pr->height <= 0) return 1.0;
  int transposed = job->apply_orientation && pr->orientation >= 5;
  double ow = transposed ? pr->height : pr->width, oh = transposed ? pr->width : pr->height;
  double rw = job->crop_w > 0 ? job->crop_w : ow, rh = job->crop_w > 0 ? job->crop_h : oh;
  double sx = job->dst_w / rw, sy = job->dst_h / rh;
  double s = job->fit == TD_FIT_CONTAIN ? fmin(sx, sy) : fmax(sx, sy);
  return s < 1.0 ? s : 1.0;
}

/* libavcodec's mjpeg scales by 1/2^k only: the largest k that still covers the target. */
static int lowres_for(double scale) {
  int k = 0;
  while (k < 3 && scale * (1 << (k + 1)) <= 1.0) k++;
  return k;
}

/* libjpeg-turbo scales by any M/8: the smallest M that still covers the target. */
static int eighths_for(double scale) {
  int m = (int)ceil(scale * 8 - 1e-9);
  return m < 1 ? 1 : m > 8 ? 8 : m;
}

/* The JPEG's decoded pixels as a frame over the worker's buffer (no reference counting). */
static void wrap_pixels(AVFrame *f, unsigned char *pixels, int width, int height, int gray) {
  av_frame_unref(f);
  f->format = gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24;
  f->width = width;
  f->height = height;
  f->data[0] = pixels;
  f->linesize[0] = width * (gray ? 1 : 3);
}

/* CMYK as Adobe applications store it (inverted: 255 is no ink), packed 4 bytes per pixel, to
 * packed RGB in place: each colour times K / 255, rounded, as PIL converts such files (ffmpeg
 * truncates instead). libjpeg-turbo has already turned YCCK into this CMYK. */
static void cmyk_to_rgb_in_place(unsigned char *pixels, size_t count) {
  const unsigned char *in = pixels;
  unsigned char *out = pixels;
  for (size_t i = 0; i < count; i++, in += 4, out += 3) {
    const unsigned k = in[3];
    for (int c = 0; c < 3; c++) {
      const unsigned v = in[c] * k + 128;
      out[c] = (unsigned char)((v + (v >> 8)) >> 8);
    }
  }
}

/* Where the output comes from, worked out from the decoded frame's size: the oriented source
 * rect and its target rect, the same source as a fractional area of the stored frame (Tandem's
 * resize) and as whole pixels (swscale), and the resize's output size before orientation. */
typedef struct plan {
  td_job *job;
  const td_probe *probe;
  int random_crop;
  int status; /* TD_E_BAD_REQUEST when the crop box leaves the image */
  rect src, dst, fr;
  td_area area;
  int iw, ih;
} plan;

static void plan_image(plan *p, int fw, int fh) {
  td_job *job = p->job;
  const td_probe *pr = p->probe;
  const int o = job->orientation, transposed = o >= 5;
  const int ow = transposed ? fh : fw, oh = transposed ? fw : fh;
  job->src_w = pr->width > 0 ? (transposed ? pr->height : pr->width) : ow;
  job->src_h = pr->height > 0 ? (transposed ? pr->width : pr->height) : oh;
  if (p->random_crop && job->crop_w <= 0) td_draw_random_crop(job, job->src_w, job->src_h);
  p->status = TD_OK;
  if (job->crop_w > 0 && (job->crop_x < 0 || job->crop_y < 0 || job->crop_h <= 0 || job->crop_x + job->crop_w > job->src_w ||
                          job->crop_y + job->crop_h > job->src_h)) {
    p->status = TD_E_BAD_REQUEST;
    job->crop_x = job->crop_y = 0;
    job->crop_w = job->src_w;
    job->crop_h = job->src_h;
  }
  plan_geometry(job, ow, oh, (double)ow / job->src_w, &p->src, &p->dst);
  /* The same source as a fractional area for Tandem's resize (exact torchvision geometry for a
   * plain 'cover'); swscale takes the whole-pixel rect. */
  td_area area = {p->src.x, p->src.y, p->src.w, p->src.h};
  const double fx = (double)ow / job->src_w, fy = (double)oh / job->src_h;
  if (job->fit == TD_FIT_COVER && job->crop_w <= 0) {
    area = torchvision_cover(job, job->src_w, job->src_h);
    area = (td_area){area.x * fx, area.y * fy, area.w * fx, area.h * fy};
  } else if (p->random_crop) {
    /* The drawn box exactly, in decoded pixels, not rounded to them at a reduced scale. */
    area = (td_area){job->crop_x * fx, job->crop_y * fy, job->crop_w * fx, job->crop_h * fy};
  }
  p->area = unorient_area(area, o, fw, fh);
  p->fr = unorient(p->src, o, fw, fh);
  p->iw = transposed ? p->dst.h : p->dst.w;
  p->ih = transposed ? p->dst.w : p->dst.h;
}

/* The stored frame's pixels the output reads: the whole-pixel source, and around the fractional
 * area as far as the resize's filter reaches (its support is the scale factor, at least 1), so
 * that a window decode gives the pixels a whole decode gives. A random crop is cut out before
 * resizing and reads nothing outside its box. */
static td_rect plan_window(void *ctx, int fw, int fh) {
  plan *p = ctx;
  plan_image(p, fw, fh);
  const td_area a = p->area;
  const double reach_x = p->random_crop ? 0 : fmax(a.w / p->iw, 1.0) + 1, reach_y = p->random_crop ? 0 : fmax(a.h / p->ih, 1.0) + 1;
  int x0 = (int)floor(a.x - reach_x), y0 = (int)floor(a.y - reach_y);
  int x1 = (int)ceil(a.x + a.w + reach_x), y1 = (int)ceil(a.y + a.h + reach_y);
  if (p->fr.x < x0) x0 = p->fr.x;
  if (p->fr.y < y0) y0 = p->fr.y;
  if (p->fr.x + p->fr.w > x1) x1 = p->fr.x + p->fr.w;
  if (p->fr.y + p->fr.h > y1) y1 = p->fr.y + p->fr.h;
  if (p->status != TD_OK || p->job->window_off) return (td_rect){0, 0, fw, fh};
  return (td_rect){x0, y0, x1 - x0, y1 - y0};
}

int td_decode_image(td_worker *w, td_job *job) {
  td_reset_result(job);
  int ch = job->channels;
  if (job->dst_w <= 0 || job->dst_h <= 0 || (ch != 1 && ch != 3 && ch != 4) || !job->dst)
    return td_fail(job, TD_E_BAD_REQUEST, 0, "invalid target size or channel count");
  if (job->src_len <= 0) return td_fail(job, TD_E_EMPTY, 0, "empty input");
  const uint8_t *data = (const uint8_t *)(uintptr_t)job->src;
  td_probe pr;
  td_probe_image(data, job->src_len, &pr);
  job->format = pr.format;
  job->orientation = job->apply_orientation ? pr.orientation : 1;
  if (!pr.format) return td_fail(job, TD_E_UNKNOWN_FORMAT, 0, "not a JPEG, PNG, WebP, BMP or GIF image");
  if ((int64_t)pr.width * pr.height > job->max_pixels) {
    char why[80];
    snprintf(why, sizeof why, "declared size %dx%d is over the limit of %d pixels", pr.width, pr.height, job->max_pixels);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  if (pr.truncated) return td_fail(job, TD_E_TRUNCATED, 0, "the data ends before the image does");
  const int random_crop = job->rrc_scale_hi > 0;
  if (random_crop) {
    if (job->crop_w > 0 || job->rrc_scale_lo <= 0 || job->rrc_scale_lo > job->rrc_scale_hi || job->rrc_ratio_lo <= 0 ||
        job->rrc_ratio_lo > job->rrc_ratio_hi)
      return td_fail(job, TD_E_BAD_REQUEST, 0, "random crop: scale and ratio must be ordered positive ranges, without a crop box");
    job->fit = TD_FIT_STRETCH; /* the drawn box is stretched over the target, as torchvision does */
    /* Drawn before decoding when the header gives the size, so the DCT scale fits the crop. */
    const int transposed = job->apply_orientation && pr.orientation >= 5;
    if (pr.width > 0 && pr.height > 0) td_draw_random_crop(job, transposed ? pr.height : pr.width, transposed ? pr.width : pr.height);
  }

  double scale = needed_scale(job, &pr);
  plan p = {.job = job, .probe = &pr, .random_crop = random_crop};
  int st = -1;
  if (pr.format == TD_FORMAT_JPEG) {
    td_jpeg_result jr;
    st = td_jpeg_decode(&w->jpeg, job, eighths_for(scale), plan_window, &p, &w->pixels, &w->pixels_cap, &jr);
    if (st == TD_OK) {
      job->reduced_eighths = eighths_for(scale);
      job->decoded_w = jr.width;
      job->decoded_h = jr.height;
      job->frame_w = jr.frame_w;
      job->frame_h = jr.frame_h;
      if (jr.cmyk) cmyk_to_rgb_in_place(w->pixels, (size_t)jr.width * jr.height);
      wrap_pixels(w->frame, w->pixels, jr.width, jr.height, jr.gray);
      /* The frame holds only the decoded window: the plan's coordinates move with it. */
      p.area.x -= jr.x;
      p.area.y -= jr.y;
      p.fr.x -= jr.x;
      p.fr.y -= jr.y;
    } else if (st > 0) {
      return td_fail(job, st, 0, jr.message);
    }
  }
  if (st < 0) {
    int k = lowres_for(scale);
    st = decode_frame(w, job, pr.format, k);
    job->reduced_eighths = 8 >> k;
    if (st == TD_OK) {
      job->decoded_w = job->frame_w = w->frame->width;
      job->decoded_h = job->frame_h = w->frame->height;
      plan_image(&p, w->frame->width, w->frame->height);
    }
  }
  if (st != TD_OK) return st;
  AVFrame *f = w->frame;
  if (p.status != TD_OK) {
    av_frame_unref(f);
    return td_fail(job, p.status, 0, "crop box outside the image");
  }
  const int o = job->orientation;
  const rect dst = p.dst;
  const int iw = p.iw, ih = p.ih;
  td_area area = p.area;
  rect fr = p.fr;
  uint8_t *planes[4];
  offset_planes(f, &fr, planes);

  int stride = job->dst_w * ch;
  uint8_t *out = (uint8_t *)(uintptr_t)job->dst;
  if (job->fit == TD_FIT_CONTAIN) memset(out, job->pad_value, (size_t)stride * job->dst_h);
  uint8_t *target;
  int target_stride;
  if (o == 1) {
    target = out + (ptrdiff_t)dst.y * stride + (ptrdiff_t)dst.x * ch;
    target_stride = stride;
  } else {
    size_t need = (size_t)iw * ih * ch;
    if (need > w->scratch_cap) {
      free(w->scratch);
      w->scratch = malloc(need);
      w->scratch_cap = w->scratch ? need : 0;
      if (!w->scratch) {
        av_frame_unref(f);
        return td_fail(job, TD_E_NOMEM, 0, "cannot allocate orientation scratch");
      }
    }
    target = w->scratch;
    target_stride = iw * ch;
  }
  /* Packed RGB or gray from libjpeg-turbo, bilinear: Tandem's own resize. Everything else: swscale. */
  int in_ch = f->format == AV_PIX_FMT_GRAY8 ? 1 : 3;
  /* A random crop is cut out before it is resized, as torchvision's is: the filter sees only the
   * crop's pixels (the whole pixels around its area when that is fractional at a reduced scale). */
  const uint8_t *pixels = f->data[0];
  int in_w = f->width, in_h = f->height;
  if (random_crop) {
    const int x0 = (int)floor(area.x + 1e-6), y0 = (int)floor(area.y + 1e-6);
    const int x1 = (int)fmin(ceil(area.x + area.w - 1e-6), f->width), y1 = (int)fmin(ceil(area.y + area.h - 1e-6), f->height);
    pixels += (ptrdiff_t)y0 * f->linesize[0] + (ptrdiff_t)x0 * in_ch;
    in_w = x1 - x0;
    in_h = y1 - y0;
    area.x -= x0;
    area.y -= y0;
    if (area.x + area.w > in_w) area.w = in_w - area.x;
    if (area.y + area.h > in_h) area.h = in_h - area.y;
  }
  int r = (f->format == AV_PIX_FMT_RGB24 || f->format == AV_PIX_FMT_GRAY8) && job->filter == TD_FILTER_BILINEAR &&
                  td_resize(&w->resizer, pixels, f->linesize[0], in_w, in_h, in_ch, area, target, target_stride, iw, ih, ch) == 0
              ? 1
              : -1;
  if (r < 0) {
    enum AVPixelFormat out_fmt = ch == 1 ? AV_PIX_FMT_GRAY8 : ch == 3 ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA;
    w->sws = sws_getCachedContext(w->sws, fr.w, fr.h, f->format, iw, ih, out_fmt, sws_flags_for(job->filter), NULL, NULL, NULL);
    if (!w->sws) {
      av_frame_unref(f);
      return td_fail(job, TD_E_CORRUPT, 0, "unsupported pixel format");
    }
    uint8_t *targets[4] = {target};
    int strides[4] = {target_stride};
    r = sws_scale(w->sws, (const uint8_t *const *)planes, f->linesize, 0, fr.h, targets, strides);
  }
  av_frame_unref(f);
  if (r <= 0) return td_fail(job, TD_E_CORRUPT, 0, "scaling failed");
  if (o != 1) orient_copy(w->scratch, iw, ih, o, out, stride, dst, ch);
  if (job->flipped) mirror_rows(out, stride, dst, ch);
  return TD_OK;
}
