/* Random crops drawn inside the decoder, once the image's size is known from its header, so that
 * only the crop's share of the image needs to be decoded at full detail (RandomResizedCrop). */
#ifndef TANDEM_CROP_H
#define TANDEM_CROP_H
#include "tandem_decode.h"

/* Draws torchvision's RandomResizedCrop box for an oriented width x height image, and the
 * horizontal flip, from job->rrc_seed; writes the box into job->crop_* and the flip into
 * job->flipped. Does nothing when job->rrc_scale_hi is 0. */
void td_draw_random_crop(td_job *job, int width, int height);
#endif
