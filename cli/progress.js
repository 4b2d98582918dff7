'use strict'
// Progress on stderr: a bar on a terminal (cli-progress), a plain line every few seconds
// otherwise (a log file or a cluster job's output), nothing with --quiet. The bar's share and ETA
// go by the input's bytes read, which the input's size bounds (compressed bytes for a compressed
// file); the MiB and MiB/s shown are of the text encoded, and the rate counts this run's text
// only, not what a resumed run's checkpoint already holds.

/** Seconds between plain progress lines. */
const PLAIN_INTERVAL_MS = 10_000
const MIB = 1 << 20

/**
 * A progress reporter: `update(state)` as batches are written (`state`: documents, tokens and
 * textBytes so far, rawBytes of input read), `stop(outcome)` at the end: 'done', or 'stopped'
 * for a run that ends before its input does.
 * `resumedTextBytes` is the text a resumed run's checkpoint holds, which this run does not encode.
 * @param {{ quiet: boolean, totalBytes: number, resumedTextBytes?: number, stream?: NodeJS.WriteStream }} options
 */
function createProgress({ quiet, totalBytes, resumedTextBytes = 0, stream = process.stderr }) {
  const started = Date.now()
  if (quiet) return { update() {}, stop() {} }
  /** The counts and rate as the line and the bar show them. */
  const shown = (state) => {
    const seconds = Math.max((Date.now() - started) / 1000, 1e-9)
    return {
      docs: state.documents,
      tokens: state.tokens,
      mib: (state.textBytes / MIB).toFixed(1),
      rate: ((state.textBytes - resumedTextBytes) / MIB / seconds).toFixed(1),
    }
  }
  if (stream.isTTY) {
    const { SingleBar, Presets } = require('cli-progress')
    const bar = new SingleBar(
      {
        stream,
        format: '{bar} {percentage}% | {docs} docs | {mib} MiB of text | {rate} MiB/s | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 20,
      },
      Presets.shades_classic,
    )
    bar.start(Math.max(totalBytes, 1), 0, { docs: 0, mib: '0.0', rate: '0.0' })
    return {
      update(state) {
        bar.update(Math.min(state.rawBytes, totalBytes), shown(state))
      },
      stop() {
        bar.stop()
      },
    }
  }
  let last = started
  let latest = null
  const line = (state) => {
    const { docs, tokens, mib, rate } = shown(state)
    return `${docs} documents, ${tokens} tokens, ${mib} MiB of text, ${rate} MiB/s`
  }
  return {
    update(state) {
      latest = state
      const now = Date.now()
      if (now - last < PLAIN_INTERVAL_MS) return
      last = now
      const percent = totalBytes > 0 ? ` (${((100 * state.rawBytes) / totalBytes).toFixed(1)}% of the input read)` : ''
      stream.write(`batchtok: ${line(state)}${percent}\n`)
    },
    stop(outcome = 'done') {
      if (latest) stream.write(`batchtok: ${outcome}: ${line(latest)}\n`)
    },
  }
}

module.exports = { createProgress }
