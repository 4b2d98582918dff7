// What the CLI specs share: the CLI run as a user runs it (a child process on files in a
// temporary folder), and a reader of Megatron-LM's indexed dataset written here from its layout.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'

import { fixture, type Texts } from './helpers'

export const CLI = join(__dirname, '..', 'cli', 'batchtok.js')

export type Run = { status: number | null; stdout: string; stderr: string }

/** Runs the CLI in `cwd` and waits for it. */
export function cli(cwd: string, args: string[], input?: string | Buffer): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, input, encoding: 'utf8' })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Runs the CLI and expects success; returns its parsed --summary. */
export function encode(cwd: string, args: string[], input?: string | Buffer): Record<string, unknown> {
  const run = cli(cwd, [...args, '-q', '--summary'], input)
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  return JSON.parse(run.stdout.trim().split('\n').pop()!)
}

/** Every document's ids of a Megatron-LM indexed dataset at `prefix`, read from its layout. */
export function readMegatron(prefix: string): number[][] {
  const index = readFileSync(`${prefix}.idx`)
  expect(index.subarray(0, 9).toString('latin1')).toBe('MMIDIDX\x00\x00')
  expect(index.readBigUInt64LE(9)).toBe(1n)
  const code = index.readUInt8(17)
  const sequences = Number(index.readBigUInt64LE(18))
  const documents = Number(index.readBigUInt64LE(26))
  let at = 34
  const lengths = Array.from({ length: sequences }, (_, i) => index.readInt32LE(at + 4 * i))
  at += 4 * sequences
  const pointers = Array.from({ length: sequences }, (_, i) => Number(index.readBigInt64LE(at + 8 * i)))
  at += 8 * sequences
  const boundaries = Array.from({ length: documents }, (_, i) => Number(index.readBigInt64LE(at + 8 * i)))
  expect(at + 8 * documents).toBe(index.length)
  const data = readFileSync(`${prefix}.bin`)
  const size = code === 8 ? 2 : code === 4 ? 4 : NaN
  const read = (pointer: number, length: number) =>
    Array.from({ length }, (_, k) => (size === 2 ? data.readUInt16LE(pointer + 2 * k) : data.readInt32LE(pointer + 4 * k)))
  const out: number[][] = []
  for (let d = 0; d + 1 < documents; d++) {
    const ids: number[] = []
    for (let s = boundaries[d]; s < boundaries[d + 1]; s++) for (const id of read(pointers[s], lengths[s])) ids.push(id)
    out.push(ids)
  }
  return out
}

export const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')

export const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)
/** Fixture texts that fit on one line, as a text file holds them. */
export const lines = texts.filter((text) => !/[\r\n]/.test(text))
