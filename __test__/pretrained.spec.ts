// The vocabulary (against Python tokenizers' and tiktoken's answers in fixtures/vocabulary.json),
// model folders with their config files, the local Hugging Face cache, and the async loaders.
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { FIXTURES, TEKKEN_FILE, batchtok, fixture } from './helpers'

const { Tokenizer } = batchtok
type Tokenizer = InstanceType<typeof Tokenizer>

const require = createRequire(import.meta.url)
const realTokenizers = require('../scripts/real-tokenizers.js') as {
  ensureRealTokenizers(names: string[]): Record<string, string>
  configPath(name: string): string
}

interface Digest {
  count: number
  sha256: string
}
interface HfVocabulary {
  vocabSize: number
  idLimit: number
  vocab: Digest
  vocabWithoutAdded: Digest
  addedTokens: Digest & { first: [string, number, boolean][] }
  idToToken: [number, string | null][]
  tokenToId: [string, number | null][]
}
interface OpenAiVocabulary {
  nVocab: number
  maxTokenValue: number
  vocabSize: number
  vocab: Digest
  vocabWithoutAdded: Digest
  specialTokens: Digest
  tokenBytes: [number, string | null][]
  tokenToId: [string, number | null][]
}
const expected = fixture<{ hf: Record<string, HfVocabulary>; openai: Record<string, OpenAiVocabulary> }>(
  'vocabulary.json',
)

const TEST_FILES = ['gpt2', 'bert', 'unigram']
/** The real files the model-folder tests copy into folders. */
const FOLDER_MODELS = ['qwen3', 'llama3', 'deepseek_v3', 'gpt4o', 'gemma3']
/** The real files of the vocabulary fixture and of the folders. */
const real = realTokenizers.ensureRealTokenizers([
  ...new Set([...Object.keys(expected.hf).filter((name) => !TEST_FILES.includes(name)), ...FOLDER_MODELS]),
])
const fixturePath = (name: string) => join(FIXTURES, 'tokenizers', `${name}.json`)
const filePath = (name: string) => (TEST_FILES.includes(name) ? fixturePath(name) : real[name])

/** The digest scripts/fixtures.py takes: `id<TAB>token<LF>` lines by id, then token bytes. */
function vocabDigest(vocab: Record<string, number>): Digest {
  const entries = Object.entries(vocab).sort(
    ([a, i], [b, j]) => i - j || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  )
  const hash = createHash('sha256')
  for (const [token, id] of entries) hash.update(`${id}\t${token}\n`)
  return { count: entries.length, sha256: hash.digest('hex') }
}

describe('vocabulary of Hugging Face files, as Python tokenizers', () => {
  it.each(Object.keys(expected.hf))('%s', (name) => {
    const want = expected.hf[name]
    const tokenizer = Tokenizer.fromFile(filePath(name))
    expect(tokenizer.vocabSize).toBe(want.vocabSize)
    expect(tokenizer.idLimit).toBe(want.idLimit)
    expect(vocabDigest(tokenizer.getVocab())).toEqual(want.vocab)
    expect(vocabDigest(tokenizer.getVocab(false))).toEqual(want.vocabWithoutAdded)
    const added = tokenizer.addedTokens
    const lines = added.map((t) => `${t.id}\t${t.content}\t${t.special}\n`).join('')
    expect({ count: added.length, sha256: createHash('sha256').update(lines).digest('hex') }).toEqual({
      count: want.addedTokens.count,
      sha256: want.addedTokens.sha256,
    })
    expect(added.slice(0, 3).map((t) => [t.content, t.id, t.special])).toEqual(want.addedTokens.first)
    expect(want.idToToken.map(([id]) => [id, tokenizer.idToToken(id)])).toEqual(want.idToToken)
    expect(want.tokenToId.map(([token]) => [token, tokenizer.tokenToId(token)])).toEqual(want.tokenToId)
  }, 120_000)

  it('a token named __proto__ is an own property of getVocab, as a key of a Python dict', () => {
    // Written as text: an object literal's `__proto__: 1` would set no key.
    const json =
      '{"version":"1.0","model":{"type":"WordLevel","unk_token":"[UNK]",' +
      '"vocab":{"[UNK]":0,"__proto__":1,"constructor":2}}}'
    const vocab = Tokenizer.fromJSON(json).getVocab()
    expect(Object.getPrototypeOf(vocab)).toBe(Object.prototype)
    expect(Object.entries(vocab).sort(([, a], [, b]) => a - b)).toEqual([
      ['[UNK]', 0],
      ['__proto__', 1],
      ['constructor', 2],
    ])
  })

  it('counts gaps: the files whose ids skip numbers have vocabSize below idLimit', () => {
    for (const name of ['gpt4o', 'gpt35turbo']) {
      expect(expected.hf[name].vocabSize).toBeLessThan(expected.hf[name].idLimit)
    }
  })
})

describe('vocabulary of the OpenAI encodings, as tiktoken', () => {
  it.each(Object.keys(expected.openai))('%s', (name) => {
    const want = expected.openai[name]
    const tokenizer = Tokenizer.fromEncoding(name)
    expect(tokenizer.idLimit).toBe(want.nVocab)
    expect(tokenizer.idLimit - 1).toBe(want.maxTokenValue)
    expect(tokenizer.vocabSize).toBe(want.vocabSize)
    expect(vocabDigest(tokenizer.getVocab())).toEqual(want.vocab)
    expect(vocabDigest(tokenizer.getVocab(false))).toEqual(want.vocabWithoutAdded)
    const specials = Object.fromEntries(tokenizer.addedTokens.map((t) => [t.content, t.id]))
    expect(vocabDigest(specials)).toEqual(want.specialTokens)
    expect(tokenizer.addedTokens.every((t) => t.special)).toBe(true)
    const hex = (bytes: Uint8Array | null) => (bytes ? Buffer.from(bytes).toString('hex') : null)
    expect(want.tokenBytes.map(([id]) => [id, hex(tokenizer.tokenBytes(id))])).toEqual(want.tokenBytes)
    for (const [id, bytes] of want.tokenBytes) {
      const text = bytes === null ? null : new TextDecoder('utf-8', { fatal: true })
      let token: string | null = null
      try {
        token = text ? text.decode(Buffer.from(bytes!, 'hex')) : null
      } catch {
        token = null // bytes that are part of a character: no string
      }
      expect(tokenizer.idToToken(id)).toBe(token)
    }
    expect(want.tokenToId.map(([token]) => [token, tokenizer.tokenToId(token)])).toEqual(want.tokenToId)
  }, 60_000)

  it('names <|endoftext|> the end-of-sequence token', () => {
    const tokens = Tokenizer.fromEncoding('cl100k_base').specialTokens
    expect(tokens.eos).toBe('<|endoftext|>')
    expect(tokens.additional).toContain('<|endofprompt|>')
  })

  it.each([
    [-1, RangeError],
    [1.5, RangeError],
    ['1', TypeError],
  ])('idToToken(%j) throws %o', (id, kind) => {
    const tokenizer = Tokenizer.fromEncoding('r50k_base')
    expect(() => tokenizer.idToToken(id as number)).toThrow(kind)
    expect(() => tokenizer.tokenBytes(id as number)).toThrow(kind)
  })
})

/** A temporary folder, removed after the file's tests. */
const temp = mkdtempSync(join(tmpdir(), 'batchtok-pretrained-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

/** A folder holding `files` (name → text or a path to copy). */
function folder(name: string, files: Record<string, string | { copy: string }>): string {
  const dir = join(temp, name)
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true })
    if (typeof content === 'string') writeFileSync(join(dir, file), content)
    else copyFileSync(content.copy, join(dir, file))
  }
  return dir
}

const readConfig = (name: string) => JSON.parse(readFileSync(realTokenizers.configPath(name), 'utf8'))

describe('a model folder: tokenizer.json with tokenizer_config.json', () => {
  const models = FOLDER_MODELS
  const dirs: Record<string, string> = {}
  beforeAll(() => {
    for (const name of models) {
      dirs[name] = folder(`model-${name}`, {
        'tokenizer.json': { copy: real[name] },
        'tokenizer_config.json': { copy: realTokenizers.configPath(name) },
      })
    }
  })

  /** A config token as transformers reads it: a string, an AddedToken's content, or none. */
  const tokenOf = (value: unknown) =>
    value === null || value === undefined
      ? undefined
      : typeof value === 'string'
        ? value
        : (value as { content: string }).content

  it.each(models)('%s: max length, special tokens, templates and source', async (name) => {
    const config = readConfig(name)
    const tokenizer = await Tokenizer.fromPretrained(dirs[name])
    // 1e30 is transformers' "no limit".
    expect(tokenizer.modelMaxLength).toBe(config.model_max_length >= 1e18 ? null : config.model_max_length)
    const tokens = tokenizer.specialTokens
    expect(tokens.bos).toBe(tokenOf(config.bos_token))
    expect(tokens.eos).toBe(tokenOf(config.eos_token))
    expect(tokens.pad).toBe(tokenOf(config.pad_token))
    expect(tokens.additional).toEqual(config.additional_special_tokens ?? [])
    const extra = config.extra_special_tokens
    const named = extra != null && !Array.isArray(extra) ? Object.entries(extra).map(([key, token]) => [key, tokenOf(token)]) : []
    expect(tokens.extra).toEqual(Object.fromEntries(named))
    expect(tokenizer.chatTemplates).toEqual(config.chat_template ? { default: config.chat_template } : {})
    expect(tokenizer.source).toBe(dirs[name])
    const fromFile = Tokenizer.fromFile(real[name])
    const text = 'Hello, world! 你好 <|endoftext|>'
    expect(tokenizer.encode(text)).toEqual(fromFile.encode(text))
    expect(fromFile.source).toBe(real[name])
    expect(fromFile.chatTemplates).toEqual({})
    expect(fromFile.modelMaxLength).toBeNull()
  }, 120_000)

  it('chat_template.jinja replaces the config template; special_tokens_map.json fills a legacy config', () => {
    const dir = folder('model-templates', {
      'tokenizer.json': { copy: fixturePath('bert') },
      'tokenizer_config.json': JSON.stringify({ chat_template: 'from config', model_max_length: 512 }),
      'chat_template.jinja': 'from jinja',
      'additional_chat_templates/tool_use.jinja': 'tools',
      'special_tokens_map.json': JSON.stringify({
        mask_token: { content: '[MASK]' },
        additional_special_tokens: ['[X]'],
      }),
    })
    const tokenizer = Tokenizer.fromPretrainedSync(dir)
    expect(tokenizer.chatTemplates).toEqual({ default: 'from jinja', tool_use: 'tools' })
    expect(tokenizer.modelMaxLength).toBe(512)
    // The map's tokens, and the tokenizer.json's own where the config files name none.
    expect(tokenizer.specialTokens).toEqual({
      mask: '[MASK]',
      pad: '[PAD]',
      unk: '[UNK]',
      additional: ['[X]'],
      extra: {},
    })
  })

  it("extra_special_tokens as an object: the model's own named tokens, each a template variable", () => {
    const dir = folder('model-extra-tokens', {
      'tokenizer.json': { copy: fixturePath('bert') },
      'tokenizer_config.json': JSON.stringify({
        extra_special_tokens: { image_token: '[MASK]', boi_token: { content: '[CLS]' } },
        chat_template: '{{ boi_token }}{{ image_token }}{{ messages[0].content }}',
      }),
    })
    const tokenizer = Tokenizer.fromPretrainedSync(dir)
    expect(tokenizer.specialTokens.extra).toEqual({ boi_token: '[CLS]', image_token: '[MASK]' })
    expect(tokenizer.specialTokens.additional).toEqual([])
    expect(tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }])).toBe('[CLS][MASK]hi')
  })

  it('a bare tokenizer.json names the tokens it declares itself', () => {
    const bert = Tokenizer.fromFile(fixturePath('bert'))
    expect(bert.specialTokens).toEqual({ pad: '[PAD]', unk: '[UNK]', additional: [], extra: {} })
    const json = '{"version":"1.0","model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"}}'
    expect(Tokenizer.fromJSON(json).source).toBeNull()
  })
})

describe('paths and URLs', () => {
  const bertUrl = pathToFileURL(fixturePath('bert'))

  it('fromFile and load take a path, a file: URL string or a URL', async () => {
    const want = Tokenizer.fromFile(fixturePath('bert')).encode('hello world')
    expect(Tokenizer.fromFile(bertUrl).encode('hello world')).toEqual(want)
    expect(Tokenizer.fromFile(bertUrl.href).encode('hello world')).toEqual(want)
    expect((await Tokenizer.load(bertUrl)).encode('hello world')).toEqual(want)
    expect((await Tokenizer.load(fixturePath('bert'))).encode('hello world')).toEqual(want)
    expect((await Tokenizer.fromPretrained(pathToFileURL(join(FIXTURES, 'tokenizers', 'bert.json')))).source).toBe(
      fixturePath('bert'),
    )
  })

  it.each([
    ['an https URL', new URL('https://huggingface.co/x/tokenizer.json'), TypeError, /only file: URLs/],
    ['a URL with a host', 'file://server/share/tokenizer.json', TypeError, /host 'server'/],
    ['an encoded slash', 'file:///tmp/a%2Fb.json', TypeError, /encoded path separator/],
    ['a number', 42, TypeError, /path is a number; expected a string or a URL/],
    ['an object that is no URL', {}, TypeError, /without an href/],
  ])('fromFile and load refuse %s', async (_, path, kind, message) => {
    expect(() => Tokenizer.fromFile(path as string)).toThrow(kind)
    expect(() => Tokenizer.fromFile(path as string)).toThrow(message)
    await expect(Tokenizer.load(path as string)).rejects.toThrow(kind)
  })

  it('a missing file rejects with an Error naming it', async () => {
    const missing = join(temp, 'nothing-here.json')
    await expect(Tokenizer.load(missing)).rejects.toThrow(`cannot read tokenizer file '${missing}'`)
  })
})

describe('the local Hugging Face cache', () => {
  const commitA = 'a'.repeat(40)
  const commitB = '0123456789abcdef0123456789abcdef01234567'
  let hub: string
  beforeAll(() => {
    hub = folder('cache/hub', {
      'models--org--model/refs/main': commitA,
      'models--org--model/refs/v2': `${commitB}\n`,
      [`models--org--model/snapshots/${commitA}/tokenizer.json`]: { copy: fixturePath('bert') },
      [`models--org--model/snapshots/${commitB}/tokenizer.json`]: { copy: fixturePath('unigram') },
      [`models--org--model/snapshots/${commitB}/tokenizer_config.json`]: '{"model_max_length": 2048}',
      'models--legacy/refs/main': commitA,
      [`models--legacy/snapshots/${commitA}/tokenizer.json`]: { copy: fixturePath('gpt2') },
    })
  })

  const snapshot = (commit: string) => join(hub, 'models--org--model', 'snapshots', commit)

  /** Runs `body` with the environment variables `vars` set (undefined: unset), then restores them. */
  async function withEnv(vars: Record<string, string | undefined>, body: () => Promise<void> | void) {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
    const set = (values: Record<string, string | undefined>) => {
      for (const [k, v] of Object.entries(values)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
    set(vars)
    try {
      await body()
    } finally {
      set(saved)
    }
  }

  it('finds an id through cacheDir, at main, a branch or a commit hash', async () => {
    expect((await Tokenizer.fromPretrained('org/model', { cacheDir: hub })).source).toBe(snapshot(commitA))
    const v2 = await Tokenizer.fromPretrained('org/model', { cacheDir: hub, revision: 'v2' })
    expect(v2.source).toBe(snapshot(commitB))
    expect(v2.modelMaxLength).toBe(2048)
    expect(Tokenizer.fromPretrainedSync('org/model', { cacheDir: hub, revision: commitB }).source).toBe(
      snapshot(commitB),
    )
    const legacy = Tokenizer.fromPretrainedSync('legacy', { cacheDir: pathToFileURL(hub) })
    expect(legacy.vocabSize).toBe(expected.hf.gpt2.vocabSize)
  })

  it('finds an id through HF_HUB_CACHE, then HF_HOME', async () => {
    await withEnv({ HF_HUB_CACHE: hub, HUGGINGFACE_HUB_CACHE: undefined, HF_HOME: undefined }, async () => {
      expect((await Tokenizer.fromPretrained('org/model')).source).toBe(snapshot(commitA))
    })
    await withEnv(
      { HF_HUB_CACHE: undefined, HUGGINGFACE_HUB_CACHE: undefined, HF_HOME: join(hub, '..') },
      async () => {
        expect((await Tokenizer.fromPretrained('org/model', { revision: 'v2' })).source).toBe(snapshot(commitB))
      },
    )
  })

  it('a missing id rejects with every place looked in and how to download it', async () => {
    const failure = Tokenizer.fromPretrained('org/absent', { cacheDir: hub })
    await expect(failure).rejects.toThrow(Error)
    const message = await failure.catch((e: Error) => e.message)
    for (const part of [
      "local folder or file 'org/absent'",
      hub,
      'models--org--absent',
      'huggingface-cli download org/absent',
      'hf download org/absent',
    ]) {
      expect(message).toContain(part)
    }
    await withEnv({ HF_HUB_CACHE: join(temp, 'empty-cache') }, () => {
      expect(() => Tokenizer.fromPretrainedSync('org/absent')).toThrow(/chosen by HF_HUB_CACHE/)
    })
  })

  it('a missing revision lists the refs and snapshots there are', async () => {
    await expect(Tokenizer.fromPretrained('org/model', { cacheDir: hub, revision: 'v3' })).rejects.toThrow(
      /revision 'v3' of 'org\/model'.*refs: main, v2/,
    )
  })

  it("a Mistral model in Mistral's format: its tekken.json, where it has no tokenizer.json", async () => {
    const texts = ['Hello, world! [INST] 12345 naïve café', '日本語のテキスト']
    const tekken = Tokenizer.fromTekken(readFileSync(TEKKEN_FILE))
    const dir = folder('mistral-format', { 'tekken.json': { copy: TEKKEN_FILE }, 'params.json': '{"dim": 5120}' })
    const cached = folder('cache/mistral', {
      'models--mistralai--nemo/refs/main': commitA,
      [`models--mistralai--nemo/snapshots/${commitA}/tekken.json`]: { copy: TEKKEN_FILE },
    })
    for (const tokenizer of [await Tokenizer.fromPretrained(dir), Tokenizer.fromPretrainedSync('mistralai/nemo', { cacheDir: cached })]) {
      expect(tokenizer.name).toBe('tekken')
      expect(tokenizer.vocabSize).toBe(tekken.vocabSize)
      for (const text of texts) expect(Array.from(tokenizer.encode(text)), text).toEqual(Array.from(tekken.encode(text)))
    }
    expect((await Tokenizer.fromPretrained(dir)).source).toBe(dir)
    // A folder with both reads its tokenizer.json, as transformers does.
    const both = folder('mistral-both', { 'tekken.json': { copy: TEKKEN_FILE }, 'tokenizer.json': { copy: fixturePath('gpt2') } })
    expect((await Tokenizer.fromPretrained(both)).vocabSize).toBe(expected.hf.gpt2.vocabSize)
  })

  it('a folder without tokenizer.json lists what it holds', async () => {
    const dir = folder('no-tokenizer', { 'config.json': '{}', 'model.safetensors': '' })
    await expect(Tokenizer.fromPretrained(dir)).rejects.toThrow(
      /has no tokenizer\.json \(it holds: config\.json, model\.safetensors\)/,
    )
  })

  it('bad JSON in tokenizer_config.json names the file', async () => {
    const bert = { copy: fixturePath('bert') }
    const dir = folder('bad-config', { 'tokenizer.json': bert, 'tokenizer_config.json': '{"model_max_length": ' })
    await expect(Tokenizer.fromPretrained(dir)).rejects.toThrow(
      `${join(dir, 'tokenizer_config.json')} is not valid JSON`,
    )
    const wrong = folder('wrong-config', { 'tokenizer.json': bert, 'tokenizer_config.json': '{"eos_token": 7}' })
    expect(() => Tokenizer.fromPretrainedSync(wrong)).toThrow(/"eos_token" is the number 7; expected a string/)
  })

  it.each([
    ['an unknown option', { cachedir: 'x' }, TypeError, /did you mean 'cacheDir'/],
    ['an empty revision', { revision: '' }, RangeError, /revision '' is not a branch, tag or commit hash/],
    ['a revision that climbs out', { revision: '../x' }, RangeError, /revision '..\/x' is not a branch/],
    ['a revision that is no string', { revision: 1 }, TypeError, /options.revision is a number/],
  ])('options: %s', async (_, options, kind, message) => {
    await expect(Tokenizer.fromPretrained('org/model', options as object)).rejects.toThrow(kind)
    expect(() => Tokenizer.fromPretrainedSync('org/model', options as object)).toThrow(message)
  })

  it('a path that is neither a file, a folder nor an id says so', () => {
    expect(() => Tokenizer.fromPretrainedSync(join(temp, 'no', 'such', 'thing'))).toThrow(
      /is neither a file nor a folder, nor a Hub id/,
    )
  })
})

/**
 * `promise`'s value, and how many times a 1 ms timer fired before it settled: ticks that happened
 * while the work ran off the main thread (none if the call did the work before returning).
 */
async function ticksUntilSettled<T>(promise: Promise<T>): Promise<{ value: T; ticks: number }> {
  let settled = false
  let ticks = 0
  const timer = setInterval(() => {
    if (!settled) ticks++
  }, 1)
  const value = await promise.finally(() => {
    settled = true
    clearInterval(timer)
  })
  return { value, ticks }
}

describe('loading off the main thread', () => {
  it('the event loop ticks while fromPretrained parses a large real file', async () => {
    const dir = folder('model-large', {
      'tokenizer.json': { copy: real.qwen3 },
      'tokenizer_config.json': { copy: realTokenizers.configPath('qwen3') },
    })
    const { value: tokenizer, ticks } = await ticksUntilSettled(Tokenizer.fromPretrained(dir))
    expect(ticks).toBeGreaterThan(0)
    expect(tokenizer.vocabSize).toBe(expected.hf.qwen3.vocabSize)
  }, 120_000)

  it("the event loop ticks while loadJSON parses a large real file's text; its bytes load the same", async () => {
    const bytes = readFileSync(real.qwen3)
    const text = bytes.toString('utf8')
    const { value: tokenizer, ticks } = await ticksUntilSettled(Tokenizer.loadJSON(text))
    expect(ticks).toBeGreaterThan(0)
    expect(tokenizer.vocabSize).toBe(expected.hf.qwen3.vocabSize)
    const sample = 'Hello, world! 你好，世界。 12345 <|im_start|>user'
    const want = Tokenizer.fromFile(real.qwen3).encode(sample)
    expect(tokenizer.encode(sample)).toEqual(want)
    expect((await Tokenizer.loadJSON(new Uint8Array(bytes))).encode(sample)).toEqual(want)
    expect(tokenizer.source).toBeNull()
  }, 120_000)
})

describe("a tokenizer.json's text: fromJSON and loadJSON", () => {
  const bertBytes = readFileSync(fixturePath('bert'))
  const sample = 'Hello, world! [SEP] x'

  it('take the text as a string, a Uint8Array or a Buffer, and encode as fromFile', async () => {
    const want = Tokenizer.fromFile(fixturePath('bert')).encode(sample)
    for (const json of [bertBytes.toString('utf8'), new Uint8Array(bertBytes), bertBytes]) {
      expect(Tokenizer.fromJSON(json).encode(sample)).toEqual(want)
      expect((await Tokenizer.loadJSON(json)).encode(sample)).toEqual(want)
    }
  })

  it.each([
    ['bytes that are not UTF-8', Buffer.concat([bertBytes.subarray(0, 40), Buffer.of(0xff), bertBytes.subarray(40)]), Error,
      /^the tokenizer JSON is not UTF-8 text \(invalid utf-8 sequence of 1 bytes from index 40\); a tokenizer\.json is UTF-8$/],
    ['JSON that is not a tokenizer', '{"hello": 1}', Error, /not a tokenizer\.json that Hugging Face tokenizers can read/],
    ['text cut short', bertBytes.toString('utf8').slice(0, 500), Error, /^the tokenizer JSON is not valid JSON: /],
    ['a number', 42, TypeError,
      /^json is a number; expected the tokenizer\.json's contents, a string or a Uint8Array \(fs\.readFileSync\(path\)\)$/],
    ['a Uint16Array', new Uint16Array(4), TypeError, /^json is an object; expected the tokenizer\.json's contents/],
  ])('%s: fromJSON throws and loadJSON rejects, saying so', async (_, json, kind, message) => {
    expect(() => Tokenizer.fromJSON(json as string)).toThrow(kind)
    expect(() => Tokenizer.fromJSON(json as string)).toThrow(message)
    const rejection = await Tokenizer.loadJSON(json as string).then(
      () => null,
      (error: Error) => error,
    )
    expect(rejection).toBeInstanceOf(kind)
    expect(rejection!.message).toMatch(message)
  })
})
