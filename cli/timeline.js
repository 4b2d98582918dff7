'use strict'
// An opt-in timeline of a run, for finding where its cores wait: with BATCHTOK_CLI_TIMELINE set
// to a file, each step of each batch (read, handed to the encoder, encoded, written), the engine
// becoming ready, the background and final syncs and the index are recorded with the wall time
// and the process's CPU time so far, and written to that file as JSON lines when the run ends,
// followed by each thread's CPU seconds. Unset (the default), `mark` does nothing.
// `benchmark/cli-timeline.mjs` reads the file and adds up the idle core-seconds of each phase.

const fs = require('node:fs')

const file = process.env.BATCHTOK_CLI_TIMELINE
/** Whether a timeline is being recorded. */
const enabled = Boolean(file)
const events = []

/** Milliseconds of CPU time per clock tick of /proc (USER_HZ, 100 on Linux). */
const MS_PER_TICK = 10

/**
 * The CPU milliseconds every process on the machine has used since boot, and the cores' idle
 * milliseconds (idle and waiting for I/O), from /proc/stat; null off Linux. Read at the phase
 * marks only (a file read, too slow for every batch): with it, a phase's idle cores are told from
 * cores that other processes took.
 */
function machineCpu() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is counted in user already).
    const total = fields.slice(0, 8).reduce((sum, ticks) => sum + ticks, 0)
    const idle = fields[3] + fields[4]
    return { busy: (total - idle) * MS_PER_TICK, idle: idle * MS_PER_TICK }
  } catch {
    return null
  }
}

/**
 * Records `event` (with `fields`, e.g. a batch's number) now: milliseconds since the process
 * started, and the process's user + system CPU in milliseconds, every thread together; a phase
 * mark (`phase` true) also the machine's CPU (`machineCpu`).
 * @param {string} event
 * @param {Record<string, number | string>} [fields]
 * @param {boolean} [phase]
 */
function mark(event, fields, phase = false) {
  if (!enabled) return
  const cpu = process.cpuUsage()
  const record = { event, t: performance.now(), cpu: (cpu.user + cpu.system) / 1000, ...fields }
  if (phase) record.machine = machineCpu()
  events.push(record)
}

/** Each thread's name and CPU milliseconds, from /proc (Linux; empty elsewhere). */
function threadCpu() {
  try {
    return fs.readdirSync('/proc/self/task').map((tid) => {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      // The name is in parentheses and may hold spaces; the fields after it are plain.
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return { tid: Number(tid), name, cpu: (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK }
    })
  } catch {
    return []
  }
}

/** Writes the recorded events and each thread's CPU to the timeline file. */
function flush() {
  if (!enabled) return
  mark('exit', undefined, true)
  const lines = events.map((event) => JSON.stringify(event))
  for (const thread of threadCpu()) lines.push(JSON.stringify({ event: 'thread', ...thread }))
  fs.writeFileSync(file, `${lines.join('\n')}\n`)
}

module.exports = { mark, flush, enabled }
