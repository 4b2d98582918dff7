'use strict'
// Chat templates: `tokenizer.applyChatTemplate(messages, options)` renders a model's Jinja chat
// template the way Python transformers' `apply_chat_template` does (its `get_chat_template`,
// `render_jinja_template` and `_compile_jinja_template`), with @huggingface/jinja, the Jinja for
// JavaScript that transformers.js renders templates with. What transformers' renderer does and
// this module does too:
//
// - the template: a name in `chatTemplate` picks one of the model's templates; without one,
//   `tool_use` when tools are given and the model has it, else `default`; any other
//   `chatTemplate` string is a template's source;
// - the variables: `messages`, `tools`, `documents` (both `none` when not given),
//   `add_generation_prompt`, the special tokens the model names (`bos_token`, `eos_token`, ...),
//   the caller's extra variables (which win over the special tokens), and the globals
//   `raise_exception` and `strftime_now`;
// - everything a template sees is a fresh copy made of JSON values only: a message's keys whose
//   value is null or undefined are left out, and any other object (a Date, a typed array) is the
//   placeholder `<Type>`, as transformers turns rich objects into `<type>`; a message's reasoning
//   under `reasoning_content`, `thinking` or `reasoning` is passed under the first and the second
//   of these names too;
// - `continueFinalMessage`: the final message's text is rendered with a tag after it and the
//   text is cut at the tag, so the model continues that message;
// - Jinja's `trim_blocks` and `lstrip_blocks`, which @huggingface/jinja's Template sets as
//   transformers' environment does, and Python Jinja's `{% for %}` over a string's characters,
//   which @huggingface/jinja lacks and this module adds.

const { Environment, Interpreter, Template } = require('@huggingface/jinja')

/** The special tokens a template sees, by the name of the tokenizer's getter. */
const SPECIAL_TOKEN_VARIABLES = [
  ['bos', 'bos_token'],
  ['eos', 'eos_token'],
  ['unk', 'unk_token'],
  ['sep', 'sep_token'],
  ['pad', 'pad_token'],
  ['cls', 'cls_token'],
  ['mask', 'mask_token'],
]

/** Options that `applyChatTemplate` reads itself; every other option is a template variable. */
const OPTION_NAMES = new Set([
  'addGenerationPrompt',
  'continueFinalMessage',
  'tools',
  'documents',
  'tokenize',
  'chatTemplate',
])

/**
 * The tag transformers appends to the text of the message to continue, and then cuts the
 * rendered text at. Its trailing space tells whether the template kept the message's spacing.
 */
const CONTINUE_TAG = 'CONTINUE_FINAL_MESSAGE_TAG '

/** The names a message's reasoning goes by; templates read the first, gpt-oss's the second. */
const REASONING_FIELDS = ['reasoning_content', 'thinking', 'reasoning']

/** Where a tokenizer's chat templates are read from, for the error when it has none. */
const TEMPLATE_FILES = "tokenizer_config.json's chat_template, chat_template.jinja and chat_template.json"

/** An error a template raised with `raise_exception(message)`: passed on with its message alone. */
class TemplateRaised extends Error {}

/** True for `[]`-free, class-free objects: what a JSON object parses to. */
function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** A name for a value's type in messages and errors. */
function typeName(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return value.constructor?.name ? `a ${value.constructor.name}` : 'an object'
  return `a ${typeof value}`
}

/**
 * `value` made of JSON values only, copied: what transformers' `_plain_template_data` does, so
 * that the template can neither reach nor change the caller's objects. Keys whose value is
 * undefined are left out, as JSON.stringify leaves them out.
 */
function plainData(value) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return value
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : plainData(item)))
  if (isPlainObject(value)) {
    const out = {}
    for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = plainData(item)
    return out
  }
  if (typeof value === 'object') return `<${value.constructor?.name ?? 'Object'}>`
  return `<${typeof value}>`
}

/**
 * The messages as the template sees them: checked, copied, keys with null or undefined values
 * left out (transformers drops a message's `None` values), and reasoning under its other names.
 */
function templateMessages(messages) {
  if (!Array.isArray(messages)) {
    throw new TypeError(`applyChatTemplate: messages must be an array of { role, content } objects, not ${typeName(messages)}`)
  }
  if (messages.length === 0) {
    throw new Error('applyChatTemplate: the conversation is empty; pass at least one message')
  }
  return messages.map((message, index) => {
    if (!isPlainObject(message)) {
      throw new TypeError(`applyChatTemplate: messages[${index}] must be an object with a role, not ${typeName(message)}`)
    }
    if (typeof message.role !== 'string') {
      throw new TypeError(
        `applyChatTemplate: messages[${index}] has ${message.role === undefined ? 'no role' : `a role that is ${typeName(message.role)}`}; a message is { role: string, content }`,
      )
    }
    const copy = {}
    for (const [key, value] of Object.entries(message)) if (value != null) copy[key] = plainData(value)
    const reasoningField = REASONING_FIELDS.find((field) => field in copy)
    if (reasoningField === undefined) return copy
    const reasoning = copy[reasoningField]
    return { thinking: reasoning, ...copy, reasoning_content: reasoning }
  })
}

/** `tools` as the template sees them: JSON-schema objects, or none. */
function templateTools(tools) {
  if (tools == null) return null
  if (!Array.isArray(tools)) throw new TypeError(`applyChatTemplate: tools must be an array of JSON-schema objects, not ${typeName(tools)}`)
  return tools.map((tool, index) => {
    if (!isPlainObject(tool)) {
      throw new TypeError(
        `applyChatTemplate: tools[${index}] is ${typeName(tool)}; each tool is a JSON schema object, such as { type: 'function', function: { name, description, parameters } }`,
      )
    }
    return plainData(tool)
  })
}

/** `documents` as the template sees them: objects (`{ title, text }` by convention), or none. */
function templateDocuments(documents) {
  if (documents == null) return null
  if (!Array.isArray(documents)) throw new TypeError(`applyChatTemplate: documents must be an array of { title, text } objects, not ${typeName(documents)}`)
  return documents.map((document, index) => {
    if (!isPlainObject(document)) {
      throw new TypeError(`applyChatTemplate: documents[${index}] is ${typeName(document)}; each document is an object such as { title, text }`)
    }
    return plainData(document)
  })
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

/**
 * `date` formatted as C's `strftime` does in the C locale, which is what Python's
 * `datetime.strftime` gives in a process that never called `setlocale` (English names whatever
 * the machine's language). Local time, as Python's `datetime.now()`. A directive it does not
 * know stays as written, as glibc leaves it.
 */
function strftime(date, format) {
  const pad = (n, width = 2, fill = '0') => String(n).padStart(width, fill)
  const hours12 = date.getHours() % 12 || 12
  const startOfYear = new Date(date.getFullYear(), 0, 1)
  const dayOfYear = Math.round((new Date(date.getFullYear(), date.getMonth(), date.getDate()) - startOfYear) / 86_400_000) + 1
  const directives = {
    a: () => DAYS[date.getDay()].slice(0, 3),
    A: () => DAYS[date.getDay()],
    b: () => MONTHS[date.getMonth()].slice(0, 3),
    h: () => MONTHS[date.getMonth()].slice(0, 3),
    B: () => MONTHS[date.getMonth()],
    d: () => pad(date.getDate()),
    e: () => pad(date.getDate(), 2, ' '),
    H: () => pad(date.getHours()),
    I: () => pad(hours12),
    j: () => pad(dayOfYear, 3),
    m: () => pad(date.getMonth() + 1),
    M: () => pad(date.getMinutes()),
    p: () => (date.getHours() < 12 ? 'AM' : 'PM'),
    S: () => pad(date.getSeconds()),
    u: () => String(date.getDay() || 7),
    w: () => String(date.getDay()),
    y: () => pad(date.getFullYear() % 100),
    Y: () => String(date.getFullYear()),
    F: () => `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`,
    D: () => `${pad(date.getMonth() + 1)}/${pad(date.getDate())}/${pad(date.getFullYear() % 100)}`,
    x: () => directives.D(),
    T: () => `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`,
    X: () => directives.T(),
    R: () => `${pad(date.getHours())}:${pad(date.getMinutes())}`,
    c: () => `${directives.a()} ${directives.b()} ${directives.e()} ${directives.T()} ${date.getFullYear()}`,
    n: () => '\n',
    t: () => '\t',
    '%': () => '%',
  }
  return format.replace(/%(.)/gs, (whole, code) => (Object.hasOwn(directives, code) ? directives[code]() : whole))
}

/** Python's `range` for the templates that call it: whole numbers, a step that is not zero. */
function range(...args) {
  const [start, stop, step = 1] = args.length === 1 ? [0, args[0]] : args
  if (![start, stop, step].every(Number.isInteger)) throw new TypeError('range() takes whole numbers')
  if (step === 0) throw new RangeError('range() step must not be zero')
  const out = []
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i)
  return out
}

/** The globals transformers' Jinja environment defines, and Jinja's own constants. */
function templateGlobals() {
  return {
    true: true,
    false: false,
    none: null,
    True: true,
    False: false,
    None: null,
    range,
    raise_exception: (message) => {
      throw new TemplateRaised(String(message))
    },
    strftime_now: (format) => strftime(new Date(), String(format)),
  }
}

// @huggingface/jinja's runtime value classes, which it does not export: an environment hands back
// the value it stores.
const probe = new Environment()
const ArrayValue = probe.set('array', []).constructor
const StringValue = probe.set('string', '').constructor

/**
 * The expressions that `{% for %}` loops of `program` iterate over. Python's Jinja iterates a
 * string's characters and @huggingface/jinja refuses to: templates that loop over a message's
 * content to find image blocks (Llama 3.2's) do it on string content, so those loops are given
 * the characters.
 */
function forLoopIterables(program) {
  const iterables = new WeakSet()
  const stack = [program]
  while (stack.length > 0) {
    const node = stack.pop()
    if (node === null || typeof node !== 'object') continue
    if (node.type === 'For' && node.iterable) iterables.add(node.iterable.type === 'SelectExpression' ? node.iterable.lhs : node.iterable)
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push(child)
  }
  return iterables
}

/** The interpreter, iterating strings in `{% for %}` as Python's Jinja does. */
class ChatTemplateInterpreter extends Interpreter {
  constructor(env, iterables) {
    super(env)
    this.iterables = iterables
  }

  evaluate(node, environment) {
    const value = super.evaluate(node, environment)
    if (value instanceof StringValue && this.iterables.has(node)) {
      return new ArrayValue(Array.from(value.value, (character) => new StringValue(character)))
    }
    return value
  }
}

/**
 * `source` compiled. A template that does not parse is an Error that says so and carries the
 * parser's message.
 */
function compileChatTemplate(source) {
  if (typeof source !== 'string') throw new TypeError(`applyChatTemplate: a chat template is a string of Jinja source, not ${typeName(source)}`)
  let template
  try {
    template = new Template(source)
  } catch (error) {
    throw new Error(`applyChatTemplate: the chat template does not parse: ${error.message}`, { cause: error })
  }
  return { program: template.parsed, iterables: forLoopIterables(template.parsed) }
}

/** `compiled` rendered with `variables`, which replace the globals of the same name. */
function renderCompiled(compiled, variables) {
  const env = new Environment()
  for (const [name, value] of Object.entries({ ...templateGlobals(), ...variables })) env.set(name, value)
  try {
    return new ChatTemplateInterpreter(env, compiled.iterables).run(compiled.program).value
  } catch (error) {
    if (error instanceof TemplateRaised) throw new Error(error.message)
    throw new Error(`applyChatTemplate: the chat template failed to render: ${error.message}`, { cause: error })
  }
}

/**
 * The source of the template to render: transformers' `get_chat_template` over `templates`
 * (name → source; a model with one template calls it `default`).
 */
function selectChatTemplate(templates, chatTemplate, tools, where) {
  if (chatTemplate != null && typeof chatTemplate !== 'string') {
    throw new TypeError(`applyChatTemplate: chatTemplate must be a template's name or its Jinja source, not ${typeName(chatTemplate)}`)
  }
  const names = Object.keys(templates)
  if (chatTemplate != null) return Object.hasOwn(templates, chatTemplate) ? templates[chatTemplate] : chatTemplate
  if (names.length === 0) {
    throw new Error(
      `applyChatTemplate: this tokenizer has no chat template${where ? ` (looked in ${where} for ${TEMPLATE_FILES})` : ` (one is read from ${TEMPLATE_FILES} when loaded from a model folder)`}; pass the template's Jinja source as the chatTemplate option`,
    )
  }
  if (tools != null && Object.hasOwn(templates, 'tool_use')) return templates.tool_use
  if (Object.hasOwn(templates, 'default')) return templates.default
  throw new Error(
    `applyChatTemplate: this model has several chat templates and none is named default; pass the name of one as the chatTemplate option: ${names.sort().map((n) => JSON.stringify(n)).join(', ')}`,
  )
}

/**
 * The template variables of the special tokens (`{ bos: '<s>' }` → `{ bos_token: '<s>' }`), and
 * the model's own named ones under their names (`extra: { image_token: '<image>' }`).
 */
function specialTokenVariables(specialTokens) {
  const out = {}
  if (specialTokens == null) return out
  Object.assign(out, specialTokens.extra)
  for (const [field, variable] of SPECIAL_TOKEN_VARIABLES) {
    if (typeof specialTokens[field] === 'string') out[variable] = specialTokens[field]
  }
  return out
}

/**
 * The text of a conversation rendered by a template: transformers' `render_jinja_template` for
 * one conversation. `template()` gives `{ source, compiled }`; it is called once the arguments
 * are checked, so that a malformed argument is reported as such whatever the template.
 */
function renderMessages(template, specialTokens, messages, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`applyChatTemplate: options must be an object, not ${typeName(options)}`)
  const { addGenerationPrompt = false, continueFinalMessage = false, tools, documents } = options
  const chat = templateMessages(messages)
  const toolSchemas = templateTools(tools)
  const documentObjects = templateDocuments(documents)
  const { source, compiled } = template()
  if (continueFinalMessage && addGenerationPrompt) {
    throw new Error(
      'applyChatTemplate: continueFinalMessage and addGenerationPrompt are not compatible. Use continueFinalMessage when you want the model to continue the final message, and addGenerationPrompt when you want to add a header that will prompt it to start a new assistant message instead.',
    )
  }
  const extra = {}
  for (const [name, value] of Object.entries(options)) if (!OPTION_NAMES.has(name) && value !== undefined) extra[name] = plainData(value)

  let finalText
  if (continueFinalMessage) {
    const field = typeof continueFinalMessage === 'string' ? continueFinalMessage : 'content'
    const last = chat[chat.length - 1]
    const final = last[field]
    if (final == null) throw new Error(`applyChatTemplate: continueFinalMessage is set but the final message has no "${field}" to continue`)
    const fields = REASONING_FIELDS.includes(field) ? REASONING_FIELDS.filter((name) => last[name] === final) : [field]
    if (!fields.some((name) => source.includes(name))) {
      throw new Error(`applyChatTemplate: continueFinalMessage is set to "${field}" but the chat template never reads that field`)
    }
    if (Array.isArray(final)) {
      const block = final.findLast((item) => isPlainObject(item) && 'text' in item)
      if (block === undefined) throw new Error('applyChatTemplate: continueFinalMessage is set but the final message has no text block to continue')
      finalText = String(block.text)
      block.text = block.text + CONTINUE_TAG
    } else {
      if (typeof final !== 'string') throw new TypeError(`applyChatTemplate: continueFinalMessage: the final message's "${field}" is ${typeName(final)}, not a string or a list of blocks`)
      finalText = final
      for (const name of fields) last[name] = last[name] + CONTINUE_TAG
    }
  }

  let rendered = renderCompiled(compiled, {
    ...specialTokenVariables(specialTokens),
    ...extra,
    messages: chat,
    tools: toolSchemas,
    documents: documentObjects,
    add_generation_prompt: Boolean(addGenerationPrompt),
  })

  if (continueFinalMessage) {
    const tag = CONTINUE_TAG.trim()
    if (!rendered.includes(finalText.trim()) || !rendered.includes(tag)) {
      throw new Error(
        'applyChatTemplate: continueFinalMessage is set but the final message does not appear in the rendered chat: the chat template drops part of it. Check that the template and the final message go together.',
      )
    }
    const at = rendered.lastIndexOf(tag)
    // A template that keeps the message's spacing keeps the tag's space too; one that trims it
    // may have trimmed the message's own trailing spaces, which go as well.
    rendered = rendered.startsWith(CONTINUE_TAG, at) ? rendered.slice(0, at) : rendered.slice(0, at).trimEnd()
  }
  return rendered
}

/**
 * A conversation rendered by a chat template, without a tokenizer: `source` is the template's
 * Jinja source, `specialTokens` the tokens as the `specialTokens` getter gives them (`{ bos,
 * eos, ... }`), `messages` and `options` as `applyChatTemplate` takes them (`tokenize` and
 * `chatTemplate` are not read). Compiles `source` on every call.
 */
function renderChatTemplate(source, specialTokens, messages, options) {
  return renderMessages(() => ({ source, compiled: compileChatTemplate(source) }), specialTokens, messages, options)
}

/** Each tokenizer's compiled templates by source, least recently used first, dropped with the
 * tokenizer. */
const compiledTemplates = new WeakMap()

/** The compiled templates a tokenizer keeps. A model has one to a few templates of its own; a
 * caller that passes a different raw template on every call (built per request) would otherwise
 * grow the cache without end, so the least recently used one goes. */
const MAX_COMPILED_TEMPLATES = 16

/** `source` compiled for `tokenizer`: from the cache, or compiled and cached. */
function compiledFor(tokenizer, source) {
  let bySource = compiledTemplates.get(tokenizer)
  if (bySource === undefined) {
    bySource = new Map()
    compiledTemplates.set(tokenizer, bySource)
  }
  let compiled = bySource.get(source)
  if (compiled === undefined) {
    compiled = compileChatTemplate(source)
    if (bySource.size >= MAX_COMPILED_TEMPLATES) bySource.delete(bySource.keys().next().value)
  } else {
    // A Map keeps insertion order: taken out and put back, the template is the most recent.
    bySource.delete(source)
  }
  bySource.set(source, compiled)
  return compiled
}

/**
 * `Tokenizer.prototype.applyChatTemplate`: the conversation rendered by the model's chat
 * template (`tokenizer.chatTemplates`, `tokenizer.specialTokens`), as text, or with `tokenize:
 * true` as ids, encoded without the post-processor's tokens as transformers encodes it.
 */
function applyChatTemplate(messages, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`applyChatTemplate: options must be an object, not ${typeName(options)}`)
  const template = () => {
    const source = selectChatTemplate(this.chatTemplates ?? {}, options.chatTemplate, options.tools, this.source ?? null)
    return { source, compiled: compiledFor(this, source) }
  }
  const text = renderMessages(template, this.specialTokens, messages, options)
  return options.tokenize ? this.encode(text, { addSpecialTokens: false }) : text
}

/** How many templates `tokenizer` holds compiled; exists for the tests of the cache. */
function compiledTemplateCount(tokenizer) {
  return compiledTemplates.get(tokenizer)?.size ?? 0
}

/** Gives `Tokenizer` (the addon's class) its `applyChatTemplate` method; calling it again is harmless. */
function defineApplyChatTemplate(Tokenizer) {
  Object.defineProperty(Tokenizer.prototype, 'applyChatTemplate', {
    value: applyChatTemplate,
    writable: true,
    configurable: true,
    enumerable: false,
  })
}

module.exports = { defineApplyChatTemplate, renderChatTemplate, selectChatTemplate, strftime, compiledTemplateCount, MAX_COMPILED_TEMPLATES }
