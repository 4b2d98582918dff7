// What the numbers were measured on: the machine, Node, and the version of every contender.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The installed version of a package, read from its folder: several peers list no `package.json`
 * in their `exports`, so it cannot be `require`d.
 */
export function packageVersion(name) {
  const file = path.join(ROOT, 'node_modules', ...name.split('/'), 'package.json')
  return JSON.parse(fs.readFileSync(file, 'utf8')).version
}

/** The machine, in the words `bench.md` prints. */
export function describeMachine() {
  const cpus = os.cpus()
  return {
    cpu: cpus.length ? cpus[0].model.trim() : 'unknown',
    nproc: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  }
}
