// Clips from a folder of videos in a Node 20 script, plain JavaScript. The folder holds one
// subfolder per class (<folder>/<class>/<video>.mp4):  node video-clips.mjs videos
import { videoLoader } from 'tandem/video';

const folder = process.argv[2] ?? 'videos';
// Node has no WebCodecs: the videos are demuxed and decoded on the wasm threads, into wasm memory.
const clips = videoLoader(folder, { clip: { frames: 4, stride: 3 }, size: 32, batchSize: 8, sampler: 'uniform', threads: 2 });
try {
  const classes = await clips.classes();
  let count = 0;
  for await (const batch of clips) {
    // batch.data: u8 [clips, frames, height, width, RGB]; batch.frameTimes: seconds, clips × frames.
    const firstTimes = Array.from(batch.frameTimes.subarray(0, batch.shape[1]), (t) => t.toFixed(3));
    const labels = Array.from(batch.labels, (l) => classes[l]);
    console.log(`batch [${batch.shape.join(', ')}] labels ${labels.join(' ')}; first clip's frames at ${firstTimes.join(' ')} s`);
    count += batch.count;
    batch.release(); // hands the buffer back for the next batch
  }
  console.log(`${count} clips of ${classes.length} classes (${classes.join(', ')}); ${clips.failures().length} failed`);
  for (const f of clips.failures()) console.log(`failed: ${f.key}: ${f.error}`);
  console.log(clips.summary());
} finally {
  await clips.close();
}
