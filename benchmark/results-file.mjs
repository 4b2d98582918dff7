// A results file made of sections, each written by its own benchmark run: a run replaces its own
// section and leaves the others as they are.

import fs from 'node:fs'

const begin = (name) => `<!-- section: ${name} -->`
const end = (name) => `<!-- end: ${name} -->`

/**
 * Replaces section `name` of the Markdown file `file` with `lines` (appended if the file has no
 * such section; the file is created if missing).
 */
export function writeSection(file, name, lines) {
  const body = [begin(name), ...lines, end(name)].join('\n')
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const from = text.indexOf(begin(name))
  const to = text.indexOf(end(name))
  const next =
    from >= 0 && to > from
      ? text.slice(0, from) + body + text.slice(to + end(name).length)
      : `${text}${text && !text.endsWith('\n\n') ? '\n' : ''}${body}\n`
  fs.writeFileSync(file, next)
}
