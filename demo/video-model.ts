// The video demo's model and split. A clip is [F, H, W, 3]: its frames and the differences between
// neighbouring frames (where gestures and actions show) are stacked as channels of one image, so
// a small 2-D conv net sees motion without 3-D convolutions: [B, H, W, (2F − 1) · 3] → classes.
import type * as tfc from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import type { PickedFile } from '../src/sources/index.ts';
import { shuffledEpoch } from '../src/sources/index.ts';

type Tf = typeof tfc;

/** [B, F, H, W, 3] → [B, H, W, (2F − 1) · 3]: the frames, then the F − 1 frame differences. */
export function framesAndDifferences(tf: Tf, clips: tfc.Tensor): tfc.Tensor4D {
  return tf.tidy(() => {
    const [b, f, h, w] = clips.shape as [number, number, number, number, number];
    const stacked =
      f > 1 ? tf.concat([clips, tf.sub(tf.slice(clips, [0, 1], [-1, f - 1]), tf.slice(clips, [0, 0], [-1, f - 1]))], 1) : clips;
    return tf.reshape(tf.transpose(stacked, [0, 2, 3, 1, 4]), [b, h, w, (2 * f - 1) * 3]) as tfc.Tensor4D;
  });
}

/** conv 16 → pool → conv 16 → pool → conv 32 → global average → dense: small enough to train in a page. */
export function clipClassifier(frames: number, size: number, classes: number, seed: number): tfl.LayersModel {
  const conv = (filters: number, k: number, first?: boolean) =>
    tfl.layers.conv2d({
      filters,
      kernelSize: 3,
      padding: 'same',
      activation: 'relu',
      kernelInitializer: tfl.initializers.heNormal({ seed: seed + k }),
      ...(first ? { inputShape: [size, size, (2 * frames - 1) * 3] } : {}),
    });
  const net = tfl.sequential();
  net.add(conv(16, 1, true));
  net.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  net.add(conv(16, 2));
  net.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  net.add(conv(32, 3));
  net.add(tfl.layers.globalAveragePooling2d({}));
  net.add(tfl.layers.dense({ units: classes, kernelInitializer: tfl.initializers.glorotUniform({ seed: seed + 4 }) }));
  return net;
}

/**
 * Holds out `share` of each class's videos (at least one where a class has two or more), chosen by
 * a seeded shuffle: whole videos, so no held-out clip comes from a video the model trained on.
 */
export function splitByVideo(files: readonly PickedFile[], share: number, seed: number): { train: PickedFile[]; held: PickedFile[] } {
  const train: PickedFile[] = [],
    held: PickedFile[] = [];
  const byClass = new Map<number, PickedFile[]>();
  for (const f of files) {
    if (f.label < 0) continue;
    let list = byClass.get(f.label);
    if (!list) byClass.set(f.label, (list = []));
    list.push(f);
  }
  for (const [label, list] of byClass) {
    const order = shuffledEpoch(
      list.slice().sort((a, b) => (a.path < b.path ? -1 : 1)),
      seed,
      label,
    );
    const count = list.length < 2 ? 0 : Math.max(1, Math.round(list.length * share));
    held.push(...order.slice(0, count));
    train.push(...order.slice(count));
  }
  return { train, held };
}
