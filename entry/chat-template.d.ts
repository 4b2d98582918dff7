// Types of `./chat-template.js`: the renderer behind `Tokenizer.prototype.applyChatTemplate`.
import type { ApplyChatTemplateOptions, ChatTemplateMessage } from './index'

/** Special tokens as the tokenizer's `specialTokens` getter gives them. */
export interface ChatTemplateSpecialTokens {
  bos?: string
  eos?: string
  unk?: string
  sep?: string
  pad?: string
  cls?: string
  mask?: string
  additional?: readonly string[]
  /** The model's own named tokens, each a template variable of its name (`image_token`). */
  extra?: Readonly<Record<string, string>>
}

/** A conversation rendered by a template's Jinja `source`, without a tokenizer. */
export declare function renderChatTemplate(
  source: string,
  specialTokens: ChatTemplateSpecialTokens | null | undefined,
  messages: readonly ChatTemplateMessage[],
  options?: ApplyChatTemplateOptions,
): string

/** The template source `applyChatTemplate` renders, chosen as transformers' `get_chat_template` does. */
export declare function selectChatTemplate(
  templates: Readonly<Record<string, string>>,
  chatTemplate: string | null | undefined,
  tools: unknown,
  where: string | null,
): string

/** `date` formatted as C's `strftime` in the C locale, as Python's `datetime.strftime` gives it. */
export declare function strftime(date: Date, format: string): string

/** Defines `Tokenizer.prototype.applyChatTemplate`; calling it again is harmless. */
export declare function defineApplyChatTemplate(Tokenizer: Function): void

/** How many templates `tokenizer` holds compiled; exists for the tests of the cache. */
export declare function compiledTemplateCount(tokenizer: object): number

/** The compiled templates a tokenizer keeps, the least recently used going first. */
export declare const MAX_COMPILED_TEMPLATES: number
