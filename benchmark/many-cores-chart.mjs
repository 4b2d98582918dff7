// The chart of a many-core scheduler run: speed-up over the serial policy against threads, one
// panel per workload and method, from the medians `cargo run --release --example scheduler`
// writes (`--tsv`).
//
//   node benchmark/many-cores-chart.mjs [--tsv benchmark/results/many-cores.tsv]
//                                       [--out benchmark/results/many-cores.svg] [--machine TEXT]
//
// Lines: the chunked policy, the release candidate's own parallel batch (`rc.3 encode`), the batch
// hand-sharded on one shared engine with no scheduler (`sharded-shared`), and the two rayon
// policies; the dashed line is a speed-up equal to the threads (efficiency 1).
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({
  options: {
    tsv: { type: 'string', default: 'benchmark/results/many-cores.tsv' },
    out: { type: 'string', default: 'benchmark/results/many-cores.svg' },
    machine: { type: 'string', default: '' },
  },
})

/** The contenders drawn, with their colours, in legend order. */
const LINES = {
  chunked: '#1a7f37',
  'rc.3 encode': '#cf222e',
  'sharded-shared': '#0969da',
  'rayon-min-len': '#bf8700',
  rayon: '#8250df',
}

const rows = readFileSync(args.tsv, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const [method, workload, contender, threads, medianS] = line.split('\t')
    return { method, workload, contender, threads: Number(threads), seconds: Number(medianS) }
  })
const panels = []
for (const method of ['cold', 'repeated']) {
  for (const workload of [...new Set(rows.map((r) => r.workload))]) {
    const mine = rows.filter((r) => r.method === method && r.workload === workload)
    if (mine.length > 0) panels.push({ method, workload, rows: mine })
  }
}
if (panels.length === 0) throw new Error(`${args.tsv} holds no medians: run the scheduler benchmark first`)

const threads = [...new Set(rows.map((r) => r.threads))].sort((a, b) => a - b)
const maxThreads = threads.at(-1)
const W = 300
const H = 200
const GAP = 56
const columns = Math.max(...['cold', 'repeated'].map((m) => panels.filter((p) => p.method === m).length))
const width = GAP + columns * (W + GAP)
const height = 90 + 2 * (H + 70)
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const parts = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="11">`,
  '<rect width="100%" height="100%" fill="#ffffff"/>',
  `<text x="${GAP}" y="24" font-size="16" font-weight="600">The scheduler on 1 to ${maxThreads} threads: o200k_base, speed-up over the serial policy (medians)</text>`,
  `<text x="${GAP}" y="42" fill="#57606a">${esc(args.machine)}${args.machine ? '; ' : ''}cold: every word cache empty before each run; repeated: the same batch again on warm caches; dashed: speed-up = threads</text>`,
]
let lx = GAP
for (const [name, color] of Object.entries(LINES)) {
  parts.push(`<rect x="${lx}" y="54" width="10" height="10" fill="${color}"/><text x="${lx + 14}" y="63">${esc(name)}</text>`)
  lx += 30 + name.length * 6
}
const methods = ['cold', 'repeated']
for (const panel of panels) {
  const row = methods.indexOf(panel.method)
  const column = panels.filter((p) => p.method === panel.method).indexOf(panel)
  const px = GAP + column * (W + GAP)
  const py = 90 + row * (H + 70)
  const serial = panel.rows.find((r) => r.contender === 'serial')
  if (!serial) throw new Error(`${args.tsv}: ${panel.method} ${panel.workload} has no serial median`)
  const speed = (r) => serial.seconds / r.seconds
  const yMax = Math.ceil(Math.max(maxThreads, ...panel.rows.map(speed)) / 4) * 4
  const x = (t) => (t / maxThreads) * W
  const y = (v) => H - (v / yMax) * H
  parts.push(`<g transform="translate(${px},${py})">`)
  parts.push(`<text x="0" y="-8" font-size="13" font-weight="600">${esc(`${panel.workload}, ${panel.method}`)}</text>`)
  for (let v = 0; v <= yMax + 1e-9; v += yMax / 4) {
    parts.push(`<line x1="0" y1="${y(v).toFixed(1)}" x2="${W}" y2="${y(v).toFixed(1)}" stroke="#d0d7de"/>`)
    parts.push(`<text x="-4" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#57606a">${Math.round(v)}×</text>`)
  }
  for (const t of threads) {
    parts.push(`<text x="${x(t).toFixed(1)}" y="${H + 14}" text-anchor="middle" fill="#57606a">${t}</text>`)
  }
  parts.push(`<text x="${W / 2}" y="${H + 30}" text-anchor="middle" fill="#57606a">threads</text>`)
  parts.push(`<line x1="${x(0)}" y1="${y(0)}" x2="${x(maxThreads)}" y2="${y(maxThreads).toFixed(1)}" stroke="#8c959f" stroke-dasharray="4 3"/>`)
  for (const [name, color] of Object.entries(LINES)) {
    const points = panel.rows
      .filter((r) => r.contender === name)
      .sort((a, b) => a.threads - b.threads)
      .map((r) => `${x(r.threads).toFixed(1)},${y(speed(r)).toFixed(1)}`)
    if (points.length > 0) {
      parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`)
    }
  }
  parts.push('</g>')
}
parts.push('</svg>')
writeFileSync(args.out, `${parts.join('\n')}\n`)
console.log(`wrote ${args.out}`)
