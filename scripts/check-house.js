'use strict'
// The house rules a reviewer would otherwise check by eye, checked on every `npm test`:
//
// 1. `unsafe` code in the napi layer (`src/js/`) lives in `raw.rs` alone, where each raw
//    Node-API call has its SAFETY argument; every other file there is safe code.
// 2. No comment in `src/**/*.rs` carries a date: comments say why, history lives in git.
// 3. The modules of `src/` do not import each other in a circle, so each can be read (and
//    changed) after the ones it uses. A module is a file or a folder's `mod.rs`; an import is
//    a `use crate::…`, `use super::…` or `use child::…` tree or a `crate::…`/`super::…` path in
//    code, resolved through re-exports to the module that defines the name. Test-only modules
//    (`#[cfg(test)]`) are left out: test support may see everything.
// 4. The release addon exports no `__`-prefixed name but napi-rs's own `__napiBindingTarget`:
//    test and profiling hooks are built only with the `testing` feature.
//
// Usage: node scripts/check-house.js [--no-addon]   (--no-addon skips 4, which needs
// `npm run build` first). Exits 1 and names every violation if any rule is broken.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const SRC = path.join(ROOT, 'src')
const ALLOWED_EXPORT = '__napiBindingTarget'
// A date on its own; one inside a name (a dated model such as gpt-4o-2024-08-06) is a name.
const DATE = /(?<![\w-])\d{4}-\d{2}-\d{2}\b/

/** Every `.rs` file under `dir`, as paths relative to `SRC` with `/` separators, sorted. */
function rustFiles(dir = SRC) {
  const out = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...rustFiles(full))
    else if (entry.name.endsWith('.rs')) out.push(path.relative(SRC, full).split(path.sep).join('/'))
  }
  return out.sort()
}

/**
 * Splits Rust source into code and comments. `code` is the source with every comment, string
 * and char literal blanked to spaces (newlines kept, so offsets and line numbers still match);
 * `comments` lists each comment's text and first line.
 */
function splitRust(source) {
  const code = source.split('')
  const comments = []
  let line = 1
  let i = 0
  const blank = (from, to) => {
    for (let k = from; k < to; k++) if (code[k] !== '\n') code[k] = ' '
  }
  const countLines = (from, to) => {
    for (let k = from; k < to; k++) if (source[k] === '\n') line++
  }
  const isIdent = (c) => c !== undefined && /[A-Za-z0-9_]/.test(c)
  while (i < source.length) {
    const c = source[i]
    const next = source[i + 1]
    if (c === '/' && next === '/') {
      let end = source.indexOf('\n', i)
      if (end === -1) end = source.length
      comments.push({ line, text: source.slice(i, end) })
      blank(i, end)
      i = end
    } else if (c === '/' && next === '*') {
      let depth = 0
      let k = i
      while (k < source.length) {
        if (source[k] === '/' && source[k + 1] === '*') {
          depth++
          k += 2
        } else if (source[k] === '*' && source[k + 1] === '/') {
          depth--
          k += 2
          if (depth === 0) break
        } else k++
      }
      comments.push({ line, text: source.slice(i, k) })
      blank(i, k)
      countLines(i, k)
      i = k
    } else if (
      (c === 'r' || (c === 'b' && next === 'r')) &&
      !isIdent(source[i - 1]) &&
      /^b?r#*"/.test(source.slice(i, i + 260))
    ) {
      const open = source.slice(i).match(/^b?r(#*)"/)
      const close = `"${open[1]}`
      let end = source.indexOf(close, i + open[0].length)
      end = end === -1 ? source.length : end + close.length
      blank(i, end)
      countLines(i, end)
      i = end
    } else if (c === '"') {
      let k = i + 1
      while (k < source.length && source[k] !== '"') k += source[k] === '\\' ? 2 : 1
      blank(i, k + 1)
      countLines(i, k + 1)
      i = k + 1
    } else if (c === "'") {
      // A char literal ('x', '\n', '\u{1F600}'), or else a lifetime or label, left as code.
      const literal = source.slice(i).match(/^'(?:\\(?:u\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n][\uDC00-\uDFFF]?)'/)
      if (literal) {
        blank(i, i + literal[0].length)
        i += literal[0].length
      } else i++
    } else {
      if (c === '\n') line++
      i++
    }
  }
  return { code: code.join(''), comments }
}

const lineOf = (text, offset) => text.slice(0, offset).split('\n').length

// Rule 1 -------------------------------------------------------------------------------------

function checkUnsafe(files, parsed) {
  const problems = []
  for (const file of files) {
    if (!file.startsWith('js/') || file === 'js/raw.rs') continue
    const { code } = parsed.get(file)
    for (const match of code.matchAll(/\bunsafe\b/g)) {
      problems.push(
        `src/${file}:${lineOf(code, match.index)}: \`unsafe\` outside src/js/raw.rs; ` +
          'add a safe wrapper in raw.rs (with its SAFETY argument) and call that instead',
      )
    }
  }
  return problems
}

// Rule 2 -------------------------------------------------------------------------------------

function checkDates(files, parsed) {
  const problems = []
  for (const file of files) {
    for (const comment of parsed.get(file).comments) {
      comment.text.split('\n').forEach((text, k) => {
        const date = text.match(DATE)
        if (date) {
          problems.push(
            `src/${file}:${comment.line + k}: comment carries the date ${date[0]}; ` +
              'say why in the present tense and link the results section instead',
          )
        }
      })
    }
  }
  return problems
}

// Rule 3 -------------------------------------------------------------------------------------

/** The module path of a file: `scheduler/queue.rs` → `scheduler::queue`; `lib.rs` → ``. */
function modulePath(file) {
  const parts = file.replace(/\.rs$/, '').split('/')
  const last = parts[parts.length - 1]
  if (last === 'mod' || (parts.length === 1 && (last === 'lib' || last === 'main'))) parts.pop()
  return parts.join('::')
}

const join = (mod, name) => (mod ? `${mod}::${name}` : name)
const parentOf = (mod) => (mod.includes('::') ? mod.slice(0, mod.lastIndexOf('::')) : '')
const displayName = (mod) => (mod ? `crate::${mod}` : 'crate')

/**
 * The regions of a file's code, each with the module it belongs to: inline `mod x { … }` blocks
 * are modules of their own (`#[cfg(test)]` ones are dropped), the rest is the file's module.
 * Also returns the child modules the file declares test-only (`#[cfg(test)] mod x;`).
 */
function regions(code, fileModule) {
  const testOnly = []
  const spans = [] // { start, end, module, test }
  const stack = [{ module: fileModule, test: false, depth: 0 }]
  let depth = 0
  const token = /#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]|\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*([;{])|[{}]/g
  let pendingTest = -1
  let cursor = 0
  let current = stack[0]
  const close = (to) => {
    spans.push({ start: cursor, end: to, module: current.module, test: current.test })
    cursor = to
  }
  for (const m of code.matchAll(token)) {
    const text = m[0]
    if (text.startsWith('#')) {
      pendingTest = m.index + text.length
      continue
    }
    // `#[cfg(test)]`, then only other attributes and a visibility, then `mod`.
    const between = code.slice(pendingTest, m.index)
    const isTest = pendingTest !== -1 && /^(\s|#\s*\[[^\]]*\])*(pub(\([^)]*\))?\s*)?$/.test(between)
    if (text === '{') {
      depth++
      pendingTest = -1
    } else if (text === '}') {
      if (depth === current.depth && stack.length > 1) {
        close(m.index + 1)
        stack.pop()
        current = stack[stack.length - 1]
      }
      depth--
      pendingTest = -1
    } else if (m[2] === ';') {
      if (isTest || current.test) testOnly.push(m[1])
      pendingTest = -1
    } else {
      close(m.index)
      depth++
      current = { module: join(current.module, m[1]), test: isTest || current.test, depth, inline: true }
      stack.push(current)
      pendingTest = -1
    }
  }
  close(code.length)
  return { spans, testOnly }
}

/** Expands a use tree (`a::{b, c::{d as e, *}}`) into its paths, each with its bound name. */
function expandUseTree(tree) {
  tree = tree.replace(/\s+/g, '')
  const out = []
  const walk = (prefix, text) => {
    const brace = text.indexOf('{')
    if (brace === -1) {
      const [pathText, alias] = text.split(/as(?=[A-Za-z_])/)
      const segments = [...prefix, ...pathText.split('::').filter(Boolean)]
      if (segments.length === 0) return
      let bound = alias ?? segments[segments.length - 1]
      if (bound === 'self') bound = segments[segments.length - 2]
      out.push({ segments, bound })
      return
    }
    const head = text.slice(0, brace).split('::').filter(Boolean)
    const inner = text.slice(brace + 1, text.lastIndexOf('}'))
    let level = 0
    let start = 0
    for (let k = 0; k <= inner.length; k++) {
      const ch = inner[k]
      if (ch === '{') level++
      else if (ch === '}') level--
      else if ((ch === ',' || k === inner.length) && level === 0) {
        const part = inner.slice(start, k)
        if (part) walk([...prefix, ...head], part)
        start = k + 1
      }
    }
  }
  walk([], tree)
  return out
}

/** Builds the module graph of `src/` and returns its circles, each as a list of edges. */
function moduleCircles(files, parsed) {
  // module → { file, uses: [{ segments, bound, line }], paths: [{ segments, line }], test, inline }
  const modules = new Map()
  const testOnly = new Set()
  for (const file of files) {
    const fileModule = modulePath(file)
    const { code } = parsed.get(file)
    const { spans, testOnly: tests } = regions(code, fileModule)
    for (const name of tests) testOnly.add(join(fileModule, name))
    for (const span of spans) {
      if (!modules.has(span.module)) {
        modules.set(span.module, { file, uses: [], paths: [], test: span.test, inline: span.module !== fileModule })
      }
      const entry = modules.get(span.module)
      const text = code.slice(span.start, span.end)
      const base = span.start
      const withoutUses = text.replace(/\buse\s+[^;]*;/g, (u) => u.replace(/[^\n]/g, ' '))
      for (const m of text.matchAll(/(\bpub\s*(?:\([^)]*\)\s*)?)?\buse\s+([^;]*);/g)) {
        const line = lineOf(code, base + m.index)
        for (const use of expandUseTree(m[2])) {
          // A re-export the module's own code does not name is a door to the other module, not a
          // use of it: it counts for whoever names it through this module.
          const reexport = m[1] !== undefined
          const used = !reexport || use.bound === '*' || new RegExp(`\\b${use.bound}\\b`).test(withoutUses)
          entry.uses.push({ ...use, line, used })
        }
      }
      for (const m of withoutUses.matchAll(/(?<![A-Za-z0-9_:])((?:[A-Za-z_][A-Za-z0-9_]*::)+[A-Za-z_][A-Za-z0-9_]*)/g)) {
        entry.paths.push({ segments: m[1].split('::'), line: lineOf(code, base + m.index) })
      }
    }
  }
  const isTest = (mod) => {
    for (let m = mod; ; m = parentOf(m)) {
      if (testOnly.has(m) || modules.get(m)?.test) return true
      if (m === '') return false
    }
  }
  // The file-level module a (possibly inline) module belongs to.
  const owner = (mod) => {
    let m = mod
    while (modules.get(m)?.inline) m = parentOf(m)
    return m
  }
  // Where `name`, as seen from module `mod`, is defined: follows `use` bindings of `mod`.
  const definedIn = (mod, name, seen = new Set()) => {
    const key = `${mod}#${name}`
    if (seen.has(key)) return mod
    seen.add(key)
    const binding = modules.get(mod)?.uses.find((u) => u.bound === name)
    if (!binding) return mod
    return resolve(mod, binding.segments, seen)
  }
  // The module a path names (its deepest module segment, followed through re-exports), or null
  // for a path outside the crate.
  const resolve = (mod, segments, seen = new Set()) => {
    let at
    let k = 0
    if (segments[0] === 'crate') {
      at = ''
      k = 1
    } else if (segments[0] === 'super' || segments[0] === 'self') {
      at = mod
      while (segments[k] === 'super' || segments[k] === 'self') {
        if (segments[k] === 'super') at = parentOf(at)
        k++
      }
    } else if (modules.has(join(mod, segments[0]))) {
      at = join(mod, segments[0])
      k = 1
    } else return null
    while (k < segments.length && modules.has(join(at, segments[k]))) at = join(at, segments[k++])
    if (k < segments.length && segments[k] !== '*') return definedIn(at, segments[k], seen)
    return at
  }
  const edges = new Map() // from → Map(to → { file, line })
  const addEdge = (from, to, where) => {
    if (from === to) return
    if (!edges.has(from)) edges.set(from, new Map())
    if (!edges.get(from).has(to)) edges.get(from).set(to, where)
  }
  for (const [mod, entry] of modules) {
    for (const use of [...entry.uses.filter((u) => u.used), ...entry.paths]) {
      const target = resolve(mod, use.segments)
      if (target === null || isTest(mod) || isTest(target)) continue
      addEdge(owner(mod), owner(target), { file: entry.file, line: use.line, path: use.segments.join('::') })
    }
  }
  // Tarjan's strongly connected components; a component of two or more modules is a circle.
  const index = new Map()
  const low = new Map()
  const onStack = new Set()
  const stack = []
  const components = []
  let counter = 0
  const visit = (v) => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)))
    }
    if (low.get(v) === index.get(v)) {
      const component = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v)
  // One circle per component: the shortest way back to its first module.
  return components.map((component) => {
    const members = new Set(component)
    const start = component[0]
    const previous = new Map([[start, null]])
    const queue = [start]
    let last = null
    while (queue.length && last === null) {
      const v = queue.shift()
      for (const w of edges.get(v)?.keys() ?? []) {
        if (!members.has(w)) continue
        if (w === start) {
          last = v
          break
        }
        if (!previous.has(w)) {
          previous.set(w, v)
          queue.push(w)
        }
      }
    }
    const chain = []
    for (let v = last; v !== null; v = previous.get(v)) chain.unshift(v)
    chain.push(start)
    const steps = []
    for (let k = 0; k + 1 < chain.length; k++) {
      const where = edges.get(chain[k]).get(chain[k + 1])
      steps.push({ from: chain[k], to: chain[k + 1], ...where })
    }
    const inside = []
    for (const from of component) {
      for (const [to, where] of edges.get(from) ?? []) if (members.has(to)) inside.push({ from, to, ...where })
    }
    return { modules: component, steps, inside }
  })
}

function checkCircles(files, parsed) {
  const describe = (s) => `${displayName(s.from)} uses ${displayName(s.to)} (src/${s.file}:${s.line}: ${s.path})`
  return moduleCircles(files, parsed).map(({ modules, steps, inside }) => {
    const others = inside.filter((e) => !steps.some((s) => s.from === e.from && s.to === e.to))
    return [
      `modules import each other in a circle: ${modules.map(displayName).join(', ')}`,
      '    shortest circle:',
      ...steps.map((s) => `      ${describe(s)}`),
      ...(others.length ? ['    other imports among them:', ...others.map((s) => `      ${describe(s)}`)] : []),
      '    move what both sides need into one of them, or into a module both use',
    ].join('\n')
  })
}

// Rule 4 -------------------------------------------------------------------------------------

function checkExports() {
  let addon
  try {
    addon = require(path.join(ROOT, 'index.js'))
  } catch (error) {
    return [`the release addon did not load (${error.message.split('\n')[0]}); run \`npm run build\` first`]
  }
  return Object.keys(addon)
    .filter((name) => name.startsWith('__') && name !== ALLOWED_EXPORT)
    .map(
      (name) =>
        `the release addon exports ${name}; put test and profiling hooks behind the \`testing\` cargo feature`,
    )
}

function main() {
  const files = rustFiles()
  const parsed = new Map(files.map((file) => [file, splitRust(fs.readFileSync(path.join(SRC, file), 'utf8'))]))
  const rules = [
    ['unsafe only in src/js/raw.rs', () => checkUnsafe(files, parsed)],
    ['no dates in comments', () => checkDates(files, parsed)],
    ['no import circles between modules', () => checkCircles(files, parsed)],
  ]
  if (!process.argv.includes('--no-addon')) rules.push(['no __ exports from the release addon', checkExports])
  let failed = 0
  for (const [rule, check] of rules) {
    const problems = check()
    console.log(`${problems.length ? 'FAIL' : 'ok  '} ${rule}`)
    for (const problem of problems) console.log(`  ${problem}`)
    failed += problems.length
  }
  if (failed) {
    console.log(`\n${failed} house rule violation(s) in ${files.length} Rust files`)
    process.exit(1)
  }
}

if (require.main === module) main()

module.exports = { splitRust, expandUseTree, modulePath, moduleCircles }
