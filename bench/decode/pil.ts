// PIL (Debian's python3-pil, libjpeg-turbo) doing the same job in one Python process: the
// torchvision transform (Resize(224) bilinear + CenterCrop(224)) or a plain decode to RGB. Files
// are read into memory before the clock starts, like every other variant's.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Sample, Transform } from './types.ts';

const SCRIPT = `
import io, sys, time, resource
from PIL import Image
mode, paths = sys.argv[1], sys.argv[2:]
def cpu(): r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
# Read before the clock starts, as every other variant decodes from memory.
files = [open(p, 'rb').read() for p in paths]
c0 = cpu(); t0 = time.perf_counter()
for data in files:
    im = Image.open(io.BytesIO(data)).convert('RGB')
    if mode == 'resize':
        w, h = im.size; s = 224 / min(w, h)
        # torchvision's Resize(224): the longer side truncated; CenterCrop: offsets rounded half to even.
        im = im.resize((224, int(224 * h / w)) if w <= h else (int(224 * w / h), 224), Image.BILINEAR)
        l = int(round((im.width - 224) / 2.0)); t = int(round((im.height - 224) / 2.0))
        im = im.crop((l, t, l + 224, t + 224))
    im.tobytes()
seconds, used = time.perf_counter() - t0, cpu() - c0
# VmHWM: ru_maxrss would include the parent's memory from before exec
hwm = next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))
print(seconds, used, hwm)
`;

// Debian's python3 (with python3-pil), not whichever python3 comes first on PATH.
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

export function pilAvailable(): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile(PYTHON, ['-c', 'import PIL; print(PIL.__version__)'], (err, out) => resolve(err ? undefined : out.trim())),
  );
}

export function pilPass(paths: string[], transform: Transform): Promise<Sample> {
  return new Promise((resolve, reject) =>
    execFile(PYTHON, ['-c', SCRIPT, transform, ...paths], { maxBuffer: 1 << 20 }, (err, out, stderr) => {
      if (err) return reject(new Error(`PIL pass failed: ${stderr || err.message}`));
      const [seconds, cpu, rss] = out.trim().split(' ').map(Number);
      resolve({ seconds: seconds!, cpu: cpu!, failed: 0, maxRssKb: rss! });
    }),
  );
}
