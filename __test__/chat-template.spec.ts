// applyChatTemplate against Python transformers' apply_chat_template, on real models' templates
// (__test__/fixtures/chat-templates.json, written by scripts/chat_template_fixtures.py): the
// renderer on its own, then the method on tokenizers of the same models, text and ids; strftime_now's
// formats against Python's strftime; the bad-input table; the compile cache; the package's entries.
//
// The tokenizers come from `.cache/real-tokenizers/` (scripts/real-tokenizers.js fetches the pinned
// packages once). Where the addon has `Tokenizer.fromPretrained`, the method's tests load each model
// folder with it and so read its `chatTemplates` and `specialTokens` getters; without it, they load
// the tokenizer.json with `fromFile` and give that tokenizer the two getters' values read from the
// model's tokenizer_config.json here (`standInGetters`).
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, existsSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { batchtok, fixture, typeCheck } from './helpers'
import type { ApplyChatTemplateOptions, ChatTemplateMessage } from '../entry/index'

const require = createRequire(import.meta.url)
const { Tokenizer } = batchtok
type Tokenizer = InstanceType<typeof Tokenizer>
const chatTemplate = require('../entry/chat-template.js') as typeof import('../entry/chat-template')
const { ensureRealTokenizers, configPath } = require('../scripts/real-tokenizers.js') as {
  ensureRealTokenizers(names: string[]): Record<string, string>
  configPath(name: string): string
}

const ROOT = join(__dirname, '..')

interface Case {
  name: string
  model: string
  messages: ChatTemplateMessage[]
  /** A key of `templates`: that source is passed as `chatTemplate`. */
  template?: string
  /** The model's templates for this case, name → key of `templates`, instead of its config's. */
  templates?: Record<string, string>
  /** A template's name, passed as `chatTemplate`. */
  chatTemplate?: string
  options: ApplyChatTemplateOptions
  text?: string
  ids?: number[]
  error?: { type: string; message: string }
}

interface ChatTemplateFixture {
  versions: Record<string, string>
  templates: Record<string, string>
  cases: Case[]
  strftime: { time: number[]; formats: Record<string, string> }[]
}

const fixtures = fixture<ChatTemplateFixture>('chat-templates.json')

/** Cases whose expected output shows a difference of @huggingface/jinja from Python's Jinja. */
const JINJA_DIFFERENCES = new Set(['synthetic: booleans, none and floats print as Python prints them'])

/** What transformers' errors are called here: its message's start → the message applyChatTemplate gives. */
const TRANSFORMERS_ERRORS: [string, RegExp][] = [
  ['continue_final_message and add_generation_prompt are not compatible', /continueFinalMessage and addGenerationPrompt are not compatible/],
  [
    'Cannot use chat template functions because tokenizer.chat_template is not set',
    /no chat template .*tokenizer_config\.json's chat_template, chat_template\.jinja and chat_template\.json.*chatTemplate option/,
  ],
]

type TokenizerConfig = Record<string, unknown>
const configs = new Map<string, TokenizerConfig>()
function config(model: string): TokenizerConfig {
  if (!configs.has(model)) configs.set(model, JSON.parse(readFileSync(configPath(model), 'utf8')))
  return configs.get(model)!
}

/** A special token of tokenizer_config.json: a string, or an AddedToken object with `content`. */
function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (value !== null && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') {
    return (value as { content: string }).content
  }
  return undefined
}

/** The `specialTokens` getter's value for a model, read from its tokenizer_config.json. */
function specialTokensOf(model: string) {
  const c = config(model)
  const names = ['bos', 'eos', 'unk', 'sep', 'pad', 'cls', 'mask'] as const
  const out: Record<string, unknown> = { additional: ((c.additional_special_tokens as unknown[]) ?? []).map(tokenText) }
  for (const name of names) {
    const text = tokenText(c[`${name}_token`])
    if (text !== undefined) out[name] = text
  }
  return out
}

/** The `chatTemplates` getter's value for a case: its own templates, else its model's config's. */
function templatesOf(c: Case): Record<string, string> {
  if (c.templates) return Object.fromEntries(Object.entries(c.templates).map(([name, key]) => [name, fixtures.templates[key]]))
  const source = config(c.model).chat_template
  if (typeof source === 'string') return { default: source }
  if (Array.isArray(source)) return Object.fromEntries(source.map((t: { name: string; template: string }) => [t.name, t.template]))
  return {}
}

/** The options a case passes to applyChatTemplate. */
function optionsOf(c: Case): ApplyChatTemplateOptions {
  const chosen = c.template ? fixtures.templates[c.template] : c.chatTemplate
  return { ...c.options, ...(chosen !== undefined ? { chatTemplate: chosen } : {}) }
}

/** Gives `tokenizer` the getters' values as own properties, in place of the pretrained loader's. */
function standInGetters(tokenizer: Tokenizer, c: Case): Tokenizer {
  Object.defineProperty(tokenizer, 'chatTemplates', { value: templatesOf(c) })
  Object.defineProperty(tokenizer, 'specialTokens', { value: specialTokensOf(c.model) })
  return tokenizer
}

let realFiles: Record<string, string>
const fromFile = new Map<string, Tokenizer>()
function fileTokenizer(model: string): Tokenizer {
  if (!fromFile.has(model)) fromFile.set(model, Tokenizer.fromFile(realFiles[model]))
  return fromFile.get(model)!
}

/** A model folder (tokenizer.json, tokenizer_config.json) for `Tokenizer.fromPretrained`. */
function modelFolder(model: string): string {
  const folder = join(ROOT, '.cache', 'chat-template-models', model)
  if (!existsSync(join(folder, 'tokenizer_config.json'))) {
    rmSync(folder, { recursive: true, force: true })
    mkdirSync(folder, { recursive: true })
    symlinkSync(realFiles[model], join(folder, 'tokenizer.json'))
    symlinkSync(configPath(model), join(folder, 'tokenizer_config.json'))
  }
  return folder
}

const fromPretrained = (Tokenizer as unknown as { fromPretrained?: (path: string) => Tokenizer | Promise<Tokenizer> }).fromPretrained

/** The tokenizer whose applyChatTemplate a case calls: one per model (and per set of templates). */
const methodTokenizers = new Map<string, Tokenizer>()
async function methodTokenizer(c: Case): Promise<Tokenizer> {
  const key = `${c.model} ${JSON.stringify(c.templates ?? null)}`
  if (!methodTokenizers.has(key)) {
    // Stand-in getters go on the tokenizer the renderer's tests encode with (loading a model's
    // file takes seconds), except for a case's own templates.
    const tokenizer =
      typeof fromPretrained === 'function' && !c.templates
        ? await fromPretrained.call(Tokenizer, modelFolder(c.model))
        : standInGetters(c.templates ? Tokenizer.fromFile(realFiles[c.model]) : fileTokenizer(c.model), c)
    methodTokenizers.set(key, tokenizer)
  }
  return methodTokenizers.get(key)!
}

/** Checks that `run` fails as transformers did in case `c`. */
function expectTransformersError(c: Case, run: () => unknown) {
  const { type, message } = c.error!
  if (type === 'TemplateError') {
    // raise_exception: the template's own message, as it is.
    expect(run).toThrowError(new Error(message))
    return
  }
  const known = TRANSFORMERS_ERRORS.find(([start]) => message.startsWith(start))
  if (!known) throw new Error(`the fixture has a ${type} this spec does not name: ${message}`)
  expect(run).toThrowError(known[1])
}

beforeAll(() => {
  realFiles = ensureRealTokenizers([...new Set(fixtures.cases.map((c) => c.model))])
})

describe('renderChatTemplate: transformers 5.23 on real templates', () => {
  const cases = fixtures.cases.filter((c) => !JINJA_DIFFERENCES.has(c.name))

  it('the fixture covers every real template, tools, continuation, raising templates and no template', () => {
    const models = new Set(fixtures.cases.filter((c) => !c.error).map((c) => c.model))
    expect([...models].sort()).toEqual(['deepseek_v3', 'gemma3', 'gptoss', 'llama2', 'llama3_1', 'qwen3'])
    expect(fixtures.cases.some((c) => c.options.tools && c.model === 'qwen3' && !c.error)).toBe(true)
    expect(fixtures.cases.some((c) => c.options.tools && c.template === 'mistral_v2v3' && !c.error)).toBe(true)
    expect(fixtures.cases.filter((c) => c.error?.type === 'TemplateError').length).toBeGreaterThanOrEqual(3)
    expect(fixtures.cases.filter((c) => c.options.continueFinalMessage && !c.error).length).toBeGreaterThanOrEqual(6)
  })

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const render = () => {
      const options = optionsOf(c)
      const source = chatTemplate.selectChatTemplate(templatesOf(c), options.chatTemplate, options.tools, null)
      return chatTemplate.renderChatTemplate(source, specialTokensOf(c.model), c.messages, options)
    }
    if (c.error) return expectTransformersError(c, render)
    const text = render()
    expect(text).toBe(c.text)
    expect(Array.from(fileTokenizer(c.model).encode(text, { addSpecialTokens: false }))).toEqual(c.ids)
  })

  // @huggingface/jinja prints JavaScript's spellings (true, false, nothing for none, JSON for
  // lists and dicts) where Python's Jinja prints Python's (True, False, None, repr).
  it.fails.each(fixtures.cases.filter((c) => JINJA_DIFFERENCES.has(c.name)).map((c) => [c.name, c] as const))('%s', (_, c) => {
    const source = fixtures.templates[c.template!]
    expect(chatTemplate.renderChatTemplate(source, specialTokensOf(c.model), c.messages, c.options)).toBe(c.text)
  })
})

describe('tokenizer.applyChatTemplate: the model\'s templates and special tokens, text and ids', () => {
  const cases = fixtures.cases.filter((c) => !JINJA_DIFFERENCES.has(c.name))

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const tokenizer = await methodTokenizer(c)
    const options = optionsOf(c)
    if (c.error) {
      expectTransformersError(c, () => tokenizer.applyChatTemplate(c.messages, options))
      expectTransformersError(c, () => tokenizer.applyChatTemplate(c.messages, { ...options, tokenize: true }))
      return
    }
    expect(tokenizer.applyChatTemplate(c.messages, options)).toBe(c.text)
    expect(tokenizer.applyChatTemplate(c.messages, { ...options, tokenize: false })).toBe(c.text)
    const ids = tokenizer.applyChatTemplate(c.messages, { ...options, tokenize: true })
    expect(ids).toBeInstanceOf(Uint32Array)
    expect(Array.from(ids)).toEqual(c.ids)
  })

  it("leaves the caller's messages, tools and options as they were", async () => {
    const c = fixtures.cases.find((c) => c.name === 'gemma3: continue a content block')!
    const tokenizer = await methodTokenizer(c)
    const messages = structuredClone(c.messages)
    const options = { continueFinalMessage: true }
    expect(tokenizer.applyChatTemplate(messages, options)).toBe(c.text)
    expect(messages).toEqual(c.messages)
    expect(options).toEqual({ continueFinalMessage: true })
  })

  it('is a method of every Tokenizer, OpenAI encodings included, and not enumerable', () => {
    const tokenizer = Tokenizer.fromEncoding('o200k_base')
    const text = tokenizer.applyChatTemplate([{ role: 'user', content: 'hello world' }], { chatTemplate: '{{ messages[0].content }}' })
    expect(text).toBe('hello world')
    expect(Array.from(tokenizer.applyChatTemplate([{ role: 'user', content: 'hello world' }], { chatTemplate: '{{ messages[0].content }}', tokenize: true }))).toEqual(
      Array.from(tokenizer.encode('hello world')),
    )
    expect(Object.keys(Tokenizer.prototype)).not.toContain('applyChatTemplate')
  })
})

describe('the compiled template cache', () => {
  it('compiles each template once per tokenizer, and a second tokenizer has its own', () => {
    const templates = { default: '{{ messages[0].content }}', tool_use: '{{ tools[0].name }}' }
    const withTemplates = () => {
      const tokenizer = Tokenizer.fromFile(join(ROOT, '__test__', 'fixtures', 'tokenizers', 'gpt2.json'))
      Object.defineProperty(tokenizer, 'chatTemplates', { value: templates })
      return tokenizer
    }
    const messages = [{ role: 'user', content: 'hi' }]
    const first = withTemplates()
    expect(chatTemplate.compiledTemplateCount(first)).toBe(0)
    for (let i = 0; i < 3; i++) expect(first.applyChatTemplate(messages)).toBe('hi')
    expect(chatTemplate.compiledTemplateCount(first)).toBe(1)
    expect(first.applyChatTemplate(messages, { tools: [{ name: 'f' }] })).toBe('f')
    expect(chatTemplate.compiledTemplateCount(first)).toBe(2)
    expect(first.applyChatTemplate(messages, { chatTemplate: '{{ messages | length }}' })).toBe('1')
    expect(first.applyChatTemplate(messages, { chatTemplate: 'default' })).toBe('hi')
    expect(chatTemplate.compiledTemplateCount(first)).toBe(3)
    const second = withTemplates()
    expect(chatTemplate.compiledTemplateCount(second)).toBe(0)
    expect(second.applyChatTemplate(messages)).toBe('hi')
    expect(chatTemplate.compiledTemplateCount(second)).toBe(1)
  })

  it('keeps at most MAX_COMPILED_TEMPLATES of them, and renders an evicted one again', () => {
    const tokenizer = Tokenizer.fromFile(join(ROOT, '__test__', 'fixtures', 'tokenizers', 'gpt2.json'))
    const messages = [{ role: 'user', content: 'hi' }]
    const max = chatTemplate.MAX_COMPILED_TEMPLATES
    for (let i = 0; i < max + 10; i++) {
      expect(tokenizer.applyChatTemplate(messages, { chatTemplate: `${i}:{{ messages[0].content }}` })).toBe(`${i}:hi`)
      expect(chatTemplate.compiledTemplateCount(tokenizer)).toBe(Math.min(i + 1, max))
    }
    expect(tokenizer.applyChatTemplate(messages, { chatTemplate: '0:{{ messages[0].content }}' })).toBe('0:hi')
    expect(chatTemplate.compiledTemplateCount(tokenizer)).toBe(max)
  })
})

describe('strftime_now: Python datetime.strftime in the C locale', () => {
  const rows = fixtures.strftime.flatMap(({ time, formats }) => Object.entries(formats).map(([format, expected]) => [time.join('-'), format, expected, time] as const))

  it.each(rows)('%s %j', (_, format, expected, [year, month, day, hours, minutes, seconds]) => {
    expect(chatTemplate.strftime(new Date(year, month - 1, day, hours, minutes, seconds), format)).toBe(expected)
  })

  it("is today's date in a template", () => {
    const text = chatTemplate.renderChatTemplate("{{ strftime_now('%Y-%m-%d') }}", {}, [{ role: 'user', content: '' }])
    const now = new Date()
    const today = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`
    expect(text).toBe(today)
  })
})

describe('bad input', () => {
  const plain = '{% for m in messages %}{{ m.content }}{% endfor %}'
  const user = [{ role: 'user', content: 'hi' }]
  const gpt2 = join(ROOT, '__test__', 'fixtures', 'tokenizers', 'gpt2.json')
  let shared: Tokenizer | undefined
  const tokenizer = () => (shared ??= Tokenizer.fromFile(gpt2))

  it.each([
    ['messages not an array', 'hi', {}, TypeError, /messages must be an array of \{ role, content \} objects, not a string/],
    ['messages an object', { role: 'user' }, {}, TypeError, /messages must be an array .* not an object|not a Object/],
    ['a message that is a string', ['hi'], {}, TypeError, /messages\[0\] must be an object with a role, not a string/],
    ['a message that is null', [null], {}, TypeError, /messages\[0\] must be an object with a role, not null/],
    ['a message without role', [{ content: 'hi' }], {}, TypeError, /messages\[0\] has no role/],
    ['a role that is a number', [{ role: 1, content: 'hi' }], {}, TypeError, /messages\[0\] has a role that is a number/],
    ['an empty conversation', [], {}, Error, /the conversation is empty/],
    ['options not an object', user, 'x', TypeError, /options must be an object, not a string/],
    ['tools not an array', user, { tools: {} }, TypeError, /tools must be an array of JSON-schema objects/],
    ['a tool that is a function', user, { tools: [() => 1] }, TypeError, /tools\[0\] is a function; each tool is a JSON schema object/],
    ['documents of strings', user, { documents: ['text'] }, TypeError, /documents\[0\] is a string; each document is an object/],
    ['chatTemplate a number', user, { chatTemplate: 1 }, TypeError, /chatTemplate must be a template's name or its Jinja source, not a number/],
    ['a template that does not parse', user, { chatTemplate: '{% if %}' }, Error, /the chat template does not parse: /],
    ['a template that fails', user, { chatTemplate: '{{ messages[0].content.nope() }}' }, Error, /the chat template failed to render: /],
    ['a template that raises', user, { chatTemplate: "{{ raise_exception('no ' + messages[0].role + 's here') }}" }, Error, /^no users here$/],
    ['continueFinalMessage and addGenerationPrompt', user, { chatTemplate: plain, continueFinalMessage: true, addGenerationPrompt: true }, Error, /continueFinalMessage and addGenerationPrompt are not compatible/],
    ['continueFinalMessage without content', [{ role: 'assistant' }], { chatTemplate: plain, continueFinalMessage: true }, Error, /the final message has no "content" to continue/],
    ['continueFinalMessage of a field the message lacks', user, { chatTemplate: plain, continueFinalMessage: 'thinking' }, Error, /the final message has no "thinking" to continue/],
    ['continueFinalMessage of a field the template never reads', [{ role: 'assistant', content: 'a', thinking: 'b' }], { chatTemplate: plain, continueFinalMessage: 'thinking' }, Error, /continueFinalMessage is set to "thinking" but the chat template never reads that field/],
    ['continueFinalMessage on a template that drops the message', user, { chatTemplate: '{{ messages | length }} content', continueFinalMessage: true }, Error, /does not appear in the rendered chat/],
    ['no template', user, {}, Error, /no chat template .*chatTemplate option/],
  ] as const)('%s', (_, messages, options, type, message) => {
    const run = () => tokenizer().applyChatTemplate(messages as never, options as never)
    expect(run).toThrowError(type)
    expect(run).toThrowError(message)
  })

  it('several templates and none named default: an Error listing their names', () => {
    const t = Tokenizer.fromFile(gpt2)
    Object.defineProperty(t, 'chatTemplates', { value: { rag: plain, tool_use: plain } })
    expect(() => t.applyChatTemplate(user)).toThrowError(/several chat templates and none is named default; pass the name of one as the chatTemplate option: "rag", "tool_use"/)
    expect(t.applyChatTemplate(user, { chatTemplate: 'rag' })).toBe('hi')
  })

  it('rich objects in messages reach the template as placeholders, as transformers does', () => {
    const text = chatTemplate.renderChatTemplate('{{ messages[0].content[0].image }}|{{ messages[0].when }}', {}, [
      { role: 'user', content: [{ type: 'image', image: new Uint8Array(4) }], when: new Date(0) },
    ])
    expect(text).toBe('<Uint8Array>|<Date>')
  })
})

describe('types', () => {
  it("the package's types give Tokenizer applyChatTemplate, its result following tokenize (tsc --noEmit --strict)", () => {
    expect(typeCheck('apply-chat-template.ts')).toBe('')
  })
})

describe('worker_threads', () => {
  it('renders and encodes in a worker, the main entry loaded there', async () => {
    const { Worker } = await import('node:worker_threads')
    const code = `const { parentPort } = require('node:worker_threads')
const { Tokenizer } = require(${JSON.stringify(join(ROOT, 'entry', 'index.js'))})
const tokenizer = Tokenizer.fromEncoding('o200k_base')
const options = { chatTemplate: '<{{ messages[0].role }}>{{ messages[0].content }}' }
parentPort.postMessage([tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }], options), tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }], { ...options, tokenize: true })])`
    const worker = new Worker(code, { eval: true })
    try {
      const [text, ids] = await new Promise<[string, Uint32Array]>((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
      expect(text).toBe('<user>hi')
      expect(Array.from(ids)).toEqual(Array.from(Tokenizer.fromEncoding('o200k_base').encode('<user>hi', { addSpecialTokens: false })))
    } finally {
      await worker.terminate()
    }
  })
})

describe('package entries', () => {
  const run = (args: string[]) => spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' })
  const script = (load: string) => `${load}
const text = Tokenizer.fromEncoding('o200k_base').applyChatTemplate([{ role: 'user', content: 'hi' }], { chatTemplate: '<{{ messages[0].role }}>{{ messages[0].content }}' })
if (text !== '<user>hi') throw new Error('got ' + text)
console.log('ok')`

  it.each([
    ["require('batchtok')", ['-e', script("const { Tokenizer } = require('batchtok')")]],
    ["import { Tokenizer } from 'batchtok'", ['--input-type=module', '-e', script("import { Tokenizer } from 'batchtok'")]],
    ["require('batchtok/ready')'s tokenizers", ['-e', script("const Tokenizer = { fromEncoding: (n) => require('batchtok/ready').forEncoding(n).tokenizer }")]],
    ["require('batchtok/model/gpt-4o')'s tokenizer", ['-e', script("const Tokenizer = { fromEncoding: () => require('batchtok/model/gpt-4o').tokenizer }")]],
  ])('%s has applyChatTemplate', (_, args) => {
    const result = run(args)
    expect(result.stderr).toBe('')
    expect(result.stdout.trim()).toBe('ok')
  })
})
