// Sums the self time of each wasm function over the pool thread's V8 CPU profile (the
// .cpuprofile whose samples hold decode functions) and groups them into the parts of a JPEG
// decode. Prints a markdown table: part, its functions, share of the pool thread's samples.
//   node scripts/profile-summary.mjs DIR_OF_CPUPROFILES
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const GROUPS = [
  [
    'entropy (Huffman) decoding',
    /^(decode_mcu|jpeg_fill_bit_buffer|jpeg_huff_decode|process_restart|decompress_onepass|decompress_data|consume_data)/,
  ],
  ['IDCT', /idct/],
  ['upsampling (4:2:0 chroma)', /upsample|h2v[12]|h1v2/],
  ['YCbCr → RGB', /ycc|rgb_convert|gray_rgb|grayscale_convert|null_convert|color_convert/],
  ['resize and the job (inlined)', /^(td_|horizontal_row|vertical|store_row|plan_axis|pool_thread|mirror_rows|orient_copy)/],
  [
    'per-image setup (markers, tables, memory pools)',
    /read_markers|get_|jpeg_make_d_derived_tbl|jinit|jpeg_(start|read_header|crop|skip|core|calc|abort|consume|finish|mem_src)|alloc_|free_pool|start_(pass|input)|prepare_|master_|realize|per_scan|latch|make_funny|set_wraparound|output_pass|finish_|reset_|initial_setup|default_decompress|select_file_name|jdiv|round_up|jcopy|jzero/,
  ],
  ['memory and libc', /^(memcpy|memset|memmove|dlmalloc|dlfree|malloc|free|calloc|realloc|sbrk|emscripten_builtin|__)/],
];

const dir = process.argv[2];
let best;
for (const f of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
  const profile = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const name = byId.get(id)?.callFrame.functionName || '(anonymous)';
    self.set(name, (self.get(name) ?? 0) + (dt[i + 1] ?? dt[i] ?? 0));
  });
  const decode = [...self].filter(([n]) => /idct|decode_mcu/.test(n)).reduce((s, [, t]) => s + t, 0);
  if (!best || decode > best.decode) best = { file: f, self, decode };
}
if (!best) throw new Error(`no .cpuprofile with decode functions in ${dir}`);
const total = [...best.self.values()].reduce((a, b) => a + b, 0);
const idle = ['(idle)', '(program)', '(garbage collector)'].reduce((s, n) => s + (best.self.get(n) ?? 0), 0);
const rows = GROUPS.map(([name]) => ({ name, time: 0, fns: [] }));
const other = { name: 'the rest (JS glue, waits, V8)', time: 0, fns: [] };
for (const [fn, t] of best.self) {
  if (['(idle)', '(program)', '(garbage collector)'].includes(fn)) continue;
  const i = GROUPS.findIndex(([, re]) => re.test(fn));
  const row = i >= 0 ? rows[i] : other;
  row.time += t;
  row.fns.push([fn, t]);
}
const busy = total - idle;
console.log(`pool thread profile ${best.file}: ${(busy / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle`);
console.log('| part | largest functions (share of busy time) | share |');
console.log('|---|---|---|');
for (const r of [...rows, other]) {
  const top = r.fns
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([fn, t]) => `\`${fn}\` ${((100 * t) / busy).toFixed(1)}%`)
    .join(', ');
  console.log(`| ${r.name} | ${top} | ${((100 * r.time) / busy).toFixed(0)}% |`);
}
