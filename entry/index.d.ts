// Types of the package's main entry: the addon's generated types (`../index.d.ts`) and the
// methods written in JavaScript on its classes, declared on those classes here.
export * from '../index'

/** One message of a conversation, as a chat template reads it. */
export interface ChatTemplateMessage {
  /** `'system'`, `'user'`, `'assistant'`, `'tool'`, or any role the template knows. */
  role: string
  /** The text, or a list of content blocks (`{ type: 'text', text }`, ...), as the template expects. */
  content?: string | readonly Record<string, unknown>[] | null
  /** Any other field the template reads: `tool_calls`, `reasoning_content`, `name`, ... */
  [field: string]: unknown
}

/** Options of `applyChatTemplate`; any other option is a template variable under its own name. */
export interface ApplyChatTemplateOptions {
  /**
   * End the text with the header that starts the assistant's reply (`add_generation_prompt`).
   * @default false
   */
  addGenerationPrompt?: boolean
  /**
   * Leave the final message open, so that the model continues it: the text ends where the
   * message's content does. A string names the field to continue (e.g. `'reasoning_content'`).
   * Not with `addGenerationPrompt`.
   * @default false
   */
  continueFinalMessage?: boolean | string
  /** Tools as JSON schemas (`{ type: 'function', function: { name, description, parameters } }`). */
  tools?: readonly Record<string, unknown>[] | null
  /** Documents for retrieval-augmented generation (`{ title, text }`). */
  documents?: readonly Record<string, unknown>[] | null
  /**
   * Return the ids (`encode(text, { addSpecialTokens: false })`) instead of the text.
   * @default false
   */
  tokenize?: boolean
  /**
   * The name of one of the model's templates (`'tool_use'`), or a template's Jinja source.
   * @default the model's `tool_use` template when `tools` are given and it has one, else `default`
   */
  chatTemplate?: string
  /** Extra template variables, such as `enable_thinking`. */
  [variable: string]: unknown
}

declare module '../index' {
  interface Tokenizer {
    /**
     * The conversation rendered by the model's chat template, as Python transformers'
     * `apply_chat_template` renders it; with `tokenize: true`, its ids.
     * Throws an `Error` when the tokenizer has no template (pass `chatTemplate`), when the
     * template raises (the template's message), and a `TypeError` for malformed messages.
     */
    applyChatTemplate(messages: readonly ChatTemplateMessage[], options: ApplyChatTemplateOptions & { tokenize: true }): Uint32Array
    applyChatTemplate(messages: readonly ChatTemplateMessage[], options?: ApplyChatTemplateOptions & { tokenize?: false }): string
    applyChatTemplate(messages: readonly ChatTemplateMessage[], options?: ApplyChatTemplateOptions): string | Uint32Array
  }
}
