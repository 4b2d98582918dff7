// Bad input gets a clear error of the right class, never a crash, and the next call works.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

import { batchtok, hfTokenizer } from './helpers'

const { Tokenizer, Scheduler } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')
const bert = hfTokenizer('bert')
const scratch = mkdtempSync(join(tmpdir(), 'batchtok-errors-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

type Case = [string, () => unknown, ErrorConstructor, RegExp]

/** A tokenizer.json that the reference panics on reading, as Python `tokenizers` does too. */
const PRECOMPILED_NULL = {
  version: '1.0',
  added_tokens: [],
  normalizer: { type: 'Precompiled', precompiled_charsmap: null },
  model: { type: 'WordLevel', vocab: { a: 0 }, unk_token: 'a' },
}

const syncCases: Case[] = [
  ['an unknown encoding', () => Tokenizer.fromEncoding('o300k'), Error, /unknown encoding 'o300k'.*'o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'gpt2'/],
  ['an encoding name that is not a string', () => Tokenizer.fromEncoding(42 as any), TypeError, /name is a number; expected a string/],
  ['a missing tokenizer file', () => Tokenizer.fromFile(join(scratch, 'nope.json')), Error, /cannot read tokenizer file '.*nope\.json'/],
  ['a tokenizer file that is not JSON', () => { const p = join(scratch, 'bad.json'); writeFileSync(p, '{"version": '); return Tokenizer.fromFile(p) }, Error, /bad\.json' is not valid JSON/],
  ['JSON that is not a tokenizer', () => Tokenizer.fromJSON('{"hello": 1}'), Error, /not a tokenizer\.json that Hugging Face tokenizers can read/],
  ['a truncated tokenizer.json', () => Tokenizer.fromJSON(JSON.stringify({ version: '1.0', model: { type: 'BPE' } }).slice(0, -3)), Error, /not valid JSON/],
  [
    'a component the reference panics on reading, saying what it said',
    () =>
      Tokenizer.fromJSON(JSON.stringify(PRECOMPILED_NULL)),
    Error,
    /it panicked while reading the file \(Precompiled: .*invalid type: null/,
  ],
  ['encode of a number', () => o200k.encode(7 as any), TypeError, /text is a number; expected a string/],
  ['encode of null', () => o200k.encode(null as any), TypeError, /text is null; expected a string/],
  ['encodeBatchSync of a string', () => o200k.encodeBatchSync('abc' as any), TypeError, /texts is a string; expected an array of strings/],
  ['encodeBatchSync of undefined', () => o200k.encodeBatchSync(undefined as any), TypeError, /texts is undefined; expected an array of strings/],
  ['a non-string item, named by index', () => o200k.encodeBatchSync(['a', 'b', 3 as any]), TypeError, /texts\[2\] is a number; expected a string/],
  ['a null item', () => o200k.countBatchSync(['a', null as any]), TypeError, /texts\[1\] is null; expected a string/],
  [
    "options that are not an object: tiktoken's allowedSpecial argument",
    () => o200k.encode('a', 'all' as any),
    TypeError,
    /^options is a string; expected an object such as \{ allowedSpecial: 'all' \} \(the allowedSpecial and disallowedSpecial arguments of tiktoken's and js-tiktoken's encode are options here: encode\(text, \{ allowedSpecial, disallowedSpecial \}\); batchtok\/js-tiktoken and batchtok\/tiktoken take them as those do\)$/,
  ],
  ["options that are not an object: js-tiktoken's two arguments", () => o200k.count('a', [] as any, 'all' as any), TypeError, /^options is an array; expected an object such as \{ allowedSpecial: 'all' \} .* options here: count\(text, /],
  ['allowedSpecial of a wrong word', () => o200k.encode('a', { allowedSpecial: 'none' as any }), RangeError, /options\.allowedSpecial is "none"; expected 'all' or an array/],
  ['allowedSpecial naming an unknown token', () => o200k.encode('a', { allowedSpecial: ['<|fim_prefix|>'] }), TypeError, /not a special token of this encoding; its special tokens are <\|endoftext\|>, <\|endofprompt\|>/],
  ['allowedSpecial on a Hugging Face tokenizer', () => bert.encode('a', { allowedSpecial: 'all' }), TypeError, /allowedSpecial applies to the OpenAI encodings/],
  ['addSpecialTokens on an OpenAI encoding', () => o200k.encode('a', { addSpecialTokens: true }), TypeError, /addSpecialTokens applies to Hugging Face tokenizers/],
  ['encodeWithUnstable on a Hugging Face tokenizer', () => bert.encodeWithUnstable('a'), TypeError, /^encodeWithUnstable applies to the OpenAI-style encodings/],
  ['encodeWithUnstable of a number', () => o200k.encodeWithUnstable(7 as any), TypeError, /text is a number; expected a string/],
  ['encodeWithUnstable of special-token text disallowed', () => o200k.encodeWithUnstable('a<|endoftext|>', { disallowedSpecial: 'all' }), Error, /<\|endoftext\|>/],
  ['addSpecialTokens that is not a boolean', () => bert.encode('a', { addSpecialTokens: 1 as any }), TypeError, /options\.addSpecialTokens is a number; expected true or false/],
  ['an out-of-range id in decode', () => o200k.decode([24912, 250000]), RangeError, /id 250000 at index 1 is not in the vocabulary/],
  ['an id near 2^32 in decode', () => o200k.decode(new Uint32Array([4294967295])), RangeError, /id 4294967295 at index 0 is not in the vocabulary/],
  ['a gap in the vocabulary in decode', () => Tokenizer.fromEncoding('cl100k_base').decode([100261]), RangeError, /id 100261 at index 0 is not in the vocabulary/],
  ['a negative id', () => o200k.decode([-1]), RangeError, /ids\[0\] is -1; ids are whole numbers from 0 to 4294967295/],
  ['a fractional id', () => o200k.decode([1.5]), RangeError, /ids\[0\] is 1\.5/],
  ['an id that is not a number', () => o200k.decode(['7' as any]), TypeError, /ids\[0\] is a string; ids are whole numbers/],
  ['ids of the wrong typed array', () => o200k.decode(new Float64Array([1]) as any), TypeError, /ids is an object; expected a Uint32Array or an array of numbers/],
  ['a signal on a sync method', () => o200k.encodeBatchSync(['a'], { signal: new AbortController().signal }), TypeError, /options\.signal needs the async method/],
  ['a scheduler that is not a Scheduler', () => o200k.countBatchSync(['a'], { scheduler: { threads: 2 } as any }), TypeError, /options\.scheduler is an object; expected a Scheduler/],
  ['zero threads', () => new Scheduler({ threads: 0 }), RangeError, /^options\.threads is 0; expected a whole number from 1 to 1024$/],
  ['fractional threads', () => new Scheduler({ threads: 1.5 }), RangeError, /^options\.threads is 1\.5; expected a whole number from 1 to 1024$/],
  ['threads as a string', () => new Scheduler({ threads: '2' as any }), TypeError, /^options\.threads is a string; expected a whole number$/],
  ['an unknown policy', () => new Scheduler({ policy: 'fastest' as any }), RangeError, /^options\.policy is "fastest"; expected one of 'chunked', 'serial', 'rayon', 'rayon-min-len', 'auto'$/],
  ['a policy that is not a string', () => new Scheduler({ policy: 1 as any }), TypeError, /^options\.policy is a number; expected one of 'chunked'/],
  ['releaseMemory that is not a boolean', () => new Scheduler({ releaseMemory: 'yes' as any }), TypeError, /^options\.releaseMemory is a string; expected true or false$/],
  ['Scheduler called without new', () => (Scheduler as any)({ threads: 2 }), TypeError, /^Class constructor Scheduler cannot be invoked without 'new'$/],
  ['Scheduler options that are a number', () => new Scheduler(5 as any), TypeError, /^options is a number; expected an object$/],
  ['a misspelt Scheduler option', () => new Scheduler({ thread: 2 } as any), TypeError, /^options\.thread is not an option of new Scheduler\(\); did you mean 'threads'\?/],
  ['an unknown encode option', () => o200k.encode('a', { allowSpecial: 'all' } as any), TypeError, /^options\.allowSpecial is not an option of encode; did you mean 'allowedSpecial'\?/],
  ['an unknown batch option', () => o200k.encodeBatchSync(['a'], { colour: 1 } as any), TypeError, /^options\.colour is not an option of encodeBatchSync \(options: addSpecialTokens, encodeSpecialTokens, allowedSpecial, disallowedSpecial, truncation, afterCut, signal, scheduler\)$/],
  ['a signal on decode', () => o200k.decode([1], { signal: new AbortController().signal }), TypeError, /options\.signal needs the async method; decode blocks/],
  ['setDefault of something that is not a Scheduler', () => Scheduler.setDefault({} as any), TypeError, /^scheduler is an object; expected a Scheduler/],
  ['an index past the end of a BatchEncoding', () => o200k.encodeBatchSync(['a']).get(1), RangeError, /index 1 is out of range for a BatchEncoding of length 1/],
  ['new Tokenizer()', () => new (Tokenizer as any)(), Error, /./],
]

describe('bad input', () => {
  it.each(syncCases)('%s throws a clear error', (_, call, errorClass, message) => {
    let thrown: unknown
    try {
      call()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(errorClass)
    expect((thrown as Error).message).toMatch(message)
    // The addon still works after the error.
    expect(Array.from(o200k.encode('hello world'))).toEqual([24912, 2375])
  })

  const asyncCases: [string, () => Promise<unknown>, ErrorConstructor, RegExp][] = [
    ['encodeBatch of null', () => o200k.encodeBatch(null as any), TypeError, /^texts is null; expected an array of strings$/],
    ['encodeBatch of a non-string item', () => o200k.encodeBatch(['a', 2 as any]), TypeError, /^texts\[1\] is a number; expected a string$/],
    ['countBatch with a signal that is not an AbortSignal', () => o200k.countBatch(['a'], { signal: {} as any }), TypeError, /^options\.signal is an object; expected an AbortSignal/],
    ['countBatch with an unknown option', () => o200k.countBatch(['a'], { schedular: null } as any), TypeError, /^options\.schedular is not an option of countBatch; did you mean 'scheduler'\?/],
    ['encodeUtf8Batch of a string', () => o200k.encodeUtf8Batch('abc' as any, [0, 3]), TypeError, /^bytes is a string; expected a Uint8Array/],
    ['countUtf8Batch with offsets past the end', () => o200k.countUtf8Batch(Buffer.from('ab'), [0, 5]), Error, /past the end/],
    ['decodeBatch of a number', () => o200k.decodeBatch(3 as any), TypeError, /^lists is a number; expected an array of id lists$/],
    ['decodeBatch with a bad option', () => o200k.decodeBatch([[1]], { skipSpecialTokens: 'no' as any }), TypeError, /^options\.skipSpecialTokens is a string; expected true or false$/],
    ['encodeBatch with allowedSpecial on a Hugging Face tokenizer', () => bert.encodeBatch(['a'], { allowedSpecial: 'all' }), TypeError, /allowedSpecial applies to the OpenAI encodings/],
  ]

  it.each(asyncCases)('%s rejects, never throws', async (_, call, errorClass, message) => {
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = call()
    }).not.toThrow()
    const error = await promise!.then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(errorClass)
    expect((error as Error).message).toMatch(message)
  })

  it('rejects when BATCHTOK_THREADS is invalid, naming the variable', () => {
    const script = `const { Tokenizer } = require(${JSON.stringify(fileURLToPath(new URL('./load-addon.cjs', import.meta.url)))});
      Tokenizer.fromEncoding('o200k_base').encodeBatch(['a']).then(
        () => console.log('resolved'),
        (e) => console.log(e.constructor.name + ': ' + e.message))`
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, BATCHTOK_THREADS: 'lots' },
      encoding: 'utf8',
    })
    expect(out).toMatch(/^RangeError: .*BATCHTOK_THREADS/)
  })

  it('rejects the promise for a bad batch argument instead of throwing later', async () => {
    await expect(o200k.encodeBatch([1 as any])).rejects.toThrow(TypeError)
    await expect(o200k.decodeBatch([[1, 2], [999999999]])).rejects.toThrow(/lists\[1\]: id 999999999 at index 0 is not in the vocabulary/)
  })
})

describe('panics inside the addon', () => {
  // `__panicInBatch` and `__panicSync` exist only in the build with the `testing` feature.
  const hooks = require('./load-testing-addon.cjs') as typeof batchtok & {
    __panicInBatch(len: number, panicAt: number): Promise<void>
    __panicSync(): void
  }
  const tokenizer = hooks.Tokenizer.fromEncoding('o200k_base')

  it('reject the batch with an Error naming the item, and the pool keeps working', async () => {
    await expect(hooks.__panicInBatch(500, 321)).rejects.toThrow(/item 321 .*internal error \(test panic at item 321\)/)
    await expect(hooks.__panicInBatch(500, 0)).rejects.toThrow(/item 0 /)
    const batch = await tokenizer.encodeBatch(['after', 'the', 'panics'])
    expect(batch.length).toBe(3)
  })

  it('throw from a sync call instead of aborting the process', () => {
    expect(() => hooks.__panicSync()).toThrow(/test panic in a sync call/)
    expect(Array.from(tokenizer.encode('hello world'))).toEqual([24912, 2375])
  })

  it("print nothing where they become the caller's error, and Rust's report where they are a bug", () => {
    const addon = (name: string) => JSON.stringify(fileURLToPath(new URL(name, import.meta.url)))
    const run = (script: string) => spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, RUST_BACKTRACE: '0' } })
    // A tokenizer.json the reference panics on reading: the message carries what the panic said.
    const refused = run(`const { Tokenizer } = require(${addon('./load-addon.cjs')});
      try { Tokenizer.fromJSON(${JSON.stringify(JSON.stringify(PRECOMPILED_NULL))}) } catch (e) { console.log(e.message) }`)
    expect(refused.stdout).toMatch(/it panicked while reading the file \(Precompiled: .*invalid type: null/)
    expect(refused.stderr).toBe('')
    const bug = run(`require(${addon('./load-testing-addon.cjs')}).__panicInBatch(50, 7).catch((e) => console.log(e.message))`)
    expect(bug.stdout).toMatch(/item 7 .*internal error \(test panic at item 7\)/)
    expect(bug.stderr).toMatch(/panicked at .*\ntest panic at item 7/)
  })

  it('are hooks of the testing build only: the release module exports no `__` name', () => {
    expect(Object.keys(hooks).filter((name) => name.startsWith('__')).sort()).toEqual(['__panicInBatch', '__panicSync', '__profileBoundary'])
    for (const name of ['__panicInBatch', '__panicSync', '__profileBoundary']) expect(batchtok).not.toHaveProperty(name)
  })
})

describe('bad input to the daily jobs: every JS type for every argument and option', () => {
  const gpt2 = hfTokenizer('gpt2')
  const gpt4o = Tokenizer.fromModel('gpt-4o')
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

  /** One value of each JS type, as the error messages describe it. */
  const values: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a boolean', true],
    ['a number', 42],
    ['a bigint', 7n],
    ['a string', 'text'],
    ['a symbol', Symbol('s')],
    ['an object', {}],
    ['an array', [1]],
    ['a function', () => 1],
  ]
  type Expect = [ErrorConstructor, RegExp] | 'valid'
  type Place = {
    /** What the call names the argument or option (`text`, `options.from`). */
    name: string
    /** The call with the value in that place. */
    call: (value: any) => unknown
    /** What a value of a JS type gives; unlisted types are a TypeError naming the place and the type. */
    valid: string[]
    special?: Partial<Record<string, Expect>>
  }

  const options = (call: (value: any) => unknown): Place => ({ name: 'options', call, valid: ['undefined', 'null', 'an object'] })
  const ids = (call: (value: any) => unknown): Place[] => [
    { name: 'ids', call, valid: ['an array'] },
    { name: 'ids[0]', call: (v) => call([v]), valid: ['a number'] },
  ]
  const message = (call: (value: any) => unknown): Place[] => [
    { name: 'messages', call, valid: ['an array'], special: { 'an array': [TypeError, /^messages\[0\] is a number/] } },
    { name: 'messages[0]', call: (v) => call([v]), valid: ['an object'], special: { 'an object': [TypeError, /^messages\[0\]\.content is undefined/] } },
    { name: 'messages[0].content', call: (v) => call([{ role: 'user', content: v }]), valid: ['a string'] },
    { name: 'messages[0].role', call: (v) => call([{ role: v, content: 'Hi' }]), valid: ['undefined', 'a string'] },
    { name: 'messages[0].name', call: (v) => call([{ role: 'user', name: v, content: 'Hi' }]), valid: ['undefined', 'a string'] },
  ]
  const specialList = (name: string, call: (value: any) => unknown): Place => ({
    name,
    call,
    valid: ['undefined'],
    special: {
      'a string': [RangeError, new RegExp(`^${escape(name)} is "text"; expected 'all' or an array`)],
      'an array': [TypeError, new RegExp(`^${escape(name)}\\[0\\] is a number`)],
    },
  })
  const boolean = (name: string, call: (value: any) => unknown): Place => ({ name, call, valid: ['undefined', 'a boolean'] })
  const wholeNumber = (name: string, call: (value: any) => unknown): Place => ({ name, call, valid: ['a number'] })

  const places: [string, Place][] = [
    ['count', { name: 'text', call: (v) => o200k.count(v), valid: ['a string'] }],
    ['count', options((v) => o200k.count('a', v))],
    ['isWithinTokenLimit', { name: 'text', call: (v) => o200k.isWithinTokenLimit(v, 5), valid: ['a string'] }],
    ['isWithinTokenLimit', wholeNumber('limit', (v) => o200k.isWithinTokenLimit('a', v))],
    ['isWithinTokenLimit', options((v) => o200k.isWithinTokenLimit('a', 5, v))],
    ['truncate', { name: 'text', call: (v) => gpt2.truncate(v, 5), valid: ['a string'] }],
    ['truncate', wholeNumber('maxTokens', (v) => gpt2.truncate('a', v))],
    ['truncate', options((v) => gpt2.truncate('a', 5, v))],
    ['truncate', { name: 'options.from', call: (v) => gpt2.truncate('a', 5, { from: v }), valid: ['undefined'], special: { 'a string': [RangeError, /^options\.from is "text"; expected one of 'end', 'start'$/] } }],
    ...message((v) => gpt4o.encodeChat(v)).map((p): [string, Place] => ['encodeChat', p]),
    ['encodeChat', options((v) => gpt4o.encodeChat([], v))],
    ['encodeChat', { name: 'options.model', call: (v) => gpt4o.encodeChat([], { model: v }), valid: ['undefined'], special: { 'a string': [Error, /^unknown model "text"/] } }],
    ...message((v) => gpt4o.countChat(v)).map((p): [string, Place] => ['countChat', p]),
    ['countChat', options((v) => gpt4o.countChat([], v))],
    ['countChat', { name: 'options.model', call: (v) => gpt4o.countChat([], { model: v }), valid: ['undefined'], special: { 'a string': [Error, /^unknown model "text"/] } }],
    ...ids((v) => o200k.decodeBytes(v)).map((p): [string, Place] => ['decodeBytes', p]),
    ['decodeBytes', options((v) => o200k.decodeBytes([1], v))],
    ['decodeBytes', boolean('options.skipSpecialTokens', (v) => o200k.decodeBytes([1], { skipSpecialTokens: v }))],
    ...ids((v) => o200k.decoder().write(v)).map((p): [string, Place] => ['decoder().write', p]),
    ['decoder', options((v) => o200k.decoder(v))],
    ['decoder', boolean('options.skipSpecialTokens', (v) => o200k.decoder({ skipSpecialTokens: v }))],
    ['encodingForModel', { name: 'model', call: (v) => batchtok.encodingForModel(v), valid: [], special: { 'a string': [Error, /^unknown model "text"/] } }],
    ['Tokenizer.fromModel', { name: 'model', call: (v) => Tokenizer.fromModel(v), valid: [], special: { 'a string': [Error, /^unknown model "text"/] } }],
    ['encode', specialList('options.disallowedSpecial', (v) => o200k.encode('a', { disallowedSpecial: v }))],
    ['count', specialList('options.disallowedSpecial', (v) => o200k.count('a', { disallowedSpecial: v }))],
    ['isWithinTokenLimit', specialList('options.disallowedSpecial', (v) => o200k.isWithinTokenLimit('a', 5, { disallowedSpecial: v }))],
    ['encodeBatchSync', specialList('options.disallowedSpecial', (v) => o200k.encodeBatchSync(['a'], { disallowedSpecial: v }))],
    ['encode', boolean('options.encodeSpecialTokens', (v) => gpt2.encode('a', { encodeSpecialTokens: v }))],
    ['count', boolean('options.encodeSpecialTokens', (v) => gpt2.count('a', { encodeSpecialTokens: v }))],
    ['truncate', boolean('options.encodeSpecialTokens', (v) => gpt2.truncate('a', 5, { encodeSpecialTokens: v }))],
    ['countBatchSync', boolean('options.encodeSpecialTokens', (v) => gpt2.countBatchSync(['a'], { encodeSpecialTokens: v }))],
  ]

  const cases: [string, () => unknown, ErrorConstructor, RegExp][] = []
  for (const [method, place] of places) {
    for (const [type, value] of values) {
      const expected: Expect = place.special?.[type] ?? (place.valid.includes(type) ? 'valid' : [TypeError, new RegExp(`^${escape(place.name)} is ${type}\\b`)])
      if (expected === 'valid') continue
      cases.push([`${method}: ${place.name} as ${type}`, () => place.call(value), ...expected])
    }
  }
  // Numbers that are not whole numbers in range.
  for (const number of [-1, 1.5, NaN, Infinity, 2 ** 32]) {
    const shown = String(number)
    cases.push([`isWithinTokenLimit: limit ${shown}`, () => o200k.isWithinTokenLimit('a', number), RangeError, new RegExp(`^limit is ${escape(shown)}; expected a whole number`)])
    cases.push([`truncate: maxTokens ${shown}`, () => gpt2.truncate('a', number), RangeError, new RegExp(`^maxTokens is ${escape(shown)}; expected a whole number`)])
    cases.push([`decodeBytes: ids[0] ${shown}`, () => o200k.decodeBytes([number]), RangeError, new RegExp(`^ids\\[0\\] is ${escape(shown)}; ids are whole numbers`)])
    cases.push([`decoder().write: ids[0] ${shown}`, () => o200k.decoder().write([number]), RangeError, new RegExp(`^ids\\[0\\] is ${escape(shown)}; ids are whole numbers`)])
  }
  cases.push(
    ['decodeBytes: an id outside the vocabulary', () => o200k.decodeBytes([1, 999_999_999]), RangeError, /id 999999999 at index 1 is not in the vocabulary/],
    ['decoder().write: an id outside the vocabulary', () => o200k.decoder().write([999_999_999]), RangeError, /id 999999999 at index 0 is not in the vocabulary/],
    ['decodeBytes: a typed array of the wrong type', () => o200k.decodeBytes(new Int32Array([1]) as any), TypeError, /^ids is an object; expected a Uint32Array/],
    ['disallowedSpecial naming a token the encoding lacks', () => o200k.encode('a', { disallowedSpecial: ['<|fim_prefix|>'] }), TypeError, /disallowedSpecial names "<\|fim_prefix\|>", which is not a special token of this encoding/],
    ['disallowedSpecial with an item that is not a string', () => o200k.encode('a', { disallowedSpecial: ['<|endoftext|>', null as any] }), TypeError, /^options\.disallowedSpecial\[1\] is null/],
    ['disallowedSpecial on a Hugging Face tokenizer', () => gpt2.encode('a', { disallowedSpecial: 'all' }), TypeError, /disallowedSpecial applies to the OpenAI encodings/],
    ['encodeSpecialTokens on an OpenAI encoding', () => o200k.count('a', { encodeSpecialTokens: true }), TypeError, /encodeSpecialTokens applies to Hugging Face tokenizers/],
    ['encodeChat without a model', () => o200k.encodeChat([{ role: 'user', content: 'Hi' }]), TypeError, /encodeChat needs a model: pass \{ model: 'gpt-4o' \}/],
    ['countChat without a model', () => o200k.countChat([]), TypeError, /countChat needs a model/],
    ["a model on another encoding than the tokenizer's", () => Tokenizer.fromEncoding('cl100k_base').countChat([], { model: 'gpt-4o' }), TypeError, /model "gpt-4o" uses the encoding 'o200k_base'.*Tokenizer\.fromModel\("gpt-4o"\)/],
    ['a model that is not a chat model', () => Tokenizer.fromModel('davinci').encodeChat([]), TypeError, /model "davinci" is not a chat model/],
    // Misspelt options: the key and the nearest valid one.
    ['count with a misspelt option', () => o200k.count('a', { allowedSpecials: 'all' } as any), TypeError, /^options\.allowedSpecials is not an option of count; did you mean 'allowedSpecial'\?/],
    ['isWithinTokenLimit with a misspelt option', () => o200k.isWithinTokenLimit('a', 5, { disalowedSpecial: 'all' } as any), TypeError, /^options\.disalowedSpecial is not an option of isWithinTokenLimit; did you mean 'disallowedSpecial'\?/],
    ['truncate with a misspelt option', () => gpt2.truncate('a', 5, { fron: 'start' } as any), TypeError, /^options\.fron is not an option of truncate; did you mean 'from'\?/],
    ['encodeChat with a misspelt option', () => gpt4o.encodeChat([], { mode: 'gpt-4o' } as any), TypeError, /^options\.mode is not an option of encodeChat; did you mean 'model'\?/],
    ['countChat with a misspelt option', () => gpt4o.countChat([], { models: 'gpt-4o' } as any), TypeError, /^options\.models is not an option of countChat; did you mean 'model'\?/],
    ['decodeBytes with a misspelt option', () => o200k.decodeBytes([1], { skipSpecialToken: true } as any), TypeError, /^options\.skipSpecialToken is not an option of decodeBytes; did you mean 'skipSpecialTokens'\?/],
    ['decoder with a misspelt option', () => o200k.decoder({ skip_special_tokens: true } as any), TypeError, /^options\.skip_special_tokens is not an option of decoder; did you mean 'skipSpecialTokens'\?/],
    ['encode with a misspelt encodeSpecialTokens', () => gpt2.encode('a', { encodeSpecialToken: true } as any), TypeError, /^options\.encodeSpecialToken is not an option of encode; did you mean 'encodeSpecialTokens'\?/],
  )

  function expectThrown(call: () => unknown, errorClass: ErrorConstructor, pattern: RegExp) {
    let error: unknown
    try {
      call()
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(errorClass)
    expect((error as Error).message).toMatch(pattern)
    // Only our own messages: none of napi's conversions.
    expect((error as Error).message).not.toMatch(/napi|Failed to convert|rust type/i)
    expect(o200k.count('hello world')).toBe(2)
  }

  it.each(cases)('%s throws the right class, naming it', (_, call, errorClass, pattern) => expectThrown(call, errorClass, pattern))

  // Two letters swapped count as one edit, so a short key still gets its suggestion.
  it.each([
    ['truncate', () => gpt2.truncate('a', 5, { form: 'start' } as any), /^options\.form is not an option of truncate; did you mean 'from'\?/],
    ['encodeChat', () => gpt4o.encodeChat([], { modle: 'gpt-4o' } as any), /^options\.modle is not an option of encodeChat; did you mean 'model'\?/],
  ] as const)('%s with two letters of an option swapped names the nearest option', (_, call, pattern) => expectThrown(call, TypeError, pattern))

  // The async methods take disallowedSpecial and encodeSpecialTokens too, and report every error
  // by rejecting.
  const bytes = Buffer.from('ab')
  const asyncPlaces: [string, Place][] = [
    ['encodeBatch', specialList('options.disallowedSpecial', (v) => o200k.encodeBatch(['a'], { disallowedSpecial: v }))],
    ['countBatch', specialList('options.disallowedSpecial', (v) => o200k.countBatch(['a'], { disallowedSpecial: v }))],
    ['encodeUtf8Batch', specialList('options.disallowedSpecial', (v) => o200k.encodeUtf8Batch(bytes, [0, 2], { disallowedSpecial: v }))],
    ['encodeBatch', boolean('options.encodeSpecialTokens', (v) => gpt2.encodeBatch(['a'], { encodeSpecialTokens: v }))],
    ['countBatch', boolean('options.encodeSpecialTokens', (v) => gpt2.countBatch(['a'], { encodeSpecialTokens: v }))],
    ['encodeUtf8Batch', boolean('options.encodeSpecialTokens', (v) => gpt2.encodeUtf8Batch(bytes, [0, 2], { encodeSpecialTokens: v }))],
  ]
  const asyncCases: [string, () => Promise<unknown>, ErrorConstructor, RegExp][] = []
  for (const [method, place] of asyncPlaces) {
    for (const [type, value] of values) {
      const expected: Expect = place.special?.[type] ?? (place.valid.includes(type) ? 'valid' : [TypeError, new RegExp(`^${escape(place.name)} is ${type}\\b`)])
      if (expected === 'valid') continue
      asyncCases.push([`${method}: ${place.name} as ${type}`, () => place.call(value) as Promise<unknown>, ...expected])
    }
  }
  asyncCases.push(
    ['encodeBatch with disallowedSpecial on a Hugging Face tokenizer', () => gpt2.encodeBatch(['a'], { disallowedSpecial: 'all' }), TypeError, /disallowedSpecial applies to the OpenAI encodings/],
    ['countBatch with encodeSpecialTokens on an OpenAI encoding', () => o200k.countBatch(['a'], { encodeSpecialTokens: true }), TypeError, /encodeSpecialTokens applies to Hugging Face tokenizers/],
    ['encodeUtf8Batch with disallowedSpecial naming a token the encoding lacks', () => o200k.encodeUtf8Batch(bytes, [0, 2], { disallowedSpecial: ['<|nope|>'] }), TypeError, /disallowedSpecial names "<\|nope\|>"/],
    ['encodeBatch with a misspelt disallowedSpecial', () => o200k.encodeBatch(['a'], { disallowSpecial: 'all' } as any), TypeError, /^options\.disallowSpecial is not an option of encodeBatch; did you mean 'disallowedSpecial'\?/],
    ['countBatch with a misspelt encodeSpecialTokens', () => gpt2.countBatch(['a'], { encodeSpecialtoken: true } as any), TypeError, /^options\.encodeSpecialtoken is not an option of countBatch; did you mean 'encodeSpecialTokens'\?/],
    ['encodeUtf8Batch with a misspelt disallowedSpecial', () => o200k.encodeUtf8Batch(bytes, [0, 2], { disallowedSpecials: 'all' } as any), TypeError, /^options\.disallowedSpecials is not an option of encodeUtf8Batch; did you mean 'disallowedSpecial'\?/],
  )

  it.each(asyncCases)('%s rejects with the right class, never throws', async (_, call, errorClass, pattern) => {
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = call()
    }).not.toThrow()
    expect(promise).toBeInstanceOf(Promise)
    const error = await promise!.then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(errorClass)
    expect((error as Error).message).toMatch(pattern)
  })

  it('the valid value of every place is accepted (the table tests only the wrong ones)', () => {
    const sample: Record<string, unknown> = { 'a string': 'text', 'a boolean': true, 'a number': 3, 'an array': [1], 'an object': {}, undefined: undefined, null: null }
    for (const [method, place] of places) {
      for (const type of place.valid) {
        // Only the places whose valid sample is complete on its own.
        if (place.name.startsWith('messages') || place.name === 'model' || place.name === 'options.model') continue
        expect(() => place.call(sample[type]), `${method}: ${place.name} as ${type}`).not.toThrow(TypeError)
      }
    }
  })
})
