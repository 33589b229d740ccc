/* torchvision's RandomResizedCrop.get_params, drawn from a per-image seed instead of a global
 * generator: up to ten tries of an area fraction (uniform) and an aspect ratio (log-uniform)
 * whose rounded box fits, then a uniform position; after ten misses, the centred box with the
 * ratio clamped to the allowed range. Sizes round half to even, as Python's round() does. */
#include "crop.h"
#include <math.h>

/* A counter-based generator (a 32-bit finaliser over seed + k * golden ratio): each draw depends
 * only on the seed and its index, so the same seed gives the same crop in every build. */
typedef struct draws {
  uint32_t seed, index;
} draws;

static double uniform(draws *d) {
  uint32_t z = d->seed + 0x9E3779B9u * ++d->index;
  z = (z ^ (z >> 16)) * 0x85EBCA6Bu;
  z = (z ^ (z >> 13)) * 0xC2B2AE35u;
  z ^= z >> 16;
  return (z >> 8) * (1.0 / 16777216.0); /* [0, 1), 24 bits */
}

/* torch.randint(0, n): 0..n-1. */
static int below(draws *d, int n) {
  int v = (int)(uniform(d) * n);
  return v < n ? v : n - 1;
}

void td_draw_random_crop(td_job *job, int width, int height) {
  if (job->rrc_scale_hi <= 0 || width <= 0 || height <= 0) return;
  draws d = {(uint32_t)job->rrc_seed, 0};
  const double scale_lo = job->rrc_scale_lo * 1e-6, scale_hi = job->rrc_scale_hi * 1e-6;
  const double ratio_lo = job->rrc_ratio_lo * 1e-6, ratio_hi = job->rrc_ratio_hi * 1e-6;
  const double log_lo = log(ratio_lo), log_hi = log(ratio_hi);
  const double area = (double)width * height;
  int x = 0, y = 0, w = 0, h = 0;
  for (int attempt = 0; attempt < 10 && w == 0; attempt++) {
    const double target = area * (scale_lo + uniform(&d) * (scale_hi - scale_lo));
    const double ratio = exp(log_lo + uniform(&d) * (log_hi - log_lo));
    const int cw = (int)rint(sqrt(target * ratio)), ch = (int)rint(sqrt(target / ratio));
    if (cw > 0 && cw <= width && ch > 0 && ch <= height) {
      y = below(&d, height - ch + 1);
      x = below(&d, width - cw + 1);
      w = cw;
      h = ch;
    }
  }
  if (w == 0) {
    const double in_ratio = (double)width / height;
    w = width;
    h = height;
    if (in_ratio < ratio_lo)
      h = (int)rint(width / ratio_lo);
    else if (in_ratio > ratio_hi)
      w = (int)rint(height * ratio_hi);
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    x = (width - w) / 2;
    y = (height - h) / 2;
  }
  job->crop_x = x;
  job->crop_y = y;
  job->crop_w = w;
  job->crop_h = h;
  job->flipped = uniform(&d) < job->flip_chance * 1e-6;
}
