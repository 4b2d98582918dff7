// Turns the results of bench.mjs into bench.md (tables) and bench.svg (a hand-written bar chart).

import { ENCODING_LABELS } from './contenders.mjs'
import { MiB } from './stats.mjs'

const REFERENCE_KEY = 'batchtok/encodeBatch/chunked/2'
const GPT_TOKENIZER_KEY = 'gpt-tokenizer/encode'
const HF_BINDING_KEY = 'tokenizers/encodeBatch'

function rate(x) {
  if (x >= 100) return x.toFixed(0)
  if (x >= 10) return x.toFixed(1)
  return x.toFixed(2)
}
const mib = (bytes) => `${(bytes / MiB).toFixed(0)} MiB`
const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1))
const times = (x) => (x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(1)}×`)

/** The baseline of a scenario's "×" column: the peer most users of that encoding already have. */
function baselineKey(encoding) {
  return encoding === 'bert' ? HF_BINDING_KEY : GPT_TOKENIZER_KEY
}

function contenderName(row) {
  if (row.library !== 'batchtok') return row.label
  return row.label.replace(/^batchtok /, '')
}

function statusText(row) {
  if (row.status === 'differs') return 'ids differ: not timed'
  if (row.status === 'load-error') return 'could not load'
  if (row.status === 'error') return 'failed'
  return row.status
}

function headlineScenario(results, workload = 'documents') {
  return results.scenarios.find((s) => s.encoding === results.headlineEncoding && s.workload === workload)
}

/**
 * The comparisons a reader asks first, on the headline encoding's documents: batchtok's default
 * (encodeBatch, chunked, 2 threads) against the peer most users have and against the Hugging
 * Face binding, how much it delays the event loop, and its peak RSS against the binding's.
 */
export function headlineComparisons(results) {
  const docs = headlineScenario(results)
  const out = []
  const row = (key) => docs?.rows.find((r) => r.key === key && r.status === 'timed')
  const ours = row(REFERENCE_KEY)
  for (const [key, name] of [
    [GPT_TOKENIZER_KEY, 'gpt-tokenizer'],
    [HF_BINDING_KEY, '`tokenizers` binding (2 threads)'],
  ]) {
    const peer = row(key)
    const comparison = `encodeBatch chunked, 2 threads, against ${name}`
    if (!ours || !peer) {
      out.push({ comparison, measured: 'not measured (see the id checks)' })
      continue
    }
    const ratio = ours.mibPerSec / peer.mibPerSec
    const low = ours.mibPerSecMin / peer.mibPerSecMax
    const high = ours.mibPerSecMax / peer.mibPerSecMin
    out.push({
      comparison,
      measured: `${times(ratio)} (${rate(ours.mibPerSec)} vs ${rate(peer.mibPerSec)} MiB/s; from the sample ranges ${times(low)}–${times(high)})`,
    })
  }
  const probe = (key) => results.batchProbes.find((p) => p.key === key && !p.failed)
  const ourProbe = probe(REFERENCE_KEY)
  const hfProbe = probe(HF_BINDING_KEY)
  if (ourProbe) {
    out.push({
      comparison: `event-loop delay while a ${mib(ourProbe.bytes)} batch runs (encodeBatch chunked, 2 threads)`,
      measured: `p99 ${ms(ourProbe.duringBatch.p99Ms)} ms, max ${ms(ourProbe.duringBatch.maxMs)} ms over ${ourProbe.duringBatch.samples} samples (idle loop: p99 ${ms(ourProbe.idle.p99Ms)} ms)`,
    })
  }
  if (ourProbe && hfProbe) {
    out.push({
      comparison: 'peak RSS against the `tokenizers` binding on the same job',
      measured: `${mib(ourProbe.maxRssBytes)} vs ${mib(hfProbe.maxRssBytes)} (both after ${ourProbe.runs} run(s) of the batch; ${mib(ourProbe.rssBeforeLoadBytes)} before either loads)`,
    })
  }
  return out
}

// ---- markdown -------------------------------------------------------------------------------

function table(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n')
}

function scenarioTable(scenario) {
  const base = scenario.rows.find((r) => r.key === baselineKey(scenario.encoding) && r.status === 'timed')
  const baseName = base ? contenderName(base).replace(/ (encode|encodeBatch)$/, '') : 'baseline'
  const rows = scenario.rows.map((row) => {
    if (row.status !== 'timed') return [contenderName(row), row.threads, statusText(row), '', '', '', '']
    return [
      contenderName(row),
      row.threads,
      rate(row.mibPerSec),
      `${rate(row.mibPerSecMin)}–${rate(row.mibPerSecMax)}`,
      (row.tokensPerSec / 1e6).toFixed(2),
      base ? times(row.mibPerSec / base.mibPerSec) : '',
      row.samples,
    ]
  })
  return table(['contender', 'threads', 'MiB/s (median)', 'MiB/s min–max', 'Mtok/s (median)', `× ${baseName}`, 'samples'], rows)
}

function summaryTable(results, encoding) {
  const scenarios = results.scenarios.filter((s) => s.encoding === encoding)
  if (!scenarios.length) return ''
  const keys = scenarios[0].rows.map((r) => r.key)
  const rows = keys.map((key) => {
    const first = scenarios[0].rows.find((r) => r.key === key)
    const cells = scenarios.map((s) => {
      const row = s.rows.find((r) => r.key === key)
      return row?.status === 'timed' ? rate(row.mibPerSec) : statusText(row ?? { status: 'n/a' })
    })
    return [contenderName(first), first.threads, ...cells]
  })
  return table(['contender', 'threads', ...scenarios.map((s) => `${s.label} MiB/s`)], rows)
}

function problems(results) {
  const lines = []
  for (const s of results.scenarios) {
    for (const row of s.rows) {
      if (row.status === 'timed') continue
      lines.push(`- ${ENCODING_LABELS[s.encoding]} · ${s.label} · ${row.label}: ${statusText(row)}: ${row.detail}`)
    }
  }
  return lines
}

export function renderMarkdown(results) {
  const { meta } = results
  const m = meta.machine
  const out = []
  out.push('# batchtok benchmark results', '')
  out.push(
    `Written by \`npm run ${meta.mode === 'quick' ? 'bench:quick' : 'bench'}\` (benchmark/bench.mjs; what each number means: ` +
      `[benchmark/README.md](../README.md)). Mode: **${meta.mode}**` +
      (meta.mode === 'quick' ? ' (o200k_base and BERT only, corpus subsets, chunked and rayon policies only)' : '') +
      (meta.settings.workloadsOf
        ? ` (trimmed to keep the run near 25 minutes: ${Object.entries(meta.settings.workloadsOf)
            .map(([e, w]) => `${ENCODING_LABELS[e]} on ${w.join(' and ')} only`)
            .join(', ')})`
        : '') +
      `. The run took ${Math.round(meta.durationSec / 60)} min.`,
    '',
  )
  out.push('## Machine and versions', '')
  out.push(
    table(
      ['CPU', 'nproc', 'memory', 'OS', 'Node'],
      [[m.cpu, m.nproc, `${m.memoryGiB} GiB`, m.os, m.node]],
    ),
    '',
  )
  out.push(
    `The machine is shared with other builds: expect noise; the min–max columns show how much. ` +
      `batchtok ${meta.versions.batchtok} at commit ${meta.commit}` +
      (meta.addon ? `, addon \`${meta.addon.file}\` sha256 ${meta.addon.sha256}…` : '') +
      `; tinybench ${meta.versions.tinybench}.`,
    '',
  )
  out.push(
    table(
      ['peer', 'version', 'status'],
      meta.peers.map((p) => [`\`${p.name}\``, p.version ?? '', p.status === 'installed' ? 'installed from npm (exact version)' : p.status]),
    ),
    '',
  )

  out.push(`## At a glance (${results.headlineEncoding}, big.txt documents)`, '')
  if (meta.mode === 'quick') {
    out.push(
      'Quick mode times the first 512 KiB of the documents: batches of a few milliseconds, where start-up and ' +
        'noise weigh far more than in the full run, so the two throughput ratios below are not those of a large ' +
        'batch; `npm run bench` times all of it. The event-loop and RSS rows use the full ~6 MB batch in both modes.',
      '',
    )
  }
  out.push(
    table(
      ['comparison', 'measured'],
      headlineComparisons(results).map((c) => [c.comparison, c.measured]),
    ),
    '',
  )
  out.push('![throughput by policy, threads and peer](bench.svg)', '')

  out.push('## Throughput', '')
  out.push(
    `Input MiB/s is UTF-8 bytes of input per second; tokens/s counts the ids produced. Each batch is one call ` +
      `that returns every text's ids (or counts) to JS. Median over all samples of ${meta.settings.rounds} rounds, ` +
      `contenders rotated between rounds; min–max from the slowest and fastest sample. Every contender's output ` +
      `was first checked equal to batchtok's (that pass is also its warm-up). The \`tokenizers\` binding runs ` +
      `on ${meta.settings.hfBindingThreads} threads (RAYON_NUM_THREADS); the JS and WASM peers on the main thread.`,
    '',
  )
  const encodings = [...new Set(results.scenarios.map((s) => s.encoding))]
  for (const encoding of encodings) {
    out.push(`### ${ENCODING_LABELS[encoding]}: input MiB/s at a glance`, '', summaryTable(results, encoding), '')
  }
  for (const encoding of encodings) {
    for (const scenario of results.scenarios.filter((s) => s.encoding === encoding)) {
      out.push(`### ${ENCODING_LABELS[encoding]} · ${scenario.label}`, '', scenario.description, '', scenarioTable(scenario), '')
    }
  }

  out.push('## Event loop and peak RSS: one fresh process per configuration', '')
  const probeRow = results.batchProbes.find((p) => !p.failed)
  out.push(
    `${ENCODING_LABELS[results.headlineEncoding]}, all of big.txt as documents` +
      (probeRow ? ` (${probeRow.items} items, ${mib(probeRow.bytes)})` : '') +
      `. \`monitorEventLoopDelay\` (resolution 1 ms) watches the loop from the call until the ids are in JS, ` +
      `plus 20 ms; an idle loop reads about 1 ms. A library that blocks the loop shows its whole batch as one delay. ` +
      `Peak RSS is the process's high-water RSS after ${meta.settings.probeRuns} run(s) of the batch (Linux: VmHWM; ` +
      `\`resourceUsage().maxRSS\` there includes the parent's RSS at fork, see probe.mjs); "before load" is the RSS ` +
      `with the corpus read and no tokenizer loaded.`,
    '',
  )
  out.push(
    table(
      ['contender', 'threads', 'batch time', 'loop delay p99', 'loop delay max', 'idle p99', 'RSS before load', 'peak RSS'],
      results.batchProbes.map((p) =>
        p.failed
          ? [contenderName(p), p.threads, `failed: ${p.error}`, '', '', '', '', '']
          : [
              contenderName(p),
              p.threads,
              `${ms(p.firstRunMs)} ms`,
              `${ms(p.duringBatch.p99Ms)} ms`,
              `${ms(p.duringBatch.maxMs)} ms`,
              `${ms(p.idle.p99Ms)} ms`,
              mib(p.rssBeforeLoadBytes),
              mib(p.maxRssBytes),
            ],
      ),
    ),
    '',
  )

  out.push('## Time to first use', '')
  out.push(
    'A fresh process loads the library and the encoding, then encodes one short text; milliseconds from the first ' +
      'import to the ids (Node\'s own start-up not included), median of ' +
      `${results.firstUse[0]?.repeats ?? 0} process(es). BERT and, for the Hugging Face peers, the OpenAI encodings load from a tokenizer.json file.`,
    '',
  )
  const fuEncodings = [...new Set(results.firstUse.map((r) => r.encoding))]
  const fuLibraries = [...new Set(results.firstUse.map((r) => r.library))]
  out.push(
    table(
      ['library', ...fuEncodings.map((e) => ENCODING_LABELS[e])],
      fuLibraries.map((library) => [
        library,
        ...fuEncodings.map((encoding) => {
          const r = results.firstUse.find((x) => x.library === library && x.encoding === encoding)
          if (!r) return 'n/a'
          return r.totalMs === undefined ? `failed: ${r.error}` : `${ms(r.totalMs)} ms (load ${ms(r.loadMs)}, encode ${ms(r.firstEncodeMs)})`
        }),
      ]),
    ),
    '',
  )

  const worst = results.worstCase
  out.push(`## Worst case: one text of 100,000 × 'a' (${ENCODING_LABELS[worst.encoding]})`, '')
  out.push(
    `One pre-tokenizer piece of 100,000 bytes: BPE implementations that rescan the piece after each merge are quadratic here. ` +
      `One fresh process per library, stopped after ${worst.timeoutMs / 1000} s.`,
    '',
  )
  out.push(
    table(
      ['library', 'time', 'tokens'],
      worst.rows.map((r) => [r.library, r.failed ? (r.timedOut ? `> ${worst.timeoutMs / 1000} s (stopped)` : `failed: ${r.error}`) : `${ms(r.ms)} ms`, r.failed ? '' : r.tokens]),
    ),
    '',
  )

  out.push('## Id checks', '')
  const issues = problems(results)
  out.push(
    issues.length
      ? 'Every contender not listed below produced batchtok\'s ids on every item of every workload it was timed on. Not timed:'
      : 'Every contender produced exactly batchtok\'s ids (or counts) on every item of every workload before it was timed.',
    '',
    ...issues,
    '',
  )
  out.push(
    'BERT: the fixture `__test__/fixtures/tokenizers/bert.json` truncates to 128 tokens and pads to 128. All contenders ' +
      'were given a copy with both switched off, so they do the same work on whole texts. On the file as shipped ' +
      `(the first 50 documents and the first 50 short items, ${results.bertAsShipped[0]?.items ?? 0} texts):`,
    '',
    ...results.bertAsShipped.map((r) => `- ${r.library}: ${r.error ? `could not run: ${r.error}` : r.equal ? 'same ids as batchtok' : r.detail}`),
    '',
  )
  return `${out.join('\n').trimEnd()}\n`
}

// ---- svg ------------------------------------------------------------------------------------

const COLORS = {
  'batchtok encode': '#0969da',
  'batchtok count': '#7cb9f4',
  'gpt-tokenizer': '#e16f24',
  'js-tiktoken': '#bf8700',
  tiktoken: '#8250df',
  tokenizers: '#cf222e',
  '@huggingface/tokenizers': '#1a7f37',
}

function colorOf(row, colors = COLORS) {
  if (row.library === 'batchtok') return colors[`batchtok ${row.kind}`]
  return colors[row.library] ?? '#6e7781'
}

const escapeXml = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * The chart of the headline encoding's scenarios. `options` lets another benchmark reuse it:
 * `title` and `subtitle` replace the first two lines, `colors` the libraries' colours (and legend).
 */
export function renderSvg(results, options = {}) {
  const colors = options.colors ?? COLORS
  const scenarios = results.scenarios.filter((s) => s.encoding === results.headlineEncoding)
  const timedRows = scenarios.flatMap((s) => s.rows.filter((r) => r.status === 'timed'))
  const lo = 10 ** Math.floor(Math.log10(Math.min(...timedRows.map((r) => r.mibPerSecMin))))
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...timedRows.map((r) => r.mibPerSecMax))))

  const ROW = 17
  const LABEL_W = 230
  const BAR_W = 270
  const VALUE_W = 60
  const PANEL_W = LABEL_W + BAR_W + VALUE_W
  const GAP = 30
  const PANEL_HEAD = 40
  const rowsPerPanel = Math.max(...scenarios.map((s) => s.rows.length))
  const panelH = PANEL_HEAD + rowsPerPanel * ROW + 24
  const columns = 2
  const width = columns * PANEL_W + (columns + 1) * GAP
  // The legend, wrapped onto as many lines as the libraries need.
  const legend = []
  let lx = GAP
  let ly = 54
  for (const [name, color] of Object.entries(colors)) {
    const label = name === 'batchtok encode' ? 'batchtok encodeBatch' : name === 'batchtok count' ? 'batchtok countBatch' : name
    const step = 24 + label.length * 6
    if (lx + step > width - GAP && lx > GAP) {
      lx = GAP
      ly += 16
    }
    legend.push(`<rect x="${lx}" y="${ly}" width="10" height="10" fill="${color}"/><text x="${lx + 14}" y="${ly + 9}">${escapeXml(label)}</text>`)
    lx += step
  }
  const TOP = ly + 24
  const height = TOP + Math.ceil(scenarios.length / columns) * (panelH + GAP) + 10
  const x = (v) => (Math.log10(v / lo) / Math.log10(hi / lo)) * BAR_W

  const parts = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${GAP}" y="26" font-size="16" font-weight="600">${escapeXml(options.title ?? `Throughput, ${ENCODING_LABELS[results.headlineEncoding]}: input MiB/s, median (bar) and min–max (whisker), log scale`)}</text>`,
    `<text x="${GAP}" y="44" fill="#57606a">${escapeXml(options.subtitle ?? `${results.meta.machine.cpu}, nproc ${results.meta.machine.nproc}, Node ${results.meta.machine.node}; ${results.meta.mode} run; threads after ×; not timed: ids differ from batchtok's or could not load`)}</text>`,
  )
  parts.push(...legend)

  scenarios.forEach((scenario, index) => {
    const px = GAP + (index % columns) * (PANEL_W + GAP)
    const py = TOP + Math.floor(index / columns) * (panelH + GAP)
    parts.push(`<g transform="translate(${px},${py})">`)
    parts.push(`<text x="0" y="14" font-size="13" font-weight="600">${escapeXml(scenario.label)}</text>`)
    parts.push(`<text x="0" y="28" fill="#57606a">${escapeXml(scenario.description)}</text>`)
    const barTop = PANEL_HEAD
    const barBottom = PANEL_HEAD + scenario.rows.length * ROW
    // Decade grid lines with their labels under the bars.
    for (let v = lo; v <= hi * 1.0001; v *= 10) {
      const gx = LABEL_W + x(v)
      parts.push(`<line x1="${gx.toFixed(1)}" y1="${barTop - 4}" x2="${gx.toFixed(1)}" y2="${barBottom}" stroke="#d0d7de"/>`)
      parts.push(`<text x="${gx.toFixed(1)}" y="${barBottom + 14}" text-anchor="middle" fill="#57606a">${v >= 1 ? v : v.toPrecision(1)}</text>`)
    }
    scenario.rows.forEach((row, i) => {
      const y = barTop + i * ROW
      const name = `${contenderName(row)} ×${row.threads}`
      parts.push(`<text x="${LABEL_W - 6}" y="${y + 12}" text-anchor="end">${escapeXml(name)}</text>`)
      if (row.status !== 'timed') {
        parts.push(`<text x="${LABEL_W + 4}" y="${y + 12}" fill="#cf222e">${escapeXml(statusText(row))}</text>`)
        return
      }
      const w = Math.max(1, x(row.mibPerSec))
      parts.push(`<rect x="${LABEL_W}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW - 6}" fill="${colorOf(row, colors)}"/>`)
      const a = LABEL_W + x(row.mibPerSecMin)
      const b = LABEL_W + x(row.mibPerSecMax)
      parts.push(`<line x1="${a.toFixed(1)}" y1="${y + ROW / 2}" x2="${b.toFixed(1)}" y2="${y + ROW / 2}" stroke="#24292f"/>`)
      parts.push(`<line x1="${a.toFixed(1)}" y1="${y + 5}" x2="${a.toFixed(1)}" y2="${y + ROW - 5}" stroke="#24292f"/>`)
      parts.push(`<line x1="${b.toFixed(1)}" y1="${y + 5}" x2="${b.toFixed(1)}" y2="${y + ROW - 5}" stroke="#24292f"/>`)
      parts.push(`<text x="${(Math.max(b, LABEL_W + w) + 4).toFixed(1)}" y="${y + 12}">${rate(row.mibPerSec)}</text>`)
    })
    parts.push('</g>')
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
