'use strict'
// Progress on stderr: a bar on a terminal (cli-progress), a plain line every few seconds
// otherwise (a log file or a cluster job's output), nothing with --quiet.

/** Seconds between plain progress lines. */
const PLAIN_INTERVAL_MS = 10_000
const MIB = 1 << 20

/** Formats a rate and counts as the plain line and the bar show them. */
function describe(state, seconds) {
  const mib = state.rawBytes / MIB
  return `${state.documents} documents, ${state.tokens} tokens, ${mib.toFixed(1)} MiB read, ${(mib / Math.max(seconds, 1e-9)).toFixed(1)} MiB/s`
}

/**
 * A progress reporter: `update(state)` as batches finish, `stop()` at the end.
 * @param {{ quiet: boolean, totalBytes: number, stream?: NodeJS.WriteStream }} options
 */
function createProgress({ quiet, totalBytes, stream = process.stderr }) {
  const started = Date.now()
  if (quiet) return { update() {}, stop() {} }
  if (stream.isTTY) {
    const { SingleBar, Presets } = require('cli-progress')
    const bar = new SingleBar(
      {
        stream,
        format: '{bar} {percentage}% | {docs} docs | {mib} MiB | {rate} MiB/s | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 20,
      },
      Presets.shades_classic,
    )
    bar.start(Math.max(totalBytes, 1), 0, { docs: 0, mib: '0.0', rate: '0.0' })
    return {
      update(state) {
        const seconds = (Date.now() - started) / 1000
        bar.update(Math.min(state.rawBytes, totalBytes), {
          docs: state.documents,
          mib: (state.rawBytes / MIB).toFixed(1),
          rate: (state.rawBytes / MIB / Math.max(seconds, 1e-9)).toFixed(1),
        })
      },
      stop() {
        bar.stop()
      },
    }
  }
  let last = started
  let latest = null
  return {
    update(state) {
      latest = state
      const now = Date.now()
      if (now - last < PLAIN_INTERVAL_MS) return
      last = now
      const percent = totalBytes > 0 ? ` (${((100 * state.rawBytes) / totalBytes).toFixed(1)}%)` : ''
      stream.write(`batchtok: ${describe(state, (now - started) / 1000)}${percent}\n`)
    },
    stop() {
      if (latest) stream.write(`batchtok: done: ${describe(latest, (Date.now() - started) / 1000)}\n`)
    },
  }
}

module.exports = { createProgress }
