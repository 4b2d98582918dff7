// Every JavaScript example in README.md runs as written, as Rust's doc tests run the examples in
// doc comments.
//
// The README's convention: a JavaScript example is a ```js block whose first line is
// `// CommonJS` or `// ESM`. Each is written to `.cache/readme/` in the repository (so that
// `require('batchtok')` and `import 'batchtok/model/gpt-4o'` resolve through package.json's
// `exports`, as they do in a project that installed batchtok), as `.cjs` or `.mjs` by its marker,
// and run with the Node running this test, from the repository root; it must exit with 0. The
// examples check their own results with `node:assert`. Blocks in other languages (shell) are not
// run. A block whose info string is `js skip-test` is not run either; it must say why in a comment
// on its second line, where a reader sees it.

import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..')
const OUT = join(ROOT, '.cache', 'readme')
/** How long an example may take: each loads an encoding and runs small batches. */
const TIMEOUT_MS = 60_000

interface Block {
  /** The line of the opening fence, 1-based. */
  line: number
  /** The heading the block sits under, for the test's name. */
  heading: string
  /** The info string after the fence. */
  info: string
  code: string
}

/** The fenced code blocks of `markdown`, in order. */
function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = []
  const lines = markdown.split('\n')
  let heading = ''
  let open: { fence: string; line: number; info: string; body: string[] } | null = null
  for (const [index, text] of lines.entries()) {
    if (open === null) {
      const start = /^ {0,3}(`{3,}|~{3,})\s*(.*)$/.exec(text)
      if (start) open = { fence: start[1], line: index + 1, info: start[2].trim(), body: [] }
      else if (/^#{1,6} /.test(text)) heading = text.replace(/^#+ /, '')
    } else if (text.trim().startsWith(open.fence) && text.trim().replace(/[`~]/g, '') === '') {
      blocks.push({ line: open.line, heading, info: open.info, code: open.body.join('\n') + '\n' })
      open = null
    } else {
      open.body.push(text)
    }
  }
  if (open !== null) throw new Error(`README.md: the code block at line ${open.line} is never closed`)
  return blocks
}

/** The language word of an info string: `js` for "js skip-test". */
const language = (info: string) => info.split(/\s+/)[0].toLowerCase()

/** Languages that are JavaScript to a reader, whatever the README's convention says. */
const JAVASCRIPT = new Set(['js', 'javascript', 'cjs', 'mjs', 'jsx', 'ts', 'typescript', 'node'])

/** `.cjs` or `.mjs`, by the block's first line, or `null` if it does not say. */
function moduleKind(code: string): '.cjs' | '.mjs' | null {
  const first = code.split('\n')[0].trim()
  if (first === '// CommonJS') return '.cjs'
  if (first === '// ESM') return '.mjs'
  return null
}

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const blocks = codeBlocks(readme)
const javascript = blocks.filter((block) => JAVASCRIPT.has(language(block.info)))
const skipped = javascript.filter((block) => block.info.split(/\s+/).includes('skip-test'))
const runnable = javascript.filter((block) => !skipped.includes(block))

describe('README.md', () => {
  it('has JavaScript examples, and every one is a ```js block that says CommonJS or ESM', () => {
    expect(runnable.length).toBeGreaterThan(0)
    const unmarked = javascript
      .filter((block) => language(block.info) !== 'js' || moduleKind(block.code) === null)
      .map((block) => `line ${block.line}: \`\`\`${block.info}, first line ${JSON.stringify(block.code.split('\n')[0])}`)
    expect(unmarked, 'open each example with ```js and a first line `// CommonJS` or `// ESM`').toEqual([])
  })

  it('says why, on its second line, for every example it does not run', () => {
    const silent = skipped
      .filter((block) => !/^\/\/\s*\S/.test(block.code.split('\n')[1] ?? ''))
      .map((block) => `line ${block.line}`)
    expect(silent, 'a `js skip-test` block gives its reason in a comment on its second line').toEqual([])
  })

  describe('examples run as written', () => {
    rmSync(OUT, { recursive: true, force: true })
    mkdirSync(OUT, { recursive: true })

    it.each(runnable.map((block) => [block.line, block.heading, block] as const))(
      'line %i, under "%s"',
      (line, _heading, block) => {
        const kind = moduleKind(block.code)
        expect(kind, `line ${line}: first line must be // CommonJS or // ESM`).not.toBeNull()
        const file = join(OUT, `example-line-${line}${kind}`)
        writeFileSync(file, block.code)
        const run = spawnSync(process.execPath, [file], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: TIMEOUT_MS,
        })
        const report = [
          `README.md line ${line} (${file}) exited with ${run.status}${run.signal ? ` (${run.signal})` : ''}`,
          run.error ? String(run.error) : '',
          'stderr:',
          run.stderr,
          'stdout:',
          run.stdout,
        ].join('\n')
        expect(run.status, report).toBe(0)
      },
    )
  })
})
